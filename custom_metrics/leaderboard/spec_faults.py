"""What a paper's spec gets wrong on its own, found when the registry loads: every command stops
on it, naming the fix.

Below both the registry, which runs ``load_problems`` on every load, and ``spec_checks``
(``explain-eval check``), which adds what only the task folders and packages show.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from custom_metrics.common.paper_spec import PaperSpec

REGISTRY = "custom_metrics/leaderboard/registry.py"
_HEX40, _HEX64 = re.compile(r"[0-9a-f]{40}"), re.compile(r"[0-9a-f]{64}")


def load_problems(specs: Sequence[PaperSpec]) -> list[str]:
    """What the specs alone get wrong: families, column keys, data names and pins."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for spec in specs:
        fault = regex_fault(spec.pattern)
        if fault:
            problems.append(
                f"{spec.key}: pattern {spec.pattern!r} is no regular expression ({fault}): fix it in custom_metrics/"
                f"{spec.key}/leaderboard.py (or leave it out: the default is the key, then '_' or the end)"
            )
        for headline in spec.board.headlines:
            if headline.family not in spec.board.families:
                problems.append(
                    f"{spec.key}: headline {headline.label!r} is of family {headline.family!r}, which families does "
                    f"not define: add it to board=Board(families=...) in custom_metrics/{spec.key}/leaderboard.py"
                )
            problems += [
                f"{spec.key}: headline {headline.label!r} names {key!r}: write it as 'task/metric'"
                for key in headline.keys
                if "/" not in key
            ]
        if spec.board.comparisons and spec.board.samples.outcomes is None:
            problems.append(
                f"{spec.key}: comparisons are tested on per-document outcomes, which the spec does not read: give "
                f"board=Board(samples=SampleView(..., outcomes=...)) in custom_metrics/{spec.key}/leaderboard.py"
            )
        for name, sources in spec.datasets.items():
            if name in seen:
                problems.append(f"dataset {name!r} is named by both {seen[name]} and {spec.key}: rename one")
            seen[name] = spec.key
            for source in sources:
                remote = getattr(source, "remote", None)
                if remote is None:
                    problems.append(f"{spec.key}: datasets[{name!r}] holds {source!r}, not a Source: list Sources")
                    continue
                problems += [f"{spec.key}: data file {source.name!r}: {fault}" for fault in pin_faults(remote)]
    return problems


def regex_fault(pattern: str) -> str:
    """Why ``pattern`` does not compile ("" when it does): every command matches task names with it."""
    try:
        re.compile(pattern)
    except re.error as err:
        return str(err)
    return ""


def pin_faults(remote: Any) -> list[str]:
    """What makes a pin (a ``GitHubFile`` or a ``HubFile``) a placeholder rather than a fixed public file."""
    commit = getattr(remote, "commit", None) or getattr(remote, "revision", "")
    faults = []
    if not _HEX40.fullmatch(commit) or set(commit) == {"0"}:
        faults.append(f"commit {commit!r} is not a 40-digit commit hash (a branch or a placeholder is no pin)")
    if not _HEX64.fullmatch(remote.sha256) or set(remote.sha256) == {"0"}:
        faults.append(f"sha256 {remote.sha256!r} is not the file's hash")
    if remote.size <= 0:
        faults.append(f"size {remote.size} is not the file's size")
    return faults
