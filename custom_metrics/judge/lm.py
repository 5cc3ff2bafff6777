"""The prompted causal-LM judge: the REG paper's Appendix C.2 prompt, in one of two modes.

``loglik`` (the default here): the log-likelihood of the three label words, softmax over them,
as the harness scores a multiple-choice task (so ``reg_judge_select_loglik`` measures this
judge); nothing is parsed. ``generate`` (the paper's protocol): a sampled answer of a few
tokens, read by ``answer.parse_label``.

Both run on ``shared_kv.SharedKV`` when the model passes a probe against the full-sequence path
at load; otherwise, with ``share=no``, or for a pair that reaches a sliding window, each
(context, label) runs whole, as the harness runs them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from custom_metrics.judge.answer import answer_complete, parse_label
from custom_metrics.judge.prompt import LABEL_WORDS, nli_prompt
from custom_metrics.judge.shared_kv import Encoded, SharedKV, forward_options
from custom_metrics.judge.spec import JudgeSpec, Sampling
from custom_metrics.judge.types import JudgeError, Pair, Verdict, answer_verdict, verdict_from_scores

log = logging.getLogger(__name__)

# Pairs whose contexts differ right after the instruction in every way a tokenizer could
# merge across the boundary (letter, digit, quote); their common tokens are the prefix.
_PROBE_PAIRS = (
    ("A man is playing a guitar on stage.", "Someone is performing music."),
    ("12 people waited outside the museum.", "Nobody was waiting."),
    ('"Yes," she said, closing the door.', "She agreed."),
)
SHARED_TOLERANCE = 1e-4  # probe: largest label-probability difference accepted against full sequences


def next_token(logits: Any, sampling: Sampling, generator: Any) -> int:
    """The next token from one row of logits (vocabulary-sized); greedy at temperature 0. Temperature,
    top-k and top-p are transformers' own logits warpers, in the order ``generate`` applies them."""
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


class LMJudge:
    """Causal-LM judge: P(label word | C.2 prompt) renormalized over the three words, or a sampled word.

    Prompt and continuation are tokenized as lm-eval's HFLM does, so these log-likelihoods equal the
    harness' for the same model. Plain mode (no chat template, or chat=no) scores "\\n<Label>" after
    the prompt; chat mode renders the prompt as a user turn (thinking disabled where the template
    supports it) and scores "<Label>" as the answer.
    """

    def __init__(self, spec: JudgeSpec) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.name = spec.name
        self.mode = spec.mode
        self.sampling = spec.sampling
        self.device, dtype = spec.device_and_dtype()
        self.batch_size = int(spec.options.get("batch_size", 8))
        self.tokenizer = AutoTokenizer.from_pretrained(spec.model)
        self.model = AutoModelForCausalLM.from_pretrained(spec.model, dtype=dtype).to(self.device).eval()
        chat = spec.options.get("chat", "auto")
        has_template = bool(getattr(self.tokenizer, "chat_template", None))
        if chat == "yes" and not has_template:
            raise ValueError(f"judge {spec.name}: chat=yes, but the tokenizer of {spec.model} has no chat template")
        self.chat = has_template if chat == "auto" else chat == "yes"
        self.max_length = int(getattr(self.model.config, "max_position_embeddings", 0) or 4096)
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self.slices_logits = forward_options(self.model)[0]
        stop = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        self.stop_ids = {self.tokenizer.eos_token_id, *(stop if isinstance(stop, list) else [stop])} - {None}
        self._torch = torch
        self.full_tokens = 0
        self.shared = self._shared_kv() if spec.options.get("share", "auto") == "auto" else None
        self.full_tokens = 0  # tokens run on full sequences after loading (the shared path counts its own)

    def context(self, premise: str, hypothesis: str) -> str:
        prompt = nli_prompt(premise, hypothesis)
        if not self.chat:
            return prompt
        return self.tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True, enable_thinking=False
        )

    def continuations(self) -> list[str]:
        return list(LABEL_WORDS) if self.chat else ["\n" + word for word in LABEL_WORDS]

    def _encode(self, text: str) -> list[int]:
        bos = self.tokenizer.bos_token
        add_special = not (bos and text.startswith(bos))
        return self.tokenizer.encode(text, add_special_tokens=add_special)

    def encode_pair(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        context_ids, (cont_ids,) = self._encode_continuations(context, [continuation])
        return context_ids, cont_ids

    def _encode_continuations(self, context: str, continuations: Sequence[str]) -> Encoded:
        """The context's ids once and each continuation's ids: the rest of the encoded whole,
        with the context's trailing whitespace moved into the continuation, as HFLM does."""
        spaces = len(context) - len(context.rstrip())
        if spaces:
            context, continuations = context[:-spaces], [context[-spaces:] + cont for cont in continuations]
        context_ids = self._encode(context)
        return context_ids, [self._encode(context + cont)[len(context_ids) :] for cont in continuations]

    def encode_labels(self, premise: str, hypothesis: str) -> Encoded:
        """One pair's context ids and its three label continuations' ids, as both paths score them."""
        return self._encode_continuations(self.context(premise, hypothesis), self.continuations())

    def _shared_kv(self) -> SharedKV | None:
        """The shared-cache scorer, if this model gives the full-sequence path's verdicts through it."""
        probes = [self.encode_labels(p, h) for p, h in _PROBE_PAIRS]
        contexts = [context for context, _ in probes]
        common = next((i for i, tokens in enumerate(zip(*contexts)) if len(set(tokens)) > 1), min(map(len, contexts)))
        # one token short of the common prefix: a tokenizer may merge the last one with a pair's text
        prefix = contexts[0][: max(common - 1, 0)]
        if not prefix:
            return self._declined("the prompts share no token prefix")
        try:
            shared = SharedKV(self.model, prefix, self.pad_id, self.device, self.max_length)
            if not all(shared.covers(context, max(map(len, conts))) for context, conts in probes):
                limit = f"{shared.window}-token sliding window" if shared.window else f"{self.max_length} positions"
                return self._declined(f"the model's {limit} cannot hold the prompt and its labels")
            got = shared.label_logprobs(probes, self.batch_size)
        except Exception as err:  # any model the probe cannot run on keeps the full-sequence path
            return self._declined(f"shared KV cache unavailable ({err})")
        want = self.full_sequence_scores(probes)
        difference = max(
            abs(a - b)
            for got_row, want_row in zip(got, want)
            for a, b in zip(verdict_from_scores(got_row).probs.values(), verdict_from_scores(want_row).probs.values())
        )
        if difference > SHARED_TOLERANCE:
            return self._declined(f"shared KV cache differs from full sequences by {difference:.2e}")
        shared.tokens = shared.padded_tokens = 0  # the probe is part of loading
        return shared

    def _declined(self, reason: str) -> None:
        log.warning("judge %s: %s; judging on full sequences", self.name, reason)

    def loglikelihoods(self, requests: Sequence[tuple[str, str]]) -> list[float]:
        """The sum of continuation log-probs per (context, continuation), on full sequences, batched."""
        return self._full_loglikelihoods([self.encode_pair(context, cont) for context, cont in requests])

    def full_sequence_scores(self, items: Sequence[Encoded]) -> list[list[float]]:
        """The three label log-likelihoods per encoded pair, each (context, label) run whole."""
        flat = self._full_loglikelihoods([(context, cont) for context, conts in items for cont in conts])
        return [flat[3 * i : 3 * i + 3] for i in range(len(items))]

    def _full_loglikelihoods(self, encoded: Sequence[tuple[list[int], list[int]]]) -> list[float]:
        from torch.nn.utils.rnn import pad_sequence

        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i][0]) - len(encoded[i][1]))
        results = [0.0] * len(encoded)
        torch = self._torch
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            inputs, spans = [], []
            for index in batch:
                context_ids, cont_ids = encoded[index]
                ids = (context_ids + cont_ids)[-(self.max_length + 1) :][:-1]
                inputs.append(ids)
                spans.append((len(ids) - len(cont_ids), cont_ids))
            input_ids = pad_sequence([torch.tensor(ids) for ids in inputs], batch_first=True, padding_value=self.pad_id)
            mask = (torch.arange(input_ids.shape[1]) < torch.tensor([len(ids) for ids in inputs])[:, None]).long()
            self.full_tokens += sum(len(ids) for ids in inputs)
            # Only the continuation positions are read, so only their logits are computed:
            # projecting every position onto a 262k-word vocabulary was most of the cost.
            keep = sorted({p for first, cont_ids in spans for p in range(first, first + len(cont_ids))})
            column = {position: j for j, position in enumerate(keep)}
            extra = {"logits_to_keep": torch.tensor(keep, device=self.device)} if self.slices_logits else {}
            with torch.inference_mode():
                logits = self.model(
                    input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device), **extra
                ).logits
                logprobs = torch.log_softmax(logits.float(), dim=-1).cpu()
            for row, (index, (first, cont_ids)) in enumerate(zip(batch, spans)):
                # the input drops the last token, so position first+k predicts continuation token k
                span = range(first, first + len(cont_ids))
                positions = torch.tensor([column[p] for p in span] if self.slices_logits else list(span))
                target = torch.tensor(cont_ids)
                results[index] = float(logprobs[row, positions, target].sum())
        return results

    def _split(self, contexts: Sequence[Sequence[int]], longest: Sequence[int]) -> tuple[list[int], list[int]]:
        """The indices of the contexts the shared path covers (each with its longest continuation), and the rest."""
        covered = [i for i, c in enumerate(contexts) if self.shared is not None and self.shared.covers(c, longest[i])]
        return covered, sorted(set(range(len(contexts))) - set(covered))

    def label_scores(self, pairs: Sequence[Pair]) -> list[list[float]]:
        """The three label log-likelihoods per pair: shared path where it covers the pair, else full sequences."""
        items = [self.encode_labels(p, h) for p, h in pairs]
        covered, rest = self._split([context for context, _ in items], [max(map(len, conts)) for _, conts in items])
        scores: dict[int, list[float]] = {}
        with self._torch.inference_mode():
            if covered and self.shared is not None:
                scores = dict(zip(covered, self.shared.label_logprobs([items[i] for i in covered], self.batch_size)))
            scores |= zip(rest, self.full_sequence_scores([items[i] for i in rest]))
        return [scores[i] for i in range(len(items))]

    def judge(self, pairs: Sequence[Pair]) -> list[Verdict]:
        if self.mode == "generate":
            return [answer_verdict(parse_label(answer), answer, "generated") for answer in self.generate_answers(pairs)]
        verdicts = []
        for (premise, hypothesis), scores in zip(pairs, self.label_scores(pairs)):
            try:
                verdicts.append(verdict_from_scores(scores))
            except ValueError as err:
                raise JudgeError(
                    f"judge {self.name}: {err} for premise {premise[:60]!r}, hypothesis {hypothesis[:60]!r}; "
                    "the model's numbers overflowed or are broken (with float16/bfloat16, try dtype=float32)"
                ) from err
        return verdicts

    def generate_answers(self, pairs: Sequence[Pair]) -> list[str]:
        """Each pair's sampled answer, up to the end of its label line. Each pair has its own generator,
        seeded from (seed, premise, hypothesis), so its answer is the same whatever the batch, order,
        device or process."""
        contexts = [self._encode(self.context(p, h)) for p, h in pairs]
        generators = [self._torch.Generator(device="cpu").manual_seed(self.sampling.pair_seed(*pair)) for pair in pairs]
        tokens: list[list[int]] = [[] for _ in pairs]

        def choose(row: int, logits: Any) -> tuple[int | None, bool]:
            token = next_token(logits, self.sampling, generators[row])
            if token in self.stop_ids:
                return None, True
            tokens[row].append(token)
            return token, answer_complete(self.tokenizer.decode(tokens[row], skip_special_tokens=True))

        steps = self.sampling.max_tokens
        covered, rest = self._split(contexts, [steps] * len(contexts))
        with self._torch.inference_mode():
            if covered and self.shared is not None:
                chooser = lambda row, logits: choose(covered[row], logits)
                self.shared.generate([contexts[i] for i in covered], chooser, steps, self.batch_size)
            for i in rest:
                self._generate_full(contexts[i], lambda lg, i=i: choose(i, lg), steps)
        return [self.tokenizer.decode(row, skip_special_tokens=True) for row in tokens]

    def _generate_full(self, context: list[int], choose: Any, steps: int) -> None:
        """The full-sequence path for sampling: the whole sequence again at each step (no cache)."""
        torch = self._torch
        ids = list(context)[-self.max_length :]
        for _ in range(steps):
            extra = {"logits_to_keep": 1} if self.slices_logits else {}
            logits = self.model(input_ids=torch.tensor([ids], device=self.device), use_cache=False, **extra).logits
            self.full_tokens += len(ids)
            token, done = choose(logits[0, -1])
            if token is None or done:
                return
            ids = [*ids, token][-self.max_length :]
