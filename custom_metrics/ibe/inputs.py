"""Explanations to score: lm-eval samples files of the ibe_* tasks, or plain JSONL.

Plain JSONL lets explanations from anywhere be scored: one explanation per line with
``qid, option, premise, conclusion, explanation, correct`` and optionally ``split``
(``train``/``test``; default ``test``). Samples files of the ``ibe_judge_*`` tasks are
recognised too and give the judge baseline's per-question choices. Every problem is
reported with the file, the line and the field; nothing is coerced silently (an option
``1.7``, a ``NaN`` or ``Infinity`` where an integer or a log-likelihood belongs, a premise
longer than the explanation cap are errors, not values).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.jsonl import iter_jsonl
from custom_metrics.common.samples import logged_response
from custom_metrics.ibe.parsing import MAX_CHARS

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


def _integer(row: dict[str, Any], name: str, where: str) -> int:
    """An integer field: JSON integers, integral finite numbers and integer strings; never rounded."""
    value = row[name]
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value.strip()):
        value = int(value)
    if not isinstance(value, int):
        raise DataError(f"{where}: field {name!r} must be an integer, got {row[name]!r}.")
    return value


def _record(row: dict[str, Any], explanation: Any, where: str) -> ExplanationRecord:
    missing = [name for name in PLAIN_FIELDS if name not in row and name != "explanation"]
    if missing:
        raise DataError(f"{where}: missing field(s) {', '.join(repr(m) for m in missing)}.")
    if not isinstance(explanation, str):
        raise DataError(f"{where}: field 'explanation' must be a string, got {type(explanation).__name__}.")
    split = row.get("split", "test")
    if split not in SPLITS:
        raise DataError(f"{where}: field 'split' is {split!r}, expected one of {SPLITS}.")
    correct, option = _integer(row, "correct", where), _integer(row, "option", where)
    if correct not in (0, 1):
        raise DataError(f"{where}: field 'correct' is {row['correct']!r}, expected 0 or 1.")
    if not isinstance(row["qid"], (str, int)) or isinstance(row["qid"], bool):
        raise DataError(f"{where}: field 'qid' must be a string or an integer, got {row['qid']!r}.")
    for name in ("premise", "conclusion"):
        if not isinstance(row[name], str) or not row[name].strip():
            raise DataError(f"{where}: field {name!r} must be a non-empty string.")
        if len(row[name]) > MAX_CHARS:
            raise DataError(f"{where}: field {name!r} is {len(row[name]):,} characters long (at most {MAX_CHARS:,}).")
    return ExplanationRecord(
        str(row["qid"]), option, split, correct, row["premise"], row["conclusion"], explanation, where
    )


def _loglikelihood(resp: Any, where: str) -> float:
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
    return number


def _judge_record(sample: dict[str, Any], where: str) -> JudgeRecord:
    doc = sample["doc"]
    missing = [name for name in ("qid", "gold") if name not in doc]
    if missing:
        raise DataError(f"{where}: missing field(s) {', '.join(f'doc.{m}' for m in missing)} of a judge sample.")
    resps = sample.get("filtered_resps")
    loglikelihoods = [_loglikelihood(resp, where) for resp in resps] if isinstance(resps, list) else []
    if len(loglikelihoods) != 2:
        raise DataError(f"{where}: field 'filtered_resps' should hold 2 log-likelihoods, got {len(loglikelihoods)}.")
    gold = _integer(doc, "gold", f"{where} (doc)")
    if gold not in (1, 2):
        raise DataError(f"{where}: field 'doc.gold' is {doc['gold']!r}, expected option 1 or 2.")
    choice = 1 + max(range(2), key=lambda index: loglikelihoods[index])
    return JudgeRecord(str(doc["qid"]), choice, gold, where)


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
                    decision = _judge_record(row, where)
                    if decision.qid in judged_at:
                        raise DataError(
                            f"{where}: the judge's choice for qid {decision.qid!r} was already read at "
                            f"{judged_at[decision.qid]}."
                        )
                    judged_at[decision.qid] = where
                    judged.append(decision)
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
