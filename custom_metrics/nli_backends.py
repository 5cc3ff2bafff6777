"""The three NLI judge backends behind ``nli_judge.build_judge``.

- ``LMJudge``: a causal LM prompted with the REG paper's Appendix C.2 prompt; the verdict
  compares the log-likelihoods of the three label words (softmax over them), exactly as
  the harness scores a multiple-choice task, so ``reg_judge_select`` measures the judge
  that ``reg_chaos`` uses. No free text is parsed.
- ``SeqClsJudge``: a sequence-classification NLI model; label order from config.id2label.
- ``OpenAIJudge``: an OpenAI-compatible chat endpoint (e.g. vLLM) for judges too large to
  load beside the evaluated model; probabilities from the first answer token's logprobs.

Each backend judges a whole list of pairs in padded batches (CUDA when present) and is
wrapped by ``nli_judge.CachedJudge``, which handles caching.
"""

from __future__ import annotations

import inspect

import json
import logging
import math
import os
import re
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

from custom_metrics.nli_judge import (
    LABEL_WORDS,
    NLI_LABELS,
    JudgeSpec,
    Verdict,
    nli_prompt,
    normalize_label,
    verdict_from_probs,
    verdict_from_scores,
)

log = logging.getLogger(__name__)

Pair = tuple[str, str]


def _device_and_dtype(spec: JudgeSpec) -> tuple[Any, Any]:
    import torch

    device = torch.device(spec.options.get("device") or ("cuda" if torch.cuda.is_available() else "cpu"))
    name = spec.options.get("dtype") or ("bfloat16" if device.type == "cuda" else "float32")
    if not hasattr(torch, name) or not isinstance(getattr(torch, name), torch.dtype):
        raise ValueError(f"judge {spec.name}: unknown dtype {name!r} (e.g. float32, bfloat16, float16)")
    return device, getattr(torch, name)


def _batch_size(spec: JudgeSpec, default: int) -> int:
    value = spec.options.get("batch_size", str(default))
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"judge {spec.name}: batch_size must be a positive integer, got {value!r}")
    return int(value)


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
        self.device, dtype = _device_and_dtype(spec)
        self.batch_size = _batch_size(spec, 8)
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
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, enable_thinking=False)

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
                logits = self.model(input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device), **extra).logits
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


def label_order(id2label: dict[Any, str], model: str) -> list[int]:
    """Class indices of entailment, neutral, contradiction, read from a config's id2label."""
    found: dict[str, int] = {}
    for index, name in id2label.items():
        label = normalize_label(str(name))
        if label is not None:
            found[label] = int(index)
    if set(found) != set(NLI_LABELS) or len(id2label) != 3:
        raise ValueError(
            f"{model}: config.id2label {dict(id2label)} does not name exactly entailment, neutral "
            "and contradiction; the seqcls judge needs a 3-way NLI classifier whose config names its labels."
        )
    return [found[label] for label in NLI_LABELS]


class SeqClsJudge:
    """Sequence-classification NLI model (premise, hypothesis) -> softmax over its 3 classes."""

    def __init__(self, spec: JudgeSpec) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.name = spec.name
        self.device, dtype = _device_and_dtype(spec)
        self.batch_size = _batch_size(spec, 16)
        self.tokenizer = AutoTokenizer.from_pretrained(spec.model)
        self.model = AutoModelForSequenceClassification.from_pretrained(spec.model, dtype=dtype).to(self.device).eval()
        self.order = label_order(self.model.config.id2label, spec.model)
        self._torch = torch

    def judge(self, pairs: Sequence[Pair]) -> list[Verdict]:
        torch = self._torch
        verdicts: list[Verdict] = []
        for start in range(0, len(pairs), self.batch_size):
            batch = pairs[start : start + self.batch_size]
            encoded = self.tokenizer(
                [p for p, _ in batch], [h for _, h in batch], padding=True, truncation=True, return_tensors="pt"
            ).to(self.device)
            with torch.inference_mode():
                probs = torch.softmax(self.model(**encoded).logits.float(), dim=-1).cpu()
            verdicts += [verdict_from_probs([float(row[i]) for i in self.order]) for row in probs]
        return verdicts


class OpenAIJudge:
    """An OpenAI-compatible chat endpoint judged through the logprobs of its first answer token.

    The label is read from the first answer position whose token has letters (so a
    leading "**" or space does not hide it): each top-logprob token that begins a label
    word ("Ent", "Contr", "neutral") adds its probability to that label, and the three are
    renormalized. A server that returns no logprobs is handled by parsing the answer text
    (method "text"); an answer naming no label gives method "unparsed" (see Verdict).
    The API key is read from the environment at call time and never stored or logged.
    """

    def __init__(self, spec: JudgeSpec) -> None:
        self.name = spec.name
        self.model = spec.model
        self.url = f"{spec.base_url}/chat/completions"
        self.concurrency = int(spec.options.get("concurrency", "8"))
        self.top_logprobs = int(spec.options.get("top_logprobs", "20"))
        self.key_env = spec.options.get("key_env", "OPENAI_API_KEY")
        self.thinking_off = spec.options.get("thinking") == "off"
        self.retries = 4

    def _payload(self, premise: str, hypothesis: str) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": nli_prompt(premise, hypothesis)}],
            "temperature": 0,
            "max_tokens": 5,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
        }
        if self.thinking_off:
            payload["chat_template_kwargs"] = {"enable_thinking": False}
        return payload

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.key_env, "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body = json.dumps(payload).encode()
        for attempt in range(self.retries):
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=300) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as err:
                retriable = err.code == 429 or err.code >= 500
                if not retriable or attempt == self.retries - 1:
                    detail = err.read()[:500].decode(errors="replace")
                    raise RuntimeError(f"judge {self.name}: HTTP {err.code} from {self.url}: {detail}") from err
            except urllib.error.URLError as err:
                if attempt == self.retries - 1:
                    raise RuntimeError(f"judge {self.name}: cannot reach {self.url} ({err.reason})") from err
            time.sleep(2**attempt)
        raise AssertionError("unreachable")

    def _verdict(self, response: dict[str, Any]) -> Verdict:
        choice = response["choices"][0]
        positions = ((choice.get("logprobs") or {}).get("content")) or []
        for position in positions:
            if not re.search(r"[A-Za-z]", position.get("token", "")):
                continue
            mass = dict.fromkeys(NLI_LABELS, 0.0)
            for candidate in position.get("top_logprobs") or [{"token": position["token"], "logprob": position["logprob"]}]:
                label = label_for_prefix(candidate["token"])
                if label is not None:
                    mass[label] += math.exp(candidate["logprob"])
            if sum(mass.values()) > 0:
                return verdict_from_probs([mass[label] for label in NLI_LABELS])
            break
        text = (choice.get("message") or {}).get("content") or ""
        for word in re.findall(r"[A-Za-z]+", text):
            label = normalize_label(word)
            if label is not None:
                return Verdict(label, {l: float(l == label) for l in NLI_LABELS}, method="text")
        log.warning("judge %s: answer %r names no NLI label; verdict marked 'unparsed'", self.name, text[:80])
        return Verdict("neutral", dict.fromkeys(NLI_LABELS, 1 / 3), method="unparsed")

    def judge(self, pairs: Sequence[Pair]) -> list[Verdict]:
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            responses = list(pool.map(lambda pair: self._post(self._payload(*pair)), pairs))
        return [self._verdict(response) for response in responses]


def label_for_prefix(token: str) -> str | None:
    """The label whose word starts with this token's letters ("Ent" -> entailment), if any."""
    letters = re.sub(r"[^a-z]", "", token.lower())
    if not letters:
        return None
    matches = [label for label in NLI_LABELS if label.startswith(letters) or letters.startswith(label)]
    return matches[0] if len(matches) == 1 else None
