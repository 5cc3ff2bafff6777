"""The shared NLI judge: spec parsing, the three backends on tiny local models, the cache."""

from __future__ import annotations

import math

import pytest

from custom_metrics.judge.build import build_judge
from custom_metrics.judge.lm import LMJudge
from custom_metrics.judge.prompt import LABEL_WORDS, PROMPT_ID, nli_prompt
from custom_metrics.judge.seqcls import SeqClsJudge
from custom_metrics.judge.spec import parse_spec
from custom_metrics.judge.types import NLI_LABELS, Verdict
from tests.judge.chat_stub import ChatStub
from tests.judge.conftest import PAIRS, tiny_seqcls

# --- spec -------------------------------------------------------------------------------


def test_spec_default_is_embedded_lm():
    from custom_metrics.common.embedded_model import checkpoint_dir

    spec = parse_spec(None)
    assert (spec.kind, spec.model) == ("lm", str(checkpoint_dir()))
    assert spec.name == f"lm:{checkpoint_dir()}?mode=loglik"


# the paper's sampling, Qwen's top_k 20 included, in process and on an endpoint alike
SAMPLED = LM_SAMPLED = "temperature=0.7&top_p=0.8&top_k=20&seed=0&max_tokens=16"


def test_spec_options_and_names(tmp_path):
    spec = parse_spec(f"lm:{tmp_path}?chat=yes&batch_size=4&share=no")
    assert spec.model == str(tmp_path.resolve()) and spec.options == {"chat": "yes", "batch_size": "4", "share": "no"}
    # batch size and sharing change speed, not verdicts: not in the name (the cache key)
    assert spec.name == f"lm:{tmp_path.resolve()}?mode=loglik&chat=yes"
    remote = parse_spec("openai:gemma-4-31b@http://127.0.0.1:8000/v1/?concurrency=2")
    assert (remote.model, remote.base_url) == ("gemma-4-31b", "http://127.0.0.1:8000/v1")
    # the endpoint's default is the paper's protocol, and every sampling parameter is in the key
    assert remote.mode == "generate"
    # ... and its thinking switch, off unless chosen (the paper's judge does not think)
    assert remote.name == f"openai:gemma-4-31b@http://127.0.0.1:8000/v1?mode=generate&thinking=off&{SAMPLED}"
    assert parse_spec(remote.name).name == remote.name  # the canonical name parses back to the same judge
    thinking = parse_spec("openai:m@http://h/v1?thinking=on&mode=loglik")
    assert thinking.name == "openai:m@http://h/v1?mode=loglik&thinking=on"
    assert parse_spec("seqcls:org/nli").prompt_id == "" and remote.prompt_id == PROMPT_ID
    assert parse_spec("seqcls:org/nli").name == "seqcls:org/nli"


def test_sampling_options_change_the_name_and_seed_each_pair():
    base = parse_spec("lm:org/judge?mode=generate")
    assert base.name == f"lm:org/judge?mode=generate&{LM_SAMPLED}"
    other = parse_spec("lm:org/judge?mode=generate&seed=3&temperature=1&top_k=20")
    assert other.name == "lm:org/judge?mode=generate&temperature=1&top_p=0.8&top_k=20&seed=3&max_tokens=16"
    sampling = base.sampling
    assert sampling.pair_seed("p", "h") == base.sampling.pair_seed("p", "h") != sampling.pair_seed("p", "h2")
    assert other.sampling.pair_seed("p", "h") != sampling.pair_seed("p", "h")


def test_seed_accepts_its_whole_stated_range():
    # the largest seed the range [0, 2**63 - 1] names is taken and kept exactly; one past it is refused
    largest = parse_spec(f"lm:org/judge?mode=generate&seed={2**63 - 1}")
    assert largest.sampling.seed == 2**63 - 1 and f"seed={2**63 - 1}&" in largest.name
    with pytest.raises(ValueError, match=f"option seed='{2**63}' is not valid; expected an integer"):
        parse_spec(f"lm:org/judge?mode=generate&seed={2**63}")


@pytest.mark.parametrize(
    "bad, message",
    [
        ("roberta-large-mnli", "is not understood"),
        ("gpt:x", "is not understood"),
        ("openai:model-without-url", "expected 'openai:<model>@<base_url>'"),
        ("lm:x?chat", "option 'chat' is not key=value"),
        ("lm:x?chta=yes", "unknown option 'chta' for lm"),
        ("lm:x?chat=yes&chat=no", "option 'chat' is given twice"),
        ("lm:x?chat=maybe", "option chat='maybe' is not valid; expected auto or yes or no"),
        ("lm:x?batch_size=1.7", "option batch_size='1.7' is not valid; expected an integer"),
        ("lm:x?batch_size=0", "option batch_size='0' is not valid"),
        ("lm:x?mode=sample", "option mode='sample' is not valid; expected loglik or generate"),
        ("lm:x?mode=generate&temperature=hot", "option temperature='hot' is not valid"),
        ("lm:x?mode=generate&top_p=0", "option top_p='0' is not valid"),
        ("lm:x?temperature=0.7", "temperature only apply to mode=generate"),
        ("openai:m@http://h/v1?mode=loglik&seed=1", "seed only apply to mode=generate"),
        ("seqcls:x?mode=generate", "unknown option 'mode' for seqcls"),
        ("openai:m@http://h/v1?key_env=$KEY", "option key_env='$KEY' is not valid"),
        ("lm:x?dtype=float8", "option dtype='float8' is not valid"),
    ],
)
def test_spec_errors_say_what_is_expected(bad, message):
    with pytest.raises(ValueError, match="judge spec") as err:
        parse_spec(bad)
    assert message in str(err.value)


def test_verdict_rejects_bad_probabilities():
    with pytest.raises(ValueError):
        Verdict("entailment", {"entailment": 0.5, "neutral": 0.1, "contradiction": 0.1})
    with pytest.raises(ValueError):
        Verdict("yes", {"entailment": 1.0, "neutral": 0.0, "contradiction": 0.0})


# --- LM backend ---------------------------------------------------------------------------


def _unbatched_loglik(judge: LMJudge, context: str, continuation: str) -> float:
    import torch

    ctx, cont = judge.encode_pair(context, continuation)
    ids = torch.tensor([ctx + cont])
    with torch.inference_mode():
        logprobs = torch.log_softmax(judge.model(ids).logits[0].float(), dim=-1)
    return sum(float(logprobs[len(ctx) - 1 + k, token]) for k, token in enumerate(cont))


def test_lm_judge_softmax_over_label_logliks_batched_with_padding(tiny_lm):
    judge = LMJudge(parse_spec(f"lm:{tiny_lm}?batch_size=2"))
    assert not judge.chat
    assert judge.continuations() == ["\n" + word for word in LABEL_WORDS]
    verdicts = judge.judge(PAIRS)
    for (premise, hypothesis), verdict in zip(PAIRS, verdicts):
        scores = [_unbatched_loglik(judge, nli_prompt(premise, hypothesis), cont) for cont in judge.continuations()]
        expected = [math.exp(s) / sum(math.exp(t) for t in scores) for s in scores]
        assert [verdict.probs[label] for label in NLI_LABELS] == pytest.approx(expected, abs=1e-5)
        assert verdict.label == NLI_LABELS[expected.index(max(expected))]


def test_lm_judge_matches_lm_eval_loglikelihood(tiny_lm):
    """reg_judge_select scores the judge's requests with HFLM: both must agree."""
    from lm_eval.models.huggingface import HFLM

    from custom_metrics.common.harness_api import new_instance

    judge = LMJudge(parse_spec(f"lm:{tiny_lm}"))
    requests = [(judge.context(p, h), cont) for p, h in PAIRS for cont in judge.continuations()]
    harness = HFLM(pretrained=judge.model, tokenizer=judge.tokenizer, batch_size=4, device="cpu")
    expected = [
        ll for ll, _ in harness.loglikelihood([new_instance("loglikelihood", req, i) for i, req in enumerate(requests)])
    ]
    assert judge.loglikelihoods(requests) == pytest.approx(expected, abs=1e-4)


def test_lm_judge_chat_mode_uses_template(tiny_chat_lm):
    judge = LMJudge(parse_spec(f"lm:{tiny_chat_lm}"))
    assert judge.chat and judge.continuations() == list(LABEL_WORDS)
    context = judge.context(*PAIRS[0])
    assert context.startswith("<|user|>Given a premise") and context.endswith("<|assistant|>")
    assert sum(judge.judge(PAIRS[:1])[0].probs.values()) == pytest.approx(1.0)


def test_lm_judge_chat_yes_without_template_is_an_error(tiny_lm):
    with pytest.raises(ValueError, match="no chat template"):
        LMJudge(parse_spec(f"lm:{tiny_lm}?chat=yes"))


# --- sequence-classification backend ------------------------------------------------------


def test_seqcls_reads_label_order_from_config(tmp_path):
    import torch

    permuted = {0: "CONTRADICTION", 1: "ENTAILMENT", 2: "NEUTRAL"}
    path = tiny_seqcls(tmp_path / "nli", permuted)
    judge = SeqClsJudge(parse_spec(f"seqcls:{path}?batch_size=2"))
    assert judge.order == [1, 2, 0]
    verdicts = judge.judge(PAIRS)
    for (premise, hypothesis), verdict in zip(PAIRS, verdicts):
        encoded = judge.tokenizer(premise, hypothesis, return_tensors="pt")
        with torch.inference_mode():
            probs = torch.softmax(judge.model(**encoded).logits[0], dim=-1)
        assert verdict.probs["contradiction"] == pytest.approx(float(probs[0]), abs=1e-5)
        assert verdict.probs["entailment"] == pytest.approx(float(probs[1]), abs=1e-5)
        assert verdict.probs["neutral"] == pytest.approx(float(probs[2]), abs=1e-5)


def test_seqcls_refuses_unnamed_labels(tmp_path):
    path = tiny_seqcls(tmp_path / "nli", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(ValueError, match="id2label"):
        SeqClsJudge(parse_spec(f"seqcls:{path}"))


@pytest.mark.parametrize(
    "architecture, positions, limit",
    [("Bert", 40, 40), ("Roberta", 42, 41)],  # RoBERTa numbers positions from padding_idx + 1 (its pad id: 0)
)
def test_seqcls_inputs_are_cut_to_the_models_own_positions(tmp_path, architecture, positions, limit):
    labels = {0: "entailment", 1: "neutral", 2: "contradiction"}
    settings = {"max_position_embeddings": positions, "pad_token_id": 0}  # the tokenizer's pad id
    path = tiny_seqcls(tmp_path / "nli", labels, architecture=architecture, **settings)
    judge = SeqClsJudge(parse_spec(f"seqcls:{path}"))
    assert judge.tokenizer.model_max_length > 10**20  # saved without a length: it would cut nothing
    premise, hypothesis = PAIRS[0]
    long_pair = (" ".join([premise] * 20), hypothesis)  # far past the position table
    assert len(judge.tokenizer(*long_pair)["input_ids"]) > positions
    verdicts = judge.judge([long_pair, PAIRS[1]])  # an index out of bounds before
    assert len(verdicts) == 2 and all(math.isclose(sum(v.probs.values()), 1.0, rel_tol=1e-5) for v in verdicts)
    assert judge.max_length == limit


# --- OpenAI-compatible backend ------------------------------------------------------------


def _answer(text: str, positions: list[tuple[str, list[tuple[str, float]]]] | None) -> dict:
    logprobs = None
    if positions is not None:
        logprobs = {
            "content": [
                {
                    "token": tok,
                    "logprob": top[0][1] if top else 0.0,
                    "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top],
                }
                for tok, top in positions
            ]
        }
    return {"choices": [{"message": {"role": "assistant", "content": text}, "logprobs": logprobs}]}


@pytest.fixture()
def fake_server():
    answers = {
        # label split over several tokens of the same label, and a leading "**" position
        PAIRS[0][1]: _answer(
            "**Contradiction**",
            [
                ("**", [("**", -0.01)]),
                (
                    "Contr",
                    [
                        ("Contr", math.log(0.6)),
                        ("contradiction", math.log(0.1)),
                        ("Ent", math.log(0.2)),
                        ("Neutral", math.log(0.05)),
                        ("The", math.log(0.05)),
                    ],
                ),
            ],
        ),
        PAIRS[1][1]: _answer("Entailment", None),  # a server without logprobs: parse the text
        PAIRS[2][1]: _answer("I cannot tell.", None),  # no label at all
    }
    server = ChatStub(lambda body: answers[body["messages"][0]["content"].rsplit("Hypothesis: ", 1)[1]])
    yield server
    server.close()


def test_openai_judge_uses_label_logprobs_and_keeps_key_out(fake_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    judge = build_judge(f"openai:tiny@{fake_server.url}?concurrency=2&mode=loglik", cache_dir=tmp_path)
    verdicts = judge.judge(PAIRS)
    first = verdicts[0]
    assert first.method == "scores" and first.label == "contradiction"
    assert first.probs["contradiction"] == pytest.approx(0.7 / 0.95)
    assert first.probs["entailment"] == pytest.approx(0.2 / 0.95)
    assert first.probs["neutral"] == pytest.approx(0.05 / 0.95)
    assert (verdicts[1].label, verdicts[1].method, verdicts[1].probs["entailment"]) == ("entailment", "text", 1.0)
    assert (verdicts[2].label, verdicts[2].method) == ("unparsed", "unparsed")
    body, auth = fake_server.requests[0]
    assert auth == "Bearer sk-test-secret"
    assert body["logprobs"] is True and body["model"] == "tiny" and body["temperature"] == 0
    assert body["messages"][0]["content"] in {nli_prompt(p, h) for p, h in PAIRS}
    assert "sk-test-secret" not in judge.name
    assert b"sk-test-secret" not in (tmp_path / "verdicts.sqlite").read_bytes()


@pytest.mark.parametrize("option, sent", [("", {"enable_thinking": False}), ("thinking=on", {"enable_thinking": True})])
def test_openai_judge_sends_the_thinking_switch_off_by_default(fake_server, tmp_path, option, sent):
    spec = f"openai:tiny@{fake_server.url}?mode=loglik" + (f"&{option}" if option else "")
    build_judge(spec, cache_dir=tmp_path).judge(PAIRS[:1])
    body, _ = fake_server.requests[-1]
    assert body["chat_template_kwargs"] == sent
    unset = build_judge(f"openai:tiny@{fake_server.url}?mode=loglik&thinking=unset", cache_dir=tmp_path)
    unset.judge(PAIRS[:1])
    assert "chat_template_kwargs" not in fake_server.requests[-1][0]  # for APIs that refuse the field


@pytest.mark.e2e
def test_openai_judge_on_a_served_model_reads_answers_and_caches(served_model, tmp_path, monkeypatch):
    """The endpoint judge against a real ``transformers serve``, in its default mode (the
    paper's generated one-word label): one request per new pair, each answer parsed or
    flagged unparsed, none on a rerun, and the API key neither in the judge's name nor in
    the cache."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    spec = f"openai:{served_model.model}@{served_model.base_url}?concurrency=2&server=transformers"
    before = served_model.requests("/v1/chat/completions")
    judge = build_judge(spec, cache_dir=tmp_path)
    verdicts = judge.judge(PAIRS[:2])
    assert served_model.requests("/v1/chat/completions") - before == 2 == judge.computed
    assert all(v.method in ("generated", "unparsed") and v.answer for v in verdicts)
    assert all(not v.parsed or v.probs[v.label] == 1.0 for v in verdicts)

    rerun = build_judge(spec, cache_dir=tmp_path)
    assert rerun.judge(PAIRS[:2]) == verdicts and rerun.computed == 0
    assert served_model.requests("/v1/chat/completions") - before == 2
    assert "sk-test-secret" not in judge.name
    assert b"sk-test-secret" not in (tmp_path / "verdicts.sqlite").read_bytes()


# --- cache --------------------------------------------------------------------------------


def test_cache_second_run_makes_no_model_calls(tiny_lm, tmp_path, monkeypatch):
    calls = {"scored_pairs": 0, "loads": 0}
    original_scores, original_init = LMJudge.label_scores, LMJudge.__init__

    def counting_scores(self, pairs):
        calls["scored_pairs"] += len(pairs)
        return original_scores(self, pairs)

    def counting_init(self, spec):
        calls["loads"] += 1
        original_init(self, spec)

    monkeypatch.setattr(LMJudge, "label_scores", counting_scores)
    monkeypatch.setattr(LMJudge, "__init__", counting_init)
    spec = f"lm:{tiny_lm}"

    first = build_judge(spec, cache_dir=tmp_path)
    first_verdicts = first.judge(PAIRS[:2])  # an "interrupted" run: only part of the pairs
    assert first.computed == 2 and calls["loads"] == 1

    resumed = build_judge(spec, cache_dir=tmp_path)
    all_verdicts = resumed.judge(PAIRS + PAIRS[:1])  # duplicates are judged once
    assert resumed.computed == 1  # only the pair the first run did not reach
    assert all_verdicts[:2] == first_verdicts and all_verdicts[3] == all_verdicts[0]

    assert calls["scored_pairs"] == 3
    calls.update(scored_pairs=0, loads=0)
    rerun = build_judge(spec, cache_dir=tmp_path)
    assert rerun.judge(PAIRS) == all_verdicts[:3]
    assert rerun.computed == 0 and calls == {"scored_pairs": 0, "loads": 0}

    other = build_judge(f"lm:{tiny_lm}?chat=no", cache_dir=tmp_path)  # another judge name: no reuse
    other.judge(PAIRS[:1])
    assert other.computed == 1
