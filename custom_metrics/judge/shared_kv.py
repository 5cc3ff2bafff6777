"""The prompted LM judge at the floor of its compute: every token a verdict needs runs once.

The full-sequence path (``LMJudge.loglikelihoods``, the harness' way) runs three full sequences
per pair. Here the instruction prefix runs once per judge (its KV cache kept), and each pair's
tokens and its three labels run in one forward pass on a copy of that cache, batched over pairs:
the labels sit after the pair as a tree, and a 4D attention mask lets each label token see the
prefix, the pair and its own label's earlier tokens only, at its full-sequence position. One call
per batch matters on CPU: projecting onto a 262k-word vocabulary reads the output matrix once per
call. The generated mode runs the pair the same way, then one token per step from its cache.

Log-likelihoods equal the full sequences' (tests pin 1e-4). The custom mask carries no sliding
window, so on a model with one only sequences shorter than the window take this path (``covers``).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Sequence
from typing import Any

# (context ids, continuation ids per label): a pair encoded the way HFLM encodes requests.
Encoded = tuple[list[int], list[list[int]]]
# Called with (row, logits of its next position); returns (next token or None, whether the row is done).
Chooser = Callable[[int, Any], "tuple[int | None, bool]"]


def cache_of(output: Any) -> Any:
    """The KV cache of a model output (``cache`` since transformers 5, ``past_key_values`` before)."""
    for name in ("cache", "past_key_values"):
        value = output.get(name) if hasattr(output, "get") else getattr(output, name, None)
        if value is not None:
            return value
    return None


def forward_options(model: Any) -> tuple[bool, str]:
    """Whether ``model.forward`` takes ``logits_to_keep``, and the name of its cache argument
    (``cache`` since transformers 5, ``past_key_values`` before)."""
    parameters = inspect.signature(model.forward).parameters
    return "logits_to_keep" in parameters, "cache" if "cache" in parameters else "past_key_values"


def copy_cache(cache: Any) -> Any:
    """A copy of a KV cache that a forward pass or a batch resize may change, leaving ``cache`` as it is:
    dynamic layers replace their tensors when they grow or are repeated along the batch, so a copy of
    each layer sharing the tensors is enough; other layouts may write in place and get a deep copy.
    """
    from transformers.cache_utils import DynamicCache, DynamicLayer, DynamicSlidingWindowLayer

    layers = getattr(cache, "layers", None)
    dynamic = (DynamicLayer, DynamicSlidingWindowLayer)
    if type(cache) is DynamicCache and layers and all(type(layer) in dynamic for layer in layers):
        copied = copy.copy(cache)
        copied.layers = [copy.copy(layer) for layer in layers]
        return copied
    return copy.deepcopy(cache)


def label_tree(continuations: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    """The label tokens to feed, as the distinct label prefixes they end (a shared token once).

    Scoring token k of a label reads the logits after its first k tokens, so every proper,
    non-empty prefix of a label is fed once; the logits after the context score token 0.
    """
    nodes: dict[tuple[int, ...], None] = {}
    for cont in continuations:
        for end in range(1, len(cont)):
            nodes.setdefault(tuple(cont[:end]))
    return list(nodes)


def _logsumexp_(logits: Any) -> Any:
    """logsumexp over the vocabulary, in place: a second vocabulary-sized tensor per batch
    (what ``log_softmax`` or ``torch.logsumexp`` allocate) costs more than the arithmetic on CPU."""
    top = logits.amax(dim=-1, keepdim=True)
    return logits.sub_(top).exp_().sum(dim=-1).log_().add_(top.squeeze(-1))


class SharedKV:
    """The prefix's KV cache, one-pass label scoring and token-by-token sampling built on it.

    ``tokens`` counts the tokens run through the model (prefix once, padding excluded),
    ``padded_tokens`` the positions actually computed; the benchmark reports both.
    """

    def __init__(self, model: Any, prefix: Sequence[int], pad_id: int, device: Any, max_length: int) -> None:
        import torch

        self._torch = torch
        self.model = model
        self.prefix = list(prefix)
        self.pad_id = pad_id
        self.device = device
        self.max_length = max_length
        window = getattr(model.config, "sliding_window", None)
        self.window = window if isinstance(window, int) and window > 0 else None
        self.slices_logits, self.cache_arg = forward_options(model)
        with torch.inference_mode():
            out = model(input_ids=torch.tensor([self.prefix], device=device), use_cache=True)
        cache = cache_of(out)
        if cache is None or not hasattr(cache, "batch_repeat_interleave"):
            raise ValueError(f"{type(model).__name__} returns no batch-repeatable KV cache")
        self._prefix_cache = cache
        # the 4D mask is added to attention scores, so it takes the weights' dtype (some models
        # return float32 logits from bfloat16 weights; attention would reject such a mask)
        self._mask_dtype = getattr(model, "dtype", None) or out.logits.dtype
        self._blocked = torch.finfo(self._mask_dtype).min
        self.tokens = self.padded_tokens = len(self.prefix)

    def covers(self, context: Sequence[int], longest_continuation: int = 0) -> bool:
        """Whether a context starts with the prefix, fits without the truncation the full-sequence
        path would apply and, on a sliding-window model, ends (with its continuation) inside the window."""
        size, end = len(self.prefix), len(context) + longest_continuation
        return (
            len(context) > size
            and list(context[:size]) == self.prefix
            and end <= self.max_length + 1
            and (self.window is None or end < self.window)
        )

    def _forward(self, ids: Any, mask: Any, positions: Any, cache: Any, keep: int) -> tuple[Any, Any]:
        """Logits of the last ``keep`` positions (float32) and the grown cache."""
        extra = {"logits_to_keep": keep} if self.slices_logits else {}
        out = self.model(
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=positions.to(self.device),
            use_cache=True,
            **{self.cache_arg: cache},
            **extra,
        )
        return out.logits[:, -keep:].float(), cache_of(out)

    def _prefix_cache_for(self, rows: int) -> Any:
        """A cache of ``rows`` copies of the prefix for one batch; the prefix's own cache stays as it is."""
        cache = copy_cache(self._prefix_cache)
        cache.batch_repeat_interleave(rows)
        return cache

    def label_logprobs(self, items: Sequence[Encoded], batch_size: int) -> list[list[float]]:
        """Sum of continuation-token log-probs for every label of every pair, in order."""
        order = sorted(range(len(items)), key=lambda i: len(items[i][0]))
        results: list[list[float]] = [[] for _ in items]
        with self._torch.inference_mode():
            for start in range(0, len(order), batch_size):
                batch = order[start : start + batch_size]
                for index, scores in zip(batch, self._score([items[i] for i in batch])):
                    results[index] = scores
        return results

    def _score(self, items: Sequence[Encoded]) -> list[list[float]]:
        """One pass: [left padding][pair's own tokens][label tree][right padding] per row."""
        torch = self._torch
        size = len(self.prefix)
        owns = [context[size:] for context, _ in items]
        trees = [label_tree(conts) for _, conts in items]
        width, branches = max(map(len, owns)), max(map(len, trees))
        length = width + branches
        ids = torch.full((len(items), length), self.pad_id, dtype=torch.long)
        positions = torch.full((len(items), length), size, dtype=torch.long)  # pads: never read
        seen = torch.zeros((len(items), length, size + length), dtype=torch.bool)
        seen[:, :, :size] = True  # every row, padding included, sees the prefix (no empty softmax)
        for row, (own, tree) in enumerate(zip(owns, trees)):
            start = width - len(own)
            ids[row, start:width] = torch.tensor(own)
            positions[row, start:width] = torch.arange(size, size + len(own))
            seen[row, start:width, size + start : size + width] = torch.ones(len(own), len(own)).tril().bool()
            slot = {node: width + j for j, node in enumerate(tree)}
            for node, column in slot.items():
                ids[row, column] = node[-1]
                positions[row, column] = size + len(own) + len(node) - 1
                seen[row, column, size + start : size + width] = True
                for end in range(1, len(node) + 1):
                    seen[row, column, size + slot[node[:end]]] = True
        mask = torch.zeros(seen.shape, dtype=self._mask_dtype).masked_fill_(~seen, self._blocked)[:, None]
        logits, _ = self._forward(ids, mask, positions, self._prefix_cache_for(len(items)), branches + 1)
        self.tokens += sum(map(len, owns)) + sum(map(len, trees))
        self.padded_tokens += ids.numel()
        # (row, column, token) of every label token: column 0 holds the logits after the
        # context, column 1 + j those after tree node j
        reads = []
        for row, ((_, conts), tree) in enumerate(zip(items, trees)):
            column = {(): 0} | {node: 1 + j for j, node in enumerate(tree)}
            reads += [(row, column[tuple(c[:k])], c[k]) for c in conts for k in range(len(c))]
        rows, columns, tokens = torch.tensor(reads, device=logits.device).unbind(1)
        picked = logits[rows, columns, tokens]  # read before the in-place logsumexp below
        picked = picked - _logsumexp_(logits)[rows, columns]
        values = iter(picked.tolist())
        return [[sum(next(values) for _ in c) for c in conts] for _, conts in items]

    def first_pass(self, rows: Sequence[Sequence[int]]) -> tuple[Any, Any, Any]:
        """Each row's tokens after the prefix, left-padded: logits of the last position, cache, 2D mask."""
        torch = self._torch
        size, width = len(self.prefix), max(len(row) for row in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), size + width), dtype=torch.long)
        mask[:, :size] = 1
        positions = torch.full((len(rows), width), size, dtype=torch.long)  # pads: never read
        for index, row in enumerate(rows):
            start = width - len(row)
            ids[index, start:] = torch.tensor(row)
            mask[index, size + start :] = 1
            positions[index, start:] = torch.arange(size, size + len(row))
        logits, cache = self._forward(ids, mask, positions, self._prefix_cache_for(len(rows)), 1)
        self.tokens += sum(len(row) for row in rows)
        self.padded_tokens += ids.numel()
        return logits, cache, mask

    def generate(self, contexts: Sequence[Sequence[int]], choose: Chooser, max_tokens: int, batch_size: int) -> None:
        """Feed each context's own tokens once, then the tokens ``choose`` picks, one step at a time."""
        torch = self._torch
        order = sorted(range(len(contexts)), key=lambda i: len(contexts[i]))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            with torch.inference_mode():
                logits, cache, mask = self.first_pass([contexts[row][len(self.prefix) :] for row in rows])
                done = [False] * len(rows)
                for step in range(max_tokens):
                    fed = torch.full((len(rows), 1), self.pad_id, dtype=torch.long)
                    for slot, row in enumerate(rows):
                        if not done[slot]:
                            token, done[slot] = choose(row, logits[slot, -1])
                            fed[slot, 0] = self.pad_id if token is None else token
                    if all(done) or step == max_tokens - 1:
                        break
                    mask = torch.cat([mask, torch.ones((len(rows), 1), dtype=torch.long)], dim=1)
                    positions = torch.tensor([[len(contexts[row]) + step] for row in rows])
                    logits, cache = self._forward(fed, mask, positions, cache, 1)
                    self.tokens += done.count(False)
                    self.padded_tokens += len(rows)
