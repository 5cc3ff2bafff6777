"""REG as a reinforcement-learning reward (paper section 7.1, Table 4).

Unlike the evaluation metrics, the reward is graded: an explanation that contradicts the
premise, or whose combination with the premise contradicts the hypothesis, is punished
(-1); coherence is rewarded only together with effectiveness (0.5 when the premise and
explanation are merely compatible, 1 when the premise entails the explanation).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from custom_metrics.judge.build import build_judge
from custom_metrics.judge.types import NLI_LABELS, NLIJudge
from custom_metrics.reg.outputs import combine, split_output
from custom_metrics.reg.prompts import generation_prompt

# Table 4: rows = coherence M_NLI(p, e), columns = effectiveness M_NLI(p;e, h).
REWARD_MATRIX: dict[tuple[str, str], float] = {
    ("contradiction", "contradiction"): -1.0,
    ("contradiction", "neutral"): -1.0,
    ("contradiction", "entailment"): -1.0,
    ("neutral", "contradiction"): -1.0,
    ("neutral", "neutral"): 0.0,
    ("neutral", "entailment"): 0.5,
    ("entailment", "contradiction"): -1.0,
    ("entailment", "neutral"): 0.0,
    ("entailment", "entailment"): 1.0,
}
# A completion with no explanation (empty, or a thinking trace that never closed): p;e is
# then just p, which the judge called a contradiction of h, so it gets the -1 of that cell.
NO_EXPLANATION_REWARD = -1.0


def reg_reward(coherence_label: str, effectiveness_label: str) -> float:
    """Table 4's reward for the judge's labels of (p, e) and (p;e, h)."""
    for label in (coherence_label, effectiveness_label):
        if label not in NLI_LABELS:
            raise ValueError(f"reg_reward: {label!r} is not one of {NLI_LABELS}")
    return REWARD_MATRIX[(coherence_label, effectiveness_label)]


def completion_text(completion: Any) -> str:
    """TRL passes plain strings, or for conversational data a list of messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(message.get("content") or "" for message in completion if isinstance(message, dict))
    return ""


class REGReward:
    """A reward function in the form TRL's GRPOTrainer calls: (prompts, completions, **columns),
    the columns holding ``premise`` and ``hypothesis``; a step's completions are judged in one batch."""

    __name__ = "reg_reward"  # TRL logs rewards under the function's name

    def __init__(self, judge: NLIJudge | str | None = None) -> None:
        self.judge = judge if judge is not None and not isinstance(judge, str) else build_judge(judge)

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> list[float]:
        premises, hypotheses = columns.get("premise"), columns.get("hypothesis")
        if premises is None or hypotheses is None or not len(premises) == len(hypotheses) == len(completions):
            raise ValueError("reg_reward needs 'premise' and 'hypothesis' columns aligned with the completions")
        outputs = [split_output(completion_text(completion)) for completion in completions]
        usable = [i for i, out in enumerate(outputs) if not out.flag]
        pairs = []
        for i in usable:
            pairs += [
                (premises[i], outputs[i].explanation),
                (combine(premises[i], outputs[i].explanation), hypotheses[i]),
            ]
        verdicts = self.judge.judge(pairs)
        rewards = [NO_EXPLANATION_REWARD] * len(completions)
        for k, i in enumerate(usable):
            rewards[i] = reg_reward(verdicts[2 * k].label, verdicts[2 * k + 1].label)
        return rewards


def training_rows(docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """GRPO dataset rows for REG docs: the Appendix C.1 prompt as a user turn plus the columns the reward needs."""
    return [
        {
            "prompt": [{"role": "user", "content": generation_prompt(doc)}],
            "premise": doc["premise"],
            "hypothesis": doc["hypothesis"],
            "uid": doc["uid"],
        }
        for doc in docs
    ]
