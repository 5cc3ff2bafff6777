"""Every task of the suite loaded the way the harness loads it, on the fixture mirror: shared
by the task-config checks and the harness' own ``BaseTasks`` checks (one load per session)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lm_eval.tasks import TaskManager

from tests.helpers import MIRROR, PAPER_KEYS, TASKS_DIR, paper_tests
from tests.reg.judges import tiny_judge_metadata
from tests.tiny_models import small_tokenizer

# Tasks that read an earlier run's samples file (--metadata explanations), and the one that reads
# two (the CoT run and its editor's run): the stand-in file of ``_explanation_files`` for each key.
NEEDS_EXPLANATIONS = {
    "geese_selfexp": {"explanations": "geese"},
    "geese_selfexp_only": {"explanations": "geese"},
    **{f"ibe_judge_{d}{kind}": {"explanations": d} for d in ("copa", "ecare") for kind in ("", "_chat", "_position")},
    "rule_cot_faithfulness": {"explanations": "rule_cot"},
    "rule_cot_edits": {"explanations": "rule_cot"},
    "rule_cot_faithfulness_edits": {"explanations": "rule_cot", "edits": "rule_edits"},
    "rule_zeroshot_cot": {"explanations": "rule"},
}
# Every task that must load: each paper's own list (tests/<key>/paper.py), for every registered paper.
EXPECTED_TASKS = {task for key in PAPER_KEYS for task in paper_tests(key).EXPECTED_TASKS}
# REG's variants read the model arguments (merged into the metadata): the model kind, the
# thinking switch and the tokenizer that counts output tokens (custom_metrics/reg/generation.py).
SERVED = {"base_url": "http://127.0.0.1:9/v1/chat/completions"}
REG_RUN_ARGS = {
    "reg_chaos": {},
    "reg_chaos_thinking": {"chat_template_args": {"enable_thinking": True}},
    "reg_chaos_served": SERVED,
    "reg_chaos_thinking_served": SERVED,
    "reg_chaos_reasoning_served": SERVED,
}
# The fixture mirror holds 6 e-CARE rows per split; the paper samples 500.
SMALL_ECARE = {"ecare_train_size": 2, "ecare_test_size": 2, "ecare_seed": 1}


def _explanation_files(folder: Path, ecare: dict[str, int]) -> dict[str, str]:
    """Samples files standing in for the M1 / explanation runs the reading tasks need."""
    from custom_metrics.geese.data import load_docs
    from custom_metrics.ibe import data
    from custom_metrics.rule.cot_edits import edit_request_docs
    from custom_metrics.rule.variants import docs_for

    geese = folder / "samples_geese_generate_whyexp_x.jsonl"
    geese.write_text("".join(json.dumps({"doc": d, "filtered_resps": ["An explanation."]}) + "\n" for d in load_docs()))
    files = {"geese": str(geese)}
    rule = folder / "samples_rule_zeroshot_cot_reasoning_x.jsonl"
    reasoning = docs_for("zeroshot_cot_reasoning")
    rule.write_text("".join(json.dumps({"doc": d, "filtered_resps": [" A reasoning."]}) + "\n" for d in reasoning))
    files["rule"] = str(rule)
    for dataset in ("copa", "ecare"):
        sizes = [ecare[key] for key in ("ecare_train_size", "ecare_test_size", "ecare_seed") if key in ecare]
        docs = data.copa_docs() if dataset == "copa" else data.ecare_docs(*sizes)
        path = folder / f"samples_ibe_{dataset}_x.jsonl"
        path.write_text(
            "".join(json.dumps({"doc": d, "filtered_resps": ["Step 1: IF a, THEN b."]}) + "\n" for d in docs)
        )
        files[dataset] = str(path)
    cot_run = folder / "samples_rule_5shot_cot_split1_x.jsonl"
    cot = "The context says so. The others do not follow. Therefore the answer is Option1."
    rows = [
        {"doc_id": i, "doc": d, "arguments": {"gen_args_0": {"arg_0": d["prompt"]}}, "filtered_resps": [cot]}
        for i, d in enumerate(docs_for("fewshot", 1, "cot"))
    ]
    cot_run.write_text("".join(json.dumps(row) + "\n" for row in rows))
    files["rule_cot"] = str(cot_run)
    edits = folder / "samples_rule_cot_edits_x.jsonl"
    requests = edit_request_docs(str(cot_run))
    edits.write_text("".join(json.dumps({"doc": d, "filtered_resps": ["An edit."]}) + "\n" for d in requests))
    files["rule_edits"] = str(edits)
    return files


def load_plain_tasks(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> dict[str, Any]:
    """Every task as upstream's own checks build it: one plain ``TaskManager``, no model and no
    metadata; only the reading tasks get the samples file they read (data, not a model)."""
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(data_root))
    try:
        manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False)
        loaded = dict(manager.load(sorted(set(manager.all_subtasks) - set(NEEDS_EXPLANATIONS)))["tasks"])
        files = _explanation_files(tmp_path_factory.mktemp("explanations"), {})
        for name, sources in NEEDS_EXPLANATIONS.items():
            metadata = {key: files[source] for key, source in sources.items()}
            reading = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata)
            loaded.update(reading.load([name])["tasks"])
        return loaded
    finally:
        monkeypatch.undo()


def load_suite_tasks(
    tmp_path_factory: pytest.TempPathFactory, data_root: Path = MIRROR, ecare: dict[str, int] = SMALL_ECARE
) -> dict[str, Any]:
    """Every task of the suite, loaded by the harness' ``TaskManager`` on ``data_root`` (the
    fixture mirror unless told), with the model arguments REG's variants read and stand-in
    samples files for the reading tasks."""
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(data_root))
    monkeypatch.setenv("EXPLAIN_EVAL_JUDGE_CACHE", str(tmp_path_factory.mktemp("verdicts")))
    try:
        files = _explanation_files(tmp_path_factory.mktemp("explanations"), ecare)
        plain = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=ecare)
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
        for name, sources in NEEDS_EXPLANATIONS.items():
            metadata = {**ecare, **{key: files[source] for key, source in sources.items()}}
            manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata)
            loaded.update(manager.load([name])["tasks"])
        return loaded
    finally:
        monkeypatch.undo()
