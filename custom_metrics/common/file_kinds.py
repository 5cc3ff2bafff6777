"""Which kind of file a command was given (a results file, a samples file and its task, a
paper's own file), so a command handed the wrong one names the file it needs and the command
that makes it.

Why: lm-eval writes a results file and a samples file side by side, and pasting the neighbour's
name is the common mistake; read as JSONL, a results file fails with "not valid JSON", which is
true and useless. Only the name and the first line are read (a whole-JSON document of a results
file's size when the first line opens one).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import JSONL_MAX_BYTES, RESULTS_MAX_BYTES, iter_regular_lines, read_regular_bytes
from custom_metrics.common.task_folders import paper_packages

# lm-eval's names: results_<stamp>.json and samples_<task>_<stamp>.jsonl, stamp 2025-01-31T12-00-00.123456
_STAMP = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
_RESULTS_NAME = re.compile(rf"^results(?:_(?P<stamp>{_STAMP}))?.*\.json$")
_SAMPLES_NAME = re.compile(rf"^samples_(?P<task>.+)_(?P<stamp>{_STAMP})\.jsonl$")
_FIRST_LINE_BYTES = 1024 * 1024  # a samples line holds a whole prompt; beyond this, stop sniffing


@dataclass(frozen=True)
class FileKind:
    """What a file is: ``kind`` one of results, samples, sweep_record, json_document, jsonl (rows
    of unknown origin), other, or a paper's own kind (``ibe_features``, ``rule_summary``, ...)."""

    kind: str
    what: str  # said to the user: "an lm-eval results file (results_*.json)"
    task: str | None = None  # the task of a samples file, when its name gives it
    stamp: str | None = None  # the run's timestamp, from the name


# Files known by their name alone: the sweep's; each paper adds its own (``paper_kinds``), and a
# caller its folder's (IBE's ``ibe_postprocess.folder``, passed in as ``named``).
_BY_NAME = {
    "sweep_pair.json": ("sweep_record", "a pair record of `explain-eval sweep` (sweep_pair.json)"),
    "lm_eval.done": ("sweep_record", "a marker of `explain-eval sweep` (lm_eval.done)"),
    "post_run.done": ("sweep_record", "a marker of `explain-eval sweep` (post_run.done)"),
}


@lru_cache(maxsize=1)
def paper_kinds() -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
    """The papers' own files, (by name, by header key: the key of a JSONL file's first row or of a
    whole JSON document), each -> (kind, what it is): ``FILE_NAMES`` and ``FILE_HEADERS`` in each
    paper package's ``__init__.py``, the papers being the suite's task folders, so none is named here."""
    names: dict[str, tuple[str, str]] = {}
    headers: dict[str, tuple[str, str]] = {}
    for package in paper_packages():
        names |= getattr(package, "FILE_NAMES", {})
        headers |= getattr(package, "FILE_HEADERS", {})
    return names, headers


def samples_task(name: str) -> str | None:
    """The task of an lm-eval samples file named ``name`` (samples_<task>_<stamp>.jsonl), else None."""
    match = _SAMPLES_NAME.match(name)
    return match.group("task") if match else None


def file_kind(path: Path, named: Mapping[str, tuple[str, str]] | None = None) -> FileKind:
    """The kind of ``path``, from its name and first line; never raises for an unreadable or
    odd file (the reader that follows names that), it is then ``other``. ``named`` adds a
    caller's own file names (name -> kind, what it is)."""
    name = path.name
    match = _RESULTS_NAME.match(name)
    if match:
        return FileKind("results", "an lm-eval results file (results_*.json)", stamp=match.group("stamp"))
    match = _SAMPLES_NAME.match(name)
    if match:
        task = match.group("task")
        return FileKind("samples", f"the samples file of an lm-eval {task} run", task, match.group("stamp"))
    names, headers = paper_kinds()
    by_name = {**_BY_NAME, **names, **(named or {})}
    if name in by_name:
        return FileKind(*by_name[name])
    first = _first_line(path)
    if first is None:
        return FileKind("other", "a file")
    if first.strip() in (b"{", b"["):
        return _whole_document(path, headers)
    try:
        row = json.loads(first)
    except ValueError:
        return FileKind("other", "a file")
    header = next((key for key in headers if key in row), None) if isinstance(row, dict) else None
    return FileKind(*headers[header]) if header else FileKind("jsonl", "a JSONL file")


def _first_line(path: Path) -> bytes | None:
    with contextlib.suppress(DataError, OSError):
        for line in iter_regular_lines(path, JSONL_MAX_BYTES, "file"):
            if line.strip() or len(line) > _FIRST_LINE_BYTES:  # a blank line so long: no first line either
                return line if len(line) <= _FIRST_LINE_BYTES else None
    return None


def _whole_document(path: Path, headers: Mapping[str, tuple[str, str]]) -> FileKind:
    """A file whose first line opens a pretty-printed JSON document: a results file when it
    holds lm-eval's "results" object, else some other whole JSON document (not JSONL)."""
    try:
        data = json.loads(read_regular_bytes(path, RESULTS_MAX_BYTES, "file").decode("utf-8"))
    except (DataError, OSError, ValueError, RecursionError):
        return FileKind("other", "a file")  # not JSON at all: the line reader names where
    if isinstance(data, dict) and isinstance(data.get("results"), dict):
        return FileKind("results", "an lm-eval results file (results_*.json)")
    header = next((key for key in headers if key in data), None) if isinstance(data, dict) else None
    if header:
        return FileKind(*headers[header])
    return FileKind("json_document", "a whole JSON document, not JSONL (one object per line)")


def wrong_kind(path: Path, kind: FileKind, needs: str, how: str, tasks: Collection[str] = ()) -> DataError:
    """The error for ``path`` of ``kind`` given where ``needs`` belongs: what it is, what is
    needed, and ``how`` to make it, or, for a results file, the samples files lm-eval wrote beside
    it (same timestamp when the name has one; of ``tasks``, task-name prefixes, when given)."""
    message = f"{path}: this is {kind.what}; {needs}."
    if kind.kind == "results":
        found = sorted(path.parent.glob(f"samples_*_{kind.stamp}.jsonl" if kind.stamp else "samples_*.jsonl"))
        beside = [
            p for p in found if not tasks or ((m := _SAMPLES_NAME.match(p.name)) and m["task"].startswith(tuple(tasks)))
        ]
        if beside:
            return DataError(f"{message} lm-eval wrote it beside this file: {', '.join(str(p) for p in beside)}.")
    return DataError(f"{message} Make it with: {how}")
