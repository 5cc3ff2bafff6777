"""lm-eval's own task checks (``BaseTasks`` of the harness' ``tests/test_tasks.py``, which upstream
runs on every new task folder) over every task of the suite.

The class is taken unchanged from the harness' file at the installed version (0.4.13 or
0.5.0.dev1: ``tests/fixtures/lm_eval``, its source named there): its imports, the ``limit`` fixture and
``BaseTasks`` are executed from that text, so a check upstream adds or changes is ours on the
next refresh. The tasks are the suite's, built once per session on the full data as upstream
builds them: a plain ``TaskManager`` with no model and no metadata (``tests/suite_tasks.py``;
the checks read 10 docs of each task, more than the fixture mirror holds, so they are
``fulldata`` tests). The reading tasks get the one input they read, a samples file of an
earlier run (``--metadata explanations``), and nothing else.
"""

from __future__ import annotations

import ast
import hashlib
from typing import Any

import lm_eval
import pytest

from tests.helpers import FIXTURES
from tests.suite_tasks import EXPECTED_TASKS

# The harness versions the suite supports -> the sha256 of their tests/test_tasks.py as copied.
HARNESS_SHA256 = {
    "0.4.13": "0616121820962b63e183cf53cf58924d0d3ca7cfbd7cabdeb4c4561cb609cef2",
    "0.5.0.dev1": "075e33c1f518ec72b141fa17cc3a7fda106b7ef169096a2c14f36d0d93a7648c",
}
HARNESS_VERSION = lm_eval.__version__
HARNESS_FILE = FIXTURES / "lm_eval" / f"test_tasks-{HARNESS_VERSION}.py.txt"


def harness_definitions(source: str, names: tuple[str, ...] = ("limit", "BaseTasks")) -> dict[str, Any]:
    """The named top-level definitions of the harness' test module, executed with its absolute
    imports (its relative import and its module-level task loading are left out)."""
    tree = ast.parse(source)
    kept = [
        node
        for node in tree.body
        if (isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and not node.level))
        or (isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names)
    ]
    missing = set(names) - {node.name for node in kept if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assert not missing, f"{HARNESS_FILE.name} defines no {sorted(missing)}"
    namespace: dict[str, Any] = {"__name__": "lm_eval_harness_test_tasks"}
    exec(compile(ast.Module(body=kept, type_ignores=[]), str(HARNESS_FILE), "exec"), namespace)
    return {name: namespace[name] for name in names}


_HARNESS = harness_definitions(HARNESS_FILE.read_text(encoding="utf-8"))
limit = _HARNESS["limit"]


def test_the_copy_is_the_installed_harness_file() -> None:
    """The checks are the installed version's, unedited (refresh: tests/fixtures/lm_eval/README.md)."""
    assert HARNESS_VERSION in HARNESS_SHA256, (
        f"lm-eval {HARNESS_VERSION} is installed; the copied checks are {sorted(HARNESS_SHA256)}'s"
    )
    assert hashlib.sha256(HARNESS_FILE.read_bytes()).hexdigest() == HARNESS_SHA256[HARNESS_VERSION]


@pytest.fixture
def task_class(request: pytest.FixtureRequest, full_suite_tasks: dict) -> Any:
    return full_suite_tasks[request.param]


@pytest.mark.fulldata
@pytest.mark.parametrize("task_class", sorted(EXPECTED_TASKS), indirect=True)
class TestSuiteTasks(_HARNESS["BaseTasks"]):
    """Upstream's ``BaseTasks``, parametrized with the suite's tasks instead of the changed built-ins."""


def test_a_prompt_ending_in_whitespace_before_a_space_delimiter_fails_the_harness_check() -> None:
    """The check that caught IBE's generation tasks ("Explanation:\\n" then " ") still bites."""

    class Task:
        multiple_input = _multiple_inputs = False  # its name on 0.4.13, on 0.5
        config = type("Config", (), {"target_delimiter": " "})()

        def has_test_docs(self) -> bool:
            return True

        def test_docs(self) -> list[dict]:
            return [{}]

        def doc_to_text(self, doc: dict) -> str:
            return "Explanation:\n"

    with pytest.raises(AssertionError, match="ends in a whitespace"):
        _HARNESS["BaseTasks"]().test_doc_to_text(Task(), 1)
