"""Where the suite's task folders are, and ``explain-eval tasks-path``, which prints it.

A harness finds external tasks only through ``--include_path``. The folders ship inside the
package as data, found through the import system without importing ``lm_eval_tasks`` (YAML, not
code), so every layer may ask for them and no import runs back up from the papers.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType


def package_folder(name: str) -> Path | None:
    """The folder of the installed package ``name`` (found, not imported), or None."""
    found = importlib.util.find_spec(name)
    if found is None or not found.submodule_search_locations:
        return None
    return Path(next(iter(found.submodule_search_locations))).resolve()


def _tasks_path() -> Path:
    found = package_folder("lm_eval_tasks")
    if found is None:
        raise ImportError(
            "the suite's task folders (package lm_eval_tasks) are not installed: pip install explain-eval"
        )
    return found


TASKS_PATH = _tasks_path()


def paper_folders() -> list[Path]:
    """One folder per paper: the task folders that hold a task YAML."""
    return sorted(path for path in TASKS_PATH.iterdir() if path.is_dir() and any(path.glob("*.yaml")))


def paper_packages() -> list[ModuleType]:
    """Each paper's package (``custom_metrics.<folder>``), imported: where it declares, as data, what
    ``common`` must know of it (``METADATA_KEYS``, ``FILE_NAMES``, ``FILE_HEADERS``). A task folder of
    no package is left out here; ``explain-eval check`` names it."""
    packages = []
    for folder in paper_folders():
        try:
            packages.append(importlib.import_module(f"custom_metrics.{folder.name}"))
        except ModuleNotFoundError as err:
            if err.name != f"custom_metrics.{folder.name}":
                raise
    return packages


def main(argv: Sequence[str] | None = None) -> int:
    """``explain-eval tasks-path``: stdout holds only the folder, for ``--include_path "$(...)"``."""
    argparse.ArgumentParser(
        prog="explain-eval tasks-path",
        description="Print the folder of the suite's task YAMLs, to pass to lm_eval --include_path "
        "(or TaskManager(include_path=[...]) from Python).",
    ).parse_args(argv)
    print(TASKS_PATH, flush=True)
    return 0
