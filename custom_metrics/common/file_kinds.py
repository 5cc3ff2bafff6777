"""Which kind of file a command was given: a results file, a samples file (and of which task),
an IBE features file, ..., so a command handed the wrong one says so and names the file it
needs and the command that makes it.

Why: lm-eval writes a results file and a samples file side by side, and the suite's own
commands write more beside them; pasting the neighbour's name is the common mistake. Read
as JSONL, a pretty-printed results file fails on its first line ("not valid JSON"), which
is true and useless. Only the name and the first line are read (and a whole-JSON document
of a results file's size when the first line opens one), never more.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import JSONL_MAX_BYTES, RESULTS_MAX_BYTES, iter_regular_lines, read_regular_bytes

# lm-eval's names: results_<stamp>.json and samples_<task>_<stamp>.jsonl, stamp 2025-01-31T12-00-00.123456
_STAMP = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
_RESULTS_NAME = re.compile(rf"^results(?:_(?P<stamp>{_STAMP}))?.*\.json$")
_SAMPLES_NAME = re.compile(rf"^samples_(?P<task>.+)_(?P<stamp>{_STAMP})\.jsonl$")
_FIRST_LINE_BYTES = 1024 * 1024  # a samples line holds a whole prompt; beyond this, stop sniffing

IBE_FEATURES_KEY = "ibe_features"  # the header key of IBE's features.jsonl (ibe_postprocess.features_file)
IBE_REPORT_KEY = "ibe_report"  # the header key of IBE's report.json (ibe_postprocess.report_file)


@dataclass(frozen=True)
class FileKind:
    """What a file is: ``kind`` one of results, samples, ibe_features, ibe_report, ibe_judge,
    rule_summary, sweep_record, json_document, jsonl (rows of unknown origin), other."""

    kind: str
    what: str  # said to the user: "an lm-eval results file (results_*.json)"
    task: str | None = None  # the task of a samples file, when its name gives it
    stamp: str | None = None  # the run's timestamp, from the name


_BY_NAME = {
    "report.json": ("ibe_report", "the report of `explain-eval ibe report` (report.json)"),
    "judge.jsonl": ("ibe_judge", "the judge decisions of `explain-eval ibe score` (judge.jsonl)"),
    "rule_protocol_summary.json": ("rule_summary", "the summary of `explain-eval rule-protocol`"),
    "rule_protocol_args.json": ("rule_summary", "the settings record of `explain-eval rule-protocol`"),
    "sweep_pair.json": ("sweep_record", "a pair record of `explain-eval sweep` (sweep_pair.json)"),
    "lm_eval.done": ("sweep_record", "a marker of `explain-eval sweep` (lm_eval.done)"),
    "post_run.done": ("sweep_record", "a marker of `explain-eval sweep` (post_run.done)"),
}


def samples_task(name: str) -> str | None:
    """The task of an lm-eval samples file named ``name`` (samples_<task>_<stamp>.jsonl), else None."""
    match = _SAMPLES_NAME.match(name)
    return match.group("task") if match else None


def file_kind(path: Path) -> FileKind:
    """The kind of ``path``, from its name and first line; never raises for an unreadable or
    odd file (the reader that follows names that), it is then ``other``."""
    name = path.name
    match = _RESULTS_NAME.match(name)
    if match:
        return FileKind("results", "an lm-eval results file (results_*.json)", stamp=match.group("stamp"))
    match = _SAMPLES_NAME.match(name)
    if match:
        task = match.group("task")
        return FileKind("samples", f"the samples file of an lm-eval {task} run", task, match.group("stamp"))
    if name in _BY_NAME:
        return FileKind(*_BY_NAME[name])
    first = _first_line(path)
    if first is None:
        return FileKind("other", "a file")
    if first.strip() in (b"{", b"["):
        return _whole_document(path)
    try:
        row = json.loads(first)
    except ValueError:
        return FileKind("other", "a file")
    if isinstance(row, dict) and IBE_FEATURES_KEY in row:
        return FileKind("ibe_features", "an IBE features file, written by `explain-eval ibe score` (features.jsonl)")
    return FileKind("jsonl", "a JSONL file")


def _first_line(path: Path) -> bytes | None:
    try:
        for line in iter_regular_lines(path, JSONL_MAX_BYTES, "file"):
            if line.strip():
                return line if len(line) <= _FIRST_LINE_BYTES else None
            if len(line) > _FIRST_LINE_BYTES:
                return None
    except (DataError, OSError):
        return None
    return None


def _whole_document(path: Path) -> FileKind:
    """A file whose first line opens a pretty-printed JSON document: a results file when it
    holds lm-eval's "results" object, else some other whole JSON document (not JSONL)."""
    try:
        data = json.loads(read_regular_bytes(path, RESULTS_MAX_BYTES, "file").decode("utf-8"))
    except (DataError, OSError, ValueError, RecursionError):
        return FileKind("other", "a file")  # not JSON at all: the line reader names where
    if isinstance(data, dict) and isinstance(data.get("results"), dict):
        return FileKind("results", "an lm-eval results file (results_*.json)")
    if isinstance(data, dict) and IBE_REPORT_KEY in data:
        return FileKind("ibe_report", "an IBE report (report.json of `explain-eval ibe report`)")
    return FileKind("json_document", "a whole JSON document, not JSONL (one object per line)")


def samples_beside(path: Path, kind: FileKind, tasks: Collection[str] = ()) -> list[Path]:
    """The samples files lm-eval wrote beside the results file ``path`` (same timestamp when
    the name has one), restricted to ``tasks`` (task-name prefixes) when given."""
    pattern = f"samples_*_{kind.stamp}.jsonl" if kind.stamp else "samples_*.jsonl"
    found = sorted(path.parent.glob(pattern))
    if tasks:
        found = [p for p in found if (m := _SAMPLES_NAME.match(p.name)) and m.group("task").startswith(tuple(tasks))]
    return found


def wrong_kind(path: Path, kind: FileKind, needs: str, how: str, tasks: Collection[str] = ()) -> DataError:
    """The error for ``path`` of ``kind`` given where ``needs`` belongs: what it is, what is
    needed, and ``how`` to make it (or, for a results file, the samples files beside it)."""
    message = f"{path}: this is {kind.what}; {needs}."
    if kind.kind == "results":
        beside = samples_beside(path, kind, tasks)
        if beside:
            return DataError(f"{message} lm-eval wrote it beside this file: {', '.join(str(p) for p in beside)}.")
    return DataError(f"{message} Make it with: {how}")
