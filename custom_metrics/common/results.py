"""lm-eval results files of any harness version, read into one flat record per task.

Researchers compare runs made months apart, with other harness versions, on other
machines. The layouts differ: 0.4.x writes ``"acc,none"`` keys, ``n-samples``,
``model_name`` and a dict of model args; 0.3.x and early 0.4 write ``"acc"`` keys and a
``"pretrained=...,dtype=..."`` string; "N/A" and NaN stand for missing numbers. This
module hides those differences so every table is built from the same records, and
turns a broken file into a reported problem instead of a crash.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

RESULTS_GLOB = "results*.json"
# Written by `explain-eval sweep` into each model x task folder: the name the
# user gave the model setting, which the results file itself cannot know.
PAIR_FILE = "sweep_pair.json"

# Entries of results[task] that describe the task rather than score it.
_NOT_METRICS = {"alias", "name", "sample_len", "sample_count", "samples"}
# Model-args keys that name the model, in order of preference (hf/vllm, API models, gguf).
_MODEL_ARG_KEYS = ("pretrained", "model", "engine", "path", "gguf_file")
_FILENAME_TIME = re.compile(r"results_(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)")


class ResultsFileError(ValueError):
    """A file that is not a readable lm-eval results file (truncated, wrong shape)."""


@dataclass(frozen=True)
class Score:
    """One metric of one task; ``None`` where the harness wrote "N/A" or nothing."""

    value: float | None
    stderr: float | None


@dataclass(frozen=True)
class TaskRun:
    """The scores of one task in one results file, with what identifies the run."""

    model: str
    task: str
    scores: dict[tuple[str, str | None], Score]  # (metric, filter); filter None = old layout
    n_samples: int | None
    limit: float | None
    path: Path
    timestamp: float
    harness_version: str | None


@dataclass(frozen=True)
class Problem:
    """A file that was skipped, and why; reported to the user by name."""

    path: Path
    reason: str


def find_results_files(paths: Iterable[Path]) -> list[Path]:
    """Results files under the given folders (recursively) and the files given directly."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob(RESULTS_GLOB) if p.is_file()))
        elif path.is_file():
            found.append(path)
    return list(dict.fromkeys(p.resolve() for p in found))


def load_runs(paths: Iterable[Path]) -> tuple[list[TaskRun], list[Problem]]:
    """Every task run found under ``paths``, and the files that could not be read."""
    roots = [Path(p).resolve() for p in paths]
    runs: list[TaskRun] = []
    problems: list[Problem] = [Problem(p, "no such file or folder") for p in roots if not p.exists()]
    for path in find_results_files(roots):
        try:
            runs.extend(read_results_file(path, label=_sweep_label(path, roots)))
        except ResultsFileError as error:
            problems.append(Problem(path, str(error)))
    return runs, problems


def read_results_file(path: Path, label: str | None = None) -> list[TaskRun]:
    """The task runs of one results file; ``label`` overrides the model name it records."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise ResultsFileError(f"not UTF-8 text ({error})") from error
    except json.JSONDecodeError as error:
        raise ResultsFileError(
            f"not valid JSON (truncated or corrupt?): {error.msg} at line {error.lineno}, column {error.colno}"
        ) from error
    except OSError as error:
        raise ResultsFileError(f"cannot be read: {error.strerror or error}") from error
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise ResultsFileError('not an lm-eval results file (no "results" object)')
    entries = dict(data["results"])
    # Early 0.4 releases kept group scores apart from task scores.
    for group, scores in (data.get("groups") or {}).items():
        entries.setdefault(group, scores)
    if not entries:
        raise ResultsFileError('"results" is empty')
    config = data.get("config") if isinstance(data.get("config"), dict) else {}
    model = label or model_name(data)
    timestamp = _timestamp(data, path)
    n_samples = data.get("n-samples") if isinstance(data.get("n-samples"), dict) else {}
    runs = []
    for task, scores in entries.items():
        if not isinstance(scores, dict):
            raise ResultsFileError(f'results["{task}"] is not an object')
        runs.append(
            TaskRun(
                model=model,
                task=str(task),
                scores=_scores(scores),
                n_samples=_n_samples(n_samples.get(task), scores),
                limit=_number(config.get("limit")),
                path=path,
                timestamp=timestamp,
                harness_version=data.get("lm_eval_version"),
            )
        )
    return runs


def model_name(data: dict[str, Any]) -> str:
    """The model a results file was made with, from the newest field that records it."""
    name = data.get("model_name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    config = data.get("config") if isinstance(data.get("config"), dict) else {}
    args = config.get("model_args")
    if isinstance(args, str):
        args = parse_model_args(args)
    if isinstance(args, dict):
        for key in _MODEL_ARG_KEYS:
            if args.get(key):
                return str(args[key])
    model_type = config.get("model")
    return f"unnamed {model_type} model" if model_type else "unnamed model"


def parse_model_args(text: str) -> dict[str, str]:
    """``"pretrained=x,dtype=float32"`` as a dict (the harness' own string format)."""
    pairs = (item.split("=", 1) for item in text.split(",") if "=" in item)
    return {key.strip(): value.strip() for key, value in pairs}


def _sweep_label(path: Path, roots: list[Path]) -> str | None:
    """The sweep's name for the model, from the pair file one or two folders up.

    lm-eval writes ``PAIR/<model>/results_*.json``, so the pair folder is the grandparent;
    the search never climbs above the folder the user named.
    """
    root = next((r for r in roots if r in path.parents), None)
    for folder in list(path.parents)[:2]:
        marker = folder / PAIR_FILE
        if marker.is_file():
            try:
                return str(json.loads(marker.read_text(encoding="utf-8"))["model"])
            except (OSError, ValueError, KeyError, TypeError):
                return None
        if folder == root:
            break
    return None


def _scores(entry: dict[str, Any]) -> dict[tuple[str, str | None], Score]:
    values: dict[tuple[str, str | None], float | None] = {}
    stderrs: dict[tuple[str, str | None], float | None] = {}
    for key, raw in entry.items():
        metric, _, filter_name = str(key).partition(",")
        if metric in _NOT_METRICS or isinstance(raw, (dict, list)):
            continue
        number = _number(raw)
        if number is None and not _is_missing(raw):
            continue  # a label such as "alias" under an unexpected key: not a score
        target = stderrs if metric.endswith("_stderr") else values
        name = metric[: -len("_stderr")] if metric.endswith("_stderr") else metric
        target[(name, filter_name or None)] = number
    return {key: Score(value, stderrs.get(key)) for key, value in values.items()}


def _number(raw: Any) -> float | None:
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, (int, float)):
        return float(raw)
    if isinstance(raw, str):
        try:
            return float(raw)
        except ValueError:
            return None
    return None


def _is_missing(raw: Any) -> bool:
    return raw is None or (isinstance(raw, str) and raw.strip().upper() in {"N/A", "NA", ""})


def _n_samples(entry: Any, scores: dict[str, Any]) -> int | None:
    if isinstance(entry, dict) and isinstance(entry.get("effective"), (int, float)):
        return int(entry["effective"])
    sample_len = scores.get("sample_len")
    return int(sample_len) if isinstance(sample_len, (int, float)) else None


def _timestamp(data: dict[str, Any], path: Path) -> float:
    """When the run finished: the harness' ``date``, else the file name, else mtime."""
    date = _number(data.get("date"))
    if date is not None and math.isfinite(date):
        return date
    match = _FILENAME_TIME.search(path.name)
    if match:
        text = match.group(1)
        fmt = "%Y-%m-%dT%H-%M-%S.%f" if "." in text else "%Y-%m-%dT%H-%M-%S"
        return datetime.strptime(text, fmt).timestamp()
    return path.stat().st_mtime
