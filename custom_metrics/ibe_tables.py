"""IBE-Eval's Table 1 numbers, read from the ``report.json`` of ``python -m ibe_postprocess report``.

IBE's selector accuracies are computed after the harness run, from logged samples, so
they are not in any ``results_*.json``. ``ibe_postprocess report FEATURES_DIR`` writes
``FEATURES_DIR/report.json``; the leaderboard reads from it::

    "table1":          [{"block": ..., "row": <Table 1 row name>, "accuracy": <0..1>}, ...]
                       rows: Consistency, Depth (Parsimony), Drift (Parsimony), Coherence,
                       Linguistic Uncertainty, Random, + Consistency, ..., + Linguistic
                       Uncertainty (= IBE-Eval)
    "test_questions":  number of test questions (optional)
    "judge_accuracy":  LLM-as-a-judge accuracy when judge samples were scored (optional)

The accuracies become task ``ibe_<dataset>_selection`` (beside the ``ibe_<dataset>``
harness task, whose metrics describe the explanations' format). Model and task come from
the report's optional ``model``/``task`` fields, else from the sweep's pair file
(``sweep_pair.json``: ``model``, ``task``) one or two folders up, which ``python -m
custom_metrics.sweep`` writes; for a report made by hand, put such a file beside it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable

from custom_metrics.harness_results import PAIR_FILE, Problem, ResultsFileError, Score, TaskRun

REPORT_NAME = "report.json"
DATASETS = {"ibe_copa": "copa", "ibe_ecare": "ecare"}
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


def read_ibe_report(path: Path) -> list[TaskRun]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ResultsFileError(f"IBE report is not readable JSON (truncated?): {error}") from error
    table = data.get("table1") if isinstance(data, dict) else None
    if not isinstance(table, list) or not table:
        raise ResultsFileError('IBE report has no "table1" list')
    pair = _pair_info(path)
    model, task = data.get("model") or pair.get("model"), data.get("task") or pair.get("task")
    if not model or task not in DATASETS:
        raise ResultsFileError(
            f"cannot tell the model and task (ibe_copa/ibe_ecare) of this report: put a {PAIR_FILE} "
            'with {"model": ..., "task": ...} beside it or one folder up'
        )
    scores: dict[tuple[str, str | None], Score] = {}
    for index, record in enumerate(table):
        if not isinstance(record, dict) or "row" not in record or "accuracy" not in record:
            raise ResultsFileError(f'table1[{index}] needs "row" and "accuracy"')
        scores[(method_key(str(record["row"])), None)] = Score(_number(record["accuracy"]), None)
    questions = data.get("test_questions")
    n_samples = int(questions) if isinstance(questions, (int, float)) else None
    stamp = path.stat().st_mtime
    runs = [TaskRun(model, f"{task}_selection", scores, n_samples, None, path, stamp, None)]
    judge = _number(data.get("judge_accuracy"))
    if judge is not None:
        judge_n = data.get("judge_questions")
        runs.append(TaskRun(model, f"ibe_judge_{DATASETS[task]}", {("acc", None): Score(judge, None)},
                            int(judge_n) if isinstance(judge_n, (int, float)) else None, None, path, stamp, None))
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

