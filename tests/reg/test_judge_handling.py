"""REG's handling of what the judge gives back: unparsed verdicts (counted, never read as a
label), the judge check before judging (a degenerate judge is reported, not silently
turned into n = 0 and NaN), the Table 1 answer scoring, and the verdict cache checked
before any generation."""

from __future__ import annotations

import json
import logging
import math

import pytest

import custom_metrics.reg.data as reg_data
import custom_metrics.reg.judging as reg_judging
import custom_metrics.reg.metrics as reg_metrics
from custom_metrics.common.errors import DataError
from custom_metrics.judge.types import UNPARSED
from custom_metrics.reg.outputs import combine, split_output
from tests.reg.test_reg import TableJudge

DOCS = [{"premise": f"P{i}.", "hypothesis": f"H{i}."} for i in range(4)]
EXPLANATIONS = ["E0.", "E1.", "E2.", "E3."]
# (i) J(p, h), (ii) J(p;e, h), (iii) J(p, e)
VERDICTS = [
    (UNPARSED, None, None),  # no contradiction call: outside N
    ("contradiction", UNPARSED, "neutral"),  # in N, left out of the three scores
    ("contradiction", "entailment", "neutral"),  # success
    ("contradiction", "neutral", "contradiction"),  # fails both
]


def _table() -> dict[tuple[str, str], str]:
    table = {}
    for doc, explanation, (initial, effect, cohere) in zip(DOCS, EXPLANATIONS, VERDICTS):
        table[(doc["premise"], doc["hypothesis"])] = initial
        if effect:
            table[(combine(doc["premise"], explanation), doc["hypothesis"])] = effect
            table[(doc["premise"], explanation)] = cohere
    return table


def _metrics(records: list[dict]) -> dict[str, float]:
    per_doc = [reg_metrics.process_results(doc, [json.dumps(r)]) for doc, r in zip(DOCS, records)]
    column = lambda name: [m[name] for m in per_doc]
    return {
        "n": reg_metrics.size_of_n(column("n")),
        **{name: reg_metrics.mean_over_n(column(name)) for name in ("coherence", "effectiveness", "success")},
        "unparsed": reg_metrics.unparsed_share(column("unparsed")),
        "judge_check_acc": per_doc[0]["judge_check_acc"],
        "judge_degenerate": per_doc[0]["judge_degenerate"],
    }


def test_unparsed_verdicts_are_counted_and_never_read_as_neutral(caplog):
    outputs = [split_output(e) for e in EXPLANATIONS]
    with caplog.at_level(logging.WARNING):
        records = reg_judging.judge_outputs(TableJudge(_table()), DOCS, outputs)
    assert "2 of 10 verdicts named no single label" in caplog.text
    assert records[0]["initial"]["label"] == UNPARSED and records[0]["initial"]["answer"] == UNPARSED
    metrics = _metrics(records)
    assert metrics["n"] == 3  # the unparsed J(p, h) is no contradiction call
    # doc 1 stays in N but is scored on nothing: 1 success of the 2 scored items
    assert (metrics["coherence"], metrics["effectiveness"], metrics["success"]) == (0.5, 0.5, 0.5)
    assert metrics["unparsed"] == pytest.approx(2 / 10)
    assert math.isnan(metrics["judge_check_acc"]) and math.isnan(metrics["judge_degenerate"])  # no check ran


def test_a_degenerate_judge_is_reported_loudly(fixture_mirror, caplog):
    gold = reg_data.judge_check_docs(reg_data.load_items())
    labels = ["entailment", "entailment", "neutral", "contradiction", "contradiction"]
    assert [doc["majority_label"] for doc in gold] == labels  # all 5 high-agreement rows of the fixture
    with caplog.at_level(logging.WARNING):
        check = reg_judging.check_judge(TableJudge({}, default="entailment"), gold)
    assert check == {"items": 5, "acc": 0.4, "answers": {"entailment": 5}, "degenerate": True}
    assert "REG JUDGE CHECK FAILED: judge table answered 'entailment' for 5 of 5 gold items" in caplog.text
    records = reg_judging.judge_outputs(
        TableJudge(_table()), DOCS, [split_output(e) for e in EXPLANATIONS], check=check
    )
    metrics = _metrics(records)
    assert (metrics["judge_check_acc"], metrics["judge_degenerate"]) == (0.4, 1.0)


def test_a_sound_judge_passes_the_check(fixture_mirror, caplog):
    gold = reg_data.judge_check_docs(reg_data.load_items())
    answers = {(doc["premise"], doc["hypothesis"]): doc["majority_label"] for doc in gold}
    with caplog.at_level(logging.WARNING):
        check = reg_judging.check_judge(TableJudge(answers), gold)
    assert (check["acc"], check["degenerate"]) == (1.0, False) and "CHECK FAILED" not in caplog.text
    unparsed = reg_judging.check_judge(TableJudge({}, default=UNPARSED), gold)
    assert (unparsed["acc"], unparsed["degenerate"]) == (0.0, True)  # all unparsed is degenerate too
    # varied answers, but no better than chance: degenerate though no answer dominates
    rotate = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    chance = reg_judging.check_judge(TableJudge({pair: rotate[label] for pair, label in answers.items()}), gold)
    assert (chance["acc"], max(chance["answers"].values()), chance["degenerate"]) == (0.0, 2, True)


@pytest.mark.fulldata
def test_full_data_check_items_are_balanced(monkeypatch, full_data):
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(full_data))
    gold = reg_data.judge_check_docs(reg_data.load_items())
    assert [doc["majority_label"] for doc in gold] == ["entailment"] * 4 + ["neutral"] * 4 + ["contradiction"] * 4


@pytest.mark.parametrize(
    "answer, acc, unparsed",
    [
        ("Contradiction.", 1.0, 0.0),
        ("\n**Contradiction**\nbecause the premise...", 1.0, 0.0),
        ("Entailment", 0.0, 0.0),
        ("not entailment but contradiction", 0.0, 1.0),
        ("I am not sure.", 0.0, 1.0),
        ("", 0.0, 1.0),
    ],
)
def test_table_1_answers_are_parsed_strictly(answer, acc, unparsed):
    assert reg_metrics.judge_select_results({"majority_label": "contradiction"}, [answer]) == {
        "answer_acc": acc,
        "unparsed": unparsed,
    }


def test_an_unusable_cache_fails_before_generation(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(DataError, match=rf"reg_chaos: verdict cache {blocker}/verdicts.sqlite: cannot open"):
        reg_judging.locate_judge("reg_chaos", None, str(blocker))
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "verdicts.sqlite").write_bytes(b"this is not sqlite" * 300)
    with pytest.raises(DataError, match=r"garbage/verdicts.sqlite: cannot open it .*delete .*recomputed"):
        reg_judging.locate_judge("reg_chaos", None, str(garbage))


@pytest.mark.parametrize(
    "spec, message",
    [
        ("openai:judge@http://127.0.0.1:9/v1?thinking=on", r"is told to think \(thinking=on\).*non-thinking"),
        ("openai:gpt@http://127.0.0.1:9/v1?reasoning_effort=medium", r"reasons \(reasoning_effort=medium\).*=none"),
    ],
)
def test_the_judge_runs_non_thinking(spec, message, tmp_path):
    """Section 4.4: the judge is prompted non-thinking; refused before anything is opened or loaded."""
    with pytest.raises(DataError, match=message):
        reg_judging.locate_judge("reg_chaos", spec, str(tmp_path))
    assert not list(tmp_path.iterdir())  # no verdict cache was even opened


def test_an_api_reasoning_judge_sends_its_effort_and_nothing_else():
    from custom_metrics.judge.endpoint import OpenAIJudge
    from custom_metrics.judge.spec import parse_spec

    spec = parse_spec("openai:gpt@http://h/v1?reasoning_effort=none&max_tokens=32")
    # no sampling parameter nor thinking switch is sent, so none keys the cache
    assert spec.name == "openai:gpt@http://h/v1?mode=generate&reasoning_effort=none&max_tokens=32"
    payload = OpenAIJudge(spec)._payload("P.", "H.")
    assert set(payload) == {"model", "messages", "reasoning_effort", "max_completion_tokens"}
    assert (payload["reasoning_effort"], payload["max_completion_tokens"]) == ("none", 32)
    for bad, named in (("temperature=1", "temperature"), ("thinking=off", "thinking"), ("mode=loglik", "logprobs")):
        with pytest.raises(ValueError, match=f"API reasoning model .*{named}"):
            parse_spec(f"openai:gpt@http://h/v1?reasoning_effort=none&{bad}")


@pytest.mark.parametrize(
    "run_args, message",
    [
        ({"chat_template_args": {"enable_thinking": True}}, "chat_template_args.enable_thinking is True"),
        ({"enable_thinking": "true"}, "model argument enable_thinking is 'true'"),
        ({"reasoning_effort": "medium"}, "reasoning_effort is 'medium'"),
    ],
)
def test_reg_judge_select_measures_a_judge_non_thinking(run_args, message, fixture_mirror):
    from custom_metrics.reg.loaders import load_judge_select

    with pytest.raises(DataError, match=message):
        load_judge_select(**run_args)
    non_thinking = {"chat_template_args": {"enable_thinking": False}, "reasoning_effort": "none"}
    assert len(load_judge_select(**non_thinking)["test"]) == 5  # the fixture's high-agreement items
