"""Tiny local models for the judge tests: a 2-layer Llama (plain and with a chat template),
tiny Gemma 3s with a short and a wider sliding window, and BERT NLI classifiers, all with random
weights and a BPE tokenizer trained on the judge's own prompt (built offline in seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from custom_metrics.judge.prompt import LABEL_WORDS, nli_prompt
from tests.tiny_models import bpe_tokenizer, nli_label_config, tiny_model

PAIRS = [
    ("The museum closes at five.", "Visitors toured it at seven."),
    ("A man plays a guitar on stage.", "Someone is performing music."),
    ("She planted tomatoes in the garden.", "She likes to cook."),
]


def _tokenizer(chat_template: str | None = None):
    corpus = [nli_prompt(p, h) for p, h in PAIRS] + list(LABEL_WORDS)
    return bpe_tokenizer(corpus, 400, ["<pad>", "<s>", "</s>"], min_frequency=1, chat_template=chat_template)


def tiny_llama(path: Path) -> Path:
    """A 2-layer Llama with random weights and a BPE tokenizer trained on the prompt."""
    from transformers import LlamaForCausalLM

    return tiny_model(
        path,
        LlamaForCausalLM,
        _tokenizer(),
        seed=0,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        pad_token_id=0,
    )


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> Path:
    return tiny_llama(tmp_path_factory.mktemp("tiny-lm"))


CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def with_chat_template(path: Path) -> Path:
    """The tiny model saved in ``path`` given a plain chat template (its tokenizer saved again)."""
    _tokenizer(CHAT_TEMPLATE).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny_chat_lm(tiny_lm: Path, tmp_path_factory) -> Path:
    import shutil

    path = tmp_path_factory.mktemp("tiny-chat-lm")
    shutil.copytree(tiny_lm, path, dirs_exist_ok=True)
    return with_chat_template(path)


def tiny_seqcls(path: Path, id2label: dict[int, str], seed: int = 1, architecture: str = "Bert", **config) -> Path:
    """A tiny ``<architecture>ForSequenceClassification`` (``config``: overrides, e.g. its positions)."""
    import transformers

    settings = {"num_attention_heads": 4, "max_position_embeddings": 512, **config}
    model_class = getattr(transformers, f"{architecture}ForSequenceClassification")
    return tiny_model(path, model_class, _tokenizer(), seed=seed, **settings, **nli_label_config(id2label))


def _tiny_gemma(path: Path, window: int) -> Path:
    """A 2-layer Gemma 3: one sliding-window layer of ``window`` tokens, one full-attention layer."""
    from transformers import Gemma3ForCausalLM

    return tiny_model(
        path,
        Gemma3ForCausalLM,
        _tokenizer(),
        seed=2,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=8,
        sliding_window=window,
        layer_types=["sliding_attention", "full_attention"],
        max_position_embeddings=1024,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )


@pytest.fixture(scope="module")
def tiny_gemma(tmp_path_factory) -> Path:
    """Gemma 3 whose 24-token window is shorter than any prompt."""
    return _tiny_gemma(tmp_path_factory.mktemp("tiny-gemma"), 24)


@pytest.fixture(scope="module")
def tiny_gemma_wide(tmp_path_factory) -> Path:
    """Gemma 3 whose 200-token window holds the probe pairs and some test pairs, not all."""
    return _tiny_gemma(tmp_path_factory.mktemp("tiny-gemma-wide"), 200)
