"""One sampled token per row, with a generator per pair: the generated judge mode's decoding.

Each pair's ``torch.Generator`` is seeded from (seed, premise, hypothesis) (``Sampling.pair_seed``),
so a verdict is the same whatever the batch, order, device or process. Temperature, top-k and
top-p are transformers' own logits warpers, in the order ``generate`` applies them.
"""

from __future__ import annotations

from typing import Any

from custom_metrics.judge.spec import Sampling


def pair_generator(sampling: Sampling, premise: str, hypothesis: str) -> Any:
    import torch

    return torch.Generator(device="cpu").manual_seed(sampling.pair_seed(premise, hypothesis))


def next_token(logits: Any, sampling: Sampling, generator: Any) -> int:
    """The next token from one row of logits (vocabulary-sized); greedy at temperature 0."""
    import torch
    from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    scores = logits.detach().float().cpu()[None]
    if sampling.temperature == 0:
        return int(scores[0].argmax())
    scores = TemperatureLogitsWarper(sampling.temperature)(None, scores)
    if sampling.top_k > 0:
        scores = TopKLogitsWarper(sampling.top_k)(None, scores)
    if sampling.top_p < 1:
        scores = TopPLogitsWarper(sampling.top_p)(None, scores)
    probs = torch.softmax(scores[0], dim=-1)
    return int(torch.multinomial(probs, 1, generator=generator))
