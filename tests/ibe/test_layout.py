"""Who owns IBE's code and files: the arrows point one way (the harness side and the leaderboard
import ``ibe_postprocess``'s light modules, never the reverse), the explanation parser loads
no heavy dependency, and IBE's file names are spelled in one module."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from ibe_postprocess import folder
from tests.helpers import REPO

HEAVY = ("torch", "spacy", "janus_swi", "pandas", "statsmodels", "sklearn", "matplotlib", "sentence_transformers")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _loaded_after(statement: str) -> set[str]:
    """Every module (dotted name and top-level package) a fresh interpreter holds after ``statement``."""
    code = (
        f"import sys; {statement}; print(' '.join(sorted({{*sys.modules, *(m.split('.')[0] for m in sys.modules)}})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_ibe_postprocess_never_imports_the_harness_side() -> None:
    wrong = {
        f"{path.name}: {module}"
        for path in (REPO / "ibe_postprocess").glob("*.py")
        for module in _imports(path)
        if module.startswith(("custom_metrics.ibe", "custom_metrics.leaderboard", "custom_metrics.sweep"))
    }
    assert wrong == set()


def test_the_parser_and_the_file_readers_load_nothing_heavy() -> None:
    """The harness hooks parse every generation inside lm_eval, and the leaderboard reads every
    report: neither may pay for spaCy, Prolog, torch or pandas."""
    loaded = _loaded_after(
        "import custom_metrics.ibe.metrics, custom_metrics.ibe.selection, custom_metrics.ibe.samples, "
        "ibe_postprocess.report_file, ibe_postprocess.features_file"
    )
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_the_report_does_not_import_the_leaderboard() -> None:
    assert "custom_metrics.ibe.leaderboard" not in _imports(REPO / "ibe_postprocess" / "report.py")
    loaded = _loaded_after("import ibe_postprocess.report")
    assert not any("leaderboard" in module for module in loaded)


def _code_strings(path: Path) -> list[str]:
    """The string constants of a module's code; docstrings describe files for people and do not count."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(owner.body[0].value)
        for owner in ast.walk(tree)
        if isinstance(owner, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and owner.body
        and isinstance(owner.body[0], ast.Expr)
        and isinstance(owner.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_ibe_file_names_are_spelled_in_one_module() -> None:
    names = [folder.FEATURES, folder.FEATURES_CSV, folder.JUDGE, folder.REPORT, folder.REPORT_MD, *folder.FIGURES]
    names += [name for kind, name in folder.CACHE_FILES.items() if kind != "nli_verdicts"]  # the judge's own name
    names += ["provenance.json", "ibe.done"]  # names of earlier versions
    spelled = {
        f"{path.relative_to(REPO)}: {name}"
        for root in ("custom_metrics", "ibe_postprocess")
        for path in (REPO / root).rglob("*.py")
        if path != Path(folder.__file__)
        for text in _code_strings(path)
        for name in names
        if name in text
    }
    assert spelled == set()
