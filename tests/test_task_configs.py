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
from pathlib import Path

import pytest
from lm_eval.tasks import TaskManager

from custom_metrics.geese.data import LABELS
from custom_metrics.ibe.prompts import JUDGE_INSTRUCTION
from custom_metrics.judge.prompt import LABEL_WORDS
from custom_metrics.judge.spec import Sampling
from custom_metrics.reg.generation import MODES, TASKS
from tests.helpers import MIRROR, TASKS_DIR
from tests.tiny_models import small_tokenizer

# Tasks that read an earlier run's samples file (--metadata explanations).
NEEDS_EXPLANATIONS = {"geese_selfexp": "geese", "ibe_judge_copa": "copa", "ibe_judge_ecare": "ecare"}
EXPECTED_TASKS = {
    *(f"geese_{s}" for s in ("noexp", "dummy", "human", "llama3", "llama3_whynot", "llama3_implicit", "selfexp")),
    *(f"geese_generate_{k}" for k in ("whyexp", "whynot", "implicit")),
    "rule", "rule_main", "rule_sub", "rule_noctx", "rule_alignment",
    *(f"rule_5shot_split{k}" for k in range(1, 6)),
    *(f"rule_5shot_rule_split{k}" for k in range(1, 6)),
    *(f"rule_rationale_{s}" for s in ("none", "selective", "eliminative", "both")),
    "reg_chaos", "reg_chaos_thinking", "reg_chaos_served", "reg_chaos_thinking_served",
    "reg_judge_select", "reg_judge_select_loglik",
    "ibe_copa", "ibe_ecare", "ibe_judge_copa", "ibe_judge_ecare",
}  # fmt: skip
# REG's variants read the model arguments (merged into the metadata): the model kind, the
# thinking switch and the tokenizer that counts output tokens (custom_metrics/reg/generation.py).
SERVED = {"base_url": "http://127.0.0.1:9/v1/chat/completions"}
REG_RUN_ARGS = {
    "reg_chaos": {},
    "reg_chaos_thinking": {"chat_template_args": {"enable_thinking": True}},
    "reg_chaos_served": SERVED,
    "reg_chaos_thinking_served": SERVED,
}
# The fixture mirror holds 6 e-CARE rows per split; the paper samples 500.
SMALL_ECARE = {"ecare_train_size": 2, "ecare_test_size": 2, "ecare_seed": 1}
# The label words the scorers map back to labels (GEESE's metrics, the REG judge's parser).
CHOICES_BY_PREFIX = {"geese_": list(LABELS), "reg_judge": list(LABEL_WORDS)}


def _explanation_files(folder: Path) -> dict[str, str]:
    """Samples files standing in for the M1 / explanation runs the reading tasks need."""
    geese_docs = [json.loads(line) for line in (MIRROR / "geese/explained-full-llama-3/test.jsonl").open()]
    geese = folder / "samples_geese_generate_whyexp_x.jsonl"
    geese.write_text("".join(json.dumps({"doc": d, "filtered_resps": ["An explanation."]}) + "\n" for d in geese_docs))
    files = {"geese": str(geese)}
    for dataset in ("copa", "ecare"):
        from custom_metrics.ibe import data

        docs = data.copa_docs() if dataset == "copa" else data.ecare_docs(train_size=2, test_size=2, seed=1)
        path = folder / f"samples_ibe_{dataset}_x.jsonl"
        path.write_text(
            "".join(json.dumps({"doc": d, "filtered_resps": ["Step 1: IF a, THEN b."]}) + "\n" for d in docs)
        )
        files[dataset] = str(path)
    return files


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> dict:
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))
    monkeypatch.setenv("EXPLAIN_EVAL_JUDGE_CACHE", str(tmp_path_factory.mktemp("verdicts")))
    try:
        files = _explanation_files(tmp_path_factory.mktemp("explanations"))
        plain = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=SMALL_ECARE)
        names = sorted(name for name in plain.all_subtasks if name not in {**NEEDS_EXPLANATIONS, **REG_RUN_ARGS})
        loaded = dict(plain.load(names)["tasks"])
        tokenizer = str(small_tokenizer(tmp_path_factory.mktemp("tokenizer")))
        for name, run_args in REG_RUN_ARGS.items():
            metadata = {"tokenizer": tokenizer, "model": tokenizer} if run_args is SERVED else {"pretrained": tokenizer}
            manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata | run_args)
            loaded.update(manager.load([name])["tasks"])
        for name, source in NEEDS_EXPLANATIONS.items():
            manager = TaskManager(
                include_path=str(TASKS_DIR),
                include_defaults=False,
                metadata={**SMALL_ECARE, "explanations": files[source]},
            )
            loaded.update(manager.load([name])["tasks"])
        return loaded
    finally:
        monkeypatch.undo()


def test_every_task_is_indexed_and_loads(tasks: dict) -> None:
    assert set(tasks) == EXPECTED_TASKS
    for name, task in tasks.items():
        assert list(task.test_docs()), f"{name} has no docs on the fixture mirror"
        assert task.config.metadata.get("version") is not None, f"{name} has no metadata.version"


def test_choices_are_what_the_scorers_read(tasks: dict) -> None:
    """Label words where a scorer maps them back; RULE's option digits in order (the prompt
    ends at "Option" or "Rationale" and the label is the digit's index); IBE's judge choices
    are the answers its instruction asks for."""
    checked = set()
    for name, task in tasks.items():
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
    assert len(checked) == 7 + 19 + 1 + 2  # GEESE M2, RULE, reg_judge_select_loglik, IBE's judges


def test_reg_budgets_are_the_codes(tasks: dict) -> None:
    """reg_judge_select generates as many tokens as the generated judge mode allows (the same
    protocol); the reg_chaos variants carry their mode's budget and share one set of stops."""
    assert tasks["reg_judge_select"].config.generation_kwargs["max_gen_toks"] == Sampling.max_tokens
    stops = {name: tasks[name].config.generation_kwargs["until"] for name in TASKS.values()}
    assert len({tuple(until) for until in stops.values()}) == 1, stops
    for (mode, _), name in TASKS.items():
        assert tasks[name].config.generation_kwargs["max_gen_toks"] == MODES[mode].max_gen_toks, name


def _fake_result(name: str, task, doc: dict) -> list:
    if task.config.output_type == "multiple_choice":
        return [(-float(i), False) for i in range(len(task.doc_to_choice(doc)))]
    if name.startswith("reg_chaos"):
        verdict = {"label": "contradiction", "probs": {"entailment": 0.1, "neutral": 0.1, "contradiction": 0.8}}
        record = {"explanation": "e", "flag": "", "initial": verdict, "coherence": verdict, "effectiveness": verdict}
        lengths = {"thinking_words": 0, "output_tokens": 3, "thinking_tokens": 0}
        return [json.dumps({**record, **lengths})]
    return ["Step 1: IF a, THEN b.\nAssumption: c.\nTherefore, since a, b."]


def test_process_results_keys_equal_metric_list(tasks: dict) -> None:
    for name, task in tasks.items():
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
