"""IBE-Eval on the leaderboard: Table 1's published rows, and the run's Table 1 numbers read
from the ``report.json`` of ``explain-eval ibe report``.

IBE's selector accuracies are computed after the harness run, from logged samples, so
they are not in any ``results_*.json``. ``explain-eval ibe report FEATURES_DIR`` writes
``FEATURES_DIR/report.json``; the leaderboard reads from it::

    "model":     the model that wrote the explanations (optional: else the sweep's pair file)
    "selector":  {"protocol": "a9" | "per-dataset", "fits": {...}}
    "datasets":  {"copa" | "ecare": {
        "table1":          [{"block": ..., "row": <Table 1 row name>, "accuracy": <0..1>}, ...]
                           rows: Consistency, Depth (Parsimony), Drift (Parsimony), Coherence,
                           Linguistic Uncertainty, Random, + Consistency, ..., + Linguistic
                           Uncertainty (= IBE-Eval)
        "test_questions":  number of test questions
        "judge":           {"model", "accuracy", "questions"} when judge samples were scored}}

The accuracies of dataset D become task ``ibe_D_selection`` (beside the ``ibe_D`` harness
task, whose metrics describe the explanations' format) in the row of the model that wrote
the explanations. The model is the sweep's name for it, from the pair file
(``sweep_pair.json``: ``model``) one or two folders up that ``explain-eval sweep`` writes,
else the report's ``model`` field; for a report of plain JSONL explanations, put such a
file beside it.

The LLM-as-a-judge baseline is labelled by who judged: a judge accuracy goes in the
``ibe_judge_D`` column of the judging model's row, and the paper's Table 1 judge numbers,
GPT 3.5 judging each generator's explanations, in rows named so.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import (
    JSONL_MAX_BYTES,
    MARKER_MAX_BYTES,
    REPORT_MAX_BYTES,
    find_files,
    iter_regular_lines,
    read_regular_bytes,
)
from custom_metrics.common.jsonl import loads_strict
from custom_metrics.common.leaderboard_types import PaperSpec, SampleView
from custom_metrics.common.published import PublishedCell, PublishedRow, cell, table_lines
from custom_metrics.common.results import (
    PAIR_FILE,
    Problem,
    ResultsFileError,
    Score,
    TaskRun,
    find_named_files,
    read_json_object,
    sweep_label,
)
from custom_metrics.common.samples import logged_response
from custom_metrics.ibe.data import DATASETS as IBE_DATASETS

SOURCE = "IBE-Eval (Dalal et al., arXiv 2402.10767) Table 1"
REPORT_NAME = "report.json"
FEATURES_NAME = "features.jsonl"
PAPER_JUDGE = "GPT 3.5"  # the paper's LLM-as-a-judge for every generator (Section 5, "Baselines")
_METHOD_WORDS = {
    "linguistic uncertainty": "uncertainty",
    "gpt3.5 judge": "judge",
    "gpt 3.5 judge": "judge",
    "llm judge": "judge",
}


def method_key(name: str) -> str:
    """The metric name of a Table 1 row: ``"+ Depth"`` -> ``cum_depth``, etc."""
    text = re.sub(r"\((parsimony|ibe-eval)\)", "", name.strip().lower()).strip()
    cumulative = text.startswith("+")
    text = _METHOD_WORDS.get(text.lstrip("+ ").strip(), text.lstrip("+ ").strip())
    slug = re.sub(r"[^a-z0-9]+", "_", text).strip("_")
    return f"cum_{slug}" if cumulative else slug


def load_ibe_tables(paths: Iterable[Path]) -> tuple[list[TaskRun], list[Problem]]:
    """Every IBE report under ``paths`` (one beside a ``features.jsonl``), and the unreadable ones."""
    runs: list[TaskRun] = []
    roots = [Path(p).resolve() for p in paths]
    folders = [root for root in roots if root.is_dir()]
    files, problems = find_named_files(folders, REPORT_NAME, REPORT_MAX_BYTES)
    problems += find_named_files(folders, FEATURES_NAME, JSONL_MAX_BYTES)[1]  # read by feature_rows
    for path in files:
        if not (path.parent / FEATURES_NAME).exists():
            continue  # another tool's report.json
        try:
            runs.extend(read_ibe_report(path, roots))
        except ResultsFileError as error:
            problems.append(Problem(path, str(error)))
    return runs, problems


def _load_report(path: Path) -> dict[str, Any]:
    try:
        return read_json_object(path, "IBE report", REPORT_MAX_BYTES)
    except ResultsFileError as error:
        raise ResultsFileError(f"IBE report is not readable JSON (truncated?): {error}") from error


def read_ibe_report(path: Path, roots: Iterable[Path] = ()) -> list[TaskRun]:
    """The selector (and judge) accuracies of one ``report.json``, every field type-checked.

    The model is the sweep's name for the pair when there is one (the harness rows of the
    same sweep pair carry it too, so both land in one leaderboard row), else the report's
    ``model``; ``NaN`` (an undefined accuracy) reads as NaN, ``null`` as missing.
    """
    data = _load_report(path)
    datasets = data.get("datasets")
    if not isinstance(datasets, dict) or not datasets:
        raise ResultsFileError(
            'IBE report has no "datasets" object (written by an older explain-eval?): '
            "rerun `explain-eval ibe report` on its folder"
        )
    # The sweep's name for the model wins, as for harness results files (results.load_runs).
    pair_model = _text(_pair_info(path).get("model"), "model")
    model = sweep_label(path, roots) or pair_model or _text(data.get("model"), "model")
    if not model:
        raise ResultsFileError(
            f"cannot tell which model wrote the explanations of this report: put a {PAIR_FILE} "
            'with {"model": ...} beside it or one folder up'
        )
    stamp = path.stat().st_mtime
    runs = []
    for dataset, entry in sorted(datasets.items()):
        if dataset not in IBE_DATASETS:
            continue  # plain JSONL questions of no known dataset
        where = f'datasets["{dataset}"]'
        table = entry.get("table1") if isinstance(entry, dict) else None
        if not isinstance(table, list) or not table:
            raise ResultsFileError(f'{where} has no "table1" list')
        scores: dict[tuple[str, str | None], Score] = {}
        for index, record in enumerate(table):
            if not isinstance(record, dict) or "row" not in record or "accuracy" not in record:
                raise ResultsFileError(f'{where}.table1[{index}] needs "row" and "accuracy"')
            if not isinstance(record["row"], str):
                raise ResultsFileError(f"{where}.table1[{index}].row is {record['row']!r}, not a row name")
            scores[(method_key(record["row"]), None)] = Score(
                _accuracy(record["accuracy"], f"{where}.table1[{index}].accuracy"), None
            )
        questions = _questions(entry, "test_questions", where)
        runs.append(TaskRun(model, f"ibe_{dataset}_selection", scores, questions, None, path, stamp, None))
        judge = entry.get("judge")
        if judge is None:
            continue
        if not isinstance(judge, dict):
            raise ResultsFileError(f"{where}.judge is {judge!r}, not an object")
        accuracy = _accuracy(judge.get("accuracy"), f"{where}.judge.accuracy")
        if accuracy is not None:
            judged_by = _text(judge.get("model"), f"{where}.judge.model")
            # A model judging its own explanations gets the same row name as the explanations.
            judge_row = model if judged_by == data.get("model") else judged_by or f"unknown judge of {model}"
            acc = {("acc", None): Score(accuracy, None)}
            count = _questions(judge, "questions", f"{where}.judge")
            runs.append(TaskRun(judge_row, f"ibe_judge_{dataset}", acc, count, None, path, stamp, None))
    return runs


def note_scorers(runs: list[TaskRun], notes: list[str]) -> list[TaskRun]:
    """Say which coherence judge and uncertainty model scored each run's explanations.

    Offline, the paper's NLI and certainty models are replaced by the embedded LM and a
    lexicon (``ibe_postprocess``); selector accuracies from such a run are not the paper's
    measure, so the table must tell, per model, what its report recorded.
    """
    for run in runs:
        if not run.task.endswith("_selection"):
            continue
        data = _load_report(run.path)
        judges = "; ".join(map(str, data.get("coherence_judges") or ["not recorded"]))
        certainty = "; ".join(map(str, data.get("uncertainty_sources") or ["not recorded"]))
        notes.append(f"{run.model} {run.task}: coherence judge {judges}; uncertainty {certainty}.")
    return runs


def _text(raw: Any, field: str) -> str | None:
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        raise ResultsFileError(f'field "{field}" is {raw!r}, not a string')
    return raw.strip() or None


def _accuracy(raw: Any, field: str) -> float | None:
    """An accuracy in [0, 1], NaN (undefined) or missing; anything else names the field."""
    if raw is None:
        return None
    value = _float(raw)
    if value is None:
        raise ResultsFileError(f"{field} is {raw!r}, not a number")
    if math.isnan(value):
        return value
    if not 0.0 <= value <= 1.0:
        raise ResultsFileError(f"{field} is {raw!r}, not an accuracy between 0 and 1")
    return value


def _questions(data: dict[str, Any], field: str, where: str) -> int | None:
    raw = data.get(field)
    if raw is None:
        return None
    value = _float(raw)
    if value is None or not math.isfinite(value) or value < 0:
        raise ResultsFileError(f"{where}.{field} is {raw!r}, not a number of questions")
    if not value.is_integer():
        raise ResultsFileError(f"{where}.{field} is {raw!r}, not a whole number of questions")
    return int(value)


def _float(raw: Any) -> float | None:
    """A JSON number as a float (an integer too large for one is infinite); None if not a number."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None
    try:
        return float(raw)
    except OverflowError:
        return math.inf if raw > 0 else -math.inf


def _pair_info(path: Path) -> dict[str, Any]:
    for folder in list(path.parents)[:2]:
        marker = folder / PAIR_FILE
        if marker.is_file():
            try:
                info = loads_strict(read_regular_bytes(marker, MARKER_MAX_BYTES, "pair file").decode("utf-8"))
            except (DataError, ValueError):
                return {}
            return info if isinstance(info, dict) else {}
    return {}


# Table 1 (accuracy of picking the correct option's explanation): method | COPA GPT 3.5 |
# COPA LLaMA 2 13B | COPA LLaMA 2 7B | E-CARE GPT 3.5 | E-CARE LLaMA 2 13B | E-CARE LLaMA 2 7B.
# The source's header row is garbled ("COPA GPT 3.5 | E-CARE LlaMA 2 13B | LlaMA 2 7B |
# GPT 3.5 | ..."); read as three models under COPA, then the same three under E-CARE.
IBE_TABLE_1 = """
GPT3.5 Judge | .59 | .47 | .63 | .43 | .61 | .52
Human | .95 | 1.0 | .91 | .90 | .91 | .92
Consistency | .51 | .52 | .55 | .54 | .54 | .54
Depth (Parsimony) | .67 | .53 | .63 | .66 | .56 | .54
Drift (Parsimony) | .67 | .63 | .58 | .66 | .57 | .57
Coherence | .66 | .66 | .56 | .56 | .57 | .59
Linguistic Uncertainty | .70 | .65 | .61 | .59 | .56 | .60
Random | .50 | .50 | .50 | .50 | .50 | .50
+ Consistency | .51 | .52 | .55 | .54 | .54 | .54
+ Depth | .67 | .53 | .63 | .66 | .56 | .56
+ Drift | .70 | .65 | .65 | .72 | .66 | .65
+ Coherence | .73 | .71 | .69 | .73 | .68 | .69
+ Linguistic Uncertainty | .77 | .74 | .70 | .74 | .70 | .73
"""
IBE_MODELS = ("GPT 3.5", "LLaMA 2 13B", "LLaMA 2 7B")
IBE_COLUMNS = tuple(f"{name} {model}" for name in ("COPA", "E-CARE") for model in IBE_MODELS)
# The Table 1 row names as the metric names the leaderboard uses for IBE columns; the
# judge row lines up with the suite's LLM-as-a-judge tasks.
IBE_METHODS = {
    "GPT3.5 Judge": "judge",
    "Human": "human",
    "Consistency": "consistency",
    "Depth (Parsimony)": "depth",
    "Drift (Parsimony)": "drift",
    "Coherence": "coherence",
    "Linguistic Uncertainty": "uncertainty",
    "Random": "random",
    "+ Consistency": "cum_consistency",
    "+ Depth": "cum_depth",
    "+ Drift": "cum_drift",
    "+ Coherence": "cum_coherence",
    "+ Linguistic Uncertainty": "cum_uncertainty",
}


def ibe_column(dataset: str, method: str) -> str:
    """Column key of one Table 1 method on one dataset.

    Selector accuracies live under ``ibe_<dataset>_selection`` (from ``ibe_postprocess
    report``), apart from the ``ibe_<dataset>`` harness task's own format metrics; the judge
    row is the ``ibe_judge_<dataset>`` harness task.
    """
    return f"ibe_judge_{dataset}/acc" if method == "judge" else f"ibe_{dataset}_selection/{method}"


def ibe_table_1() -> dict[str, tuple[float, ...]]:
    """IBE Table 1 as {row name: accuracies in IBE_COLUMNS order}, for IBE's own report."""
    return {method: tuple(float(value) for value in values) for method, *values in table_lines(IBE_TABLE_1)}


def published_rows() -> list[PublishedRow]:
    """One row per explanation generator; the judge numbers in rows of their judge, GPT 3.5."""
    cells: dict[str, dict[str, PublishedCell]] = {model: {} for model in IBE_MODELS}
    judged: dict[str, dict[str, PublishedCell]] = {model: {} for model in IBE_MODELS}
    for method, *values in table_lines(IBE_TABLE_1):
        columns = [(d, m) for d in IBE_DATASETS for m in IBE_MODELS]
        for (dataset, model), text in zip(columns, values, strict=True):
            target = judged if IBE_METHODS[method] == "judge" else cells
            target[model][ibe_column(dataset, IBE_METHODS[method])] = cell(text, percent=False)
    rows = [
        PublishedRow(
            "ibe",
            model,
            f"{SOURCE}; explanations generated by this model",
            cells[model],
            setting="its own explanations",
        )
        for model in IBE_MODELS
    ]
    rows += [
        PublishedRow(
            "ibe",
            judge_row(model),
            f"{SOURCE}, row GPT3.5 Judge; the judge is {PAPER_JUDGE}, the explanations are {model}'s",
            judged[model],
            setting=f"judging {model}'s explanations",
        )
        for model in IBE_MODELS
    ]
    return rows


def judge_row(generator: str) -> str:
    """The name of a published row holding the paper's judge (GPT 3.5) on ``generator``'s explanations."""
    return f"{PAPER_JUDGE} judging {generator}'s explanations"


TASK_LABELS = {
    "ibe_copa": "COPA: explanation format",
    "ibe_copa_selection": "COPA: best-explanation selection (Table 1)",
    "ibe_judge_copa": "COPA: LLM-as-a-judge baseline",
    "ibe_ecare": "e-CARE: explanation format",
    "ibe_ecare_selection": "e-CARE: best-explanation selection (Table 1)",
    "ibe_judge_ecare": "e-CARE: LLM-as-a-judge baseline",
}
METRIC_LABELS = {
    "acc": "judge accuracy",
    "human": "human",
    "consistency": "consistency",
    "depth": "depth (parsimony)",
    "drift": "drift (parsimony)",
    "coherence": "coherence",
    "uncertainty": "linguistic uncertainty",
    "random": "random",
    "cum_consistency": "+ consistency",
    "cum_depth": "+ depth",
    "cum_drift": "+ drift",
    "cum_coherence": "+ coherence",
    "cum_uncertainty": "IBE-Eval (all five)",
    "steps": "IF-THEN steps",
    "well_formed": "well-formed",
    "no_steps": "no steps",
}
_SELECTION = "Accuracy of the linear selector picking the correct option's explanation on the test questions, "
# From lm_eval_tasks/ibe/README.md (Metric definitions).
DEFINITIONS = {
    "acc": "LLM-as-a-judge baseline: share of test questions where the model, shown both explanations, "
    "prefers the correct option's (log-likelihood of ' explanation 1' vs ' explanation 2').",
    "human": "Human judges picking the best explanation (published rows only).",
    "consistency": _SELECTION + "feature alone: a Prolog proof of the conclusion from the premise through "
    "the explanation's IF-THEN rules clears the 0.13 threshold.",
    "depth": _SELECTION + "feature alone: rules used in the best proof (parsimony).",
    "drift": _SELECTION + "feature alone: nouns of the IF/THEN clauses absent from premise and conclusion "
    "(concept drift, parsimony).",
    "coherence": _SELECTION + "feature alone: mean over steps of P(entailment) - P(contradiction) of IF => THEN.",
    "uncertainty": _SELECTION + "feature alone: hedging of the assumptions and summary (6 - certainty).",
    "random": "Expected accuracy of picking one explanation at random (0.5 for two options).",
    "cum_consistency": _SELECTION + "features up to consistency.",
    "cum_depth": _SELECTION + "features up to depth.",
    "cum_drift": _SELECTION + "features up to drift.",
    "cum_coherence": _SELECTION + "features up to coherence.",
    "cum_uncertainty": _SELECTION + "all five features: IBE-Eval.",
    "steps": "Mean number of IF-THEN steps parsed from an explanation.",
    "well_formed": "Share of explanations with IF-THEN steps, a 'Therefore' summary and no format problem.",
    "no_steps": "Share of explanations without any IF-THEN step.",
}
# Columns of features.jsonl shown beside each logged explanation once `ibe score` ran.
FEATURE_FIELDS = ("flag", "consistent", "depth", "drift", "coherence", "uncertainty", "proof_status")


def sample_fields(task: str, sample: dict[str, Any]) -> dict[str, Any]:
    """IBE explanations in the sample viewer: which question and option, and whether it is right."""
    doc = sample.get("doc") or {}
    fields: dict[str, Any] = {
        "question": doc.get("qid"),
        "option": doc.get("option"),
        "split": doc.get("split"),
        "premise": doc.get("premise"),
        "conclusion": doc.get("conclusion"),
    }
    if isinstance(sample.get("well_formed"), (int, float)):  # a generation task: show its explanation
        fields["explanation"] = logged_response(sample)
    if "correct" in doc:
        fields["correct option"] = "yes" if doc.get("correct") else "no"
    if isinstance(sample.get("well_formed"), (int, float)):
        fields["well formed"] = "yes" if sample["well_formed"] else "no"
    if isinstance(sample.get("acc"), (int, float)):
        fields["judge right"] = "yes" if sample["acc"] else "no"
    return fields


def sample_outcomes(task: str, sample: dict[str, Any]) -> dict[str, float | None]:
    return {
        metric: float(sample[metric])
        for metric in ("well_formed", "acc")
        if isinstance(sample.get(metric), (int, float)) and not isinstance(sample.get(metric), bool)
    }


def feature_rows(roots: Sequence[Path]) -> dict[tuple[str, int], dict[str, Any]]:
    """IBE features of logged explanations, keyed by (samples file name, line).

    ``ibe score`` records each row's input as ``file:line``; the file is matched by name
    (a samples file name carries its task and timestamp), since the path was written
    relative to wherever ``score`` ran. An unreadable features file is skipped: the
    samples still show, without features.
    """
    found: dict[tuple[str, int], dict[str, Any]] = {}
    files, _ = find_files([Path(p) for p in roots if Path(p).is_dir()], FEATURES_NAME, JSONL_MAX_BYTES)
    for features in files:  # a FIFO or device named so is never opened (load_ibe_tables names it)
        try:
            for line in iter_regular_lines(features, JSONL_MAX_BYTES, "features file"):
                try:
                    row = loads_strict(line.decode("utf-8"))
                    source, _, number = str(row["source"]).rpartition(":")
                    key = (Path(source).name, int(number))
                except (ValueError, KeyError, TypeError):
                    continue
                found[key] = {
                    name if name != "flag" else "IBE flag": row.get(name) for name in FEATURE_FIELDS if name in row
                }
                found[key]["flagged"] = "yes" if row.get("flag") else "no"
        except DataError:
            continue
    return found


SPEC = PaperSpec(
    "ibe",
    "IBE-Eval: selecting the best explanation (COPA, e-CARE)",
    r"ibe(_|$)",
    ("ibe_judge_copa", "ibe_copa_selection", "ibe_copa", "ibe_judge_ecare", "ibe_ecare_selection", "ibe_ecare"),
    ("acc", *IBE_METHODS.values()),
    ("acc", "cum_uncertainty"),
    "Published rows print no ±. ibe_judge_* columns hold the accuracy of the row's model as judge: the "
    f"paper's judge is always {PAPER_JUDGE}, so its judge numbers are in the rows '{PAPER_JUDGE} judging "
    "<generator>'s explanations'. ibe_*_selection columns come from `explain-eval ibe report` and sit in "
    "the row of the model that wrote the explanations; cum_uncertainty = all five criteria = IBE-Eval.",
    {**{key: name for name, key in IBE_METHODS.items()}, "cum_uncertainty": "+ Linguistic Uncertainty = IBE-Eval"},
    published=published_rows,
    adjust_runs=note_scorers,
    read_extra=load_ibe_tables,
    task_labels=TASK_LABELS,
    metric_labels=METRIC_LABELS,
    definitions=DEFINITIONS,
    samples=SampleView(
        sample_fields,
        facets=("split", "correct option", "well formed", "flagged", "consistent", "judge right"),
        outcomes=sample_outcomes,
        doc_key=lambda task, sample: "{}/{}".format(
            (sample.get("doc") or {}).get("qid", sample.get("doc_id")), (sample.get("doc") or {}).get("option", "")
        ),
        extras=feature_rows,
    ),
)
