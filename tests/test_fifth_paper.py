"""docs/development.md's "Adding a paper", followed literally on a copy of the tree.

The fixture paper (``tests/fixtures/fifth_paper/``, e-SNLI-style labels with explanations) is
copied over a copy of the suite and the recipe's one edit is made; then, in that copy, every
fast test that reads every paper (``EVERY_PAPER_TESTS``) and the paper's own tests pass, a real
``lm_eval`` run of the new task prints nothing that runs of the four papers' tasks do not and
lands in its own leaderboard tab, and ``explain-eval download`` fetches its Hub-pinned file. A
sixth paper of another shape (``tests/fixtures/sixth_paper/``: CoS-E-style choices scored by
log-likelihood, two tasks in a group compared pairwise, a GitHub-pinned file) is added beside it
the same way and passes the same tests, run and download. Each mistake that
once passed every check (the key left out of the registry, a headline, label or
definition naming nothing, a typo in the task pattern or the group's name, a data file left out
of the spec however it was built, a metric without a range, logic in the folder's ``utils.py``, no README) makes
``explain-eval check`` fail with one line naming the fix.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.common.raw_github import RawGitHub
from tests.helpers import FIXTURES, REPO, checkout_files

FIXTURE_PAPER = FIXTURES / "fifth_paper"
# A paper of another shape, added beside it: choices scored by log-likelihood, two tasks in a
# group compared pairwise, its file pinned on GitHub rather than the Hub.
SIXTH_PAPER = FIXTURES / "sixth_paper"
REGISTRY = "custom_metrics/leaderboard/registry.py"
BIN = Path(sys.executable).parent
CHECKS = (
    "tests/test_layers.py",
    "tests/test_paper_specs.py",
    "tests/test_task_readmes.py",
    "tests/common/test_metadata.py",
    "tests/test_task_configs.py",
    "tests/esnli",
)
CHECK = [sys.executable, "-m", "custom_metrics.cli", "check", "esnli"]  # `explain-eval check esnli`
# The tests that read every paper: the registry's list, each paper's tests/<key>/paper.py, every
# task, module or file of the tree. A new paper is one of their inputs; every other test names
# the papers it checks and meets a new one only through what these check over it (the task index
# that every TaskManager builds, the registry's loops: docs/development.md, "Adding a paper").
# Their fast tests run in the copy with the fixture papers; the guard below finds any test module
# that reads every paper and is missing here.
EVERY_PAPER_TESTS = (
    "tests/common/test_download.py",
    "tests/common/test_logits_memory.py",
    "tests/common/test_metadata.py",
    "tests/common/test_pinned_data.py",
    "tests/ibe/test_layout.py",
    "tests/leaderboard/test_browser.py",
    "tests/leaderboard/test_leaderboard.py",
    "tests/test_first_hour.py",
    "tests/test_harness_task_checks.py",
    "tests/test_layers.py",
    "tests/test_packaging.py",
    "tests/test_paper_specs.py",
    "tests/test_prefix_lm.py",
    "tests/test_task_configs.py",
    "tests/test_task_readmes.py",
)
# What a test uses when it reads every paper: the registry's and the tests' lists of papers, each
# paper's test hooks, every task loaded, every pinned file, the checkout's files.
EVERY_PAPER_NAMES = {
    "PAPER_KEYS", "PAPERS", "paper_tests", "paper_packages", "EXPECTED_TASKS", "suite_tasks", "full_suite_tasks",
    "reading_tasks", "run_arg_tasks", "small_data", "DATASETS", "checkout_files",
}  # fmt: skip
TREE_ROOTS = ("REPO", "TASKS_DIR", "TASKS_PATH")


def _recipe_section() -> str:
    text = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    return text.split("## Adding a paper", 1)[1]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path}: {old!r} is not there once; the recipe and the tree disagree"
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the suite with the fixture paper added exactly as the recipe says."""
    root = tmp_path_factory.mktemp("fifth") / "suite"
    for name in checkout_files():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, root / name)
    for paper in (FIXTURE_PAPER, SIXTH_PAPER):
        shutil.copytree(paper, root, dirs_exist_ok=True)  # steps 1-3 and 5: the paper's files
    # Step 4, the one edit (once for both papers).
    _edit(
        root / REGISTRY,
        'PAPER_KEYS = ("geese", "rule", "reg", "ibe")',
        'PAPER_KEYS = ("geese", "rule", "reg", "ibe", "esnli", "cose")',
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # a contributor's clone: the tests list its files
    return root


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(root), "EXPLAIN_EVAL_DATA": str(root / "tests/fixtures/mirror")}
    return {**env, **extra}


def _run(
    root: Path, command: list[str], env: dict[str, str] | None = None, timeout: float = 900
) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=root, env=env or _env(root), capture_output=True, text=True, timeout=timeout)


def _spec_problems(root: Path) -> list[str]:
    """The lines of ``explain-eval check esnli`` in the copy, but its closing count."""
    done = _run(root, CHECK)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines and "paper(s) checked (esnli)" in lines[-1], done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == (1 if lines[:-1] else 0), done.stderr[-3000:]
    return lines[:-1]


def test_the_recipe_names_every_file_and_edit_the_test_makes() -> None:
    recipe = _recipe_section()
    for named in ("PAPER_KEYS", REGISTRY, "EXPECTED_TASKS", "`paper.py`", "METADATA_KEYS", "METRIC_RANGES",
                  "custom_metrics/<key>/", "lm_eval_tasks/<key>/", "tests/fixtures/mirror/", "tests/<key>/",
                  "tests/fixtures/leaderboard/<key>/", "LEADERBOARD_RUNS", "`key` and `title`"):  # fmt: skip
        assert named in recipe, named
    for check in CHECKS[:-1]:
        assert check in recipe, check
    for paper in (FIXTURE_PAPER, SIXTH_PAPER):
        added = {path.relative_to(paper).parts[0] for path in paper.rglob("*") if path.is_file()}
        assert added == {"custom_metrics", "lm_eval_tasks", "tests"}, paper


FAST = "not e2e and not fulldata and not slow"  # make test-fast's selection


def _reads_every_paper(path: Path) -> bool:
    """Whether a test module uses a name of ``EVERY_PAPER_NAMES`` or lists the tree, or one of its
    top folders, by a name (``TASKS_DIR.glob``, ``(REPO / top).rglob``; not one paper's folder)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        named = node.id if isinstance(node, ast.Name) else node.arg if isinstance(node, ast.arg) else None
        if (node.name if isinstance(node, ast.alias) else named) in EVERY_PAPER_NAMES:  # a name, fixture or import
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            root = node.func.value
            if isinstance(root, ast.BinOp) and not isinstance(root.right, ast.Constant):
                root = root.left
            if node.func.attr in ("glob", "rglob", "iterdir", "walk") and ast.unparse(root) in TREE_ROOTS:
                return True
    return False


def test_every_test_module_that_reads_every_paper_runs_with_the_fixture_papers() -> None:
    modules = (REPO / "tests").rglob("test_*.py")
    found = {
        path.relative_to(REPO).as_posix()
        for path in modules
        if "fixtures" not in path.parts and path != Path(__file__) and _reads_every_paper(path)
    }
    missing = sorted(found - set(EVERY_PAPER_TESTS))
    assert missing == [], f"{missing} read every paper: add them to EVERY_PAPER_TESTS in {Path(__file__).name}"
    assert [name for name in EVERY_PAPER_TESTS if not (REPO / name).is_file()] == []


@pytest.mark.slow
def test_the_tests_of_every_paper_pass_with_the_fixture_papers(tree: Path) -> None:
    """Not only the checks the recipe names: every fast test that reads every paper, and the
    fixture papers' own tests, in the copy with both papers (one worker)."""
    env = _env(tree, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    del env["EXPLAIN_EVAL_DATA"]  # as make test-fast runs: the tests choose their mirror
    env = {name: value for name, value in env.items() if not name.startswith("PYTEST_")}  # not this run's worker
    tests = [*EVERY_PAPER_TESTS, "tests/esnli", "tests/cose"]
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-m", FAST, *tests]
    done = _run(tree, command, env, timeout=3600)
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-2000:]
    assert re.search(r"\d+ passed", done.stdout) and " failed" not in done.stdout, done.stdout[-3000:]


def _warnings(log: str, tasks: Sequence[str]) -> set[str]:
    """The WARNING and ERROR lines of a run's log, with its task names, times and numbers blanked."""
    found = set()
    for line in log.splitlines():
        if re.search(r"\b(WARNING|ERROR|CRITICAL)\b", line):
            for task in tasks:
                line = re.sub(rf"\b{task}\b", "<task>", line)
            found.add(re.sub(r"\d+", "0", line))
    return found


def _pinned(tree: Path, module: str, fields: str) -> list:
    """A fixture paper's pin, read in the copy (the test's own process has no such package)."""
    code = f"import json; from {module} import SOURCE as s; r = s.remote; print(json.dumps([{fields}]))"
    return json.loads(_run(tree, [sys.executable, "-c", code]).stdout)


@pytest.mark.e2e
def test_real_runs_of_the_new_tasks_get_their_own_tabs_and_their_files_download(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    tasks = str(tree / "lm_eval_tasks")
    ours = ("esnli", "cose")  # a generation task; a group of two choice tasks
    command = ["--model", "dummy", "--tasks", ",".join(ours), "--include_path", tasks, "--limit", "4", "--log_samples"]
    done = _run(tree, [str(BIN / "lm_eval"), *command, "--output_path", str(out)])
    assert done.returncode == 0, done.stderr[-4000:]
    # They print nothing that runs of the four papers' tasks (a choice task, a generation task) do not.
    others = ("geese_noexp", "ibe_copa")
    command = ["--model", "dummy", "--tasks", ",".join(others), "--include_path", tasks, "--limit", "2"]
    theirs = _run(tree, [str(BIN / "lm_eval"), *command, "--output_path", str(tmp_path / "theirs")])
    assert theirs.returncode == 0, theirs.stderr[-4000:]
    names = ["esnli", "cose_answer", "cose_explained", "cose"]
    extra = _warnings(done.stdout + done.stderr, names) - _warnings(theirs.stdout + theirs.stderr, others)
    assert extra == set(), extra
    board = _run(tree, [str(BIN / "explain-eval"), "leaderboard", str(out), "--out", str(tmp_path / "board")])
    assert board.returncode == 0, board.stderr[-3000:]
    assert (tmp_path / "board" / "esnli.csv").is_file() and not (tmp_path / "board" / "other.csv").exists()
    rows = list(csv.DictReader((tmp_path / "board" / "esnli.csv").open(encoding="utf-8")))
    assert [float(row["esnli malformed"]) for row in rows] == [1.0]  # the dummy model's "lol": flagged, one row
    # The choice tasks: one row with both accuracies, and their paired difference tested on the 4 questions.
    rows = list(csv.DictReader((tmp_path / "board" / "cose.csv").open(encoding="utf-8")))
    assert len(rows) == 1 and {"cose_answer/acc value", "cose_explained/acc value"} <= rows[0].keys()
    differences = list(csv.DictReader((tmp_path / "board" / "cose_differences.csv").open(encoding="utf-8")))
    assert [(row["kind"], row["task"], row["metric"], row["docs"]) for row in differences] == [
        ("same run", "cose_explained", "acc", "4")
    ], differences
    assert differences[0]["comparison"].endswith("explanation effect, cose_explained − cose_answer")
    page = (tmp_path / "board" / "index.html").read_text(encoding="utf-8")
    assert 'id="tab-esnli"' in page and 'id="tab-cose"' in page
    assert 'id="tab-geese"' not in page  # no other paper has a run: no other tab

    server = RawGitHub()
    try:
        from custom_metrics.common.download import GitHubFile, HubFile

        hub = _pinned(tree, "custom_metrics.esnli.data", "r.repo, r.revision, r.path, r.sha256, r.size")
        server.serve_hub(HubFile(*hub), (FIXTURE_PAPER / "tests/fixtures/mirror/esnli/test.jsonl").read_bytes())
        github = _pinned(tree, "custom_metrics.cose.data", "r.owner, r.repo, r.commit, r.path, r.sha256, r.size")
        server.serve(GitHubFile(*github), (SIXTH_PAPER / "tests/fixtures/mirror/cose/dev.jsonl").read_bytes())
        env = _env(tree, HF_ENDPOINT=server.url, EXPLAIN_EVAL_GITHUB_RAW=server.url,
                   EXPLAIN_EVAL_CACHE=str(tmp_path / "cache"))  # fmt: skip
        del env["EXPLAIN_EVAL_DATA"]
        for key, name in (("esnli", "e-SNLI fixture"), ("cose", "CoS-E fixture")):
            fetched = _run(tree, [str(BIN / "explain-eval"), "download", key], env)
            assert fetched.returncode == 0, fetched.stderr
            assert "1 of 1 pinned file(s) verified" in fetched.stdout and f"downloaded {name}" in fetched.stdout
        listed = _run(tree, [str(BIN / "explain-eval"), "download", "--list"], env).stdout
        assert f"{server.url}/datasets/explain-eval/esnli-fixture/resolve/" in listed
        assert f"{server.url}/explain-eval/cose-fixture/" in listed
    finally:
        server.close()


LEADERBOARD = "custom_metrics/esnli/leaderboard.py"
SPEC_LINE = '    key="esnli",\n'
BOARD_LINE = "    board=Board(\n"


@pytest.mark.slow
def test_both_new_papers_pass_explain_eval_check(tree: Path) -> None:
    assert _spec_problems(tree) == []
    done = _run(tree, [*CHECK[:-1], "cose"])
    assert done.returncode == 0 and "1 paper(s) checked (cose): no problem(s)" in done.stdout, done.stdout + done.stderr


# (mistake, file, text replaced (None: the file is new), its replacement (None: the file is removed), the message)
MISTAKES = [
    ("the key left out of the registry", REGISTRY, '"ibe", "esnli", "cose")', '"ibe", "cose")',
     "lm_eval_tasks/esnli/ has no spec in custom_metrics/leaderboard/registry.py: add 'esnli' to PAPER_KEYS"),
    ("a headline naming no metric", LEADERBOARD, '"esnli/label_acc"', '"esnli/label_accuracy"',
     "esnli: headline 'label accuracy' names esnli/label_accuracy, but esnli's metric_list has no 'label_accuracy'"),
    ("a typo in the task pattern", LEADERBOARD, SPEC_LINE, f'{SPEC_LINE}    pattern=r"esnil(_|$)",\n',
     "esnli: task esnli (lm_eval_tasks/esnli/) does not match the spec's pattern"),
    ("a data file left out of the spec", LEADERBOARD, '    datasets={"esnli": (data.SOURCE,)},\n', "",
     "esnli: custom_metrics/esnli/data.py: SOURCE defines the data file 'e-SNLI fixture', which the spec's "
     "datasets leave out"),
    ("a label for a task that does not exist", LEADERBOARD, BOARD_LINE,
     f'{BOARD_LINE}        task_labels={{"esnil": "e-SNLI"}},\n',
     "esnli: task_labels names 'esnil', which is no task of lm_eval_tasks/esnli/: fix it in "
     "custom_metrics/esnli/leaderboard.py"),
    ("a definition of a metric that does not exist", LEADERBOARD, BOARD_LINE,
     f'{BOARD_LINE}        definitions={{"label_accuracy": "share of right labels"}},\n',
     "esnli: definitions names 'label_accuracy', which is no metric (or task/metric) of lm_eval_tasks/esnli/"),
    ("a group name differing from the key", "lm_eval_tasks/esnli/snli.yaml", None, "group: snli\ntask:\n  - esnli\n",
     "esnli: group 'snli' (lm_eval_tasks/esnli/) does not match the spec's pattern 'esnli(_|$)': name it 'esnli'"),
    ("a data file made with dataclasses.replace", "custom_metrics/esnli/splits.py", None,
     '"""The dev split."""\n\nfrom dataclasses import replace\n\nfrom custom_metrics.esnli.data import SOURCE\n\n'
     'DEV = replace(SOURCE, name="e-SNLI fixture dev", mirror_path="esnli/dev.jsonl")\n',
     "esnli: custom_metrics/esnli/splits.py: DEV defines the data file 'e-SNLI fixture dev', which the spec's "
     "datasets leave out"),
    ("logic in the task folder's utils.py", "lm_eval_tasks/esnli/utils.py",
     "from custom_metrics.esnli.prompts import prompt  # noqa: F401\n",
     "from custom_metrics.esnli.prompts import prompt  # noqa: F401\n\n\n"
     "def shout(doc):\n    return prompt(doc).upper()\n",
     "lm_eval_tasks/esnli/utils.py:9: defines a function 'shout': move it into custom_metrics/esnli/ and "
     "re-export it here"),
    ("a metric without a range", "custom_metrics/esnli/__init__.py", '"malformed": SHARE', '"malformd": SHARE',
     "esnli: esnli's metric_list names 'malformed', whose range custom_metrics/esnli/__init__.py does not declare: "
     "add it to METRIC_RANGES there"),
    ("no README", "lm_eval_tasks/esnli/README.md", "", None,
     "esnli: lm_eval_tasks/esnli/README.md is missing: write it in the harness' format"),
]  # fmt: skip


@pytest.mark.parametrize("mistake, where, old, new, expected", MISTAKES)
@pytest.mark.slow
def test_each_silent_mistake_now_fails_the_spec_check_naming_the_fix(
    tree: Path, mistake: str, where: str, old: str | None, new: str | None, expected: str
) -> None:
    path = tree / where
    original = path.read_bytes() if path.exists() else None
    if old is None:
        path.write_text(new or "", encoding="utf-8")
    elif new is None:
        path.unlink()
    else:
        _edit(path, old, new)
    try:
        problems = _spec_problems(tree)
    finally:
        if original is None:
            path.unlink()
        else:
            path.write_bytes(original)
    assert len(problems) == 1 and problems[0].startswith(expected), (mistake, problems)
