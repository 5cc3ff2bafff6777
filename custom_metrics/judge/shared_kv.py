"""The prompted LM judge at the floor of its compute: every token a verdict needs runs once.

Today's path (``LMJudge.loglikelihoods``, the harness' way) runs three full sequences per
pair: the ~100-token C.2 instruction, the pair, one label each. Here:

1. the instruction prefix (the tokens every context starts with) runs once per judge, and
   its KV cache is kept;
2. each pair's own tokens, plus the label tokens its three continuations share (e.g. the
   "\\n"), run once on a copy of that cache, batched over pairs and left-padded so every
   row ends at the same position;
3. the rest of each label (often nothing: a one-token label is read off step 2's last
   logits) runs from step 2's cache, all labels of a batch in one call.

The generated mode uses steps 1-2 and then one token per step from the same cache.
Tokens and positions are today's, so log-likelihoods equal today's (tests pin 1e-4
against it and against HFLM). Padding leaves holes in the attention mask between the
prefix and a shorter row; a model with a sliding attention window measures the window in
cache slots, so a batch whose padded length reaches the window runs pair by pair.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Sequence
from typing import Any

# (context ids, continuation ids per label): a pair encoded the way HFLM encodes requests.
Encoded = tuple[list[int], list[list[int]]]
# Called with (row, logits of its next position); returns (next token or None, whether the row is done).
# A label's tokens after the shared ones: (row, label, inputs, targets).
Rest = tuple[int, int, list[int], list[int]]
Chooser = Callable[[int, Any], "tuple[int | None, bool]"]


def _cache_of(output: Any) -> Any:
    """The KV cache of a model output (``cache`` since transformers 5, ``past_key_values`` before)."""
    for name in ("cache", "past_key_values"):
        value = output.get(name) if hasattr(output, "get") else getattr(output, name, None)
        if value is not None:
            return value
    return None


def common_prefix_length(sequences: Sequence[Sequence[int]]) -> int:
    first = sequences[0]
    length = min(len(seq) for seq in sequences)
    for index in range(length):
        if any(seq[index] != first[index] for seq in sequences[1:]):
            return index
    return length


class SharedKV:
    """The prefix's KV cache and the two-pass scoring (and token-by-token sampling) built on it.

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
        parameters = inspect.signature(model.forward).parameters
        self.slices_logits = "logits_to_keep" in parameters
        self.cache_arg = "cache" if "cache" in parameters else "past_key_values"  # renamed in transformers 5
        with torch.inference_mode():
            out = model(input_ids=torch.tensor([self.prefix], device=device), use_cache=True)
        cache = _cache_of(out)
        if cache is None or not hasattr(cache, "batch_select_indices"):
            raise ValueError(f"{type(model).__name__} returns no batch-selectable KV cache")
        self._prefix_cache = cache
        self.tokens = self.padded_tokens = len(self.prefix)

    def covers(self, context: Sequence[int], longest_continuation: int = 0) -> bool:
        """Whether a context starts with the prefix and fits without the truncation today's path would apply."""
        size = len(self.prefix)
        return (
            len(context) > size
            and list(context[:size]) == self.prefix
            and len(context) + longest_continuation <= self.max_length + 1
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
        return out.logits[:, -keep:].float(), _cache_of(out)

    def _first_pass(self, rows: Sequence[Sequence[int]], keep: int) -> tuple[Any, Any, Any]:
        """Each row's tokens after the prefix, left-padded: logits of the last ``keep`` positions."""
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
        cache = copy.deepcopy(self._prefix_cache)
        cache.batch_repeat_interleave(len(rows))
        logits, cache = self._forward(ids, mask, positions, cache, keep)
        self.tokens += sum(len(row) for row in rows)
        self.padded_tokens += ids.numel()
        return logits, cache, mask

    def _needs_no_holes(self, width: int, extra: int) -> bool:
        return self.window is not None and len(self.prefix) + width + extra >= self.window

    def label_logprobs(self, items: Sequence[Encoded], batch_size: int) -> list[list[float]]:
        """Sum of continuation-token log-probs for every label of every pair, in order."""
        with self._torch.inference_mode():
            return self._label_logprobs(items, batch_size)

    def _label_logprobs(self, items: Sequence[Encoded], batch_size: int) -> list[list[float]]:
        order = sorted(range(len(items)), key=lambda i: len(items[i][0]))
        results: list[list[float]] = [[] for _ in items]
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            width = max(len(items[i][0]) for i in batch) - len(self.prefix)
            longest = max(len(cont) for i in batch for cont in items[i][1])
            groups = [[i] for i in batch] if self._needs_no_holes(width + 1, longest) else [batch]
            for group in groups:
                for index, scores in zip(group, self._score([items[i] for i in group])):
                    results[index] = scores
        return results

    def _score(self, items: Sequence[Encoded]) -> list[list[float]]:
        torch = self._torch
        shared = [common_prefix_length(conts) for _, conts in items]
        keep = max(shared) + 1
        rows = [context[len(self.prefix) :] + conts[0][:m] for (context, conts), m in zip(items, shared)]
        logits, cache, mask = self._first_pass(rows, keep)
        logprobs = torch.log_softmax(logits, dim=-1).cpu()
        scores: list[list[float]] = []
        rest: list[Rest] = []
        for row, ((_, conts), m) in enumerate(zip(items, shared)):
            row_scores = []
            for label, cont in enumerate(conts):
                # the position before continuation token k (k <= m) is kept column keep-1-m+k
                head = range(min(m + 1, len(cont)))
                row_scores.append(sum(float(logprobs[row, keep - 1 - m + k, cont[k]]) for k in head))
                if len(cont) > m + 1:
                    rest.append((row, label, cont[m:-1], cont[m + 1 :]))
            scores.append(row_scores)
        if rest:
            for (row, label, _, targets), values in zip(rest, self._second_pass(rows, rest, cache, mask)):
                scores[row][label] += sum(float(values[k, token]) for k, token in enumerate(targets))
        return scores

    def _second_pass(self, rows: Sequence[Sequence[int]], rest: Sequence[Rest], cache: Any, mask: Any) -> Any:
        """Every label's remaining tokens from its pair's cached row, right-padded: log-probs per position."""
        torch = self._torch
        width = max(len(inputs) for _, _, inputs, _ in rest)
        index = torch.tensor([row for row, _, _, _ in rest])
        cache.batch_select_indices(index.to(self.device))
        ids = torch.full((len(rest), width), self.pad_id, dtype=torch.long)
        tail = torch.zeros((len(rest), width), dtype=torch.long)
        positions = torch.zeros((len(rest), width), dtype=torch.long)
        for slot, (row, _, inputs, _) in enumerate(rest):
            ids[slot, : len(inputs)] = torch.tensor(inputs)
            tail[slot, : len(inputs)] = 1
            first = len(self.prefix) + len(rows[row])
            positions[slot] = torch.arange(first, first + width)
        logits, _ = self._forward(ids, torch.cat([mask[index], tail], dim=1), positions, cache, width)
        self.tokens += sum(len(inputs) for _, _, inputs, _ in rest)
        self.padded_tokens += ids.numel()
        return torch.log_softmax(logits, dim=-1).cpu()

    def generate(self, contexts: Sequence[Sequence[int]], choose: Chooser, max_tokens: int, batch_size: int) -> None:
        """Feed each context's own tokens once, then the tokens ``choose`` picks, one step at a time."""
        order = sorted(range(len(contexts)), key=lambda i: len(contexts[i]))
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            width = max(len(contexts[i]) for i in batch) - len(self.prefix)
            groups = [[i] for i in batch] if self._needs_no_holes(width, max_tokens) else [batch]
            for group in groups:
                with self._torch.inference_mode():
                    self._generate(group, [contexts[i] for i in group], choose, max_tokens)

    def _generate(self, rows_of: Sequence[int], contexts: Sequence[Sequence[int]], choose: Chooser, steps: int) -> None:
        torch = self._torch
        logits, cache, mask = self._first_pass([context[len(self.prefix) :] for context in contexts], 1)
        done = [False] * len(contexts)
        for step in range(steps):
            fed = torch.full((len(contexts), 1), self.pad_id, dtype=torch.long)
            for slot, row in enumerate(rows_of):
                if not done[slot]:
                    token, done[slot] = choose(row, logits[slot, -1])
                    fed[slot, 0] = self.pad_id if token is None else token
            if all(done) or step == steps - 1:
                return
            mask = torch.cat([mask, torch.ones((len(contexts), 1), dtype=torch.long)], dim=1)
            positions = torch.tensor([[len(context) + step] for context in contexts])
            logits, cache = self._forward(fed, mask, positions, cache, 1)
            self.tokens += done.count(False)
            self.padded_tokens += len(contexts)
