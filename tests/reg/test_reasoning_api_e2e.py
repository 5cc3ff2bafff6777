"""API reasoning models (the paper's gpt-5.6 rows) through the real lm_eval CLI, against a local
OpenAI-compatible server that records every request and answers as such an API does: the
answer text alone (the trace hidden), ``usage`` with ``completion_tokens_details.
reasoning_tokens``, ``finish_reason`` "length" when the budget ran out while reasoning.

One run of ``explain-eval lm-eval --model reasoning-chat-completions`` with both API tasks
(``reg_chaos_reasoning_served``, ``reg_judge_select_reasoning_served``) and an API reasoning
model as REG's judge, on the fixture mirror; no model is loaded. The tests read that run.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from custom_metrics.reg.judging import read_record
from custom_metrics.reg.outputs import CUT_OFF
from tests.helpers import MIRROR, run_lm_eval

pytestmark = pytest.mark.e2e

GENERATOR, JUDGE = "gpt-test-sol", "gpt-test-judge"
# What the generator answers for each premise, and the usage it reports: (text, completion
# tokens, reasoning tokens, finish reason). The third spends the whole budget reasoning.
ANSWERS = {
    "Tom has never left his home town.": ("He had studied maps of Paris for years.", 120, 100, "stop"),
    "Cassie hates the taste of coffee.": ("Cassie dislikes mornings.", 200, 170, "stop"),
    "The museum closes at five on weekdays.": ("", 32768, 32768, "length"),
}
EFFECTIVE = {"He had studied maps of Paris for years."}  # J(p;e, h) = entailment for this one only
# Gold labels of the judge check's items (the fixture's high-agreement rows): the judge knows them.
GOLD = {
    ("The river froze during the winter.", "It was very cold that winter."): "Entailment",
    ("A man is playing a guitar on stage.", "Someone is performing music."): "Entailment",
    ("She planted tomatoes in the garden.", "She likes to cook Italian food."): "Neutral",
    ("Tom has never left his home town.", "Tom described the streets of Paris in detail."): "Contradiction",
    ("The team lost every game this season.", "The team celebrated a victory last week."): "Contradiction",
}
# The generator as NLI judge (Table 1's protocol, reg_judge_select_reasoning_served): one right,
# one wrong, one that stops inside a thinking trace (never read as its label).
AS_JUDGE = {
    "Tom has never left his home town.": "Contradiction",
    "The team lost every game this season.": "<think>It is a contradiction, surely",
    "The river froze during the winter.": "Neutral",
}
FIELDS = {"messages", "model", "max_completion_tokens", "reasoning_effort"}


def _pair(prompt: str) -> tuple[str, str]:
    premise, _, hypothesis = prompt.rsplit("Premise: ", 1)[1].partition("\nHypothesis: ")
    return premise.strip(), hypothesis.strip()


@dataclass
class ReasoningAPI:
    """A local chat-completions server answering like an API reasoning model, recording requests."""

    requests: list[dict] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    def answer(self, body: dict) -> tuple[str, int, int, str]:
        prompt = body["messages"][-1]["content"]
        premise, hypothesis = _pair(prompt)
        if "judge the relationship" not in prompt:  # an explanation request (Appendix C.1)
            return ANSWERS[premise]
        if body["model"] == GENERATOR:
            return AS_JUDGE[premise], 5, 0, "stop"
        explanations = {text for text, *_ in ANSWERS.values() if text}
        if (premise, hypothesis) in GOLD:
            label = GOLD[(premise, hypothesis)]
        elif hypothesis in explanations:  # J(p, e): coherent
            label = "Neutral"
        elif any(premise.endswith(text) for text in explanations):  # J(p;e, h)
            label = "Entailment" if any(premise.endswith(text) for text in EFFECTIVE) else "Neutral"
        else:  # J(p, h) of a reg_chaos item
            label = "Contradiction"
        return label, 2, 0, "stop"

    def start(self) -> str:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # the judge's availability check
                self._send({"object": "list", "data": [{"id": JUDGE, "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                api.requests.append(body)
                text, completion, reasoning, finish = api.answer(body)
                usage = {
                    "prompt_tokens": 150,
                    "completion_tokens": completion,
                    "total_tokens": 150 + completion,
                    "completion_tokens_details": {"reasoning_tokens": reasoning},
                }
                choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}
                self._send({"id": "x", "object": "chat.completion", "choices": [choice], "usage": usage})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


@dataclass(frozen=True)
class Run:
    results: dict
    samples: dict[str, list[dict]]
    requests: list[dict]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    api = ReasoningAPI()
    base_url = api.start()
    out = tmp_path_factory.mktemp("reasoning")
    args = f"model={GENERATOR},base_url={base_url}/chat/completions,num_concurrent=1,max_retries=1"
    flags = ["--model", "reasoning-chat-completions", "--model_args", args, "--apply_chat_template"]
    judge = f"openai:{JUDGE}@{base_url}?reasoning_effort=none"
    env = {
        "EXPLAIN_EVAL_DATA": str(MIRROR),
        "EXPLAIN_EVAL_JUDGE_CACHE": str(out / "verdicts"),
        "EXPLAIN_EVAL_JUDGE": "",
    }
    try:
        results, samples = run_lm_eval(
            flags,
            "reg_chaos_reasoning_served,reg_judge_select_reasoning_served",
            out / "run",
            limit=3,
            extra=["--metadata", json.dumps({"judge": judge})],
            env=env,
            entry=[str(Path(sys.executable).with_name("explain-eval")), "lm-eval"],
        )
        yield Run(results, samples, list(api.requests))
    finally:
        api.stop()


def test_requests_carry_the_reasoning_effort_and_no_sampling_field(run: Run) -> None:
    explanations = [r for r in run.requests if r["model"] == GENERATOR and "judge the relationship" not in str(r)]
    as_judge = [r for r in run.requests if r["model"] == GENERATOR and r not in explanations]
    judged = [r for r in run.requests if r["model"] == JUDGE]
    assert (len(explanations), len(as_judge)) == (3, 3)
    # the judge check's 5 gold items (one is a reg_chaos item too), 3 J(p, h), 2 pairs per explanation in N
    assert len(judged) == 5 + 2 + 2 * 2
    for request in run.requests:  # nothing such APIs refuse: no temperature, top_p, stop, seed, switch, max_tokens
        assert set(request) == FIELDS, request
    assert {(r["reasoning_effort"], r["max_completion_tokens"]) for r in explanations} == {("medium", 32768)}
    # Table 1's candidates and the judge run non-thinking: effort "none"
    assert {(r["reasoning_effort"], r["max_completion_tokens"]) for r in as_judge + judged} == {("none", 16)}
    logged = run.samples["reg_chaos_reasoning_served"][0]["arguments"]["gen_args_0"]["arg_1"]
    assert logged["reasoning_effort"] == "medium"  # the samples file records what was sent


def test_output_tokens_are_the_apis_usage(run: Run) -> None:
    samples = run.samples["reg_chaos_reasoning_served"]
    records = {sample["doc"]["premise"]: read_record(sample["filtered_resps"][0]) for sample in samples}
    assert set(records) == set(ANSWERS)
    for premise, (text, completion, reasoning, _) in ANSWERS.items():
        record = records[premise]
        assert (record["output_tokens"], record["thinking_tokens"]) == (completion, reasoning)
        assert record["mode"] == "thinking" and record["explanation"] == text
    assert records["The museum closes at five on weekdays."]["flag"] == CUT_OFF  # the budget ran out reasoning
    result = run.results["results"]["reg_chaos_reasoning_served"]
    assert (result["n,judged"], result["success,judged"], result["cut_off,judged"]) == (
        3,
        pytest.approx(1 / 3),
        pytest.approx(1 / 3),
    )
    assert result["output_tokens,judged"] == pytest.approx((120 + 200 + 32768) / 3)
    assert result["thinking_tokens,judged"] == pytest.approx((100 + 170 + 32768) / 3)
    # Table 3's two columns: the successful explanation, and the unsuccessful ones (the cut-off included)
    assert result["output_tokens_successful,judged"] == 120
    assert result["output_tokens_unsuccessful,judged"] == pytest.approx((200 + 32768) / 2)
    assert {s["doc"]["mode"] for s in samples} == {"thinking"} and {s["doc"]["sampling_seed"] for s in samples} == {
        None
    }


def test_the_api_models_judge_accuracy_is_parsed_after_its_trace(run: Run) -> None:
    result = run.results["results"]["reg_judge_select_reasoning_served"]
    # one right, one wrong, one answer that stopped inside a thinking trace: unparsed, never "contradiction"
    assert (result["answer_acc,none"], result["unparsed,none"]) == (pytest.approx(1 / 3), pytest.approx(1 / 3))
