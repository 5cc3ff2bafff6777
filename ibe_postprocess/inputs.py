"""Explanations to score: lm-eval samples files of the ibe_* tasks, or plain JSONL.

Plain JSONL lets explanations from anywhere be scored: one explanation per line with
``qid, option, premise, conclusion, explanation, correct`` and optionally ``split``
(``train``/``test``; default ``test``). Samples files of the ``ibe_judge_*`` tasks are
recognised too and give the judge baseline's per-question choices: the higher of the two
log-likelihoods (``ibe_judge_*``) or the generated answer as ``judge_answer`` reads it
(``ibe_judge_*_chat``; an answer it cannot read is a choice of none). Every problem is
reported with the file, the line and the field; nothing is coerced silently (an option
``1.7``, a ``NaN`` or ``Infinity`` where an integer or a log-likelihood belongs, a premise
longer than the explanation cap are errors, not values). Only regular files are read: a
FIFO or a device named as input is refused by what it is, before anything opens it.

The harness side reads here too (``ibe_judge_*`` docs are built from an ``ibe_*`` samples
file), so this module imports nothing heavy.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from custom_metrics.common import fields
from custom_metrics.common.errors import DataError
from custom_metrics.common.file_kinds import file_kind, wrong_kind
from custom_metrics.common.files import JSONL_MAX_BYTES, regular_file_problem
from custom_metrics.common.samples import logged_response, numbered_samples
from ibe_postprocess.folder import FILE_KINDS, SAMPLES_NAME
from ibe_postprocess.judge_answer import parse_choice
from ibe_postprocess.parsing import MAX_CHARS
from ibe_postprocess.questions import dataset_of

PLAIN_FIELDS = ("qid", "option", "premise", "conclusion", "explanation", "correct")
SPLITS = ("train", "test")
NEEDS = (
    "ibe score needs the samples file of an ibe_copa or ibe_ecare run (samples_ibe_copa_<time>.jsonl; "
    "ibe_judge_* samples add the judge baseline) or plain JSONL, one explanation a line with " + ", ".join(PLAIN_FIELDS)
)
MAKES = (
    "lm_eval --model hf --model_args pretrained=MODEL --tasks ibe_copa,ibe_ecare "
    "--include_path $(explain-eval tasks-path) --log_samples --output_path runs/ibe"
)


@dataclass(frozen=True, order=True)
class Source:
    """Where a record was read: the input file as given to ``ibe score`` and the line (1-based)."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class ExplanationRecord:
    qid: str
    option: int
    split: str
    correct: int
    premise: str
    conclusion: str
    explanation: str
    source: Source  # for tracing a feature row back to its input


JUDGE_METHODS = ("loglik", "generated")  # ibe_judge_* scores the two answers; ibe_judge_*_chat generates one


@dataclass(frozen=True)
class JudgeRecord:
    qid: str
    choice: int | None  # option the judge picked (1-based); None: a generated answer that names none
    gold: int
    source: Source
    method: str = "loglik"  # one of JUDGE_METHODS


def _response(sample: dict[str, Any], where: str) -> str:
    try:
        return logged_response(sample)
    except ValueError as err:
        raise DataError(f"{where}: {err}.") from err


def _integer(row: dict[str, Any], name: str, where: str) -> int:
    try:
        return fields.integer(row[name], f"field {name!r}")
    except fields.FieldError as err:
        raise DataError(f"{where}: {err}.") from err


def _record(row: dict[str, Any], explanation: Any, where: str, source: Source) -> ExplanationRecord:
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
        str(row["qid"]), option, split, correct, row["premise"], row["conclusion"], explanation, source
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


def _judge_record(sample: dict[str, Any], where: str, source: Source) -> JudgeRecord:
    doc = sample["doc"]
    missing = [name for name in ("qid", "gold") if name not in doc]
    if missing:
        raise DataError(f"{where}: missing field(s) {', '.join(f'doc.{m}' for m in missing)} of a judge sample.")
    gold = _integer(doc, "gold", f"{where} (doc)")
    if gold not in (1, 2):
        raise DataError(f"{where}: field 'doc.gold' is {doc['gold']!r}, expected option 1 or 2.")
    resps = sample.get("filtered_resps")
    if isinstance(resps, list) and len(resps) == 1 and isinstance(resps[0], str):  # a chat judge's answer
        return JudgeRecord(str(doc["qid"]), parse_choice(resps[0]), gold, source, "generated")
    loglikelihoods = [_loglikelihood(resp, where) for resp in resps] if isinstance(resps, list) else []
    if len(loglikelihoods) != 2:
        raise DataError(
            f"{where}: field 'filtered_resps' should hold 2 log-likelihoods (ibe_judge_*) or one generated answer "
            f"(ibe_judge_*_chat), got {len(loglikelihoods)} log-likelihoods."
        )
    choice = 1 + max(range(2), key=lambda index: loglikelihoods[index])
    return JudgeRecord(str(doc["qid"]), choice, gold, source)


def check_input_file(path: Path) -> None:
    """A DataError saying what ``path`` is when it cannot be an input (missing, a folder, a
    FIFO or device, too large: checked without opening it, since opening a FIFO blocks; a
    results file, another task's samples, a features file: what it is and what to pass)."""
    if not path.exists() and not path.is_symlink():
        raise DataError(f"{path}: no such file.")
    problem = regular_file_problem(path, JSONL_MAX_BYTES)
    if problem:
        raise DataError(f"{path}: input {problem}; give a samples file or a JSONL file of explanations.")
    kind = file_kind(path, FILE_KINDS)
    if kind.kind == "samples" and SAMPLES_NAME.match(path.name):
        return
    if kind.kind == "ibe_features":
        raise wrong_kind(path, kind, f"{NEEDS} (`explain-eval ibe report {path.parent}` reads this one)", MAKES)
    if kind.kind not in ("jsonl", "other"):
        raise wrong_kind(path, kind, NEEDS, MAKES, tasks=("ibe_",))


def read_inputs(paths: Iterable[Path]) -> tuple[list[ExplanationRecord], list[JudgeRecord]]:
    """Explanation records and judge records from samples or plain JSONL files."""
    records: list[ExplanationRecord] = []
    judged: list[JudgeRecord] = []
    seen: dict[tuple[str, int], Source] = {}
    judged_at: dict[str, Source] = {}
    judge_methods: dict[str, tuple[str, Source]] = {}  # per dataset: how its first judge record chose
    paths = [Path(path) for path in paths]
    for path in paths:
        check_input_file(path)
        for line, row in numbered_samples(path):
            source = Source(str(path), line)
            where = str(source)
            if isinstance(row.get("doc"), dict):  # an lm-eval sample
                if "explanations" in row["doc"]:
                    decision = _judge_record(row, where, source)
                    if decision.qid in judged_at:
                        raise DataError(
                            f"{where}: the judge's choice for qid {decision.qid!r} was already read at "
                            f"{judged_at[decision.qid]}."
                        )
                    dataset = dataset_of(decision.qid)
                    method, first = judge_methods.setdefault(dataset, (decision.method, source))
                    if method != decision.method:
                        raise DataError(
                            f"{where}: a {decision.method} judge answer, but {first} holds a {method} one for "
                            f"the same dataset; score the samples of one judge task (ibe_judge_* or "
                            "ibe_judge_*_chat) at a time."
                        )
                    judged_at[decision.qid] = source
                    judged.append(decision)
                    continue
                record = _record(row["doc"], _response(row, where), f"{where} (doc)", source)
            else:
                record = _record(row, row.get("explanation"), where, source)
            key = (record.qid, record.option)
            if key in seen:
                raise DataError(f"{where}: qid {record.qid!r} option {record.option} was already read at {seen[key]}.")
            seen[key] = source
            records.append(record)
    if not records and not judged:
        raise DataError(f"no explanations found in {', '.join(str(path) for path in paths)} (empty files?).")
    return records, judged


def fingerprint(records: Sequence[ExplanationRecord], judged: Sequence[JudgeRecord] = ()) -> str:
    """What a features folder is computed from, in one string: the SHA-256 of every record as
    read (texts, labels, where it was read), in order. Two runs on the same inputs agree on
    it whatever the batch size; any other input changes it."""
    digest = hashlib.sha256()
    for record in [*records, *judged]:
        digest.update(json.dumps(asdict(record), sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n")
    return digest.hexdigest()


def input_files(records: Sequence[ExplanationRecord], judged: Sequence[JudgeRecord] = ()) -> tuple[str, ...]:
    """The files the records were read from, in the order first read."""
    return tuple(dict.fromkeys(record.source.file for record in [*records, *judged]))
