"""Random-weight models of two layers and a BPE tokenizer trained on the test's own texts:
local stand-ins for Hub models, built offline in a second. Their outputs are noise; the
tests use them for shapes, batching, caching and the paths a real model takes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

TINY = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2}


def bpe_tokenizer(
    corpus: Sequence[str],
    vocab_size: int,
    specials: Sequence[str],
    min_frequency: int = 2,
    chat_template: str | None = None,
):
    """A byte-level BPE tokenizer over ``corpus``; ``specials`` are its pad, bos, eos (and unk) tokens, in id order."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus, vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(specials))
    roles = {"<pad>": "pad_token", "<s>": "bos_token", "</s>": "eos_token", "<unk>": "unk_token"}
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, **{roles[token]: token for token in specials})
    if chat_template:
        tokenizer.chat_template = chat_template
    return tokenizer


def tiny_model(path: Path, model_class: Any, tokenizer: Any, seed: int, **config: Any) -> Path:
    """Save a random ``model_class`` of ``TINY`` size (``config`` adds or overrides) and ``tokenizer``."""
    import torch

    torch.manual_seed(seed)
    settings = {"vocab_size": len(tokenizer), **TINY, **config}
    model_class(model_class.config_class(**settings)).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def nli_label_config(id2label: dict[int, str]) -> dict[str, Any]:
    """Classifier config entries for these labels."""
    return {"num_labels": len(id2label), "id2label": id2label, "label2id": {v: k for k, v in id2label.items()}}


def small_tokenizer(path: Path) -> Path:
    """A saved BPE tokenizer folder: what a task that counts tokens needs of a model, in a second."""
    corpus = ["Tom has never left his home town.", "Tom described the streets of Paris in detail."] * 4
    bpe_tokenizer(corpus, vocab_size=300, specials=["<pad>", "<s>", "</s>"]).save_pretrained(path)
    return path
