"""REG through the real lm_eval CLI on the embedded model (synthetic ChaosNLI-schema rows): the
in-process generator and judge; a served generator and judge are ``test_modes_e2e.py``'s."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pytest

from custom_metrics.judge.answer import parse_label
from custom_metrics.reg.judging import read_record
from custom_metrics.reg.tokens import count_tokens
from tests.helpers import MIRROR

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
    # One --metadata serves every task of a run: the other papers' tasks ignore REG's keys,
    # and the model arguments lm-eval merges in are no misspelled suite keys.
    metadata = ["--metadata", json.dumps({"judge": "embedded", "judge_check": "warn"})]
    results, samples = lm_eval_cli(
        "geese_llama3,rule_sub,reg_chaos,reg_judge_select,reg_judge_select_loglik,reg_judge_humans",
        limit=2,
        extra=[*FAST, *metadata],
        env=_env(tmp_path),
    )
    assert results["n-samples"]["geese_llama3"]["effective"] == results["n-samples"]["rule_sub"]["effective"] == 2
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
    # non-thinking mode in process: Qwen3.5's sampling set sent, lengths in the model's tokens
    for sample, record in zip(chaos, records):
        sent = sample["arguments"]["gen_args_0"]["arg_1"]
        assert (sent["do_sample"], sent["temperature"], sent["top_p"], sent["top_k"], sent["min_p"]) == (
            True, 0.7, 0.8, 20, 0.0,
        )  # fmt: skip
        assert record["mode"] == sample["doc"]["mode"] == "non-thinking" and sample["doc"]["sampling_seed"] == 1234
        assert record["output_tokens"] == count_tokens(str(embedded_model), [sample["resps"][0][0]])[0] <= 16
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
    # The judge against ChaosNLI's humans: the softmax of the logged log-likelihoods against the label counts.
    jsds = []
    for sample in samples["reg_judge_humans"]:
        logliks = [float(resp[0][0]) for resp in sample["resps"]]
        judge = [math.exp(ll) / sum(math.exp(x) for x in logliks) for ll in logliks]
        human = [c / sum(sample["doc"]["label_count"]) for c in sample["doc"]["label_count"]]
        middle = [(a + b) / 2 for a, b in zip(human, judge)]
        divergence = sum(a * math.log(a / m) for a, m in zip(human, middle) if a) + sum(
            b * math.log(b / m) for b, m in zip(judge, middle) if b
        )
        jsds.append(math.sqrt(divergence / 2))
    assert results["results"]["reg_judge_humans"]["jsd,none"] == pytest.approx(sum(jsds) / len(jsds), abs=1e-6)
    # Table 1's protocol: a generated answer, parsed; unparsed answers are wrong and counted
    generated = results["results"]["reg_judge_select"]
    answers = [s["filtered_resps"][0] for s in samples["reg_judge_select"]]
    assert generated["unparsed,none"] == pytest.approx(sum(parse_label(a) is None for a in answers) / 2)
    assert generated["answer_acc,none"] == pytest.approx(
        sum(parse_label(a) == s["doc"]["majority_label"] for a, s in zip(answers, samples["reg_judge_select"])) / 2
    )
