"""Every task YAML, loaded the way the harness loads it, checked against the Python side.

A YAML repeats a few constants (choices, stop strings, metric names) that the hooks also
define; a drift between the two would score or stop differently from what the code and
the task README say. This loads every task of ``lm_eval_tasks`` with ``TaskManager`` on
the fixture mirror and checks those invariants.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from lm_eval.tasks import TaskManager

from custom_metrics.geese.data import LABELS
from custom_metrics.geese.prompts import M1_MAX_TOKENS, M1_STOP, M2_TEMPLATE
from custom_metrics.ibe.prompts import EXPLANATION_MAX_TOKENS, EXPLANATION_STOP, JUDGE_CHOICES
from custom_metrics.judge.prompt import LABEL_WORDS
from custom_metrics.reg.generation import MODES, TASKS
from custom_metrics.reg.prompts import GENERATION_STOP, JUDGE_SELECT_MAX_TOKENS, JUDGE_SELECT_STOP
from custom_metrics.rule.prompts import CHOICES
from tests.helpers import MIRROR, TASKS_DIR
from tests.reg.judges import tiny_judge_metadata
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
CHOICES_BY_PREFIX = {
    "geese_": list(LABELS),
    "rule": CHOICES,
    "reg_judge": list(LABEL_WORDS),
    "ibe_judge": JUDGE_CHOICES,
}
STOPS_BY_PREFIX = {
    "geese_generate": (M1_STOP, M1_MAX_TOKENS),
    **{task: (GENERATION_STOP, MODES[mode].max_gen_toks) for (mode, _), task in TASKS.items()},
    "reg_judge_select": (JUDGE_SELECT_STOP, JUDGE_SELECT_MAX_TOKENS),
    "ibe_": (EXPLANATION_STOP, EXPLANATION_MAX_TOKENS),
}


def _by_prefix(table: dict, name: str):
    """The entry of the longest prefix of ``name`` (``reg_chaos_thinking`` before ``reg_chaos``)."""
    return table[max((prefix for prefix in table if name.startswith(prefix)), key=len)]


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
        # REG checks its judge while the task is built: a tiny classifier (random, so degenerate: warn)
        judge = tiny_judge_metadata(tmp_path_factory.mktemp("judge"))
        for name, run_args in REG_RUN_ARGS.items():
            metadata = {"tokenizer": tokenizer, "model": tokenizer} if run_args is SERVED else {"pretrained": tokenizer}
            metadata |= judge
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


def test_choices_equal_the_python_constants(tasks: dict) -> None:
    for name, task in tasks.items():
        if task.config.output_type == "multiple_choice":
            doc = next(iter(task.test_docs()))
            assert task.doc_to_choice(doc) == _by_prefix(CHOICES_BY_PREFIX, name), name


def test_geese_m2_template_equals_the_python_constant(tasks: dict) -> None:
    m2 = [task for name, task in tasks.items() if name.startswith("geese_") and "generate" not in name]
    assert len(m2) == 7
    assert all(task.config.doc_to_text == M2_TEMPLATE for task in m2)


def test_stop_strings_and_lengths_equal_the_python_constants(tasks: dict) -> None:
    for name, task in tasks.items():
        if task.config.output_type == "generate_until":
            until, max_tokens = _by_prefix(STOPS_BY_PREFIX, name)
            assert task.config.generation_kwargs["until"] == until, name
            assert task.config.generation_kwargs["max_gen_toks"] == max_tokens, name


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
