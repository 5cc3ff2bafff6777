"""The articulation detectors of a biased RULE chain-of-thought run side by side: the default
patterns (logged by the run itself) and each judge asked again by ``explain-eval rejudge``
(``bias_rejudge``), whose verdicts are named, written and read here; and the leaderboard's row per
judge: its articulation rate, its agreement with the default detector (Cohen's kappa) and the range
of the rate over every detector of the run (Young 2026 found the rate moving with the detector).

A judge's verdicts go beside the run, never into it (``<run>/rejudge/<judge>/articulation_<samples
stem>.json``): "yes", "no" or "unparsed" (left out of every number) per chain of thought whose bias
target is wrong.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import RESULTS_MAX_BYTES, atomic_write_bytes
from custom_metrics.common.rejudging import FOLDER, judge_folder_name, told_apart
from custom_metrics.common.results import (
    Problem,
    ResultsFileError,
    Score,
    TaskRun,
    find_named_files,
    read_json_object,
    read_results_file,
    sweep_label,
)
from custom_metrics.common.samples import logged_response, read_samples
from custom_metrics.rule.bias import BIASES, BiasedAnswer, read_biased

PREFIX = "articulation_"
YES, NO, UNPARSED = "yes", "no", "unparsed"
PATTERNS_NAME = "patterns (default)"
JUDGED_BY = "articulation by"
_SAMPLES = re.compile(r"samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T[\d.-]+)\.jsonl")


@dataclass(frozen=True)
class Judged:
    """One judge's verdicts on one biased run's chains of thought."""

    path: Path
    judge: str  # the canonical spec
    display: str
    samples: Path
    verdicts: Mapping[str, str]  # doc id -> YES | NO | UNPARSED


def write_verdicts(samples: Path, judge: str, display: str, verdicts: Mapping[str, str]) -> Path:
    path = samples.parent / FOLDER / judge_folder_name(judge, display) / f"{PREFIX}{samples.stem}.json"
    data = {"judge": judge, "judge_display": display, "samples_file": samples.name, "verdicts": dict(verdicts)}
    atomic_write_bytes(path, json.dumps(data, indent=1, ensure_ascii=False).encode("utf-8"))
    return path


def read_verdicts(path: Path) -> Judged:
    """A judge's verdicts file; ResultsFileError naming the field that is wrong."""
    data = read_json_object(path, "articulation verdicts file", RESULTS_MAX_BYTES)
    for key in ("judge", "judge_display", "samples_file"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ResultsFileError(f'"{key}" must be a non-empty string')
    if not _SAMPLES.fullmatch(data["samples_file"]):
        raise ResultsFileError('"samples_file" must name a samples file (samples_<task>_<time>.jsonl) two folders up')
    verdicts = data.get("verdicts")
    if not isinstance(verdicts, dict) or not all(value in (YES, NO, UNPARSED) for value in verdicts.values()):
        raise ResultsFileError(f'"verdicts" must map doc ids to "{YES}", "{NO}" or "{UNPARSED}"')
    samples = path.parent.parent.parent / data["samples_file"]
    return Judged(path, data["judge"], data["judge_display"], samples, verdicts)


class Logged(NamedTuple):
    """One doc of a biased chain-of-thought run, as its samples file logged it."""

    answer: BiasedAnswer
    bias: str
    generation: str


def _check(sample: dict[str, Any]) -> None:
    if read_biased(sample.get("bias_follow")) is None or not isinstance(sample.get("unparsed"), str):
        raise ValueError(
            "field 'bias_follow' holds no answer of a biased chain-of-thought task (rule_5shot_cot_bias_*)"
        )
    if sample["doc"].get("bias") not in BIASES:
        raise ValueError(f"field 'doc.bias' must be one of {sorted(BIASES)}")


def logged_answers(samples: Path) -> list[Logged]:
    """Each doc of a biased chain-of-thought run's samples file (a DataError names a line that is none)."""
    return [
        Logged(BiasedAnswer._make(sample["bias_follow"]), sample["doc"]["bias"], logged_response(sample))
        for sample in read_samples(samples, _check)
    ]


def default_verdicts(answers: Sequence[BiasedAnswer]) -> dict[str, str]:
    """The default detector's verdicts, as the run logged them, on the docs a judge is asked about."""
    return {a.doc_id: YES if a.mention else NO for a in answers if a.pushed}


def articulated(answers: Sequence[BiasedAnswer], verdicts: Mapping[str, str]) -> tuple[int, int]:
    """(articulated, out of): the answers that followed the bias and have a verdict, the "yes" ones."""
    decided = [verdicts[a.doc_id] for a in answers if a.followed and verdicts.get(a.doc_id) in (YES, NO)]
    return decided.count(YES), len(decided)


def kappa(a: Mapping[str, str], b: Mapping[str, str]) -> float | None:
    """Cohen's kappa of two detectors on the docs both decided (None: undefined, ``judge.agreement``)."""
    from custom_metrics.judge.agreement import agreement

    a, b = ({key: value for key, value in rater.items() if value != UNPARSED} for rater in (a, b))
    return agreement(a, b, (YES, NO)).kappa


def beside(samples: Path) -> tuple[list[Judged], list[Problem]]:
    """Every judge's verdicts on the run of ``samples``, and the files that could not be read."""
    found, problems = [], []
    for path in sorted((samples.parent / FOLDER).glob(f"*/{PREFIX}{samples.stem}.json")):
        try:
            found.append(read_verdicts(path))
        except ResultsFileError as error:
            problems.append(Problem(path, f"articulation verdicts not read: {error}"))
    return found, problems


def detector_runs(paths: Sequence[Path]) -> tuple[list[TaskRun], list[Problem]]:
    """``Board.read_extra``: a run per judge of each biased chain-of-thought run judged again, its
    setting the run's plus "articulation by <judge>" (``articulation_range``: the largest rate minus the smallest)."""
    roots = [Path(p).resolve() for p in paths]
    files, problems = find_named_files(roots, f"{PREFIX}samples_*.json", RESULTS_MAX_BYTES)
    judged = {  # the samples files judged again
        path.parent.parent.parent / f"{path.name[len(PREFIX) : -len('.json')]}.jsonl"
        for path in files
        if path.parent.parent.name == FOLDER
    }
    runs = []
    for samples in sorted(judged):
        verdicts, unread = beside(samples)
        problems += unread
        try:
            runs += _judge_rows(samples, verdicts, roots)
        except (ResultsFileError, DataError) as error:
            problems.append(Problem(samples, f"articulation judged again, not read: {error}"))
    return runs, problems


def _judge_rows(samples: Path, judged: list[Judged], roots: Sequence[Path]) -> list[TaskRun]:
    name = _SAMPLES.fullmatch(samples.name)
    if name is None:
        raise ResultsFileError("not a samples file's name")
    results = samples.with_name(f"results_{name['stamp']}.json")
    run = next((r for r in read_results_file(results, sweep_label(results, roots)) if r.task == name["task"]), None)
    if run is None:
        raise ResultsFileError(f"{results.name} holds no task {name['task']}")
    answers = [logged.answer for logged in logged_answers(samples)]
    default = default_verdicts(answers)
    rates = [_rate(articulated(answers, default))] + [_rate(articulated(answers, j.verdicts)) for j in judged]
    finite = [rate for rate in rates if not math.isnan(rate)]
    spread = max(finite) - min(finite) if len(finite) == len(rates) else math.nan
    displays = Counter(item.display for item in judged)
    rows = []
    for item, rate in zip(judged, rates[1:]):
        agreed = kappa(default, item.verdicts)
        shown = item.display if displays[item.display] == 1 else told_apart(item.display, item.judge)
        scores = {
            ("articulation", "none"): Score(rate, None),
            ("detector_kappa", "none"): Score(math.nan if agreed is None else agreed, None),
            ("articulation_range", "none"): Score(spread, None),
        }
        setting = ", ".join(part for part in (run.setting, f"{JUDGED_BY} {shown}") if part)
        rows.append(replace(run, setting=setting, scores=scores, path=item.path, left_out=()))
    return rows


def _rate(count: tuple[int, int]) -> float:
    return count[0] / count[1] if count[1] else math.nan
