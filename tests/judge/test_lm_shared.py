"""The LM judge's shared KV path against the full-sequence path and the harness' HFLM,
on tiny models (plain, chat template, sliding window) and, marked e2e, the embedded model."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import custom_metrics.judge.lm as lm_module
from custom_metrics.judge.lm import LMJudge
from custom_metrics.judge.spec import parse_spec
from custom_metrics.judge.types import NLI_LABELS, UNPARSED, verdict_from_scores
from tests.judge.conftest import PAIRS

# Lengths that differ (padding inside a batch), whitespace at the ends, a very short pair.
MORE_PAIRS = [
    *PAIRS,
    ("  The garden is full of tomatoes that she planted herself last spring.  ", "She gardens. "),
    ("A man.", "A guitar."),
    ("The museum, which closes at five on weekdays and at six on Saturdays, was busy.", "It was empty."),
]


def _probs(scores: list[float]) -> list[float]:
    verdict = verdict_from_scores(scores)
    return [verdict.probs[label] for label in NLI_LABELS]


def _harness_scores(judge: LMJudge, pairs) -> list[list[float]]:
    from lm_eval.models.huggingface import HFLM

    from custom_metrics.common.harness_api import new_instance

    requests = [(judge.context(p, h), cont) for p, h in pairs for cont in judge.continuations()]
    harness = HFLM(pretrained=judge.model, tokenizer=judge.tokenizer, batch_size=4, device="cpu")
    instances = [new_instance("loglikelihood", request, i) for i, request in enumerate(requests)]
    flat = [ll for ll, _ in harness.loglikelihood(instances, disable_tqdm=True)]
    return [flat[3 * i : 3 * i + 3] for i in range(len(pairs))]


def _assert_same_verdicts(judge: LMJudge, pairs) -> None:
    assert judge.shared is not None, "the probe should accept this model"
    shared = judge.label_scores(pairs)
    full = judge.full_sequence_scores([judge.encode_labels(p, h) for p, h in pairs])
    harness = _harness_scores(judge, pairs)
    for got, whole, theirs in zip(shared, full, harness):
        assert _probs(got) == pytest.approx(_probs(whole), abs=1e-4)
        assert _probs(got) == pytest.approx(_probs(theirs), abs=1e-4)
        assert got == pytest.approx(whole, abs=1e-3)  # the log-likelihoods themselves, not only their softmax


@pytest.mark.parametrize("fixture", ["tiny_lm", "tiny_chat_lm", "tiny_gemma_wide"])
def test_shared_path_gives_the_full_sequence_and_the_harness_verdicts(fixture, request):
    judge = LMJudge(parse_spec(f"lm:{request.getfixturevalue(fixture)}?batch_size=3"))
    _assert_same_verdicts(judge, MORE_PAIRS)


def test_pairs_longer_than_the_sliding_window_take_the_full_sequence_path(tiny_gemma_wide):
    """The one-pass mask carries no window: a pair reaching it is judged on full sequences, in the same call."""
    judge = LMJudge(parse_spec(f"lm:{tiny_gemma_wide}?batch_size=3"))
    assert judge.shared is not None and judge.shared.window == 200
    items = [judge.encode_labels(p, h) for p, h in MORE_PAIRS]
    covered = [judge.shared.covers(context, max(map(len, conts))) for context, conts in items]
    assert any(covered) and not all(covered)
    _assert_same_verdicts(judge, MORE_PAIRS)


def test_a_window_shorter_than_the_prompt_keeps_the_full_sequence_path(tiny_gemma, caplog):
    with caplog.at_level(logging.WARNING):
        judge = LMJudge(parse_spec(f"lm:{tiny_gemma}?batch_size=3"))
    assert judge.shared is None and "24-token sliding window cannot hold the prompt" in caplog.text
    harness = _harness_scores(judge, MORE_PAIRS)
    for got, theirs in zip(judge.label_scores(MORE_PAIRS), harness):
        assert _probs(got) == pytest.approx(_probs(theirs), abs=1e-4)


def test_label_tree_feeds_each_shared_label_token_once():
    from custom_metrics.judge.shared_kv import label_tree

    # "\n" shared by all three labels, one label of one token after it, two of three
    assert label_tree([[7, 1, 2, 3], [7, 4], [7, 5, 6, 8]]) == [(7,), (7, 1), (7, 1, 2), (7, 5), (7, 5, 6)]
    assert label_tree([[1], [2], [3]]) == []  # one-token labels: all read off the context's last logits


def test_shared_path_runs_each_token_once(tiny_lm):
    judge = LMJudge(parse_spec(f"lm:{tiny_lm}?batch_size=8"))
    shared = judge.shared
    items = [judge.encode_labels(p, h) for p, h in MORE_PAIRS]
    judge.label_scores(MORE_PAIRS)
    own = sum(len(context) - len(shared.prefix) for context, _ in items)
    label_tokens = sum(len(cont) for _, conts in items for cont in conts)
    full = sum(len(context) + len(cont) - 1 for context, conts in items for cont in conts)
    # the pairs' own tokens once, at most every label token once more; the prefix was run at load
    assert own < shared.tokens <= own + label_tokens
    assert shared.tokens < full / 3


def test_share_no_and_a_failed_probe_keep_the_full_sequence_path(tiny_lm, monkeypatch, caplog):
    assert LMJudge(parse_spec(f"lm:{tiny_lm}?share=no")).shared is None
    monkeypatch.setattr(lm_module, "SHARED_TOLERANCE", -1.0)  # no difference can pass the probe
    with caplog.at_level(logging.WARNING):
        judge = LMJudge(parse_spec(f"lm:{tiny_lm}"))
    assert judge.shared is None and "judging on full sequences" in caplog.text
    reference = LMJudge(parse_spec(f"lm:{tiny_lm}?share=no"))
    assert [v.probs for v in judge.judge(PAIRS)] == [v.probs for v in reference.judge(PAIRS)]


def test_generated_mode_is_seeded_per_pair(tiny_lm):
    """Sampled answers depend on (seed, pair) only: not on batch size, order or the path."""
    spec = f"lm:{tiny_lm}?mode=generate&max_tokens=5&batch_size=2"
    judge = LMJudge(parse_spec(spec))
    first = judge.generate_answers(MORE_PAIRS)
    assert judge.generate_answers(list(reversed(MORE_PAIRS))) == list(reversed(first))
    assert LMJudge(parse_spec(spec.replace("batch_size=2", "batch_size=5"))).generate_answers(MORE_PAIRS) == first
    assert LMJudge(parse_spec(spec + "&share=no")).generate_answers(MORE_PAIRS) == first
    assert LMJudge(parse_spec(spec + "&seed=1")).generate_answers(MORE_PAIRS) != first
    # a random-weight model answers gibberish: every verdict says so, none becomes neutral
    verdicts = judge.judge(MORE_PAIRS)
    for verdict, answer in zip(verdicts, first):
        assert verdict.answer == answer
        assert verdict.method == ("generated" if verdict.parsed else UNPARSED)
    assert all(v.label == UNPARSED for v in verdicts if v.method == UNPARSED)


def test_generated_mode_greedy_equals_argmax_continuation(tiny_lm):
    """At temperature 0 the sampler is greedy: the first answer token is the argmax after the prompt."""
    import torch

    judge = LMJudge(parse_spec(f"lm:{tiny_lm}?mode=generate&temperature=0&max_tokens=1"))
    answers = judge.generate_answers(PAIRS[:1])
    ids = judge._encode(judge.context(*PAIRS[0]))
    with torch.inference_mode():
        top = int(judge.model(torch.tensor([ids])).logits[0, -1].argmax())
    assert answers[0] == judge.tokenizer.decode([top], skip_special_tokens=True)


@pytest.mark.e2e
def test_shared_path_on_the_embedded_model(embedded_model: Path):
    """The default judge: REG-like pairs of three lengths in one padded batch (an ordinary one,
    one with whitespace at its ends, a very short one), shared vs full sequences vs HFLM."""
    judge = LMJudge(parse_spec(f"lm:{embedded_model}?batch_size=4"))
    _assert_same_verdicts(judge, MORE_PAIRS[2:5])
