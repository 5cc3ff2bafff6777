"""A generated REG output split into its thinking trace and its explanation.

An output that holds no explanation is flagged, never judged: ``cut_off`` when the trace never
ended (the budget ran out while thinking), ``no_explanation`` when nothing followed it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from custom_metrics.judge.traces import split_traces

CUT_OFF = "cut_off"
NO_EXPLANATION = "no_explanation"
FLAGS = (CUT_OFF, NO_EXPLANATION)


@dataclass(frozen=True)
class Output:
    raw: str
    explanation: str
    thinking: str
    flag: str  # "" (usable), CUT_OFF or NO_EXPLANATION
    thinking_mode: bool = False
    closed_trace: bool = False  # a trace ended inside the output (a closing marker was seen)
    output_tokens: int | None = None  # the whole output, trace included, in the generator's tokens
    thinking_tokens: int | None = None  # the trace alone
    # Why an API's reported token counts cannot be (``generation.usage_problem``): the lengths
    # are then left empty and out of the run's means, and the samples file says why.
    usage_problem: str = ""
    # Why an API refused to give this output (an answer over its size bound): the generation
    # failed, so the output is empty and flagged ``no_explanation``, and the run goes on.
    generation_error: str = ""

    def length_fields(self) -> dict[str, Any]:
        """What the judged record logs about the output: the mode, its lengths (tokens are those
        of the tokenizer named by the run, ``tokens.count_tokens``) and why it failed, if it did."""
        return {
            "mode": "thinking" if self.thinking_mode else "non-thinking",
            "output_chars": len(self.raw),
            "output_words": len(self.raw.split()),
            "output_tokens": self.output_tokens,
            "thinking_chars": len(self.thinking),
            "thinking_words": len(self.thinking.split()),
            "thinking_tokens": self.thinking_tokens,
            "usage_problem": self.usage_problem,
            "generation_error": self.generation_error,
        }


def split_output(raw: str, thinking_mode: bool = False) -> Output:
    """Strip thinking traces (``judge.traces.split_traces``) before the explanation is judged. In
    thinking mode an output in which no trace ended is a trace cut off by the token budget (its
    opening tag was in the prompt), not an explanation: judging it would score the model's
    thoughts. An empty output is ``no_explanation`` in either mode."""
    raw = raw if isinstance(raw, str) else ""
    traces = split_traces(raw)
    rest, thinking, closed = traces.rest, list(traces.thinking), traces.closed
    flag = CUT_OFF if traces.unclosed else ""
    if thinking_mode and not closed and not flag and raw.strip():
        thinking, rest, flag = [raw.strip()], "", CUT_OFF
    explanation = " ".join(rest.split())
    if not explanation and not flag:
        flag = NO_EXPLANATION
    return Output(
        raw=raw,
        explanation=explanation if not flag else "",
        thinking="\n".join(t for t in thinking if t),
        flag=flag,
        thinking_mode=thinking_mode,
        closed_trace=closed,
    )


def combine(premise: str, explanation: str) -> str:
    """p;e of the paper: the explanation appended to the premise as its continuation."""
    return f"{premise.rstrip()} {explanation.strip()}"
