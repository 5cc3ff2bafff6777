"""What a run's ``--include_path`` may hold: the suite's task folders once, and none of lm-eval's own.

lm-eval indexes every YAML below the folder it is given. ``--include_path .`` in a clone with its
``.venv`` inside indexed the harness' ~14,000 task files again (two minutes of "overrides existing
task" lines), and a clone holding a ``build/lib`` copy gave two tasks of each name. Both are
refused in one line naming the folder to pass: by ``explain-eval lm-eval`` and the sweep before
the model loads, and under plain ``lm_eval`` by the first task loader.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from custom_metrics.common.errors import DataError
from custom_metrics.common.task_folders import package_folder, paper_folders

PASS_INSTEAD = 'pass the suite\'s own, --include_path "$(explain-eval tasks-path)"'
SKIPPED = {"__pycache__", ".git"}  # holds no task YAML; .git can be large


@functools.cache
def check_include_path(folder: Path, option: str = "--include_path") -> None:
    """Refuse a folder that holds lm-eval's own tasks (the installed harness', or any other
    ``lm_eval/tasks`` below it) or one of the suite's task folders twice."""
    root = Path(folder).expanduser().resolve()
    lm_eval = package_folder("lm_eval")
    harness = (lm_eval / "tasks").resolve() if lm_eval else None  # the installed lm-eval's own tasks
    if harness is not None and harness.is_relative_to(root):
        raise _harness_inside(folder, option, harness)
    markers = {paper.name: min(path.name for path in paper.glob("*.yaml")) for paper in paper_folders()}
    copies: dict[str, list[str]] = {}
    for place, folders, files in os.walk(root):
        folders[:] = [name for name in folders if name not in SKIPPED]
        here = Path(place)
        if here.name == "tasks" and here.parent.name == "lm_eval" and (here.parent / "__init__.py").is_file():
            raise _harness_inside(folder, option, here)
        if markers.get(here.name) in files:
            copies.setdefault(here.name, []).append(place)
    twice = {name: places for name, places in copies.items() if len(places) > 1}
    if twice:
        name = min(twice)
        places = sorted(twice[name])
        raise DataError(
            f"{option} {folder} holds the suite's task folder {name}/ {len(places)} times ({', '.join(places)}): "
            f"lm-eval would keep one task of each name by path order, perhaps a stale copy (a build/ folder); "
            f"{PASS_INSTEAD}."
        )


def _harness_inside(folder: Path, option: str, harness: Path) -> DataError:
    return DataError(
        f"{option} {folder} holds lm-eval's own tasks ({harness}, e.g. in a .venv inside it): lm-eval would index "
        f"its thousands of tasks a second time, minutes before the run starts; {PASS_INSTEAD}."
    )
