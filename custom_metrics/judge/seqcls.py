"""A sequence-classification NLI model as judge (e.g. the IBE paper's RoBERTa-large NLI);
label order from the model's ``config.id2label``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from custom_metrics.common.position_limit import input_limit
from custom_metrics.judge.spec import JudgeSpec
from custom_metrics.judge.types import NLI_LABELS, Pair, Verdict, normalize_label, verdict_from_probs


def label_order(id2label: dict[Any, str], model: str) -> list[int]:
    """Class indices of entailment, neutral, contradiction, read from a config's id2label."""
    found = {normalize_label(str(name)): int(index) for index, name in id2label.items()}
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
        self.device, dtype = spec.device_and_dtype()
        self.batch_size = int(spec.options.get("batch_size", 16))
        self.tokenizer = AutoTokenizer.from_pretrained(spec.model)
        self.model = AutoModelForSequenceClassification.from_pretrained(spec.model, dtype=dtype).to(self.device).eval()
        self.order = label_order(self.model.config.id2label, spec.model)
        self.max_length = input_limit(self.model, self.tokenizer)
        self._torch = torch

    def judge(self, pairs: Sequence[Pair]) -> list[Verdict]:
        torch = self._torch
        verdicts: list[Verdict] = []
        for start in range(0, len(pairs), self.batch_size):
            batch = pairs[start : start + self.batch_size]
            encoded = self.tokenizer(
                [p for p, _ in batch],
                [h for _, h in batch],
                padding=True,
                truncation=self.max_length is not None,
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self.device)
            with torch.inference_mode():
                probs = torch.softmax(self.model(**encoded).logits.float(), dim=-1).cpu()
            verdicts += [verdict_from_probs([float(row[i]) for i in self.order]) for row in probs]
        return verdicts
