"""REG through the real lm_eval CLI on the embedded model (synthetic ChaosNLI-schema rows)."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pytest

from custom_metrics.judge.answer import parse_label
from custom_metrics.judge.spec import parse_spec
from custom_metrics.reg.judging import read_record
from custom_metrics.reg.outputs import combine
from tests.helpers import MIRROR
from tests.judge.chat_stub import ChatStub

FAST = ["--gen_kwargs", "max_gen_toks=16"]


def _env(tmp_path: Path, judge_env: str = "") -> dict[str, str]:
    return {
        "EXPLAIN_EVAL_DATA": str(MIRROR),
        "EXPLAIN_EVAL_JUDGE_CACHE": str(tmp_path / "verdicts"),
        "EXPLAIN_EVAL_JUDGE": judge_env,
    }


def _check_metrics_match_records(result: dict, samples: list[dict]) -> list[dict]:
    records = [read_record(sample["filtered_resps"][0]) for sample in samples]
    in_n = [r for r in records if r["initial"]["label"] == "contradiction"]
    assert result["n,judged"] == len(in_n)
    usable = [r for r in in_n if not r["flag"]]
    coherent = sum(r["coherence"]["label"] != "contradiction" for r in usable)
    effective = sum(r["effectiveness"]["label"] == "entailment" for r in usable)
    success = sum(
        r["coherence"]["label"] != "contradiction" and r["effectiveness"]["label"] == "entailment" for r in usable
    )
    for metric, hits in (("coherence", coherent), ("effectiveness", effective), ("success", success)):
        value = result[f"{metric},judged"]
        assert (math.isnan(value) and not in_n) or value == pytest.approx(hits / len(in_n))
    return records


@pytest.mark.e2e
def test_reg_chaos_embedded_generator_and_judge(lm_eval_cli, embedded_model, tmp_path):
    results, samples = lm_eval_cli(
        "reg_chaos,reg_judge_select,reg_judge_select_loglik", limit=2, extra=FAST, env=_env(tmp_path)
    )
    chaos = samples["reg_chaos"]
    assert results["n-samples"]["reg_chaos"]["effective"] == 2
    records = _check_metrics_match_records(results["results"]["reg_chaos"], chaos)
    assert {r["judge"] for r in records} == {f"lm:{embedded_model}?mode=loglik"}
    # the judge was checked on the fixture's 5 gold items first; its result is in the results
    check = records[0]["judge_check"]
    assert check["items"] == 5 and sum(check["answers"].values()) == 5
    assert results["results"]["reg_chaos"]["judge_check_acc,judged"] == pytest.approx(check["acc"])
    assert results["results"]["reg_chaos"]["judge_degenerate,judged"] == float(check["degenerate"])
    assert results["results"]["reg_chaos"]["unparsed,judged"] == 0  # log-likelihood verdicts always parse
    assert all(sum(r["initial"]["probs"].values()) == pytest.approx(1) for r in records)
    assert [s["doc"]["uid"] for s in chaos] == ["s003", "s001"]
    # Every verdict was written to the on-disk cache as it was computed.
    db = sqlite3.connect(tmp_path / "verdicts" / "verdicts.sqlite")
    assert db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] >= 2
    # The lm: judge is the model scored as reg_judge_select_loglik scores it: same probabilities.
    select = {s["doc"]["uid"]: s for s in samples["reg_judge_select_loglik"]}
    shared = next(r for s, r in zip(chaos, records) if s["doc"]["uid"] == "s003")
    logliks = [float(resp[0][0]) for resp in select["s003"]["resps"]]
    softmax = [math.exp(ll) / sum(math.exp(x) for x in logliks) for ll in logliks]
    assert [shared["initial"]["probs"][name] for name in ("entailment", "neutral", "contradiction")] == pytest.approx(
        softmax, abs=1e-4
    )
    assert 0 <= results["results"]["reg_judge_select_loglik"]["acc,none"] <= 1
    # Table 1's protocol: a generated answer, parsed; unparsed answers are wrong and counted
    generated = results["results"]["reg_judge_select"]
    answers = [s["filtered_resps"][0] for s in samples["reg_judge_select"]]
    assert generated["unparsed,none"] == pytest.approx(sum(parse_label(a) is None for a in answers) / 2)
    assert generated["acc,none"] == pytest.approx(
        sum(parse_label(a) == s["doc"]["majority_label"] for a, s in zip(answers, samples["reg_judge_select"])) / 2
    )


def _rule_judge(pairs: set[tuple[str, str]]):
    """An endpoint's answers by a fixed rule, so N is not empty: fixture pairs are
    contradictions, p;e entails h, and an explanation contradicts p exactly when it has an
    odd number of characters."""

    def label(premise: str, hypothesis: str) -> str:
        if (premise, hypothesis) in pairs:
            return "Contradiction"
        if hypothesis in {h for _, h in pairs}:
            return "Entailment"
        return "Contradiction" if len(hypothesis) % 2 else "Neutral"

    def respond(body: dict) -> dict:
        premise, hypothesis = body["messages"][0]["content"].rsplit("Premise: ", 1)[1].split("\nHypothesis: ")
        answer = label(premise, hypothesis)
        top = [
            {"token": word[:4], "logprob": math.log(0.8 if word == answer else 0.1)}
            for word in ("Entailment", "Neutral", "Contradiction")
        ]
        logprobs = {"content": [{"token": answer[:4], "logprob": math.log(0.8), "top_logprobs": top}]}
        return {"choices": [{"message": {"role": "assistant", "content": answer}, "logprobs": logprobs}]}

    return respond


@pytest.mark.e2e
def test_reg_chaos_with_endpoint_judge_from_metadata(lm_eval_cli, tmp_path):
    rows = [json.loads(line) for line in (MIRROR / "chaosnli/chaosNLI_mnli_m.jsonl").read_text().splitlines()]
    server = ChatStub(_rule_judge({(r["example"]["premise"], r["example"]["hypothesis"]) for r in rows}))
    try:
        spec = f"openai:rule-judge@{server.url}"
        results, samples = lm_eval_cli(
            "reg_chaos",
            limit=3,
            extra=[*FAST, "--metadata", json.dumps({"judge": spec})],
            env=_env(tmp_path, "lm:not-this-one"),
        )
    finally:
        server.close()
    result = results["results"]["reg_chaos"]
    records = _check_metrics_match_records(result, samples["reg_chaos"])
    assert result["n,judged"] == 3 and {r["judge"] for r in records} == {parse_spec(spec).name}
    assert parse_spec(spec).mode == "generate" and result["unparsed,judged"] == 0  # the paper's protocol by default
    usable = [r for r in records if not r["flag"]]
    assert all(r["effectiveness"]["label"] == "entailment" for r in usable)
    # the judged explanation is the logged one: the rule's verdict follows its length
    assert [r["coherence"]["label"] for r in usable] == [
        "contradiction" if len(r["explanation"]) % 2 else "neutral" for r in usable
    ]
    # the judge check's 5 gold items first; two of them (s003, s005) are reg_chaos items too, judged once (cache)
    checked = {"s008", "s009", "s011", "s003", "s005"} | {s["doc"]["uid"] for s in samples["reg_chaos"]}
    assert len(server.requests) == len(checked) + 2 * len(usable)
    assert records[0]["judge_check"]["degenerate"]  # this rule judge calls every gold item a contradiction
    for sample, record in zip(samples["reg_chaos"], records):
        if not record["flag"]:
            assert combine(sample["doc"]["premise"], record["explanation"]).startswith(sample["doc"]["premise"])
