"""The suite's lm-eval task folders (one per paper), installed with the package.

lm-eval has no task entry points: a harness finds external tasks only through
``--include_path`` (or ``TaskManager(include_path=...)``). Shipping the folders as package
data and printing their place (``explain-eval tasks-path``) makes the tasks usable from
any folder after ``pip install``, not only from a clone.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

TASKS_PATH = Path(__file__).resolve().parent


def main(argv: Sequence[str] | None = None) -> int:
    """``explain-eval tasks-path``: stdout holds only the folder, for ``--include_path "$(...)"``."""
    argparse.ArgumentParser(
        prog="explain-eval tasks-path",
        description="Print the folder of the suite's task YAMLs, to pass to lm_eval --include_path "
        "(or TaskManager(include_path=[...]) from Python).",
    ).parse_args(argv)
    print(TASKS_PATH, flush=True)
    return 0
