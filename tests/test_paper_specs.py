"""Each paper's ``PaperSpec`` matches its task folder (``leaderboard/spec_checks.py``), and the checks bite.

The mistakes a contributor adding a paper makes without any other check noticing: the spec
left out of the registry, a headline naming a metric no task reports, a typo in the task
pattern, a data file left out of the spec's datasets, a placeholder pin. Each is made here on
the suite's own specs (``dataclasses.replace``) and must be named with its fix.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from custom_metrics.common.download import GitHubFile
from custom_metrics.common.errors import DataError
from custom_metrics.common.leaderboard_types import Headline
from custom_metrics.common.task_folders import TASKS_PATH
from custom_metrics.leaderboard import registry
from custom_metrics.leaderboard.registry import PAPERS
from custom_metrics.leaderboard.spec_checks import spec_problems
from custom_metrics.leaderboard.spec_faults import load_problems, pin_faults
from tests.helpers import REPO, checkout_files

SPECS = {spec.key: spec for spec in PAPERS}


def test_every_spec_matches_its_task_folder() -> None:
    assert spec_problems(PAPERS, TASKS_PATH, REPO) == []


def test_a_task_folder_without_a_registered_spec_is_named_with_the_fix() -> None:
    problems = spec_problems([spec for spec in PAPERS if spec.key != "reg"], TASKS_PATH, REPO)
    assert problems == [
        "lm_eval_tasks/reg/ has no spec in custom_metrics/leaderboard/registry.py: add 'reg' to PAPER_KEYS there, "
        "with SPEC in custom_metrics/reg/leaderboard.py (its runs land in 'Other tasks' until then)"
    ]


def test_a_headline_naming_a_metric_no_task_reports_is_caught() -> None:
    reg = SPECS["reg"]
    headlines = (Headline(("reg_chaos/sucess",), "success", "quality"), *reg.board.headlines[1:])
    typo = replace(reg, board=replace(reg.board, headlines=headlines))
    problems = spec_problems([typo if spec is reg else spec for spec in PAPERS], TASKS_PATH, REPO)
    assert len(problems) == 1 and problems[0].startswith(
        "reg: headline 'success' names reg_chaos/sucess, but reg_chaos's metric_list has no 'sucess'"
    )


def test_a_typo_in_the_task_pattern_is_caught() -> None:
    rule = SPECS["rule"]
    typo = replace(rule, pattern=r"rlue(_|$)")
    problems = spec_problems([typo if spec is rule else spec for spec in PAPERS], TASKS_PATH, REPO)
    assert problems and all("does not match the spec's pattern 'rlue(_|$)'" in p for p in problems)
    assert "rule: task rule_main (lm_eval_tasks/rule/) does not match" in "\n".join(problems)


def test_a_data_file_left_out_of_the_specs_datasets_is_caught() -> None:
    ibe = SPECS["ibe"]
    short = replace(ibe, datasets={"copa": ibe.datasets["copa"]})
    problems = spec_problems([short if spec is ibe else spec for spec in PAPERS], TASKS_PATH, REPO)
    assert len(problems) == 2 and all("which the spec's datasets leave out" in p for p in problems)
    assert (
        "custom_metrics/ibe/data.py: ECARE_SOURCES defines the data file 'e-CARE Causal_Reasoning train'" in problems[0]
    )


@pytest.mark.parametrize(
    "commit, sha256, size, fault",
    [
        ("0" * 40, "ab" * 32, 10, "not a 40-digit commit hash"),
        ("main", "ab" * 32, 10, "not a 40-digit commit hash"),
        ("a1" * 20, "0" * 64, 10, "sha256"),
        ("a1" * 20, "ab" * 32, 0, "size 0"),
    ],
)
def test_a_placeholder_pin_is_caught(commit: str, sha256: str, size: int, fault: str) -> None:
    faults = pin_faults(GitHubFile("owner", "repo", commit, "data.jsonl", sha256, size))
    assert len(faults) == 1 and fault in faults[0]


def _problems_of(key: str, **changes: object) -> list[str]:
    spec = SPECS[key]
    changed = replace(spec, board=replace(spec.board, **changes))
    return spec_problems([changed if s is spec else s for s in PAPERS], TASKS_PATH, REPO, only=[key])


def test_a_published_row_naming_no_task_is_caught() -> None:
    """A table file's task must be a task of the folder or of extra_tasks (CALAMITA's own names)."""
    geese = SPECS["geese"]
    extra = {task: metrics for task, metrics in geese.board.extra_tasks.items() if task != "geese_anon_anita"}
    *rows, label = _problems_of("geese", extra_tasks=extra)
    assert len(rows) == 4 and all(  # one per CALAMITA model
        "names geese_anon_anita/acc, but geese_anon_anita is no task of lm_eval_tasks/geese/ nor of extra_tasks" in p
        for p in rows
    )
    assert label.startswith("geese: task_labels names 'geese_anon_anita'") and label.endswith(
        "fix it in custom_metrics/geese/leaderboard.py (or the words.yaml it reads)"
    )


def test_labels_and_definitions_of_no_task_or_metric_are_caught() -> None:
    rule = SPECS["rule"]
    problems = _problems_of(
        "rule",
        task_labels={**rule.board.task_labels, "rule_mian": "Main"},
        metric_labels={**rule.board.metric_labels, "mainq_ac": "MainQ"},
        definitions={**rule.board.definitions, "rule_main/subq": "?"},
    )
    assert [problem.split(",")[0] for problem in problems] == [
        "rule: task_labels names 'rule_mian'",
        "rule: metric_labels names 'mainq_ac'",
        "rule: definitions names 'rule_main/subq'",
    ]


def test_the_registry_refuses_a_spec_broken_on_its_own_when_it_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    reg = SPECS["reg"]
    headlines = (replace(reg.board.headlines[0], family="qualty"), *reg.board.headlines[1:])
    broken = replace(reg, board=replace(reg.board, headlines=headlines))
    assert load_problems([broken]) == [
        "reg: headline 'success' is of family 'qualty', which families does not define: add it to "
        "board=Board(families=...) in custom_metrics/reg/leaderboard.py"
    ]
    monkeypatch.setattr(registry, "load_problems", lambda specs: load_problems([broken]))
    with pytest.raises(DataError, match=r"registry.py: the papers' specs have 1 problem\(s\):\nreg: headline"):
        registry._checked(PAPERS)


def test_explain_eval_check_passes_on_the_suite() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "custom_metrics.cli", "check", "rule"], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "1 paper(s) checked (rule): no problem(s)"


def test_comparisons_without_per_document_outcomes_are_refused_when_the_registry_loads() -> None:
    """A paired comparison is tested on the samples' outcomes: without the hook it would never be
    tested, and the page would say nothing of it."""
    geese = SPECS["geese"]
    blind = replace(geese, board=replace(geese.board, samples=replace(geese.board.samples, outcomes=None)))
    assert load_problems([blind]) == [
        "geese: comparisons are tested on per-document outcomes, which the spec does not read: give "
        "board=Board(samples=SampleView(..., outcomes=...)) in custom_metrics/geese/leaderboard.py"
    ]


def _tree_with(tmp_path: Path, path: str, old: str, new: str) -> Path:
    """The suite's packages and task folders copied, with one edit a contributor makes."""
    root = tmp_path / "suite"
    for name in checkout_files():
        if name.split("/")[0] in ("custom_metrics", "ibe_postprocess", "lm_eval_tasks"):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, root / name)
    text = (root / path).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path}: {old!r}"
    (root / path).write_text(text.replace(old, new), encoding="utf-8")
    return root


@pytest.mark.parametrize(
    "path, old, new, says",
    [
        (
            "custom_metrics/leaderboard/registry.py",
            "PAPER_KEYS = (",  # any registry, the fixture papers' copy too
            'PAPER_KEYS = ("nopaper", ',
            "custom_metrics/leaderboard/registry.py: PAPER_KEYS names 'nopaper', which has no package "
            "custom_metrics/nopaper/ with a leaderboard.py defining SPEC",
        ),
        (
            "custom_metrics/rule/leaderboard.py",
            '    key="rule",\n',
            '    key="rule",\n    pattern=r"rule(_|$",\n',
            "rule: pattern 'rule(_|$' is no regular expression (missing ), unterminated subpattern at position 4)",
        ),
    ],
    ids=["a registry key with no package", "a task pattern that does not compile"],
)
def test_explain_eval_check_names_a_registry_key_with_no_package_and_a_bad_pattern(
    tmp_path: Path, path: str, old: str, new: str, says: str
) -> None:
    """Both ended in a traceback (ModuleNotFoundError, re.error)."""
    root = _tree_with(tmp_path, path, old, new)
    done = subprocess.run(
        [sys.executable, "-m", "custom_metrics.cli", "check"],
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("explain-eval check: custom_metrics/leaderboard/registry.py: "), done.stderr
    # the problem in one line (a spec broken on its own stops every command: under the registry's heading)
    assert [line for line in done.stderr.splitlines() if says in line], done.stderr
    assert len(done.stderr.splitlines()) == (1 if "PAPER_KEYS" in says else 2), done.stderr


def test_a_pattern_that_does_not_compile_is_one_problem_of_the_full_check() -> None:
    rule = SPECS["rule"]
    broken = replace(rule, pattern=r"rule(_|$")
    problems = spec_problems([broken if spec is rule else spec for spec in PAPERS], TASKS_PATH, REPO, only=["rule"])
    assert len(problems) == 1 and problems[0].startswith("rule: pattern 'rule(_|$' is no regular expression")


def test_a_metric_without_a_declared_range_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A metric no range covers would show a results file's 1.8 as a share: each paper declares
    one for every metric its tasks report and its board derives."""
    import custom_metrics.geese
    import custom_metrics.ibe

    ibe_ranges = {key: value for key, value in custom_metrics.ibe.METRIC_RANGES.items() if key != "first_slot"}
    monkeypatch.setattr(custom_metrics.ibe, "METRIC_RANGES", ibe_ranges)
    geese_ranges = {key: value for key, value in custom_metrics.geese.METRIC_RANGES.items() if key != "las"}
    monkeypatch.setattr(custom_metrics.geese, "METRIC_RANGES", geese_ranges)
    fix = "add it to METRIC_RANGES there (SHARE, COUNT, MEAN_LENGTH, ... of custom_metrics.common.metric_ranges)"
    assert spec_problems(PAPERS, TASKS_PATH, REPO, ["geese", "ibe"]) == [
        "geese: the board's derived_metrics names 'las', whose range custom_metrics/geese/__init__.py does not "
        f"declare: {fix}",
        "ibe: ibe_judge_copa_position's metric_list names 'first_slot', whose range custom_metrics/ibe/__init__.py "
        f"does not declare: {fix}",
    ]
