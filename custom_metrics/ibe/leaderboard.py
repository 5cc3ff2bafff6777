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

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from custom_metrics.common.leaderboard_types import PaperSpec
from custom_metrics.common.published import PublishedCell, PublishedRow, cell, table_lines
from custom_metrics.common.results import PAIR_FILE, Problem, ResultsFileError, Score, TaskRun
from custom_metrics.ibe.data import DATASETS as IBE_DATASETS

SOURCE = "IBE-Eval (Dalal et al., arXiv 2402.10767) Table 1"
REPORT_NAME = "report.json"
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
    problems: list[Problem] = []
    for root in (Path(p).resolve() for p in paths):
        files = sorted(root.rglob(REPORT_NAME)) if root.is_dir() else []
        for path in files:
            if not (path.parent / "features.jsonl").is_file():
                continue  # another tool's report.json
            try:
                runs.extend(read_ibe_report(path))
            except ResultsFileError as error:
                problems.append(Problem(path, str(error)))
    return runs, problems


def _load_report(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ResultsFileError(f"IBE report is not readable JSON (truncated?): {error}") from error


def read_ibe_report(path: Path) -> list[TaskRun]:
    data = _load_report(path)
    datasets = data.get("datasets") if isinstance(data, dict) else None
    if not isinstance(datasets, dict) or not datasets:
        raise ResultsFileError(
            'IBE report has no "datasets" object (written by an older explain-eval?): '
            "rerun `explain-eval ibe report` on its folder"
        )
    # The sweep's name for the model wins, as for harness results files (results.load_runs).
    model = _pair_info(path).get("model") or data.get("model")
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
            scores[(method_key(str(record["row"])), None)] = Score(_number(record["accuracy"]), None)
        runs.append(
            TaskRun(
                model, f"ibe_{dataset}_selection", scores, _count(entry.get("test_questions")), None, path, stamp, None
            )
        )
        judge = entry.get("judge")
        if isinstance(judge, dict) and _number(judge.get("accuracy")) is not None:
            judged_by = judge.get("model")
            # A model judging its own explanations gets the same row name as the explanations.
            judge_row = model if judged_by == data.get("model") else judged_by or f"unknown judge of {model}"
            acc = {("acc", None): Score(_number(judge["accuracy"]), None)}
            runs.append(
                TaskRun(judge_row, f"ibe_judge_{dataset}", acc, _count(judge.get("questions")), None, path, stamp, None)
            )
    return runs


def _count(raw: Any) -> int | None:
    number = _number(raw)
    return None if number is None else int(number)


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
        judges = "; ".join(data.get("coherence_judges") or ["not recorded"])
        certainty = "; ".join(data.get("uncertainty_sources") or ["not recorded"])
        notes.append(f"{run.model} {run.task}: coherence judge {judges}; uncertainty {certainty}.")
    return runs


def _number(raw: Any) -> float | None:
    return float(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) else None


def _pair_info(path: Path) -> dict[str, str]:
    for folder in list(path.parents)[:2]:
        marker = folder / PAIR_FILE
        if marker.is_file():
            try:
                return {k: str(v) for k, v in json.loads(marker.read_text(encoding="utf-8")).items()}
            except (OSError, ValueError, AttributeError):
                return {}
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
        PublishedRow("ibe", model, f"{SOURCE}; explanations generated by this model", cells[model])
        for model in IBE_MODELS
    ]
    rows += [
        PublishedRow(
            "ibe",
            judge_row(model),
            f"{SOURCE}, row GPT3.5 Judge; the judge is {PAPER_JUDGE}, the explanations are {model}'s",
            judged[model],
        )
        for model in IBE_MODELS
    ]
    return rows


def judge_row(generator: str) -> str:
    """The name of a published row holding the paper's judge (GPT 3.5) on ``generator``'s explanations."""
    return f"{PAPER_JUDGE} judging {generator}'s explanations"


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
)
