"""Every task YAML, loaded the way the harness loads it, checked against the Python side.

A YAML holds settings the hooks rely on (choices the scorers read, metric names the
process_results return, the REG judge's answer budget); a drift between the two would
score differently from what the code and the task README say. Each value has one copy:
what only the harness reads (stop strings, M1's and IBE's budgets, GEESE's M2 template) is
in the YAML alone. This loads every task of ``lm_eval_tasks`` with ``TaskManager`` on the
fixture mirror and checks those invariants.
"""

from __future__ import annotations

import pickle
import subprocess
import sys

from custom_metrics.judge.spec import Sampling
from custom_metrics.leaderboard.registry import paper_of
from custom_metrics.reg.modes import MODES, REASONING, TASKS
from tests.helpers import PAPER_KEYS, TASKS_DIR, paper_tests
from tests.suite_tasks import EXPECTED_TASKS


def test_every_task_is_indexed_and_loads(suite_tasks: dict) -> None:
    loaded = set(suite_tasks)
    assert loaded == EXPECTED_TASKS, (
        f"tasks that load but no EXPECTED_TASKS of tests/<key>/paper.py lists: {sorted(loaded - EXPECTED_TASKS)}; "
        f"listed there but not loading: {sorted(EXPECTED_TASKS - loaded)}"
    )
    for name, task in suite_tasks.items():
        assert list(task.eval_docs), f"{name} has no docs on the fixture mirror"
        assert task.config.metadata.get("version") is not None, f"{name} has no metadata.version"


def test_every_task_that_reads_a_run_records_it(suite_tasks: dict) -> None:
    """Each task a paper declares as reading another run's samples (``READS_SAMPLES``) logs that run
    in every doc (the leaderboard derives its cut, setting and model from it); no other task does."""
    from custom_metrics.common.lineage import COLUMN, readers

    assert set(readers()) <= set(suite_tasks)
    for name, task in suite_tasks.items():
        recorded = {COLUMN in doc for doc in task.eval_docs}
        assert recorded == {name in readers()}, name


def test_choices_are_what_the_scorers_read(suite_tasks: dict) -> None:
    """Each multiple-choice task's choices are what its paper's scorers read back
    (``expected_choices`` in tests/<key>/paper.py: label words, RULE's option digits in order,
    the answers IBE's judge instruction asks for), and each paper has as many such tasks as it says."""
    checked: dict[str, set[str]] = {key: set() for key in PAPER_KEYS}
    for name, task in suite_tasks.items():
        if task.config.output_type != "multiple_choice":
            continue
        doc = next(iter(task.eval_docs))
        choices = task.doc_to_choice(doc)
        gold = task.doc_to_target(doc)
        assert (choices.index(gold) if isinstance(gold, str) else gold) in range(len(choices)), name
        key = paper_of(name).key
        paper = paper_tests(key)
        assert hasattr(paper, "expected_choices"), f"{name}: tests/{key}/paper.py has no expected_choices()"
        assert choices == paper.expected_choices(name, choices), name
        checked[key].add(name)
    for key, names in checked.items():
        said = getattr(paper_tests(key), "MULTIPLE_CHOICE", 0)
        assert len(names) == said, (
            f"{key}: {len(names)} multiple-choice task(s) load ({', '.join(sorted(names)) or 'none'}), but "
            f"MULTIPLE_CHOICE in tests/{key}/paper.py counts {said}: set it to the number of the paper's "
            "multiple-choice tasks"
        )


def test_reg_budgets_are_the_codes(suite_tasks: dict) -> None:
    """reg_judge_select generates as many tokens as the generated judge mode allows (the same
    protocol); the reg_chaos variants carry their mode's budget and share one set of stops (but
    the API reasoning models', which take none)."""
    for name in ("reg_judge_select", "reg_judge_select_reasoning_served"):
        assert suite_tasks[name].config.generation_kwargs["max_gen_toks"] == Sampling.max_tokens
    stops = {name: suite_tasks[name].config.generation_kwargs["until"] for (_, backend), name in TASKS.items()}
    assert stops.pop(TASKS[("thinking", REASONING)]) == []
    assert len({tuple(until) for until in stops.values()}) == 1, stops
    for (mode, _), name in TASKS.items():
        assert suite_tasks[name].config.generation_kwargs["max_gen_toks"] == MODES[mode].max_gen_toks, name


def _fake_result(name: str, task, doc: dict) -> list:
    """An output of the task's kind for ``process_results``; a paper's own (``fake_result`` in
    tests/<key>/paper.py) where its filter hands over something else."""
    own = getattr(paper_tests(paper_of(name).key), "fake_result", None)
    made = own(name, doc) if own else None
    if made is not None:
        return made
    if task.config.output_type == "multiple_choice":
        return [(-float(i), False) for i in range(len(task.doc_to_choice(doc)))]
    return ["Step 1: IF a, THEN b.\nAssumption: c.\nTherefore, since a, b."]


def test_process_results_keys_equal_metric_list(suite_tasks: dict) -> None:
    for name, task in suite_tasks.items():
        doc = next(iter(task.eval_docs))
        listed = {entry["metric"] for entry in task.config.metric_list}
        if task.config.process_results is None:
            assert listed == {"acc"}, name  # the harness' own multiple-choice scoring
            continue
        returned = task.process_results(doc, _fake_result(name, task, doc))
        assert set(returned) == listed, name


def test_every_aggregation_pickles_by_name(suite_tasks: dict) -> None:
    """lm-eval 0.5 bootstraps every aggregation but its own ``mean`` in a pool of worker processes,
    which receive the function pickled by its module and name: a closure would stop the run there."""
    for name, task in suite_tasks.items():
        for metric, function in task.aggregation().items():
            assert pickle.loads(pickle.dumps(function)) is function, f"{name}: {metric}'s {function!r}"


def test_generated_task_families_are_up_to_date() -> None:
    script = TASKS_DIR / "rule" / "_generate_configs.py"
    completed = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
