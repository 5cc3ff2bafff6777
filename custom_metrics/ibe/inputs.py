"""Explanations to score: lm-eval samples files of the ibe_* tasks, or plain JSONL.

Plain JSONL lets explanations from anywhere be scored: one explanation per line with
``qid, option, premise, conclusion, explanation, correct`` and optionally ``split``
(``train``/``test``; default ``test``). Samples files of the ``ibe_judge_*`` tasks are
recognised too and give the judge baseline's per-question choices. Every problem is
reported with the file, the line and the field.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.jsonl import iter_jsonl
from custom_metrics.common.samples import logged_response

PLAIN_FIELDS = ("qid", "option", "premise", "conclusion", "explanation", "correct")
SPLITS = ("train", "test")


@dataclass(frozen=True)
class ExplanationRecord:
    qid: str
    option: int
    split: str
    correct: int
    premise: str
    conclusion: str
    explanation: str
    source: str  # file:line, for tracing a feature row back to its input


@dataclass(frozen=True)
class JudgeRecord:
    qid: str
    choice: int  # option the judge picked (1-based)
    gold: int
    source: str


def _response(sample: dict[str, Any], where: str) -> str:
    try:
        return logged_response(sample)
    except ValueError as err:
        raise DataError(f"{where}: {err}.") from err


def _record(row: dict[str, Any], explanation: Any, where: str) -> ExplanationRecord:
    missing = [name for name in PLAIN_FIELDS if name not in row and name != "explanation"]
    if missing:
        raise DataError(f"{where}: missing field(s) {', '.join(repr(m) for m in missing)}.")
    if not isinstance(explanation, str):
        raise DataError(f"{where}: field 'explanation' must be a string, got {type(explanation).__name__}.")
    split = row.get("split", "test")
    if split not in SPLITS:
        raise DataError(f"{where}: field 'split' is {split!r}, expected one of {SPLITS}.")
    try:
        correct = int(row["correct"])
        option = int(row["option"])
    except (TypeError, ValueError) as err:
        raise DataError(f"{where}: fields 'correct' and 'option' must be integers ({err}).") from err
    if correct not in (0, 1):
        raise DataError(f"{where}: field 'correct' is {row['correct']!r}, expected 0 or 1.")
    for name in ("premise", "conclusion"):
        if not isinstance(row[name], str) or not row[name].strip():
            raise DataError(f"{where}: field {name!r} must be a non-empty string.")
    return ExplanationRecord(
        str(row["qid"]), option, split, correct, row["premise"], row["conclusion"], explanation, where
    )


def _judge_record(sample: dict[str, Any], where: str) -> JudgeRecord:
    """The judge's choice for one question: the option with the higher log-likelihood.

    A NaN or infinite log-likelihood (a broken or overflowing judge run) would decide the
    choice arbitrarily, so it is an error, as is a value that is no number.
    """
    doc = sample["doc"]
    loglikelihoods = []
    for resp in sample.get("filtered_resps", []):
        value = resp[0] if isinstance(resp, list) and resp else resp
        try:
            number = float(value)
        except (TypeError, ValueError) as err:
            raise DataError(f"{where}: field 'filtered_resps' holds {value!r}, not a log-likelihood.") from err
        if not math.isfinite(number):
            raise DataError(
                f"{where}: field 'filtered_resps' holds the log-likelihood {value!r}; a judge run with non-finite "
                "scores cannot choose an option (rerun it, e.g. with dtype=float32)."
            )
        loglikelihoods.append(number)
    if len(loglikelihoods) != 2:
        raise DataError(f"{where}: field 'filtered_resps' should hold 2 log-likelihoods, got {len(loglikelihoods)}.")
    choice = 1 + max(range(2), key=lambda index: loglikelihoods[index])
    return JudgeRecord(str(doc["qid"]), choice, int(doc["gold"]), where)


def read_inputs(paths: Iterable[Path]) -> tuple[list[ExplanationRecord], list[JudgeRecord]]:
    """Explanation records and judge records from samples or plain JSONL files."""
    records: list[ExplanationRecord] = []
    judged: list[JudgeRecord] = []
    seen: dict[tuple[str, int], str] = {}
    judged_at: dict[str, str] = {}
    paths = [Path(path) for path in paths]
    for path in paths:
        if not path.is_file():
            raise DataError(f"{path}: no such file.")
        for where, row in iter_jsonl(path):
            if isinstance(row.get("doc"), dict):  # an lm-eval sample
                if "explanations" in row["doc"]:
                    judge_record = _judge_record(row, where)
                    if judge_record.qid in judged_at:
                        raise DataError(
                            f"{where}: the judge's choice for qid {judge_record.qid!r} was already read at "
                            f"{judged_at[judge_record.qid]} (a file given twice, or two judge runs mixed)."
                        )
                    judged_at[judge_record.qid] = where
                    judged.append(judge_record)
                    continue
                record = _record(row["doc"], _response(row, where), f"{where} (doc)")
            else:
                record = _record(row, row.get("explanation"), where)
            key = (record.qid, record.option)
            if key in seen:
                raise DataError(f"{where}: qid {record.qid!r} option {record.option} was already read at {seen[key]}.")
            seen[key] = where
            records.append(record)
    if not records and not judged:
        raise DataError(f"no explanations found in {', '.join(str(path) for path in paths)} (empty files?).")
    return records, judged
