"""The prompted causal-LM judge: the REG paper's Appendix C.2 prompt, scored by the
log-likelihood of the three label words (softmax over them), exactly as the harness
scores a multiple-choice task, so ``reg_judge_select`` measures the judge that
``reg_chaos`` uses. No free text is parsed.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from custom_metrics.judge.options import batch_size, device_and_dtype
from custom_metrics.judge.prompt import LABEL_WORDS, nli_prompt
from custom_metrics.judge.spec import JudgeSpec
from custom_metrics.judge.types import Pair, Verdict, verdict_from_scores


class LMJudge:
    """Causal-LM judge: P(label word | C.2 prompt), renormalized over the three words.

    Prompt and continuation are tokenized the way lm-eval's HFLM does it (context encoded
    alone, continuation = the rest of the encoded whole, BOS added unless the text starts
    with it), so these log-likelihoods equal the harness' for the same model. Plain mode
    (models without a chat template, or chat=no) scores "\\n<Label>" after the prompt;
    chat mode renders the prompt as a user turn with the generation prompt (thinking
    disabled where the template supports it) and scores "<Label>" as the answer.
    """

    def __init__(self, spec: JudgeSpec) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.name = spec.name
        self.device, dtype = device_and_dtype(spec)
        self.batch_size = batch_size(spec, 8)
        self.tokenizer = AutoTokenizer.from_pretrained(spec.model)
        self.model = AutoModelForCausalLM.from_pretrained(spec.model, dtype=dtype).to(self.device).eval()
        chat = spec.options.get("chat", "auto")
        if chat not in ("auto", "yes", "no"):
            raise ValueError(f"judge {spec.name}: chat must be auto, yes or no, got {chat!r}")
        has_template = bool(getattr(self.tokenizer, "chat_template", None))
        if chat == "yes" and not has_template:
            raise ValueError(f"judge {spec.name}: chat=yes, but the tokenizer of {spec.model} has no chat template")
        self.chat = has_template if chat == "auto" else chat == "yes"
        self.max_length = int(getattr(self.model.config, "max_position_embeddings", 0) or 4096)
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self.slices_logits = "logits_to_keep" in inspect.signature(self.model.forward).parameters
        self._torch = torch

    def context(self, premise: str, hypothesis: str) -> str:
        prompt = nli_prompt(premise, hypothesis)
        if not self.chat:
            return prompt
        messages = [{"role": "user", "content": prompt}]
        return self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True, enable_thinking=False
        )

    def continuations(self) -> list[str]:
        return list(LABEL_WORDS) if self.chat else ["\n" + word for word in LABEL_WORDS]

    def _encode(self, text: str) -> list[int]:
        bos = self.tokenizer.bos_token
        add_special = not (bos and text.startswith(bos))
        return self.tokenizer.encode(text, add_special_tokens=add_special)

    def encode_pair(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        spaces = len(context) - len(context.rstrip())
        if spaces:
            context, continuation = context[:-spaces], context[-spaces:] + continuation
        whole = self._encode(context + continuation)
        context_ids = self._encode(context)
        return context_ids, whole[len(context_ids) :]

    def loglikelihoods(self, requests: Sequence[tuple[str, str]]) -> list[float]:
        """Sum of continuation token log-probs for each (context, continuation), batched."""
        encoded = [self.encode_pair(context, cont) for context, cont in requests]
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
            width = max(len(ids) for ids in inputs)
            input_ids = torch.full((len(inputs), width), self.pad_id, dtype=torch.long)
            mask = torch.zeros((len(inputs), width), dtype=torch.long)
            for row, ids in enumerate(inputs):
                input_ids[row, : len(ids)] = torch.tensor(ids)
                mask[row, : len(ids)] = 1
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
                # the input drops the last token, so position first+k predicts
                # continuation token k
                span = range(first, first + len(cont_ids))
                positions = torch.tensor([column[p] for p in span] if self.slices_logits else list(span))
                target = torch.tensor(cont_ids)
                results[index] = float(logprobs[row, positions, target].sum())
        return results

    def judge(self, pairs: Sequence[Pair]) -> list[Verdict]:
        conts = self.continuations()
        requests = [(self.context(p, h), cont) for p, h in pairs for cont in conts]
        scores = self.loglikelihoods(requests)
        return [verdict_from_scores(scores[i * 3 : i * 3 + 3]) for i in range(len(pairs))]
