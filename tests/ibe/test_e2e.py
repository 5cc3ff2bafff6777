"""End to end: a model served by a real ``transformers serve`` writes the explanations through
lm_eval's ``local-completions``, both judge tasks (log-likelihood and chat, generate-and-parse)
read them on the embedded model in process, and ``explain-eval ibe`` scores them and writes
the report; a rerun of the generation is answered by the harness' response cache; the chat
judge against a chat endpoint that records what it is asked.

Two real ``lm_eval`` CLI processes (the served generation; both judges in one) serve every
assertion on them; the rerun and the recorded chat judge go through the harness' own
``simple_evaluate`` in this process, since what they check is the cache and the requests, not
the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from custom_metrics.common.results import model_name
from custom_metrics.ibe import data
from custom_metrics.ibe.prompts import explanation_prompt, judge_answer, judge_prompt
from ibe_postprocess import features_file
from ibe_postprocess.cli import main as ibe
from ibe_postprocess.folder import FeaturesFolder
from ibe_postprocess.judge_answer import parse_choice
from tests.helpers import MIRROR, TASKS_DIR, run_lm_eval
from tests.ibe.recording_server import RecordingServer

pytestmark = pytest.mark.e2e
ENV = {"EXPLAIN_EVAL_DATA": str(MIRROR)}
COMPLETIONS = "/v1/completions"
GENERATION = {"limit": 4, "gen_kwargs": "max_gen_toks=32"}  # one training and one test question, both options


@pytest.fixture(scope="module")
def generated(served_model, embedded_model: Path, tmp_path_factory, tiny_nli: Path) -> dict:
    """ibe_copa from the served model (--limit 4: docs interleave training and test questions,
    both options adjacent) with the harness' response cache, then ibe_judge_copa and
    ibe_judge_copa_chat in one run on the embedded model reading its samples; then ``ibe score``
    on the explanations and the chat judge's answers, and ``ibe report``."""
    root = tmp_path_factory.mktemp("ibe-e2e")
    out, cache = root / "out", root / "responses"
    before = served_model.requests(COMPLETIONS)
    generation = ["--gen_kwargs", GENERATION["gen_kwargs"], "--use_cache", str(cache)]
    results, samples = run_lm_eval(
        served_model.completion_flags(), "ibe_copa", out, limit=GENERATION["limit"], extra=generation, env=ENV
    )
    sent = served_model.requests(COMPLETIONS) - before
    samples_file = next(out.glob("*/samples_ibe_copa_*.jsonl"))
    metadata = json.dumps({"explanations": str(samples_file)})
    judge_results, judged = run_lm_eval(
        embedded_model,
        "ibe_judge_copa,ibe_judge_copa_chat,ibe_judge_copa_position",
        root / "judged",
        limit=None,
        extra=["--metadata", metadata, "--gen_kwargs", "max_gen_toks=16"],
        env=ENV,
    )
    features = root / "features"
    chat_file = next((root / "judged").glob("*/samples_ibe_judge_copa_chat_*.jsonl"))
    options = ["--nli-judge", f"seqcls:{tiny_nli}", "--certainty-model", "lexicon", "--processes", "1"]
    assert ibe(["score", str(samples_file), str(chat_file), "--out", str(features), *options]) == 0
    assert ibe(["report", str(features)]) == 0
    return {
        "results": results,
        "samples": samples["ibe_copa"],
        "sent": sent,
        "cache": cache,
        "judge_results": judge_results,
        "judged": judged,
        "features": features,
    }


def test_the_served_model_writes_one_explanation_per_option(generated: dict, served_model) -> None:
    samples = generated["samples"]
    assert generated["sent"] == len(samples) == 4, served_model.log_tail()
    assert [(s["doc"]["qid"], s["doc"]["option"], s["doc"]["split"]) for s in samples] == [
        ("copa-1", 1, "train"),
        ("copa-1", 2, "train"),
        ("copa-501", 1, "test"),
        ("copa-501", 2, "test"),
    ]
    assert all(s["arguments"]["gen_args_0"]["arg_0"] == explanation_prompt(s["doc"]) for s in samples)
    assert all(isinstance(s["filtered_resps"][0], str) and s["filtered_resps"][0] for s in samples)
    assert "steps,none" in generated["results"]["results"]["ibe_copa"]


def _evaluate(model: str, model_args: str, tasks: list[str], monkeypatch, **kwargs) -> dict:
    """The harness' own evaluation, in this process, on the fixture mirror."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=kwargs.pop("metadata", {}))
    return simple_evaluate(
        model=model, model_args=model_args, tasks=tasks, task_manager=manager, log_samples=True, **kwargs
    )


def test_a_rerun_of_the_generation_is_answered_by_the_harness_cache(generated: dict, served_model, monkeypatch):
    """IBE's generation has no judge inside the harness; what a rerun may skip is the generation
    itself, which only the harness' own response cache (``--use_cache``) keeps. With it, the rerun
    sends the server 0 requests (counted in its access log) and logs the same explanations."""
    before = served_model.requests(COMPLETIONS)
    model_args = served_model.completion_flags()[3]
    again = _evaluate(
        "local-completions", model_args, ["ibe_copa"], monkeypatch, use_cache=str(generated["cache"]), **GENERATION
    )
    assert served_model.requests(COMPLETIONS) == before, served_model.log_tail()
    assert [s["filtered_resps"] for s in again["samples"]["ibe_copa"]] == [
        s["filtered_resps"] for s in generated["samples"]
    ]


def test_both_judges_read_the_generated_explanations_with_one_prompt(generated: dict) -> None:
    loglik, chat = generated["judged"]["ibe_judge_copa"], generated["judged"]["ibe_judge_copa_chat"]
    assert [s["doc"] for s in loglik] == [s["doc"] for s in chat] and chat[0]["doc"]["qid"] == "copa-501"
    assert {s["arguments"]["gen_args_0"]["arg_0"] for s in loglik + chat} == {judge_prompt(chat[0]["doc"])}
    assert chat[0]["target"] == judge_answer(chat[0]["doc"])
    results = generated["judge_results"]["results"]
    assert results["ibe_judge_copa"]["acc,none"] in (0.0, 1.0)
    # The chat judge's score is its answer as parse_choice reads it (the embedded base model rambles).
    answer = chat[0]["filtered_resps"][0]
    choice = parse_choice(answer)
    assert results["ibe_judge_copa_chat"]["answer_acc,none"] == float(choice == chat[0]["doc"]["gold"]), answer
    assert results["ibe_judge_copa_chat"]["unparsed,none"] == float(choice is None), answer


def test_the_position_control_judges_both_orders(generated: dict) -> None:
    """The question as the paper shows it, then swapped: the first doc is ibe_judge_copa's own
    (same prompt, same log-likelihoods), the second holds the explanations the other way round,
    and the metrics are the slots the logged log-likelihoods pick."""
    shown, swapped = generated["judged"]["ibe_judge_copa_position"]
    [paper_order] = generated["judged"]["ibe_judge_copa"]
    assert (shown["doc"]["order"], swapped["doc"]["order"]) == ("1-2", "2-1")
    assert shown["doc"]["source_run"]["task"] == "ibe_copa" and shown["doc"]["source_run"]["limit"] == 4
    assert swapped["doc"]["explanations"] == shown["doc"]["explanations"][::-1]
    assert swapped["doc"]["gold"] == 3 - shown["doc"]["gold"]
    assert shown["arguments"] == paper_order["arguments"] and shown["resps"] == paper_order["resps"]
    slots = [max(range(2), key=lambda i: float(s["resps"][i][0][0])) for s in (shown, swapped)]
    results = generated["judge_results"]["results"]["ibe_judge_copa_position"]
    golds = [shown["doc"]["gold"] - 1, swapped["doc"]["gold"] - 1]
    assert results["acc,none"] == sum(slot == gold for slot, gold in zip(slots, golds)) / 2
    assert results["position_bias,none"] == float(slots[0] == slots[1])
    assert results["first_slot,none"] == slots.count(0) / 2


def test_the_report_reads_the_explanations_and_the_chat_judge(generated: dict) -> None:
    features = generated["features"]
    rows = features_file.read(FeaturesFolder(features)).rows
    assert len(rows) == 4 and {row["uncertainty_source"] for row in rows} == {"lexicon"}
    assert all(row["consistent"] in (0, 1) and row["depth"] >= 0 for row in rows)
    report = (features / "report.md").read_text()
    assert "Uncertainty is the lexicon-based estimate" in report
    assert "a sentence's uncertainty: 6 − certainty" in report
    assert "**Explanations of runs on part of the data** (ibe_copa: --limit 4 (4 of " in report  # the cut run
    judge = model_name(generated["judge_results"])
    assert judge == "gemma-3-270m (embedded)"
    assert f"| Baselines | LLM judge: {judge} (this run, generated answers) | " in report
    assert "| Baselines | LLM judge: GPT 3.5 (paper) |" in report
    for section in ("## Section 6: self-evident explanations", "## Figure 19: accuracy on cause and on effect"):
        assert section in report
    summary = json.loads((features / "report.json").read_text())
    writer = model_name(generated["results"])  # the served folder, named as people name it
    assert (summary["model"], summary["judge_model"], summary["tasks"]) == (writer, judge, ["ibe_copa"])
    copa = summary["datasets"]["copa"]
    assert copa["test_questions"] == 1 and len(copa["table1"]) == 11
    assert copa["judge"]["questions"] == 1 and copa["judge"]["method"] == "generated"
    assert copa["self_evident"]["explanations"] == 4
    assert copa["directions"]["questions"] == {"cause": 1, "effect": 0}  # copa-501 asks for a cause
    assert (features / "figure2.png").is_file() and (features / "features_by_correctness.png").is_file()


# What a chat judge may answer, one per test question of the fixture mirror, and how each scores.
CHAT_ANSWERS = {
    "copa-501": ("**Explanation 2** is the more plausible one.", 2),
    "copa-502": ("Explanation 1 is better than explanation 2.", None),
    "copa-503": ("<think>The first skips a step.</think>\n\nexplanation 2", 2),
    "copa-504": ("I cannot choose.", None),
}


def test_the_chat_judge_against_a_chat_endpoint(tmp_path: Path, monkeypatch) -> None:
    """ibe_judge_copa_chat through ``local-chat-completions``: each request carries the judge
    prompt as the user message, greedy, with the task's budget and stops; each answer scores as
    parse_choice reads it."""
    explanations = tmp_path / "explanations.jsonl"
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))
    rows = [
        {**doc, "explanation": f"Step 1: IF {doc['premise']}, THEN {doc['conclusion']}"} for doc in data.copa_docs()
    ]
    explanations.write_text("".join(json.dumps(row) + "\n" for row in rows if row["split"] == "test"))

    def answer(body: dict) -> str:
        prompt = body["messages"][0]["content"]
        return next(text for qid, (text, _) in CHAT_ANSWERS.items() if _premise_of(qid, rows) in prompt)

    server = RecordingServer(answer)
    try:
        out = _evaluate(
            "local-chat-completions",
            f"model=gpt-3.5-turbo,base_url={server.base_url}/chat/completions,num_concurrent=1,max_retries=1",
            ["ibe_judge_copa_chat"],
            monkeypatch,
            apply_chat_template=True,
            metadata={"explanations": str(explanations)},
        )
    finally:
        server.close()
    samples = {s["doc"]["qid"]: s for s in out["samples"]["ibe_judge_copa_chat"]}
    assert sorted(samples) == sorted(CHAT_ANSWERS)
    bodies = [request.body for request in server.posts()]
    assert len(bodies) == 4 and {body["model"] for body in bodies} == {"gpt-3.5-turbo"}
    prompts = {judge_prompt(sample["doc"]) for sample in samples.values()}
    assert {body["messages"][0]["content"] for body in bodies} == prompts
    assert all(len(body["messages"]) == 1 and body["messages"][0]["role"] == "user" for body in bodies)
    assert {(body["max_tokens"], body["temperature"]) for body in bodies} == {(64, 0.0)}
    assert all(body["stop"] == ["<end_of_turn>", "<|im_end|>", "<|eot_id|>", "</s>"] for body in bodies)
    for qid, (_, choice) in CHAT_ANSWERS.items():
        gold = samples[qid]["doc"]["gold"]
        expected = (float(choice == gold), float(choice is None))
        assert (samples[qid]["answer_acc"], samples[qid]["unparsed"]) == expected, qid
    assert out["results"]["ibe_judge_copa_chat"]["unparsed,none"] == 0.5


def _premise_of(qid: str, rows: list[dict]) -> str:
    """The text only that question's prompt holds: its first option's premise and conclusion."""
    first = next(row for row in rows if row["qid"] == qid and row["option"] == 1)
    return f"Premise: {first['premise']}\nConclusion: {first['conclusion']}"
