"""``hf-prefix``: lm-eval's HF model (``HFLM``) with each distinct context of a log-likelihood run computed once.

``HFLM`` scores every (context, continuation) request as its own sequence, so a question with
multi-token options runs its context once per option, and computes the vocabulary logits at
every context position although only the continuation's are read. This subclass (``HFLM``'s
arguments, batching and data parallel) groups the requests by the context tokens ``HFLM`` would
feed, runs a batch of distinct contexts once (left-padded, keeping only the last position's
logits and the KV cache), then runs every multi-token continuation but its last token on that
cache, expanded to one row per continuation, in passes holding at most the rows of ``HFLM``'s
own batch (``--batch_size`` sequences), so memory stays flat however many options share a context.

Tokens, positions, truncation, log-softmax, greedy check, autocast and cache hook are ``HFLM``'s
(a left-truncated request shares its cache only with requests truncated alike); results equal
its own to float rounding (tests pin |Δ| <= 1e-4 in float32 on every log-likelihood task kind).

Where it helps: options behind a shared, long context (GEESE's " UNKNOWN", ``ibe_judge_*``'s
" explanation 1"); with one-token options (RULE's digits, GEESE's " YES") what is saved is the
projection and log-softmax of every context position, most of a pass for a small model with a
large vocabulary (gemma's 262k words). Rolling log-likelihoods, empty contexts and seq2seq
models go to ``HFLM`` unchanged, as does generation.

Registered by the suite's entry to lm-eval's CLI: ``explain-eval lm-eval --model hf-prefix
--model_args pretrained=...``; from Python, pass ``PrefixHFLM(pretrained=...)`` to ``simple_evaluate``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from lm_eval.api.registry import register_model
from lm_eval.models.huggingface import HFLM
from tqdm import tqdm

from custom_metrics.judge.shared_kv import cache_of, copy_cache, forward_options

MODEL_NAME = "hf-prefix"
# A request as HFLM._loglikelihood_tokens takes it: ((context, continuation) or None, context ids, continuation ids).
Request = tuple[Any, list[int], list[int]]
# A continuation to score: (slot of its context in the batch, request index, continuation ids).
Row = tuple[int, int, list[int]]


@dataclass
class Group:
    """The requests that feed one context: its tokens and (request index, continuation ids) per request."""

    context: list[int]
    members: list[tuple[int, list[int]]] = field(default_factory=list)


@dataclass
class TokenCounts:
    """Tokens run through the model: ``contexts`` (each distinct context once), ``continuations``
    (each continuation's tokens but its last, which nothing reads) and ``positions`` (padding included)."""

    contexts: int = 0
    continuations: int = 0
    positions: int = 0


class EmptyOption(ValueError):
    """A request whose continuation adds no token to its context: ``HFLM`` would score it 0.0 and
    greedy, so an option that tokenizes to nothing would win every question it is in."""

    def __init__(self, strings: tuple[str, str]) -> None:
        self.strings = strings
        context, option = strings
        super().__init__(
            f"{MODEL_NAME}: the option {option!r} adds no token to the context ending {context[-60:]!r}; "
            "it would score 0 and win: fix the task's choices"
        )


def group_by_context(requests: Sequence[Request], indices: Sequence[int], max_length: int) -> list[Group]:
    """The distinct contexts ``HFLM`` would feed, in first-seen order, each with its requests: the
    input ``(context + continuation)[-(max_length + 1):][:-1]`` without ``continuation[:-1]``."""
    groups: dict[tuple[int, ...], Group] = {}
    for index in indices:
        _, context, continuation = requests[index]
        assert len(context) > 0 and len(continuation) <= max_length  # HFLM's checks (empty options: refused before)
        fed = (context + continuation)[-(max_length + 1) :][:-1]
        key = tuple(fed[: len(fed) - len(continuation) + 1])
        groups.setdefault(key, Group(list(key))).members.append((index, continuation))
    return list(groups.values())


def batches(groups: Sequence[Group], size: int) -> Iterator[list[Group]]:
    """Groups longest context first (as HFLM orders requests: a memory error shows at once), ``size`` at a time."""
    ordered = sorted(groups, key=lambda group: -len(group.context))
    for start in range(0, len(ordered), size):
        yield ordered[start : start + size]


def chunks(rows: list[Row], width: int, size: int) -> Iterator[list[Row]]:
    """Continuation rows (slot, request, ids) of two tokens or more, longest first, in passes whose
    KV caches hold at most the positions of ``HFLM``'s own batch of ``size`` of them (one row at least)."""
    ordered = sorted(rows, key=lambda row: -len(row[2]))
    budget = size * (width + len(ordered[0][2]) - 1) if ordered else 0
    chunk: list[Row] = []
    for row in ordered:
        if chunk and (len(chunk) + 1) * (width + len(chunk[0][2]) - 1) > budget:
            yield chunk
            chunk = []
        chunk.append(row)
    if chunk:
        yield chunk


@register_model(MODEL_NAME)
class PrefixHFLM(HFLM):
    """``HFLM`` whose log-likelihood requests run each distinct context once (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.token_counts = TokenCounts()
        if self.backend != "causal":
            return
        cache = cache_of(self._forward(input_ids=torch.tensor([[self._pad_id()]])))
        if not hasattr(cache, "batch_select_indices"):  # refused before any request
            raise ValueError(
                f"{MODEL_NAME}: {type(self.model).__name__} returns no KV cache that can be expanded along the "
                f"batch ({type(cache).__name__}); run it with --model hf"
            )

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        """``HFLM``'s, with a request whose option adds no token refused in one line naming it."""
        try:
            return super().loglikelihood(requests, disable_tqdm=disable_tqdm)
        except EmptyOption as empty:
            named = next((r for r in requests if tuple(r.args) == empty.strings), None)
            if named is None:
                raise
            raise ValueError(f"task {named.task_name}, document {named.doc_id}: {empty}") from None

    def _loglikelihood_tokens(
        self, requests: list[Request], disable_tqdm: bool = False, override_bs: int | None = None
    ) -> list[tuple[float, bool]]:
        for strings, _, continuation in requests:  # rolling windows aside
            if strings is not None and not continuation:
                raise EmptyOption(tuple(strings))
        causal = self.backend == "causal"
        # a context of its own text (not a rolling window, not an empty context)
        shared = [i for i, (strings, _, _) in enumerate(requests) if causal and strings and strings[0]]
        rest = sorted(set(range(len(requests))) - set(shared))
        results: list[tuple[float, bool] | None] = [None] * len(requests)
        if rest:  # rolling windows, empty contexts, seq2seq: HFLM's own path
            answers = super()._loglikelihood_tokens([requests[i] for i in rest], disable_tqdm, override_bs)
            for index, answer in zip(rest, answers, strict=True):
                results[index] = answer
        if shared:
            groups = group_by_context(requests, shared, self.max_length)
            progress = tqdm(
                total=len(shared), disable=disable_tqdm or self.rank != 0, desc="Running loglikelihood requests"
            )
            size = self._contexts_per_batch(override_bs, [requests[i] for i in shared])
            for batch in batches(groups, size):
                for index, answer in self._score_batch(batch, size):
                    results[index] = answer
                    self.cache_hook.add_partial("loglikelihood", requests[index][0], answer)
                    progress.update(1)
            progress.close()
        return [answer for answer in results if answer is not None]

    def _contexts_per_batch(self, override_bs: int | None, requests: list[Request]) -> int:
        """``--batch_size``: distinct contexts per forward pass; ``auto``: HFLM's detection on the
        longest request, which needs more memory than a batch of contexts here, so it fits."""
        if self.batch_size != "auto":
            return int(self.batch_size)
        if override_bs:
            return override_bs
        longest = max(range(len(requests)), key=lambda i: len(requests[i][1]) + len(requests[i][2]))
        return self._detect_batch_size(requests, longest)

    def _forward(self, **inputs: Any) -> Any:
        with (
            torch.no_grad(),
            torch.autocast(
                device_type=self.device.type,
                dtype=self.mixed_precision_dtype,
                enabled=self.mixed_precision_dtype is not None,
            ),
        ):
            moved = {key: value.to(self.device) if torch.is_tensor(value) else value for key, value in inputs.items()}
            return self.model(**moved, use_cache=True)

    def _score_batch(self, batch: Sequence[Group], size: int) -> Iterator[tuple[int, tuple[float, bool]]]:
        """Each context once (left-padded), then every continuation of the batch on its cache."""
        slices_logits, cache_arg = forward_options(self.model)
        width = max(len(group.context) for group in batch)
        ids = torch.full((len(batch), width), self._pad_id(), dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, group in enumerate(batch):
            ids[row, width - len(group.context) :] = torch.tensor(group.context)
            mask[row, width - len(group.context) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        out = self._forward(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            **({"logits_to_keep": 1} if slices_logits else {}),
        )
        first = F.log_softmax(out.logits[:, -1], dim=-1, dtype=self.softmax_dtype)  # scores each first token
        cache = cache_of(out)
        self.token_counts.contexts += int(mask.sum())
        self.token_counts.positions += ids.numel()
        rows = [(slot, index, cont) for slot, group in enumerate(batch) for index, cont in group.members]
        for slot, index, cont in rows:
            if len(cont) == 1:
                yield index, self._answer(first[slot : slot + 1], cont)
        for chunk in chunks([row for row in rows if len(row[2]) > 1], width, size):
            yield from self._score_continuations(chunk, first, cache, mask, cache_arg)

    def _score_continuations(
        self, chunk: list[Row], first: Any, cache: Any, context_mask: Any, cache_arg: str
    ) -> Iterator[tuple[int, tuple[float, bool]]]:
        """(request index, answer) for each continuation of two tokens or more, in one pass on the
        rows of the cache its chunk selects."""
        slots = torch.tensor([slot for slot, _, _ in chunk])
        span = len(chunk[0][2]) - 1  # the longest: chunks come longest first
        ids = torch.full((len(chunk), span), self._pad_id(), dtype=torch.long)
        own = torch.zeros((len(chunk), span), dtype=torch.long)
        for row, (_, _, cont) in enumerate(chunk):
            ids[row, : len(cont) - 1] = torch.tensor(cont[:-1])
            own[row, : len(cont) - 1] = 1
        rows_cache = copy_cache(cache)
        rows_cache.batch_select_indices(slots.to(self.device))
        starts = context_mask[slots].sum(-1, keepdim=True)
        out = self._forward(
            input_ids=ids,
            attention_mask=torch.cat([context_mask[slots], own], dim=1),
            position_ids=starts + torch.arange(span),
            **{cache_arg: rows_cache},
        )
        rest = F.log_softmax(out.logits, dim=-1, dtype=self.softmax_dtype)
        self.token_counts.continuations += int(own.sum())
        self.token_counts.positions += ids.numel()
        for row, (slot, index, cont) in enumerate(chunk):
            yield index, self._answer(torch.cat([first[slot : slot + 1], rest[row, : len(cont) - 1]]), cont)

    @staticmethod
    def _answer(logprobs: Any, cont: list[int]) -> tuple[float, bool]:
        """``HFLM``'s answer from the log-probs that score each token of ``cont``: (sum, greedy)."""
        tokens = torch.tensor(cont, device=logprobs.device)
        greedy = bool((logprobs.argmax(dim=-1) == tokens).all())
        return float(logprobs.gather(1, tokens[:, None]).sum()), greedy

    def _pad_id(self) -> int:
        """Padding ids are masked out; any valid id does."""
        pad = self.tokenizer.pad_token_id
        return int(pad if pad is not None else self.eot_token_id)
