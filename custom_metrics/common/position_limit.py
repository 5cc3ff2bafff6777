"""The most tokens an encoder's input may hold, read from the model itself.

A tokenizer saved without a length says "no limit" with a sentinel (1e30), and
sentence-transformers caps it at ``max_position_embeddings``, which RoBERTa-style models overstate
by their padding offset: either way a long input indexes past the position table instead of being
cut. The seqcls judge and the predicate embedder cut their inputs to this limit.
"""

from __future__ import annotations

from typing import Any

# Tokenizers saved without a length state a sentinel above any real model's positions.
NO_LIMIT = 1_000_000


def input_limit(model: Any, tokenizer: Any) -> int | None:
    """The model's own position table, less the positions it never gives a token (RoBERTa's
    count from ``padding_idx + 1``), and the tokenizer's ``model_max_length`` where it names a
    smaller one; None: the model has no absolute positions to run out of."""
    limits = []
    stated = getattr(tokenizer, "model_max_length", None)
    if isinstance(stated, int) and 0 < stated < NO_LIMIT:
        limits.append(stated)
    tables = (m for name, m in model.named_modules() if name.endswith("position_embeddings"))
    table = next((m for m in tables if hasattr(m, "num_embeddings")), None)
    if table is not None:
        offset = table.padding_idx + 1 if table.padding_idx is not None else 0
        limits.append(table.num_embeddings - offset)
    else:
        positions = getattr(model.config, "max_position_embeddings", None)
        if isinstance(positions, int) and positions > 0:
            limits.append(positions)
    return min(limits) if limits else None
