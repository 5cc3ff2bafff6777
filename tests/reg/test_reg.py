"""REG: data selection, output splitting, the three-verdict metric logic and the Table 4 reward."""

from __future__ import annotations

import json
import math

import pytest

import custom_metrics.reg.data as reg_data
import custom_metrics.reg.judging as reg_judging
import custom_metrics.reg.metrics as reg_metrics
import custom_metrics.reg.outputs as reg_outputs
import custom_metrics.reg.prompts as reg_prompts
from custom_metrics.common.errors import DataError
from custom_metrics.judge.spec import judge_from_environment, parse_spec, resolve_judge
from custom_metrics.judge.types import NLI_LABELS, UNPARSED, Verdict, answer_verdict
from custom_metrics.reg.reward import REWARD_MATRIX, REGReward, reg_reward, training_rows
from custom_metrics.reg.tokens import count_tokens
from tests.helpers import MIRROR, TASKS_DIR, per_document
from tests.reg.judges import tiny_judge_metadata
from tests.tiny_models import small_tokenizer


@pytest.fixture()
def fixture_mirror(monkeypatch):
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))


def _verdict(label: str) -> Verdict:
    return answer_verdict(None if label == UNPARSED else label, label, "generated")


class TableJudge:
    """Hand-made verdicts: a dict from (premise, hypothesis) to label (``default`` for other
    pairs, e.g. the judge check's gold items); records every call."""

    name = "table"

    def __init__(self, table: dict[tuple[str, str], str], default: str | None = None):
        self.table = table
        self.default = default
        self.calls: list[list[tuple[str, str]]] = []

    def judge(self, pairs):
        self.calls.append(list(pairs))
        return [
            _verdict(self.table[pair] if self.default is None else self.table.get(pair, self.default)) for pair in pairs
        ]


# --- data -------------------------------------------------------------------------------


def test_selection_uses_shipped_majority_label(fixture_mirror):
    items = reg_data.load_items()
    assert len(items) == 12
    assert [doc["uid"] for doc in reg_data.reg_docs(items)] == ["s003", "s001", "s002", "s004", "s005", "s006", "s007"]
    tie = next(doc for doc in items if doc["uid"] == "s012")
    assert tie["majority_label"] == "neutral"  # 40/40/20: the shipped label, not the first argmax
    assert [doc["uid"] for doc in reg_data.judge_select_docs(items)] == ["s003", "s005", "s008", "s009", "s011"]
    assert reg_data.reg_docs(items)[1]["w_con"] == pytest.approx(0.7)


def test_bad_row_names_file_line_and_field(tmp_path, monkeypatch):
    rows = [json.loads(line) for line in (MIRROR / "chaosnli/chaosNLI_mnli_m.jsonl").read_text().splitlines()[:3]]
    rows[2]["majority_label"] = "x"
    (tmp_path / "chaosnli").mkdir()
    (tmp_path / "chaosnli/chaosNLI_mnli_m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(tmp_path))
    with pytest.raises(DataError, match=r"chaosNLI_mnli_m.jsonl line 3: field 'majority_label'"):
        reg_data.load_items()
    del rows[1]["example"]
    (tmp_path / "chaosnli/chaosNLI_mnli_m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError, match=r"chaosNLI_mnli_m.jsonl:2: missing field\(s\) 'example'"):
        reg_data.load_items()


def test_prompts_are_the_papers():
    doc = {"premise": "P.", "hypothesis": "H."}
    prompt = reg_prompts.generation_prompt(doc)
    assert prompt.startswith(
        "Given a premise and a hypothesis, your task is to generate a plausible explanation that reconciles"
    )
    assert (
        "Your final output should be a single sentence without any preamble.\n\nPremise: P.\nHypothesis: H." in prompt
    )
    judge = reg_prompts.judge_prompt(doc)
    assert "- Neutral: The hypothesis is not entailed by the premise but does not contradict it either.\n" in judge
    assert judge.endswith("namely the label.\n\nPremise: P.\nHypothesis: H.")


def test_task_manager_builds_tasks_on_fixture(fixture_mirror, tmp_path):
    from lm_eval.tasks import TaskManager

    names = ["reg_chaos", "reg_judge_select", "reg_judge_select_loglik"]
    run_args = {"pretrained": str(small_tokenizer(tmp_path / "tokenizer"))} | tiny_judge_metadata(tmp_path)
    tasks = TaskManager(include_path=[str(TASKS_DIR)], include_defaults=False, metadata=run_args).load(names)["tasks"]
    assert len(list(tasks["reg_chaos"].test_docs())) == 7
    scored = tasks["reg_judge_select_loglik"]
    docs = list(scored.test_docs())
    assert len(docs) == 5 and [scored.doc_to_target(d) for d in docs] == [2, 2, 0, 0, 1]
    generated = tasks["reg_judge_select"]
    assert [generated.doc_to_target(d) for d in generated.test_docs()] == [NLI_LABELS[i] for i in (2, 2, 0, 0, 1)]
    assert generated.config.generation_kwargs["do_sample"] and generated.config.generation_kwargs["temperature"] == 0.7


@pytest.mark.fulldata
def test_full_data_counts(full_data, monkeypatch, tmp_path):
    """275 REG items (paper 4.1), 289 judge-selection items (Table 1's denominator), all 1,599 against humans."""
    from lm_eval.tasks import TaskManager

    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(full_data))
    assert len(reg_data.load_items()) == 1599
    run_args = {"pretrained": str(small_tokenizer(tmp_path / "tokenizer"))} | tiny_judge_metadata(tmp_path)
    manager = TaskManager(include_path=[str(TASKS_DIR)], include_defaults=False, metadata=run_args)
    tasks = manager.load(["reg_chaos", "reg_judge_select", "reg_judge_humans"])["tasks"]
    assert len(list(tasks["reg_chaos"].test_docs())) == 275
    assert len(list(tasks["reg_judge_select"].test_docs())) == 289
    assert len(list(tasks["reg_judge_humans"].test_docs())) == 1599  # ChaosNLI-MNLI, as its published rows


# --- output splitting -------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, explanation, thinking, flag",
    [
        ("  She was asked to buy it for the office. ", "She was asked to buy it for the office.", "", ""),
        (
            "<think>Coffee...\n\nmaybe chores</think>\nShe buys it for her team.",
            "She buys it for her team.",
            "Coffee...\n\nmaybe chores",
            "",
        ),
        (
            "Hmm, the prompt opened the trace.</think>She buys it for work.",
            "She buys it for work.",
            "Hmm, the prompt opened the trace.",
            "",
        ),
        (
            "<think>still thinking when the token limit hit",
            "",
            "still thinking when the token limit hit",
            "cut_off",
        ),
        ("<think>done</think>   \n", "", "done", "no_explanation"),
        ("", "", "", "no_explanation"),
        # Gemma 4's channel markers
        (
            "<|channel>thought\nCoffee chores<channel|>She buys it for her team.",
            "She buys it for her team.",
            "Coffee chores",
            "",
        ),
        ("<|channel>thought\nstill thinking", "", "still thinking", "cut_off"),
    ],
)
def test_split_output(raw, explanation, thinking, flag):
    out = reg_outputs.split_output(raw)
    assert (out.explanation, out.thinking, out.flag) == (explanation, thinking, flag)


@pytest.mark.parametrize(
    "raw, explanation, thinking, flag",
    [
        # Qwen3.5's thinking template opens the trace in the prompt: the output closes it
        (
            "Coffee...\n\nchores.</think>\n\nShe buys it for her team.",
            "She buys it for her team.",
            "Coffee...\n\nchores.",
            "",
        ),
        ("Coffee...\n\nchores.</think>\n\n", "", "Coffee...\n\nchores.", "no_explanation"),
        # no trace ended: the budget ran out while thinking; never judged as an explanation
        ("Coffee... maybe chores, or", "", "Coffee... maybe chores, or", "cut_off"),
        ("", "", "", "no_explanation"),
    ],
)
def test_split_output_in_thinking_mode(raw, explanation, thinking, flag):
    out = reg_outputs.split_output(raw, thinking_mode=True)
    assert (out.explanation, out.thinking, out.flag) == (explanation, thinking, flag)
    assert out.length_fields()["mode"] == "thinking"


# --- three-verdict metric logic -----------------------------------------------------------

DOCS = [{"premise": f"P{i}.", "hypothesis": f"H{i}."} for i in range(6)]
EXPLANATIONS = ["E0.", "E1.", "E2.", "E3.", "", "E5."]
# (i) J(p, h), (ii) J(p;e, h), (iii) J(p, e) for each doc
HAND_MADE = [
    ("contradiction", "entailment", "neutral"),  # effective, coherent -> success
    ("contradiction", "entailment", "contradiction"),  # effective, incoherent
    ("contradiction", "neutral", "entailment"),  # coherent, not effective
    ("neutral", "entailment", "neutral"),  # not in N
    ("contradiction", None, None),  # in N, empty explanation: fails all
    ("entailment", None, None),  # not in N
]


def _table() -> dict[tuple[str, str], str]:
    table = {}
    for doc, expl, (initial, effect, cohere) in zip(DOCS, EXPLANATIONS, HAND_MADE):
        table[(doc["premise"], doc["hypothesis"])] = initial
        if effect:
            table[(reg_outputs.combine(doc["premise"], expl), doc["hypothesis"])] = effect
            table[(doc["premise"], expl)] = cohere
    return table


def test_three_verdicts_give_paper_metrics():
    judge = TableJudge(_table())
    records = reg_judging.judge_outputs(judge, DOCS, [reg_outputs.split_output(e) for e in EXPLANATIONS])
    assert len(judge.calls) == 2 and len(judge.calls[0]) == 6  # batched: one call per stage
    assert len(judge.calls[1]) == 2 * 3  # (ii) and (iii) only for docs in N with an explanation
    assert judge.calls[1][0] == ("P0. E0.", "H0.")  # p;e is the premise continued by e
    per_doc = [reg_metrics.process_results(doc, [json.dumps(record)]) for doc, record in zip(DOCS, records)]
    assert reg_metrics.size_of_n([m["n"] for m in per_doc]) == 4
    assert reg_metrics.mean_over_n([m["coherence"] for m in per_doc]) == pytest.approx(2 / 4)
    assert reg_metrics.mean_over_n([m["effectiveness"] for m in per_doc]) == pytest.approx(2 / 4)
    assert reg_metrics.mean_over_n([m["success"] for m in per_doc]) == pytest.approx(1 / 4)
    assert reg_metrics.mean_over_n([m["malformed"] for m in per_doc]) == pytest.approx(1 / 4)
    assert per_doc[3]["success"] == (False, None) and records[3]["effectiveness"] is None
    assert records[4]["flag"] == "no_explanation" and records[0]["judge"] == "table"
    assert [m["no_explanation"] for m in per_doc] == [0, 0, 0, 0, 1, 0] and not any(m["cut_off"] for m in per_doc)


def test_empty_n_gives_nan_not_zero():
    assert math.isnan(reg_metrics.mean_over_n([(False, None), (False, None)]))


def test_filter_uses_the_judge_named_by_the_docs(monkeypatch, fixture_mirror, tmp_path):
    built = []
    judge = TableJudge(_table(), default="neutral")
    monkeypatch.setattr(
        reg_judging, "build_judge", lambda spec, cache_dir: built.append((spec.name, cache_dir)) or judge
    )
    tokenizer = str(small_tokenizer(tmp_path / "tokenizer"))
    settings = {"mode": "non-thinking", "length_tokenizer": tokenizer}
    spec = parse_spec("lm:from-metadata")
    docs = [{**doc, **settings} for doc in reg_data.with_judge(DOCS, spec, tmp_path / "c")]
    assert {doc["judge"] for doc in docs} == {spec.name}  # stored by its canonical name
    out = per_document(reg_judging.REGJudgeFilter().apply([[e] for e in EXPLANATIONS], docs))
    assert [json.loads(record)["initial"]["label"] for record in out] == [row[0] for row in HAND_MADE]
    assert [json.loads(record)["output_tokens"] for record in out] == count_tokens(tokenizer, EXPLANATIONS)
    assert built == [(spec.name, str(tmp_path / "c"))]
    other = reg_data.with_judge(DOCS[1:], parse_spec("lm:other"), tmp_path / "c")
    mixed = [*docs[:1], *({**d, **settings} for d in other)]
    with pytest.raises(ValueError, match="2 judge settings"):
        reg_judging.REGJudgeFilter().apply([[e] for e in EXPLANATIONS], mixed)


def test_judge_choice_precedence(monkeypatch):
    monkeypatch.setenv("EXPLAIN_EVAL_JUDGE", "seqcls:from-env")
    explicit = resolve_judge("lm:from-metadata", judge_from_environment(), "embedded")
    assert explicit.name == "lm:from-metadata?mode=loglik"
    assert resolve_judge(None, judge_from_environment(), "embedded").name == "seqcls:from-env"
    monkeypatch.delenv("EXPLAIN_EVAL_JUDGE")
    assert resolve_judge(None, judge_from_environment(), "embedded") == parse_spec("embedded")
    assert resolve_judge("", None, "seqcls:d").name == "seqcls:d"


def test_a_bad_judge_spec_fails_before_any_generation(monkeypatch):
    monkeypatch.setenv("EXPLAIN_EVAL_JUDGE", "lmm:typo")
    with pytest.raises(DataError, match="reg_chaos: judge spec 'lmm:typo' is not understood"):
        reg_judging.locate_judge("reg_chaos", None, None)


# --- reward -------------------------------------------------------------------------------


def test_reward_matrix_is_table_4():
    table_4 = {  # rows: coherence M(p, e); columns: effectiveness M(p;e, h) = con., neu., ent.
        "contradiction": (-1, -1, -1),
        "neutral": (-1, 0, 0.5),
        "entailment": (-1, 0, 1),
    }
    for coherence, row in table_4.items():
        for effectiveness, value in zip(("contradiction", "neutral", "entailment"), row):
            assert reg_reward(coherence, effectiveness) == value
    assert len(REWARD_MATRIX) == 9
    with pytest.raises(ValueError):
        reg_reward("entail", "entailment")


def test_grpo_reward_function_batches_through_the_judge():
    premises, hypotheses = ["P0.", "P1.", "P2."], ["H0.", "H1.", "H2."]
    table = {
        ("P0.", "E0."): "entailment",
        ("P0. E0.", "H0."): "entailment",  # 1
        ("P1.", "E1."): "neutral",
        ("P1. E1.", "H1."): "entailment",  # 0.5
    }
    judge = TableJudge(table)
    reward = REGReward(judge)
    completions = ["E0.", [{"role": "assistant", "content": "<think>hm</think>E1."}], "<think>never closed"]
    assert reward(prompts=["x"] * 3, completions=completions, premise=premises, hypothesis=hypotheses) == [
        1.0,
        0.5,
        -1.0,
    ]
    assert len(judge.calls) == 1 and reward.__name__ == "reg_reward"
    with pytest.raises(ValueError, match="premise"):
        reward(prompts=["x"], completions=["E0."])
    rows = training_rows([{"uid": "u", "premise": "P.", "hypothesis": "H."}])
    assert rows[0]["prompt"][0]["content"] == reg_prompts.generation_prompt({"premise": "P.", "hypothesis": "H."})


def test_the_filter_learns_of_the_builds_check_from_the_docs_alone(monkeypatch, fixture_mirror, tmp_path):
    """No object passes from the task build to the filter: it builds the judge the docs name over
    their verdict cache, and says a degenerate judge again only where the docs say no build checked it."""
    judge = TableJudge(_table(), default="neutral")
    monkeypatch.setattr(reg_judging, "build_judge", lambda spec, cache_dir: judge)
    warned = []
    real_check = reg_judging.check_judge
    monkeypatch.setattr(
        reg_judging, "check_judge", lambda j, gold, warn=True: warned.append(warn) or real_check(j, gold, warn=False)
    )
    settings = {"mode": "non-thinking", "length_tokenizer": str(small_tokenizer(tmp_path / "tokenizer"))}
    docs = [{**doc, **settings} for doc in reg_data.with_judge(DOCS, parse_spec("lm:x"), tmp_path / "c")]
    for checked in (True, False):
        marked = [{**doc, reg_judging.CHECKED_COLUMN: checked} for doc in docs]
        reg_judging.REGJudgeFilter().apply([[e] for e in EXPLANATIONS], marked)
    assert warned == [False, True]
    assert not [name for name in vars(reg_judging) if name.isupper() and isinstance(vars(reg_judging)[name], dict)]


def test_the_filter_rebuilds_the_judge_with_every_option_the_build_checked(tmp_path):
    """The docs carry the judge's whole spec, transport options included (``server`` decides where
    top_k goes; ``key_env``, ``timeout``): a judge rebuilt from the canonical name alone sent top_k as
    fields to ``transformers serve``, which answers HTTP 422."""
    from custom_metrics.judge.spec import parse_spec
    from custom_metrics.reg.judging import judge_for_docs

    given = "openai:m@http://127.0.0.1:9/v1?server=transformers&key_env=MY_KEY&timeout=30&max_tokens=4"
    spec = parse_spec(given)
    assert "server" not in spec.name and parse_spec(spec.spec) == spec
    docs = reg_data.with_judge([{"uid": "a"}, {"uid": "b"}], spec, tmp_path)
    assert {doc["judge_spec"] for doc in docs} == {spec.spec}
    rebuilt = judge_for_docs(docs)
    assert rebuilt.name == spec.name
    assert (rebuilt.backend.server, rebuilt.backend.key_env, rebuilt.backend.client.limits.timeout_s) == (
        "transformers",
        "MY_KEY",
        30,
    )
