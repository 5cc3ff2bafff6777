"""lm-eval results files of any harness version, read into one flat record per task.

Researchers compare runs made months apart with other harness versions: 0.4.x writes
``"acc,none"`` keys, ``n-samples`` and a dict of model args; 0.3.x and early 0.4 write ``"acc"``
keys and a ``"pretrained=..."`` string; "N/A" and NaN stand for missing numbers. This module
hides those differences, and turns a broken file into a reported problem naming the file and
the field. A metric value outside its range (``metric_ranges``) is left out and named, the file's
other numbers kept; a standard error that is NaN, "N/A" or absent is none (no "± NaN").

It also owns how a model is *named* everywhere: a sweep's name for the setting wins, then a
friendly form of the checkpoint (``model_name``), also in a judge's spec (``friendly_spec``).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from custom_metrics.common import fields, metric_ranges
from custom_metrics.common.embedded_model import EMBEDDED_MODELS
from custom_metrics.common.errors import DataError
from custom_metrics.common.files import MARKER_MAX_BYTES, RESULTS_MAX_BYTES, find_files, read_regular_bytes
from custom_metrics.common.jsonl import StrictJSONError, loads_strict
from custom_metrics.common.lineage import Lineage, logged_lineage, readers
from custom_metrics.common.task_folders import paper_packages

RESULTS_GLOB = "results*.json"
# Written by `explain-eval sweep` into each model x task folder: the name the
# user gave the model setting, which the results file itself cannot know.
PAIR_FILE = "sweep_pair.json"

# Entries of results[task] that describe the task rather than score it.
_NOT_METRICS = {"alias", "name", "sample_len", "sample_count", "samples"}
# Model-args keys that name the model, in order of preference (hf/vllm, API models, gguf).
_MODEL_ARG_KEYS = ("pretrained", "model", "engine", "path", "gguf_file")
_FILENAME_TIME = re.compile(r"results_(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)")
_SAMPLES_NAME = re.compile(r"samples_(?P<task>.+)_(?P<stamp>[^_]+)\.jsonl")  # lm-eval's stamps hold no "_"
# A Hugging Face cache snapshot folder: .../models--org--name/snapshots/<revision>
_HF_CACHE = re.compile(r"models--(?P<org>[^/\\]+?)--(?P<name>[^/\\]+)[/\\]snapshots[/\\][^/\\]+$")
_EMBEDDED_FOLDERS = {model.folder: model.display_name for model in EMBEDDED_MODELS.values()}
# An absolute path (POSIX, home-relative or Windows) inside a longer text, up to a character no path
# holds here: whitespace, quotes, ?, (, ), ;, "," and "@" (where an ``openai:`` judge's server URL
# begins); never a URL's "//host" nor the rest of a path already shortened to "runs/…/results.json".
_PATH_IN_TEXT = re.compile(r"(?<![\w./…-])(?:~/|[A-Za-z]:\\|/(?!/))[^\s\"'?();,<>@]*[^\s\"'?();,<>.@]")
# lighteval names a task "suite|task|few-shot count" ("leaderboard|arc:challenge|25")
_LIGHTEVAL_TASK = re.compile(r"[^|\s]+\|[^|]+\|\d+")


class ResultsFileError(ValueError):
    """A file that is not a readable lm-eval results file (truncated, wrong shape or types)."""


@dataclass(frozen=True)
class Score:
    """One metric of one task; ``None`` where the harness wrote "N/A" or nothing (a stderr: or NaN)."""

    value: float | None
    stderr: float | None


@dataclass(frozen=True)
class TaskRun:
    """The scores of one task in one results file, with what identifies the run."""

    model: str  # the display name (see ``model_name``)
    task: str
    scores: dict[tuple[str, str | None], Score]  # (metric, filter); filter None = old layout
    n_samples: int | None
    limit: float | None
    path: Path
    timestamp: float
    harness_version: str | None
    setting: str = ""  # e.g. "zero-shot, chat template"; "" when the file does not say
    n_original: int | None = None  # the task's size before --limit / --samples
    model_id: str = ""  # the checkpoint or API model as the results file records it
    # The task's config and version as the results file logged them (``configs``,
    # ``versions``), to tell a run of an older or foreign task of the same name.
    task_config: Mapping[str, Any] | None = None
    task_version: Any = None
    source_task: str = ""  # the task name in the file when a paper's hook renamed it
    # A run a paper's hook computed from others (RULE's five-shot mean over splits, an IBE
    # selector): what it was computed from, in words; its ± is a spread, not a stderr.
    derived: str = ""
    cut: str = ""  # how the inputs of a derived run were cut short ("" = not, or not known)
    # How the harness ran, as the file records it: a row built from files that differ here
    # says so (a batch-size-24 and a batch-size-1 file differ in their last digits).
    batch_size: str = ""
    model_args: str = ""
    # Fields of the file left out for a value outside their metric's range, each named.
    left_out: tuple[str, ...] = ()
    # A task that reads another run's samples: that run (``lineage``), as the reading run recorded it.
    lineage: Lineage | None = None

    @property
    def subset(self) -> str | None:
        """How the run was cut short (``--limit`` or ``--samples``) and how what it was computed from or
        read was (``cut``), or None for a run on all the data."""
        own = None
        if self.limit is not None:
            own = f"--limit {self.limit:g}" + (f", {self.n_samples} docs" if self.n_samples is not None else "")
        elif self.n_samples is not None and self.n_original is not None and self.n_samples < self.n_original:
            own = f"{self.n_samples} of {self.n_original} docs"
        return "; ".join(part for part in (own, self.cut) if part) or None

    @property
    def samples_file(self) -> Path | None:
        """The ``--log_samples`` file of this task written with the results file, if any."""
        return _samples_beside(self.path, self.source_task or self.task)


def _samples_beside(results: Path, task: str) -> Path | None:
    match = _FILENAME_TIME.search(results.name)
    path = results.with_name(f"samples_{task}_{match.group(1)}.jsonl") if match else None
    return path if path is not None and path.is_file() else None


@dataclass(frozen=True)
class Problem:
    """A file that was skipped, or a number of it left out, and why; reported to the user by name."""

    path: Path
    reason: str


def find_named_files(paths: Iterable[Path], pattern: str, max_bytes: int) -> tuple[list[Path], list[Problem]]:
    """``files.find_files``, each file it would not open a problem."""
    found, skipped = find_files(paths, pattern, max_bytes)
    return found, [Problem(path, f"{reason}; not read") for path, reason in skipped]


def load_runs(paths: Iterable[Path]) -> tuple[list[TaskRun], list[Problem]]:
    """Every task run found under ``paths``, and the files that could not be read."""
    roots = [Path(p).resolve() for p in paths]
    runs: list[TaskRun] = []
    problems: list[Problem] = [Problem(p, "no such file or folder") for p in roots if not p.exists()]
    files, skipped = find_named_files(roots, RESULTS_GLOB, RESULTS_MAX_BYTES)
    problems += skipped
    for path in files:
        try:
            read = read_results_file(path, label=sweep_label(path, roots))
        except ResultsFileError as error:
            problems.append(Problem(path, str(error)))
            continue
        runs.extend(read)
        problems += left_out_problems(read)
    return runs, problems


def left_out_problems(runs: Iterable[TaskRun]) -> list[Problem]:
    return [Problem(run.path, reason) for run in runs for reason in run.left_out]


def read_results_file(path: Path, label: str | None = None) -> list[TaskRun]:
    """The task runs of one results file; ``label`` overrides the model name it records."""
    try:
        return _task_runs(path, label)
    except fields.FieldError as error:
        raise ResultsFileError(str(error)) from error


def other_tool(data: dict[str, Any]) -> str | None:
    """The tool that wrote a results file that is not lm-eval's, when its layout says so
    (its ``results`` would otherwise read as tasks of an unnamed model)."""
    general = data.get("config_general")
    if isinstance(general, dict) and ("lighteval_sha" in general or "summary_general" in data):
        return "lighteval"
    tasks = data.get("results") if isinstance(data.get("results"), dict) else {}
    named = [task for task in tasks if task != "all"]  # lighteval adds an "all" average
    if named and all(_LIGHTEVAL_TASK.fullmatch(str(task)) for task in named):
        return "lighteval"
    return None


def _task_runs(path: Path, label: str | None) -> list[TaskRun]:
    data = read_json_object(path, "lm-eval results file")
    tool = other_tool(data)
    if tool is not None:
        raise ResultsFileError(
            f"a {tool} results file, not lm-eval's: the leaderboard reads the results files of the suite's "
            "tasks run through lm_eval (--output_path); run the tasks with lm_eval to compare this model"
        )
    if not isinstance(data.get("results"), dict):
        raise ResultsFileError('not an lm-eval results file (no "results" object)')
    entries = dict(data["results"])
    # Early 0.4 releases kept group scores apart from task scores.
    for group, scores in _object(data, "groups").items():
        entries.setdefault(group, scores)
    if not entries:
        raise ResultsFileError('"results" is empty')
    config = _object(data, "config")
    n_samples = _object(data, "n-samples")
    n_shot = _object(data, "n-shot")
    configs = _object(data, "configs")
    versions = _object(data, "versions")
    limit = fields.finite(config.get("limit"), 'config "limit"', strings=True)
    model = label or model_name(data)
    timestamp = _timestamp(data, path)
    version = data.get("lm_eval_version")
    model_args = config.get("model_args")  # one form whatever the harness version wrote (a string or an object)
    model_args = parse_model_args(model_args) if isinstance(model_args, str) and "=" in model_args else model_args
    runs = []
    for task, scores in entries.items():
        if not isinstance(scores, dict):
            raise ResultsFileError(f'results["{task}"] is {_kind(scores)}, not an object')
        counts = n_samples.get(task)
        task_scores, left_out = _scores(str(task), scores)
        runs.append(
            TaskRun(
                model=model,
                task=str(task),
                scores=task_scores,
                left_out=tuple(left_out),
                n_samples=_n_samples(task, counts, scores),
                limit=limit,
                path=path,
                timestamp=timestamp,
                harness_version=version if isinstance(version, str) else None,
                setting=_setting(data, n_shot.get(task)),
                n_original=fields.count(counts.get("original"), f'n-samples["{task}"].original', strings=True)
                if isinstance(counts, dict)
                else None,
                model_id=model_id(data),
                task_config=configs.get(task) if isinstance(configs.get(task), dict) else None,
                task_version=versions.get(task),
                batch_size=_plain(config.get("batch_size")),
                model_args=_plain(model_args),
                lineage=_read_lineage(str(task), path, configs.get(task)),
            )
        )
    return runs


def _read_lineage(task: str, path: Path, config: Any) -> Lineage | None:
    """What a reading task's run read: the lineage its samples file's docs record, else (a run
    without ``--log_samples``, or made before lineage was recorded) the samples file its logged
    ``--metadata`` names, where that is still there; None for a task that reads no other run."""
    key = readers().get(task)
    if key is None or not _FILENAME_TIME.search(path.name):
        return None
    own = _samples_beside(path, task)
    metadata = config.get("metadata") if isinstance(config, dict) else None
    named = metadata.get(key) if isinstance(metadata, dict) else None
    try:
        found = logged_lineage(own) if own else None
        if found is None and isinstance(named, str) and Path(named).expanduser().is_file():
            found = source_lineage(Path(named).expanduser())
    except DataError as error:
        raise ResultsFileError(str(error).rstrip(".")) from error
    return found


def samples_run(path: Path) -> TaskRun | None:
    """The run of a samples file as the results file lm-eval wrote beside it records it (None:
    no such file, or not readable)."""
    match = _SAMPLES_NAME.fullmatch(path.name)
    results = path.with_name(f"results_{match['stamp']}.json") if match else None
    if results is None or not results.is_file():
        return None
    try:
        runs = read_results_file(results)
    except (ResultsFileError, OSError):
        return None
    return next((run for run in runs if run.task == match["task"]), None)


def source_lineage(path: Path) -> Lineage:
    """The run a reading task reads, from its samples file ``path``: its task, documents of the
    full count, ``--limit``, setting and model as its results file records them, and how what
    it read in turn was cut. Without a results file beside it, only the file is known."""
    run = samples_run(path)
    if run is None:
        match = _SAMPLES_NAME.fullmatch(path.name)
        return Lineage(path.name, match["task"] if match else "", None, None, None, "", "", recorded=False)
    upstream = run.lineage.cut if run.lineage is not None else ""
    return Lineage(path.name, run.task, run.n_samples, run.n_original, run.limit, run.setting, run.model_id, upstream)


def read_json_object(path: Path, what: str, max_bytes: int = RESULTS_MAX_BYTES) -> dict[str, Any]:
    """A JSON object from a regular file ``path`` of at most ``max_bytes``, read as strictly as
    ``jsonl.loads_strict`` reads; ResultsFileError saying what is wrong otherwise."""
    try:
        data = loads_strict(read_regular_bytes(path, max_bytes, what).decode("utf-8"))
    except DataError as error:  # not a regular file, too large, unreadable: the message names the path
        raise ResultsFileError(str(error).removeprefix(f"{path}: {what} ").rstrip(".")) from error
    except StrictJSONError as error:
        raise ResultsFileError(f"{error.msg} (line {error.lineno})") from error
    except UnicodeDecodeError as error:
        raise ResultsFileError(f"not UTF-8 text ({error})") from error
    except json.JSONDecodeError as error:
        raise ResultsFileError(
            f"not valid JSON (truncated or corrupt?): {error.msg} at line {error.lineno}, column {error.colno}"
        ) from error
    except RecursionError as error:
        raise ResultsFileError("JSON nested too deeply to be a results file") from error
    if not isinstance(data, dict):
        raise ResultsFileError(f"{_kind(data)} in JSON, where the {what} must be an object")
    return data


def model_id(data: dict[str, Any]) -> str:
    """The model a results file was made with, as recorded (checkpoint path, Hub id, API name)."""
    name = data.get("model_name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    config = data.get("config") if isinstance(data.get("config"), dict) else {}
    args = config.get("model_args")
    if isinstance(args, str):
        args = parse_model_args(args)
    if isinstance(args, dict):
        for key in _MODEL_ARG_KEYS:
            value = args.get(key)
            if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
                return str(value).strip()
    model_type = config.get("model")
    return f"unnamed {model_type} model" if isinstance(model_type, str) and model_type else "unnamed model"


def model_name(data: dict[str, Any]) -> str:
    return friendly_model_name(model_id(data))


def friendly_model_name(raw: str) -> str:
    """A checkpoint as people name it: an embedded model by name (``gemma-3-270m
    (embedded)``), a Hub cache snapshot by its Hub id, any other local path by its last
    component, and a Hub id or API model name as given."""
    text = raw.strip()
    trimmed = text.rstrip("/\\")
    if not trimmed:
        return text or "unnamed model"
    cached = _HF_CACHE.search(trimmed)
    if cached:
        return f"{cached['org']}/{cached['name']}"
    last = re.split(r"[/\\]", trimmed)[-1]
    is_path = (
        trimmed.startswith(("/", "./", "../", "~", "\\"))
        or re.match(r"^[A-Za-z]:[/\\]", trimmed) is not None
        or "\\" in trimmed
        or (trimmed.count("/") >= 2 and not any(c.isspace() for c in trimmed))  # runs/ckpt/final
    )
    if last in _EMBEDDED_FOLDERS and (is_path or "/" in trimmed):
        return _EMBEDDED_FOLDERS[last]
    return last if is_path and last not in ("", ".", "..") else text


def friendly_spec(text: str) -> str:
    """A judge or scorer spec as pages show it, no machine's absolute path in it: each path
    replaced by the friendly name of what it points at (``lm:/root/.cache/explain-eval/gemma-3-270m-hf?mode=loglik``
    reads ``lm:gemma-3-270m (embedded)?mode=loglik``)."""
    return _PATH_IN_TEXT.sub(lambda match: friendly_model_name(match.group(0)), text)


def rename(runs: Iterable[TaskRun], names: Mapping[str, str]) -> list[TaskRun]:
    """Runs with ``--name`` overrides applied: a key matches the shown name or the recorded model."""
    return [replace(run, model=names.get(run.model, names.get(run.model_id, run.model))) for run in runs]


def parse_model_args(text: str) -> dict[str, str]:
    """``"pretrained=x,dtype=float32"`` as a dict (the harness' own string format)."""
    pairs = (item.split("=", 1) for item in text.split(",") if "=" in item)
    return {key.strip(): value.strip() for key, value in pairs}


def sweep_label(path: Path, roots: Iterable[Path] = ()) -> str | None:
    """The sweep's name for the model (``model`` in the pair file, ``sweep_pair.json``), so that
    harness and post-run rows of one sweep model land in one leaderboard row; None without one.

    lm-eval writes ``PAIR/<model>/results_*.json`` and post-run steps ``PAIR/<folder>/report.json``,
    so the pair folder is one or two folders up; the search never climbs above the folder the user named.
    """
    root = next((r for r in roots if r in path.parents), None)
    for folder in list(path.parents)[:2]:
        marker = folder / PAIR_FILE
        if marker.is_file():
            try:
                name = read_json_object(marker, "pair file", MARKER_MAX_BYTES).get("model")
            except ResultsFileError:
                return None
            return name.strip() if isinstance(name, str) and name.strip() else None
        if folder == root:
            break
    return None


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _object(data: dict[str, Any], field: str) -> dict[str, Any]:
    value = data.get(field)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ResultsFileError(f'field "{field}" is {_kind(value)}, not an object')
    return value


def _scores(task: str, entry: dict[str, Any]) -> tuple[dict[tuple[str, str | None], Score], list[str]]:
    """The task's scores, and each value left out for being outside its metric's range
    (``metric_ranges``), named with its field: such a value is missing, never shown."""
    values: dict[tuple[str, str | None], float | None] = {}
    stderrs: dict[tuple[str, str | None], float | None] = {}
    left_out: list[str] = []
    dropped: set[tuple[str, str | None]] = set()
    for key, raw in entry.items():
        metric, _, filter_name = str(key).partition(",")
        metric = current_metric_name(task, metric)
        if metric in _NOT_METRICS or isinstance(raw, (dict, list)):
            continue
        number = fields.number(raw, strings=True)
        if number is None and not (raw is None or (isinstance(raw, str) and raw.strip().upper() in {"N/A", "NA", ""})):
            continue  # a label such as "alias" under an unexpected key: not a score
        is_stderr = metric.endswith("_stderr")
        name = metric[: -len("_stderr")] if is_stderr else metric
        if is_stderr and number is not None and math.isnan(number):
            number = None  # no stderr, as "N/A" (lm-eval 0.5's bootstrap: a resample with no doc of a kind)
        if number is not None:
            wrong = metric_ranges.out_of_range(task, metric, number)
            if wrong is not None:
                left_out.append(
                    f'results["{task}"]["{key}"] is {raw!r}, {wrong}; left out (the file\'s other numbers are read)'
                )
                number = None
                if not is_stderr:
                    dropped.add((name, filter_name or None))
        (stderrs if is_stderr else values)[(name, filter_name or None)] = number
    # A value left out takes its stderr with it: a ± of no number is no measurement either.
    return {
        key: Score(value, stderrs.get(key) if key not in dropped else None) for key, value in values.items()
    }, left_out


def current_metric_name(task: str, metric: str) -> str:
    """The name a task's metric has now, for one a run logged under an earlier name (each
    paper's ``RENAMED_METRICS``; a stderr follows its metric)."""
    name, stderr = (metric[: -len("_stderr")], "_stderr") if metric.endswith("_stderr") else (metric, "")
    return _renamed_metrics().get((task, name), name) + stderr


@functools.cache
def _renamed_metrics() -> dict[tuple[str, str], str]:
    return {key: new for package in paper_packages() for key, new in getattr(package, "RENAMED_METRICS", {}).items()}


def _n_samples(task: str, entry: Any, scores: dict[str, Any]) -> int | None:
    if entry is not None:
        if not isinstance(entry, dict):
            raise ResultsFileError(f'n-samples["{task}"] is {_kind(entry)}, not an object')
        if entry.get("effective") is not None:
            return fields.count(entry["effective"], f'n-samples["{task}"].effective', strings=True)
    return fields.count(scores.get("sample_len"), f'results["{task}"].sample_len', strings=True)


def _plain(value: Any) -> str:
    """A config entry as comparable text: a string as written, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def _setting(data: dict[str, Any], shots: Any) -> str:
    """The prompt setting of a task run in words: shots, chat template, system instruction."""
    parts = []
    if isinstance(shots, int) and not isinstance(shots, bool) and shots >= 0:
        parts.append("zero-shot" if shots == 0 else f"{shots}-shot")
    if isinstance(data.get("chat_template"), str) and data["chat_template"]:
        parts.append("chat template")
    if isinstance(data.get("system_instruction"), str) and data["system_instruction"]:
        parts.append("system instruction")
    return ", ".join(parts)


def _timestamp(data: dict[str, Any], path: Path) -> float:
    """When the run finished: the harness' ``date``, else the file name, else mtime."""
    date = fields.number(data.get("date"), strings=True)
    if date is not None and math.isfinite(date) and abs(date) < 1e11:
        return date
    match = _FILENAME_TIME.search(path.name)
    if match:
        text = match.group(1)
        fmt = "%Y-%m-%dT%H-%M-%S.%f" if "." in text else "%Y-%m-%dT%H-%M-%S"
        try:
            return datetime.strptime(text, fmt).timestamp()
        except ValueError:
            pass  # a name that only looks like a timestamp (month 13): fall back to mtime
    return path.stat().st_mtime
