"""RULE's zero-shot chain of thought (Table 2's zero-shot "InstructGPT+ CoT"), two chained tasks
as Kojima et al. prompt it: the reasoning ("Let's think step by step."), then the answer
extraction ("Therefore, among Option0 through Option3, the answer is") reading the first run's
samples file. The answer is read as their cleansing reads it (the first option label); the
chain runs for real on the embedded model (two ``lm_eval`` CLI runs, --limit 2, a few tokens),
and the leaderboard puts the second beside the published row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import custom_metrics.rule.leaderboard as rule_board
from custom_metrics.cli import main as cli
from custom_metrics.common.errors import DataError
from custom_metrics.leaderboard.versus_paper import paper_row
from custom_metrics.rule.answers import EMPTY
from custom_metrics.rule.metrics import Outcome
from custom_metrics.rule.variants import docs_for
from custom_metrics.rule.zeroshot_cot import (
    ANSWER_TASK,
    ANSWER_TRIGGER,
    NO_LABEL,
    REASONING_TASK,
    answer_docs,
    read_first_label,
)
from custom_metrics.sweep.runner import parse_tasks
from tests.helpers import run_lm_eval
from tests.rule.conftest import ENV
from tests.rule.test_leaderboard_rows import results_file, rule_table

REASONING_TOKENS, ANSWER_TOKENS = 8, 4


@pytest.mark.parametrize(
    "text, option, problem",
    [
        (" Option2.", 2, ""),
        (" **Option 1**, because the rationale", 1, ""),
        (" 3", 3, ""),
        (" Option1, not Option2", 1, ""),  # Kojima's cleansing: the first label
        ("", None, EMPTY),
        (" none of them", None, NO_LABEL),
        (" Option7", None, "an option that does not exist (Option7)"),
    ],
)
def test_the_answer_is_the_first_option_label(text: str, option: int | None, problem: str) -> None:
    reading = read_first_label(text)
    assert (reading.option, reading.problem) == (option, problem)


def _samples(path: Path, docs: list[dict], reasoning: str) -> Path:
    path.write_text("".join(json.dumps({"doc": doc, "filtered_resps": [reasoning]}) + "\n" for doc in docs))
    return path


def test_the_answer_docs_continue_the_logged_reasoning(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(*next(iter(ENV.items())))
    reasoning = docs_for("zeroshot_cot_reasoning")
    assert all(doc["prompt"].endswith("\n Answer: Let's think step by step.") for doc in reasoning)
    covered = _samples(tmp_path / "samples.jsonl", reasoning[:3], " It follows that X.")
    docs = answer_docs(reasoning, covered)
    assert [doc["doc_id"] for doc in docs] == [doc["doc_id"] for doc in reasoning[:3]]  # a --limit run: those only
    first = docs[0]
    trigger = "\nTherefore, among Option0 through Option3, the answer is"  # Kojima's, with RULE's labels
    assert first["prompt"] == f"{reasoning[0]['prompt']} It follows that X. {trigger}"
    assert first["prompt"].endswith(ANSWER_TRIGGER) and first["reasoning"] == " It follows that X."
    with pytest.raises(DataError, match=r"rule_zeroshot_cot reads the reasoning of a rule_zeroshot_cot_reasoning"):
        answer_docs(reasoning, None)
    zero_shot = docs_for("combined")  # the plain zero-shot prompts: another task's file
    with pytest.raises(DataError, match=r"3 doc\(s\) are not rule_zeroshot_cot_reasoning's"):
        answer_docs(reasoning, _samples(tmp_path / "other.jsonl", zero_shot[:3], " X."))


def test_the_sweep_runs_the_reasoning_first_and_the_board_puts_the_answer_beside_table_2(tmp_path: Path) -> None:
    assert parse_tasks(f"{ANSWER_TASK},rule,{REASONING_TASK}") == ["rule", REASONING_TASK, ANSWER_TASK]
    assert rule_board.SPEC.runs.samples_input.metadata_key == "explanations"
    results_file(tmp_path, "1", {ANSWER_TASK: {"mainq_acc": 0.5, "unparsed": 0.25}, "rule": {"mainq_acc": 0.4}}, 1.0)
    table = rule_table(tmp_path)
    rows = {(row.model, row.setting): row for row in table.rows}
    cot = rows["org/model", "zero-shot, CoT"]
    assert (cot.cells["rule/mainq_acc"].value, cot.cells["rule/unparsed"].value) == (0.5, 0.25)
    assert rows["org/model", "zero-shot"].cells["rule/mainq_acc"].value == 0.4
    published = [row for row in table.rows if row.kind == "published"]
    found, key, _ = paper_row(rule_board.SPEC, rule_board.SPEC.board.headlines[1], cot, published)
    assert (found.model, found.setting, key) == ("InstructGPT", "zero-shot, CoT", "rule/mainq_acc")
    assert found.cells["rule/mainq_acc"].value == 0.638  # Table 2: InstructGPT+ CoT, zero-shot, 63.8


@pytest.mark.e2e
@pytest.mark.slow
def test_the_two_requests_run_chained_on_the_embedded_model(small_model: Path, tmp_path: Path) -> None:
    """Both requests through the real lm_eval CLI, the reasoning on 2 documents (--limit 2), the
    answers on all its file holds; then ``explain-eval leaderboard``: the answer run, 2 of 2 in its
    own results file, is a run on part of the data (it read a cut run), ranked apart from a full
    run of its setting that scores less."""
    extra = ["--gen_kwargs", f"max_gen_toks={REASONING_TOKENS}"]
    _, first = run_lm_eval(small_model, REASONING_TASK, tmp_path / "reasoning", limit=2, extra=extra, env=ENV)
    (samples_file,) = (tmp_path / "reasoning").glob(f"*/samples_{REASONING_TASK}_*.jsonl")
    metadata = json.dumps({"explanations": str(samples_file)})
    extra = ["--metadata", metadata, "--gen_kwargs", f"max_gen_toks={ANSWER_TOKENS}"]
    results, second = run_lm_eval(small_model, ANSWER_TASK, tmp_path / "answer", limit=None, extra=extra, env=ENV)
    reasoning = {sample["doc"]["doc_id"]: sample for sample in first[REASONING_TASK]}
    answers = second[ANSWER_TASK]
    assert sorted(sample["doc"]["doc_id"] for sample in answers) == sorted(reasoning)
    for sample in answers:
        asked = reasoning[sample["doc"]["doc_id"]]
        prompt = asked["arguments"]["gen_args_0"]["arg_0"]
        assert prompt.endswith("Answer: Let's think step by step.")
        assert asked["arguments"]["gen_args_0"]["arg_1"]["until"] == []  # Kojima et al.: no stop string
        logged = asked["filtered_resps"][0]
        assert sample["arguments"]["gen_args_0"]["arg_0"] == f"{prompt}{logged} {ANSWER_TRIGGER}"
        assert sample["arguments"]["gen_args_0"]["arg_1"]["max_gen_toks"] == ANSWER_TOKENS
        assert sample["arguments"]["gen_args_0"]["arg_1"]["until"] == []
        reading = read_first_label(sample["filtered_resps"][0])
        outcome = Outcome.parse(sample["mainq_acc"])
        assert outcome.correct == (reading.option == sample["doc"]["label"]) and sample["unparsed"] == reading.problem
        assert sample["doc"]["source_run"]["task"] == REASONING_TASK and sample["doc"]["source_run"]["limit"] == 2
    scores = results["results"][ANSWER_TASK]
    unread = [sample["unparsed"] != "" for sample in answers]
    assert scores["unparsed,none"] == sum(unread) / len(unread)
    assert set(results["results"]) == {ANSWER_TASK}
    assert results["n-samples"][ANSWER_TASK]["effective"] == results["n-samples"][ANSWER_TASK]["original"] == 2

    full = tmp_path / "full"
    full.mkdir()
    nothing = dict.fromkeys(("consistency", "mainq_acc", "subq_acc", "selective_acc", "eliminative_acc"), 0.0)
    results_file(full, "2026-01-01T00-00-00", {ANSWER_TASK: nothing}, 1.0)
    board = tmp_path / "board"
    assert cli(["leaderboard", str(tmp_path / "answer"), str(full), "--out", str(board)]) == 0
    rows = [row for row in json.loads((board / "rule.json").read_text())["rows"] if row["row"] == "run"]
    assert [(row["model"], row["setting"]) for row in rows] == [
        ("org/model", "zero-shot, CoT"),  # ranked: full data
        ("SmolLM2-135M-Instruct (embedded)", "zero-shot, CoT"),  # apart, after it: part of the data
    ]
    assert rows[0]["data"] == "full data"
    assert rows[1]["data"].startswith(f"⚠ part of the data: read {REASONING_TASK}: --limit 2, 2 of ")
