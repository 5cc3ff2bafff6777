"""``report.json``: what ``ibe report`` found, in the one format every reader goes through.

The leaderboard places IBE's selector accuracies with the harness results, so it reads this
file; it does so through ``read``, which type-checks every field it returns and refuses a
report that no longer describes the ``features.jsonl`` beside it (rescored since, or a
score that did not finish). Layout (``null`` where a number is undefined: browsers' JSON
has no NaN)::

    "ibe_report":  {"version": <explain-eval version>,
                    "features": {"rows": N, "rows_sha256": ..., "inputs_sha256": ...}}
    "model":       the model that wrote the explanations (null: unknown, e.g. plain JSONL)
    "tasks":       its ibe_* tasks; "judge_model": the ibe_judge_* run's model
    "runs":        per generation run: {"task", "samples", "limit", "docs", "of_docs"}
                   (docs < of_docs: a --limit or --samples run, so a subset of the task)
    "selector":    {"protocol": "a9" | "per-dataset", "fits": {dataset: {...}}}
    "datasets":    {"copa" | "ecare" | "other": {
        "table1":         [{"block", "row": <Table 1 row name>, "accuracy": 0..1 | null}, ...]
        "test_questions": number of test questions
        "judge":          {"model", "accuracy", "questions", "unparsed", "method": "loglik" | "generated"} | null
        "figure2":        [{"feature", "coefficient", "z", "p", "n", "note"}, ...]
        "self_evident":   §6: {"explanations", "drift_zero", "depth_one", "self_evident" (shares),
                               "errors", "self_evident_errors" (the composed model's test picks)}
        "directions":     Figure 19: {"accuracy": {"cause", "effect"}, "questions": {...}, "unknown"}
        "hedges":         {"ratio_correct", "ratio_incorrect", "incorrect_shares": {category: share}}}}
    "flagged", "imputed", "uncertainty_sources", "coherence_judges"
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from custom_metrics import __version__
from custom_metrics.common import fields
from custom_metrics.common.errors import DataError
from custom_metrics.common.files import REPORT_MAX_BYTES, read_regular_bytes
from custom_metrics.common.jsonl import loads_strict
from ibe_postprocess.features_file import FeaturesError, check_complete, read_header
from ibe_postprocess.folder import FeaturesFolder, write_file
from ibe_postprocess.inputs import JUDGE_METHODS

HEADER_KEY = "ibe_report"
T = TypeVar("T")


class ReportError(DataError):
    """A report.json that must not be used; ``reason`` says why and how to rebuild it."""

    def __init__(self, path: Path, reason: str):
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}")


@dataclass(frozen=True)
class FeaturesRef:
    """The features.jsonl a report was computed from."""

    rows: int
    rows_sha256: str
    inputs_sha256: str


@dataclass(frozen=True)
class GenerationRun:
    """An lm-eval run whose explanations were scored, from its results file."""

    task: str
    samples: str  # the samples file's name
    limit: float | None = None
    docs: int | None = None  # documents evaluated
    of_docs: int | None = None  # documents of the whole task

    @property
    def subset(self) -> str | None:
        """How the run was cut short (``--limit``, ``--samples``), or None for a whole task."""
        counted = f"{self.docs:,} of {self.of_docs:,} docs" if self.docs is not None and self.of_docs else None
        if self.limit is not None:
            return f"{self.task}: --limit {self.limit:g}" + (f" ({counted})" if counted else "")
        if self.docs is not None and self.of_docs is not None and self.docs < self.of_docs:
            return f"{self.task}: {counted} (--samples)"
        return None


@dataclass(frozen=True)
class TableRow:
    block: str
    row: str  # a Table 1 row name ("Consistency", "+ Depth", ...)
    accuracy: float | None  # NaN: undefined (e.g. no test question); None: not recorded


@dataclass(frozen=True)
class JudgeScore:
    model: str | None
    accuracy: float | None
    questions: int | None
    unparsed: int | None = None  # generated answers naming no single explanation (wrong choices)
    method: str = "loglik"  # "loglik" (ibe_judge_D) or "generated" (ibe_judge_D_chat)

    def task(self, dataset: str) -> str:
        """The judge task these numbers are the accuracy of."""
        return f"ibe_judge_{dataset}" + ("_chat" if self.method == "generated" else "")


SIGNIFICANCE = ((0.001, "***"), (0.01, "**"), (0.05, "*"))  # p below the bound -> the stars


@dataclass(frozen=True)
class Regression:
    """Figure 2 on one feature (``selector.feature_regressions``); NaN where the fit is undefined."""

    feature: str
    coefficient: float | None
    z: float | None
    p: float | None
    n: int | None
    note: str = ""

    @property
    def stars(self) -> str:
        """Figure 2's significance marks ("" for an undefined p: NaN is below no bound)."""
        return next((stars for bound, stars in SIGNIFICANCE if self.p is not None and self.p < bound), "")


@dataclass(frozen=True)
class SelfEvident:
    """§6 on one dataset (``analyses``): shares of the explanations, and the composed model's errors."""

    explanations: int | None
    drift_zero: float | None
    depth_one: float | None
    self_evident: float | None  # depth 1 and drift 0
    errors: float | None  # wrong picks on the test questions, a tie among k counting 1/k each
    self_evident_errors: float | None  # of those, picks of a self-evident explanation

    @property
    def error_share(self) -> float | None:
        if self.errors is None or self.self_evident_errors is None or not self.errors:
            return None
        return self.self_evident_errors / self.errors


DIRECTIONS = ("cause", "effect")


@dataclass(frozen=True)
class DirectionAccuracy:
    """Figure 19 on one dataset (``analyses``): the composed model's accuracy per question direction."""

    accuracy: Mapping[str, float | None]  # DIRECTIONS -> accuracy (None without such questions)
    questions: Mapping[str, int | None]
    unknown: int | None  # test questions whose direction cannot be read from their entailment form


@dataclass(frozen=True)
class HedgeCues:
    """Figures 6, 17, 18 on one dataset (``analyses``)."""

    ratio_correct: float | None  # mean hedge-cue ratio of the correct options' explanations
    ratio_incorrect: float | None
    incorrect_shares: Mapping[str, float | None]  # cue category -> its share of the incorrect options' cues


@dataclass(frozen=True)
class DatasetReport:
    table1: tuple[TableRow, ...]
    test_questions: int | None
    judge: JudgeScore | None = None
    figure2: tuple[Regression, ...] = ()
    self_evident: SelfEvident | None = None
    directions: DirectionAccuracy | None = None
    hedges: HedgeCues | None = None


@dataclass(frozen=True)
class Report:
    features: FeaturesRef
    datasets: Mapping[str, DatasetReport]
    model: str | None = None
    tasks: tuple[str, ...] = ()
    judge_model: str | None = None
    runs: tuple[GenerationRun, ...] = ()
    selector: Mapping[str, Any] = field(default_factory=dict)
    flagged: int = 0
    imputed: Mapping[str, int] = field(default_factory=dict)
    uncertainty_sources: tuple[str, ...] = ()
    coherence_judges: tuple[str, ...] = ()
    version: str = __version__
    path: Path | None = None  # where it was read from

    @property
    def subset(self) -> str | None:
        """The generation runs that covered only part of their task ("ibe_copa: --limit 3
        (3 of 2,000 docs)"), or None when every run was whole or none is known."""
        parts = [run.subset for run in self.runs if run.subset]
        return "; ".join(parts) if parts else None


def _clean(value: Any) -> Any:
    """NaN and infinity as None, numpy scalars as Python ones (strict JSON)."""
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(item) for item in value]
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def to_json(report: Report) -> dict[str, Any]:
    data = {
        HEADER_KEY: {"version": report.version, "features": vars(report.features)},
        "model": report.model,
        "tasks": list(report.tasks),
        "judge_model": report.judge_model,
        "runs": [vars(run) for run in report.runs],
        "selector": report.selector,
        "datasets": {name: asdict(entry) for name, entry in report.datasets.items()},
        "flagged": report.flagged,
        "uncertainty_sources": list(report.uncertainty_sources),
        "coherence_judges": list(report.coherence_judges),
        "imputed": dict(report.imputed),
    }
    return _clean(data)


def write(folder: FeaturesFolder, report: Report) -> Path:
    """``report.json`` through a temporary file and a rename; strict JSON (no NaN)."""
    write_file(folder.report, json.dumps(to_json(report), indent=2, allow_nan=False))
    return folder.report


def _object(raw: Any, field_name: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise fields.FieldError(f"{field_name} is {raw!r}, not an object")
    return raw


def _list(raw: Any, field_name: str) -> list[Any]:
    if not isinstance(raw, list):
        raise fields.FieldError(f"{field_name} is {raw!r}, not a list")
    return raw


def _strings(raw: Any, field_name: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    return tuple(fields.text(item, f"{field_name}[{i}]") or "" for i, item in enumerate(_list(raw, field_name)))


def _regression(raw: Any, where: str) -> Regression:
    entry = _object(raw, where)
    return Regression(
        fields.text(entry.get("feature"), f"{where}.feature") or "",
        fields.number(entry.get("coefficient")),
        fields.number(entry.get("z")),
        fields.number(entry.get("p")),
        fields.count(entry.get("n"), f"{where}.n", "explanations"),
        fields.text(entry.get("note"), f"{where}.note") or "",
    )


def _dataset(raw: Any, where: str) -> DatasetReport:
    entry = _object(raw, where)
    table = entry.get("table1")
    if not isinstance(table, list) or not table:
        raise fields.FieldError(f'{where} has no "table1" list')
    rows = []
    for index, record in enumerate(table):
        at = f"{where}.table1[{index}]"
        if not isinstance(record, dict) or "row" not in record or "accuracy" not in record:
            raise fields.FieldError(f'{at} needs "row" and "accuracy"')
        if not isinstance(record["row"], str):
            raise fields.FieldError(f"{at}.row is {record['row']!r}, not a row name")
        block = record["block"] if isinstance(record.get("block"), str) else ""
        rows.append(TableRow(block, record["row"], fields.accuracy(record["accuracy"], f"{at}.accuracy")))
    judge = _judge(entry.get("judge"), f"{where}.judge")
    figure2 = entry.get("figure2")
    return DatasetReport(
        tuple(rows),
        fields.count(entry.get("test_questions"), f"{where}.test_questions", "questions"),
        judge,
        tuple(_regression(r, f"{where}.figure2[{i}]") for i, r in enumerate(_list(figure2, f"{where}.figure2")))
        if figure2 is not None
        else (),
        _self_evident(entry.get("self_evident"), f"{where}.self_evident"),
        _directions(entry.get("directions"), f"{where}.directions"),
        _hedges(entry.get("hedges"), f"{where}.hedges"),
    )


def _optional(read: Callable[[dict[str, Any], str], T]) -> Callable[[Any, str], T | None]:
    """``read`` of an object that may be null (None): a report written before it was reported."""
    return lambda raw, where: None if raw is None else read(_object(raw, where), where)


@_optional
def _judge(entry: dict[str, Any], where: str) -> JudgeScore:
    method = entry.get("method", "loglik")
    if method not in JUDGE_METHODS:
        raise fields.FieldError(f"{where}.method is {method!r}, not one of {', '.join(JUDGE_METHODS)}")
    return JudgeScore(
        fields.text(entry.get("model"), f"{where}.model"),
        fields.accuracy(entry.get("accuracy"), f"{where}.accuracy"),
        fields.count(entry.get("questions"), f"{where}.questions", "questions"),
        fields.count(entry.get("unparsed"), f"{where}.unparsed", "answers"),
        method,
    )


@_optional
def _self_evident(entry: dict[str, Any], where: str) -> SelfEvident:
    return SelfEvident(
        fields.count(entry.get("explanations"), f"{where}.explanations", "explanations"),
        *(fields.accuracy(entry.get(name), f"{where}.{name}") for name in ("drift_zero", "depth_one", "self_evident")),
        *(fields.finite(entry.get(name), f"{where}.{name}") for name in ("errors", "self_evident_errors")),
    )


@_optional
def _directions(entry: dict[str, Any], where: str) -> DirectionAccuracy:
    accuracy = _object(entry.get("accuracy"), f"{where}.accuracy")
    questions = _object(entry.get("questions"), f"{where}.questions")
    return DirectionAccuracy(
        {name: fields.accuracy(accuracy.get(name), f"{where}.accuracy.{name}") for name in DIRECTIONS},
        {name: fields.count(questions.get(name), f"{where}.questions.{name}", "questions") for name in DIRECTIONS},
        fields.count(entry.get("unknown"), f"{where}.unknown", "questions"),
    )


@_optional
def _hedges(entry: dict[str, Any], where: str) -> HedgeCues:
    shares = _object(entry.get("incorrect_shares"), f"{where}.incorrect_shares")
    return HedgeCues(
        fields.finite(entry.get("ratio_correct"), f"{where}.ratio_correct"),
        fields.finite(entry.get("ratio_incorrect"), f"{where}.ratio_incorrect"),
        {str(name): fields.accuracy(value, f"{where}.incorrect_shares.{name}") for name, value in shares.items()},
    )


def _run(raw: Any, where: str) -> GenerationRun:
    entry = _object(raw, where)
    return GenerationRun(
        fields.text(entry.get("task"), f"{where}.task") or "",
        fields.text(entry.get("samples"), f"{where}.samples") or "",
        fields.finite(entry.get("limit"), f"{where}.limit"),
        fields.count(entry.get("docs"), f"{where}.docs"),
        fields.count(entry.get("of_docs"), f"{where}.of_docs"),
    )


def from_json(data: Any, path: Path | None = None) -> Report:
    """A Report from parsed JSON; FieldError naming the first field that does not fit."""
    data = _object(data, "the report")
    header = data.get(HEADER_KEY)
    if not isinstance(header, dict):
        raise fields.FieldError(f'no "{HEADER_KEY}" header (written by an older explain-eval, or by another tool)')
    ref = _object(header.get("features"), f"{HEADER_KEY}.features")
    features = FeaturesRef(
        fields.count(ref.get("rows"), f"{HEADER_KEY}.features.rows", "rows") or 0,
        fields.text(ref.get("rows_sha256"), f"{HEADER_KEY}.features.rows_sha256") or "",
        fields.text(ref.get("inputs_sha256"), f"{HEADER_KEY}.features.inputs_sha256") or "",
    )
    datasets = data.get("datasets")
    if not isinstance(datasets, dict) or not datasets:
        raise fields.FieldError('no "datasets" object')
    return Report(
        features,
        {str(name): _dataset(entry, f'datasets["{name}"]') for name, entry in datasets.items()},
        fields.text(data.get("model"), "model"),
        _strings(data.get("tasks"), "tasks"),
        fields.text(data.get("judge_model"), "judge_model"),
        tuple(_run(run, f"runs[{i}]") for i, run in enumerate(_list(data.get("runs") or [], "runs"))),
        _object(data.get("selector") or {}, "selector"),
        fields.count(data.get("flagged"), "flagged", "explanations") or 0,
        {
            str(k): fields.count(v, f"imputed.{k}", "values") or 0
            for k, v in _object(data.get("imputed") or {}, "imputed").items()
        },
        _strings(data.get("uncertainty_sources"), "uncertainty_sources"),
        _strings(data.get("coherence_judges"), "coherence_judges"),
        fields.text(header.get("version"), f"{HEADER_KEY}.version") or "unknown",
        path,
    )


def read(path: Path, *, check_features: bool = True) -> Report:
    """The report at ``path``, every field type-checked; ReportError when it cannot be read,
    does not fit the layout, or (``check_features``) no longer matches the ``features.jsonl``
    beside it. The error says how to rebuild it."""
    path = Path(path)
    rebuild = f"rerun `explain-eval ibe report {path.parent}`"
    try:
        data = loads_strict(read_regular_bytes(path, REPORT_MAX_BYTES, "IBE report").decode("utf-8"))
    except DataError as err:
        raise ReportError(path, str(err).removeprefix(f"{path}: ")) from err
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise ReportError(path, f"not readable JSON (truncated?): {err}; {rebuild}") from err
    try:
        report = from_json(data, path)
    except fields.FieldError as err:
        raise ReportError(path, f"{err}; {rebuild}") from err
    if not check_features:
        return report
    features = FeaturesFolder(path.parent).features
    try:
        header = read_header(features)
        check_complete(features, header)
    except FeaturesError as err:
        raise ReportError(path, f"its {features.name} cannot be used: {err.reason}") from err
    if (header.rows, header.rows_sha256) != (report.features.rows, report.features.rows_sha256):
        raise ReportError(
            path,
            f"stale: {features.name} was rewritten after this report (now {header.rows} rows from other "
            f"inputs or settings); {rebuild}",
        )
    return report
