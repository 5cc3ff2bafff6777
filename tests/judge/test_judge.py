"""The shared NLI judge: spec parsing, the three backends on tiny local models, the cache."""

from __future__ import annotations

import json
import math
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from custom_metrics.judge.build import build_judge
from custom_metrics.judge.lm import LMJudge
from custom_metrics.judge.prompt import LABEL_WORDS, PROMPT_ID, nli_prompt
from custom_metrics.judge.seqcls import SeqClsJudge
from custom_metrics.judge.spec import parse_spec
from custom_metrics.judge.types import NLI_LABELS, Verdict

PAIRS = [
    ("The museum closes at five.", "Visitors toured it at seven."),
    ("A man plays a guitar on stage.", "Someone is performing music."),
    ("She planted tomatoes in the garden.", "She likes to cook."),
]


def _tokenizer(chat_template: str | None = None):
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    corpus = [nli_prompt(p, h) for p, h in PAIRS] + list(LABEL_WORDS)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus, vocab_size=400, min_frequency=1, special_tokens=["<pad>", "<s>", "</s>"])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
    if chat_template:
        tokenizer.chat_template = chat_template
    return tokenizer


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> Path:
    """A 2-layer Llama with random weights and a BPE tokenizer trained on the prompt."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny-lm")
    tokenizer = _tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        pad_token_id=0,
    )
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny_chat_lm(tiny_lm: Path, tmp_path_factory) -> Path:
    import shutil

    path = tmp_path_factory.mktemp("tiny-chat-lm")
    shutil.copytree(tiny_lm, path, dirs_exist_ok=True)
    template = (
        "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    _tokenizer(template).save_pretrained(path)
    return path


def _tiny_seqcls(path: Path, id2label: dict[int, str]) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(1)
    tokenizer = _tokenizer()
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=512,
        num_labels=len(id2label),
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )
    BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


# --- spec -------------------------------------------------------------------------------


def test_spec_default_is_embedded_lm():
    from custom_metrics.common.embedded_model import checkpoint_dir

    spec = parse_spec(None)
    assert (spec.kind, spec.model) == ("lm", str(checkpoint_dir()))
    assert spec.name == f"lm:{checkpoint_dir()}"


def test_spec_options_and_names(tmp_path):
    spec = parse_spec(f"lm:{tmp_path}?chat=yes&batch_size=4")
    assert spec.model == str(tmp_path.resolve()) and spec.options == {"chat": "yes", "batch_size": "4"}
    assert spec.name == f"lm:{tmp_path.resolve()}?chat=yes"  # batch size does not change verdicts
    remote = parse_spec("openai:gemma-4-31b@http://127.0.0.1:8000/v1/?concurrency=2")
    assert (remote.model, remote.base_url) == ("gemma-4-31b", "http://127.0.0.1:8000/v1")
    assert remote.name == "openai:gemma-4-31b@http://127.0.0.1:8000/v1"
    assert parse_spec("seqcls:org/nli").prompt_id == "" and remote.prompt_id == PROMPT_ID


@pytest.mark.parametrize("bad", ["roberta-large-mnli", "gpt:x", "openai:model-without-url", "lm:x?chat"])
def test_spec_errors_say_what_is_expected(bad):
    with pytest.raises(ValueError, match="judge spec"):
        parse_spec(bad)


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
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    judge = LMJudge(parse_spec(f"lm:{tiny_lm}"))
    requests = [(judge.context(p, h), cont) for p, h in PAIRS for cont in judge.continuations()]
    harness = HFLM(pretrained=judge.model, tokenizer=judge.tokenizer, batch_size=4, device="cpu")
    expected = [
        ll for ll, _ in harness.loglikelihood([Instance("loglikelihood", {}, req, i) for i, req in enumerate(requests)])
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
    path = _tiny_seqcls(tmp_path / "nli", permuted)
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
    path = _tiny_seqcls(tmp_path / "nli", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(ValueError, match="id2label"):
        SeqClsJudge(parse_spec(f"seqcls:{path}"))


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


class LogprobServer:
    """A chat endpoint answering as vLLM does, with token logprobs, and recording each
    request's body and Authorization header.

    The one server in the tests that is not real: ``transformers serve`` (used by every
    other endpoint test) ignores ``logprobs`` and cannot show which headers it received,
    and those are exactly what this case checks.
    """

    def __init__(self, answers: dict[str, dict]):
        self.requests: list[tuple[dict, str | None]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append((body, self.headers.get("Authorization")))
                hypothesis = body["messages"][0]["content"].rsplit("Hypothesis: ", 1)[1]
                payload = json.dumps(answers[hypothesis]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


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
    server = LogprobServer(answers)
    yield server
    server.close()


def test_openai_judge_uses_label_logprobs_and_keeps_key_out(fake_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    judge = build_judge(f"openai:tiny@{fake_server.url}?concurrency=2", cache_dir=tmp_path)
    verdicts = judge.judge(PAIRS)
    first = verdicts[0]
    assert first.method == "scores" and first.label == "contradiction"
    assert first.probs["contradiction"] == pytest.approx(0.7 / 0.95)
    assert first.probs["entailment"] == pytest.approx(0.2 / 0.95)
    assert first.probs["neutral"] == pytest.approx(0.05 / 0.95)
    assert (verdicts[1].label, verdicts[1].method, verdicts[1].probs["entailment"]) == ("entailment", "text", 1.0)
    assert (verdicts[2].label, verdicts[2].method) == ("neutral", "unparsed")
    body, auth = fake_server.requests[0]
    assert auth == "Bearer sk-test-secret"
    assert body["logprobs"] is True and body["model"] == "tiny" and body["temperature"] == 0
    assert body["messages"][0]["content"] in {nli_prompt(p, h) for p, h in PAIRS}
    assert "sk-test-secret" not in judge.name
    assert b"sk-test-secret" not in (tmp_path / "verdicts.sqlite").read_bytes()


@pytest.mark.e2e
def test_openai_judge_on_a_served_model_reads_answers_and_caches(served_model, tmp_path, monkeypatch):
    """The endpoint judge against a real ``transformers serve``: one request per new pair,
    verdicts from the answer text (the server sends no logprobs), none on a rerun, and the
    API key neither in the judge's name nor in the cache."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    spec = f"openai:{served_model.model}@{served_model.base_url}?concurrency=2"
    before = served_model.requests("/v1/chat/completions")
    judge = build_judge(spec, cache_dir=tmp_path)
    verdicts = judge.judge(PAIRS[:2])
    assert served_model.requests("/v1/chat/completions") - before == 2 == judge.computed
    assert all(v.method in ("text", "unparsed") for v in verdicts)
    assert all(v.probs[v.label] == max(v.probs.values()) for v in verdicts)

    rerun = build_judge(spec, cache_dir=tmp_path)
    assert rerun.judge(PAIRS[:2]) == verdicts and rerun.computed == 0
    assert served_model.requests("/v1/chat/completions") - before == 2
    assert "sk-test-secret" not in judge.name
    assert b"sk-test-secret" not in (tmp_path / "verdicts.sqlite").read_bytes()


# --- cache --------------------------------------------------------------------------------


def test_cache_second_run_makes_no_model_calls(tiny_lm, tmp_path, monkeypatch):
    calls = {"forward_batches": 0, "loads": 0}
    original_ll, original_init = LMJudge.loglikelihoods, LMJudge.__init__

    def counting_ll(self, requests):
        calls["forward_batches"] += math.ceil(len(requests) / self.batch_size)
        return original_ll(self, requests)

    def counting_init(self, spec):
        calls["loads"] += 1
        original_init(self, spec)

    monkeypatch.setattr(LMJudge, "loglikelihoods", counting_ll)
    monkeypatch.setattr(LMJudge, "__init__", counting_init)
    spec = f"lm:{tiny_lm}"

    first = build_judge(spec, cache_dir=tmp_path)
    first_verdicts = first.judge(PAIRS[:2])  # an "interrupted" run: only part of the pairs
    assert first.computed == 2 and calls["loads"] == 1

    resumed = build_judge(spec, cache_dir=tmp_path)
    all_verdicts = resumed.judge(PAIRS + PAIRS[:1])  # duplicates are judged once
    assert resumed.computed == 1  # only the pair the first run did not reach
    assert all_verdicts[:2] == first_verdicts and all_verdicts[3] == all_verdicts[0]

    calls.update(forward_batches=0, loads=0)
    rerun = build_judge(spec, cache_dir=tmp_path)
    assert rerun.judge(PAIRS) == all_verdicts[:3]
    assert rerun.computed == 0 and calls == {"forward_batches": 0, "loads": 0}

    other = build_judge(f"lm:{tiny_lm}?chat=no", cache_dir=tmp_path)  # another judge name: no reuse
    other.judge(PAIRS[:1])
    assert other.computed == 1
