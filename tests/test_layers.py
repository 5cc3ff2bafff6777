"""The layers of docs/architecture.md, enforced: which room of the suite may import which.

ruff has no layering rule, so the imports of every module (``ast``, every ``import`` and
``from ... import`` anywhere in the file, the on-demand ones inside functions included) are
read and each one that crosses rooms is checked against ``MAY_IMPORT``. The rooms' graph
itself has no cycle, so no arrow can run back up; and no module imports itself back through
others, inside a room either (``import_cycles``).
"""

from __future__ import annotations

import ast
import itertools
import re
import shutil
from pathlib import Path

from custom_metrics.leaderboard.registry import PAPERS as SPECS
from tests.helpers import REPO

PAPERS = tuple(spec.key for spec in SPECS)  # each paper's package: custom_metrics/<key>/
SUITE = ("custom_metrics", "ibe_postprocess", "lm_eval_tasks", "bench")
BASE = {"custom_metrics.common", "custom_metrics"}  # the root package: __version__ only
# room -> the rooms it may import (its own always). The architecture's picture, top to bottom.
MAY_IMPORT: dict[str, set[str]] = {
    "custom_metrics.common": set(),
    "custom_metrics": {"custom_metrics.common"},
    # YAML folders, imported by no module of the suite (common.task_folders finds them); the
    # package re-exports TASKS_PATH for scripts.
    "lm_eval_tasks": {"custom_metrics.common"},
    "custom_metrics.judge": BASE,
    "ibe_postprocess": BASE | {"custom_metrics.judge"},
    **{f"custom_metrics.{paper}": BASE | {"custom_metrics.judge"} for paper in PAPERS},
    "custom_metrics.leaderboard": BASE | {f"custom_metrics.{paper}" for paper in PAPERS},
    "custom_metrics.pinned": BASE | {"custom_metrics.leaderboard"} | {f"custom_metrics.{paper}" for paper in PAPERS},
    "custom_metrics.sweep": BASE | {"custom_metrics.leaderboard"},
    # the hf-prefix model class (the judge's KV-cache helpers) and lm-eval's CLI registering it
    "custom_metrics.prefix_lm": BASE | {"custom_metrics.judge"},
    # the suite's entry to lm-eval's CLI: the sweep's checks of a run, the papers' own through the registry
    "custom_metrics.lm_eval_cli": BASE | {"custom_metrics.leaderboard"},
    # `explain-eval rejudge`: the judges, and the papers' rejudge hooks through the registry
    "custom_metrics.rejudge": BASE | {"custom_metrics.judge", "custom_metrics.leaderboard"},
    # a task folder's utils.py re-exports its own paper's hooks
    **{f"lm_eval_tasks.{paper}": {f"custom_metrics.{paper}"} for paper in PAPERS},
    "custom_metrics.cli": set(),  # filled below: the command imports every tool on demand
    "bench": set(),  # filled below: benchmarks measure any part
}
MAY_IMPORT["custom_metrics.ibe"] = MAY_IMPORT["custom_metrics.ibe"] | {"ibe_postprocess"}
MAY_IMPORT["custom_metrics.cli"] = set(MAY_IMPORT) - {"custom_metrics.cli", "bench"}
MAY_IMPORT["bench"] = set(MAY_IMPORT) - {"bench", "custom_metrics.cli"}
# What a room may import of another room, where it is narrower than the whole room.
ONLY = {
    # the leaderboard reads the papers' specs (each spec loads what it needs of its room)
    ("custom_metrics.leaderboard", f"custom_metrics.{paper}"): {f"custom_metrics.{paper}.leaderboard"}
    for paper in PAPERS
} | {
    ("custom_metrics.sweep", "custom_metrics.leaderboard"): {
        "custom_metrics.leaderboard.registry",  # the papers' post-run hooks
        "custom_metrics.leaderboard.build",  # the leaderboard after the sweep
    },
    ("custom_metrics.pinned", "custom_metrics.leaderboard"): {"custom_metrics.leaderboard.registry"},
    ("custom_metrics.rejudge", "custom_metrics.leaderboard"): {"custom_metrics.leaderboard.registry"},
    ("custom_metrics.prefix_lm", "custom_metrics.judge"): {"custom_metrics.judge.shared_kv"},
    ("custom_metrics.lm_eval_cli", "custom_metrics.leaderboard"): {"custom_metrics.leaderboard.registry"},
    # IBE's room imports the engine's light modules, never the scorer
    ("custom_metrics.ibe", "ibe_postprocess"): {
        "ibe_postprocess.parsing",
        "ibe_postprocess.judge_answer",
        "ibe_postprocess.inputs",
        "ibe_postprocess.questions",
        "ibe_postprocess.folder",
        "ibe_postprocess.features_file",
        "ibe_postprocess.report_file",
        "ibe_postprocess.paper",
    },
}
JUDGE_BACKENDS = {"custom_metrics.judge.lm", "custom_metrics.judge.seqcls", "custom_metrics.judge.endpoint"}


def room_of(module: str) -> str:
    """The room a dotted module name belongs to (``custom_metrics.reg.data`` -> ``custom_metrics.reg``)."""
    parts = module.split(".")
    if parts[0] in ("custom_metrics", "lm_eval_tasks") and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(root: Path, name: str) -> bool:
    path = root.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def suite_imports(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of a suite module in ``path``, relative ones resolved."""
    found = []
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            # `from ibe_postprocess import folder` imports the module ibe_postprocess.folder
            names = [
                f"{module}.{alias.name}" if _is_module(root, f"{module}.{alias.name}") else module
                for alias in node.names
            ]
        else:
            continue
        found += [(node.lineno, name) for name in names if name.split(".")[0] in SUITE]
    return found


def layer_violations(root: Path) -> list[str]:
    """Every import under ``root`` that crosses the architecture's layers, as 'file:line: why'."""
    wrong = []
    for top in SUITE:
        for path in sorted((root / top).rglob("*.py")):
            source = room_of(module_name(path, root))
            for line, target in suite_imports(path, root):
                room = room_of(target)
                where = f"{path.relative_to(root)}:{line}"
                if room != source and room not in MAY_IMPORT.get(source, set()):
                    wrong.append(f"{where}: {source} may not import {target}")
                elif (source, room) in ONLY and not any(
                    target == allowed or target.startswith(allowed + ".") for allowed in ONLY[source, room]
                ):
                    only = sorted(ONLY[source, room])
                    wrong.append(f"{where}: {source} may import only {only} of {room}, not {target}")
                if target in JUDGE_BACKENDS and source != "bench" and path.name != "build.py":
                    wrong.append(f"{where}: only judge/build.py imports a judge backend ({target})")
    return wrong


def import_cycles(root: Path) -> list[str]:
    """A cycle through each import that closes one among the modules under ``root``, as
    'a (line 3) -> b (line 9) -> a': any import, at the top, inside a function or under
    ``TYPE_CHECKING``. A depth-first walk finds a cycle wherever there is one."""
    graph = {
        module_name(path, root): {target: line for line, target in reversed(suite_imports(path, root))}
        for top in SUITE
        for path in sorted((root / top).rglob("*.py"))
    }
    cycles: list[str] = []
    done: set[str] = set()

    def walk(module: str, path: list[str]) -> None:
        if module in path:
            loop = [*path[path.index(module) :], module]
            steps = [f"{name} (line {graph[name][after]})" for name, after in itertools.pairwise(loop)]
            cycles.append(" -> ".join([*steps, module]))
        elif module in graph and module not in done:
            for target in sorted(graph[module]):
                walk(target, [*path, module])
            done.add(module)

    for module in sorted(graph):
        walk(module, [])
    return cycles


def test_no_module_imports_itself_back() -> None:
    """No circle at any level: not between rooms (above), not inside a package."""
    assert import_cycles(REPO) == []


def test_a_circle_inside_a_package_is_caught(tmp_path: Path) -> None:
    """The sweep's runner importing its batch back, inside a function, on a copy of the suite."""
    for top in SUITE:
        shutil.copytree(REPO / top, tmp_path / top, ignore=shutil.ignore_patterns("*.pyc", "__pycache__", "assets"))
    runner = tmp_path / "custom_metrics/sweep/runner.py"
    lines = runner.read_text(encoding="utf-8").count("\n")
    runner.write_text(runner.read_text(encoding="utf-8") + "def late():\n    from custom_metrics.sweep import batch\n")
    batch_line = next(
        number
        for number, line in enumerate((tmp_path / "custom_metrics/sweep/batch.py").read_text().splitlines(), 1)
        if line.startswith("import custom_metrics.sweep.runner")
    )
    assert import_cycles(tmp_path) == [
        f"custom_metrics.sweep.batch (line {batch_line}) -> custom_metrics.sweep.runner (line {lines + 2}) "
        "-> custom_metrics.sweep.batch"
    ]


def test_the_layers_have_no_cycle() -> None:
    """Rooms taken in an order where each imports only earlier ones: the picture has no back arrow."""
    done: list[str] = []
    rest = dict(MAY_IMPORT)
    while rest:
        ready = [room for room, allowed in rest.items() if allowed - {room} <= set(done)]
        assert ready, f"a cycle among {sorted(rest)}"
        done += ready
        for room in ready:
            del rest[room]


def test_every_import_keeps_the_layers() -> None:
    assert layer_violations(REPO) == []


def test_a_wrong_import_is_caught(tmp_path: Path) -> None:
    """The checker on a copy of the suite with wrong imports added: each is named, nothing else."""
    for top in SUITE:
        shutil.copytree(REPO / top, tmp_path / top, ignore=shutil.ignore_patterns("*.pyc", "__pycache__", "assets"))
    assert layer_violations(tmp_path) == []
    (tmp_path / "custom_metrics/common/bad.py").write_text("from custom_metrics.judge.types import Verdict\n")
    (tmp_path / "ibe_postprocess/bad.py").write_text("def f():\n    import custom_metrics.ibe.leaderboard\n")
    (tmp_path / "custom_metrics/sweep/bad.py").write_text("from custom_metrics.ibe import data\n")
    (tmp_path / "custom_metrics/reg/bad.py").write_text("from custom_metrics.judge import lm\n")
    (tmp_path / "custom_metrics/leaderboard/bad.py").write_text("from custom_metrics.reg.data import load_items\n")
    assert layer_violations(tmp_path) == [
        "custom_metrics/common/bad.py:1: custom_metrics.common may not import custom_metrics.judge.types",
        "custom_metrics/leaderboard/bad.py:1: custom_metrics.leaderboard may import only "
        "['custom_metrics.reg.leaderboard'] of custom_metrics.reg, not custom_metrics.reg.data",
        "custom_metrics/reg/bad.py:1: only judge/build.py imports a judge backend (custom_metrics.judge.lm)",
        "custom_metrics/sweep/bad.py:1: custom_metrics.sweep may not import custom_metrics.ibe.data",
        "ibe_postprocess/bad.py:2: ibe_postprocess may not import custom_metrics.ibe.leaderboard",
    ]


def _rooms_in_architecture() -> dict[str, str]:
    """docs/architecture.md's picture, by room: the text beside each ``folder/`` heading."""
    picture = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8").split("```")[1]
    rooms: dict[str, str] = {}
    current = ""
    for line in picture.splitlines():
        head = re.match(r"(\S+/)\s", f"{line} ")
        if head:
            current = head.group(1)
            rooms[current] = line[len(current) :]
        elif current:
            rooms[current] += f"\n{line}"
    return rooms


def test_every_module_is_named_in_the_architecture() -> None:
    """Each module of custom_metrics/ and ibe_postprocess/ appears in docs/architecture.md: as
    ``room/name`` or ``name.py``, or by its name beside its room's heading (a paper's module
    beside ``custom_metrics/<paper>/``)."""
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    rooms = _rooms_in_architecture()
    missing = []
    for top in ("custom_metrics", "ibe_postprocess"):
        for path in sorted((REPO / top).rglob("*.py")):
            if path.name == "__init__.py" or "__pycache__" in path.parts:
                continue
            parts = path.relative_to(REPO).with_suffix("").parts
            name = parts[-1]
            if re.search(rf"\b{re.escape(parts[-2])}/{name}\b|\b{name}\.py\b", doc):
                continue
            room = "custom_metrics/<paper>/" if len(parts) == 3 and parts[1] in PAPERS else "/".join(parts[:-1]) + "/"
            in_room = len(parts) > 2 or top == "ibe_postprocess"  # the root package's modules: by file name
            if in_room and re.search(rf"\b{name}\b", rooms.get(room, "")):
                continue
            missing.append(str(path.relative_to(REPO)))
    assert missing == [], f"modules docs/architecture.md does not name: {missing}"


def test_the_page_formats_numbers_through_one_module() -> None:
    """The HTML modules take their number formatting from ``leaderboard/numbers.py`` and their
    words from ``wording.py``, nothing from the markdown writer (only ``build`` calls it), and no
    other module defines a formatter of its own under the same name or formats a p-value itself."""
    numbers = REPO / "custom_metrics" / "leaderboard" / "numbers.py"
    formatters = {node.name for node in ast.parse(numbers.read_text(encoding="utf-8")).body if hasattr(node, "name")}
    for path in sorted((REPO / "custom_metrics" / "leaderboard").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "custom_metrics.leaderboard.render":
                taken = {alias.name for alias in node.names} & formatters
                assert not taken, f"{path.name} imports {sorted(taken)} from render.py: import it from numbers.py"
                assert path.name == "build.py", f"{path.name} imports from render.py: the words are in wording.py"
        if path != numbers:
            defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)} & formatters
            assert not defined, f"{path.name} defines {sorted(defined)} again"
            formats_p = re.search(r"p_(value|adjusted):\.\d", path.read_text(encoding="utf-8"))
            assert not formats_p, f"{path.name} formats a p-value: use numbers.p_digits"
