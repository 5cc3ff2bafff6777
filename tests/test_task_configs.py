"""Every task YAML, loaded the way the harness loads it, checked against the Python side.

A YAML holds settings the hooks rely on (choices the scorers read, metric names the
process_results return, the REG judge's answer budget); a drift between the two would
score differently from what the code and the task README say. Each value has one copy:
what only the harness reads (stop strings, M1's and IBE's budgets, GEESE's M2 template) is
in the YAML alone. This loads every task of ``lm_eval_tasks`` with ``TaskManager`` on the
fixture mirror and checks those invariants.
"""

from __future__ import annotations

import json
import subprocess
import sys

from custom_metrics.geese.data import LABELS
from custom_metrics.ibe.prompts import JUDGE_INSTRUCTION
from custom_metrics.judge.prompt import LABEL_WORDS
from custom_metrics.judge.spec import Sampling
from custom_metrics.reg.generation import MODES, REASONING, TASKS
from tests.helpers import TASKS_DIR
from tests.suite_tasks import EXPECTED_TASKS

# The label words the scorers map back to labels (GEESE's metrics, the REG judge's parser).
CHOICES_BY_PREFIX = {"geese_": list(LABELS), "reg_judge": list(LABEL_WORDS)}


def test_every_task_is_indexed_and_loads(suite_tasks: dict) -> None:
    assert set(suite_tasks) == EXPECTED_TASKS
    for name, task in suite_tasks.items():
        assert list(task.test_docs()), f"{name} has no docs on the fixture mirror"
        assert task.config.metadata.get("version") is not None, f"{name} has no metadata.version"


def test_choices_are_what_the_scorers_read(suite_tasks: dict) -> None:
    """Label words where a scorer maps them back; RULE's option digits in order (the prompt
    ends at "Option" or "Rationale" and the label is the digit's index); IBE's judge choices
    are the answers its instruction asks for."""
    checked = set()
    for name, task in suite_tasks.items():
        if task.config.output_type != "multiple_choice":
            continue
        doc = next(iter(task.test_docs()))
        choices = task.doc_to_choice(doc)
        gold = task.doc_to_target(doc)
        assert (choices.index(gold) if isinstance(gold, str) else gold) in range(len(choices)), name
        if name.startswith("rule"):
            assert choices == [str(index) for index in range(len(choices))], name
        elif name.startswith("ibe_judge"):
            assert all(f'"{choice}"' in JUDGE_INSTRUCTION for choice in choices), name
        else:
            assert choices == CHOICES_BY_PREFIX[next(p for p in CHOICES_BY_PREFIX if name.startswith(p))], name
        checked.add(name)
    assert len(checked) == 7 + 5 + 38 + 2 + 4  # GEESE M2 and its explanation-only tasks, RULE, REG, IBE's judges


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
    if task.config.output_type == "multiple_choice":
        return [(-float(i), False) for i in range(len(task.doc_to_choice(doc)))]
    if name.startswith("reg_chaos"):
        verdict = {"label": "contradiction", "probs": {"entailment": 0.1, "neutral": 0.1, "contradiction": 0.8}}
        record = {"explanation": "e", "flag": "", "initial": verdict, "coherence": verdict, "effectiveness": verdict}
        lengths = {"thinking_words": 0, "output_tokens": 3, "thinking_tokens": 0}
        return [json.dumps({**record, **lengths})]
    return ["Step 1: IF a, THEN b.\nAssumption: c.\nTherefore, since a, b."]


def test_process_results_keys_equal_metric_list(suite_tasks: dict) -> None:
    for name, task in suite_tasks.items():
        doc = next(iter(task.test_docs()))
        listed = {entry["metric"] for entry in task.config.metric_list}
        if task.config.process_results is None:
            assert listed == {"acc"}, name  # the harness' own multiple-choice scoring
            continue
        returned = task.process_results(doc, _fake_result(name, task, doc))
        assert set(returned) == listed, name


def test_generated_task_families_are_up_to_date() -> None:
    script = TASKS_DIR / "rule" / "_generate_configs.py"
    completed = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
