"""An API reasoning model's output lengths, from its responses' ``usage``: its trace stays on
the server, so the counts it reports are the only lengths there are, checked before use.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from custom_metrics.reg.outputs import CUT_OFF, Output

log = logging.getLogger(__name__)

# Tokens an API may report past the budget it was sent (an end-of-turn token counted):
# anything further is no count of this answer.
USAGE_SLACK_TOKENS = 16


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def usage_problem(completion: Any, reasoning: Any, budget: int) -> str:
    """Why a response's token counts cannot be its answer's ("" when they can): whole numbers
    (a boolean is none), 0 <= reasoning <= completion <= the budget sent (and a little slack).
    A response without counts has no problem: its lengths are simply not known."""
    if completion is None and reasoning is None:
        return ""
    for name, value in (("completion_tokens", completion), ("reasoning_tokens", reasoning)):
        if value is not None and not _whole(value):
            return f"{name} is {value!r}, not a whole number of tokens"
    if completion is None:
        return f"reasoning_tokens is {reasoning!r} without completion_tokens"
    if completion < 0 or (reasoning is not None and reasoning < 0):
        return f"a negative token count (completion_tokens {completion!r}, reasoning_tokens {reasoning!r})"
    if reasoning is not None and reasoning > completion:
        return f"reasoning_tokens {reasoning} is more than completion_tokens {completion}, which include them"
    if completion > budget + USAGE_SLACK_TOKENS:
        return f"completion_tokens {completion} is past the budget of {budget} tokens the request was sent"
    return ""


def usage_lengths(output: Output, response: Any, budget: int) -> Output:
    """An API reasoning model's output, its lengths from the response's ``usage`` when they can be
    this answer's (``usage_problem``). An answer the budget stopped (``finish_reason`` "length") is
    cut off, as a trace cut off in the other modes, and not judged."""
    usage = getattr(response, "usage", None)
    usage = usage if isinstance(usage, Mapping) else {}
    details = usage.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, Mapping) else None
    completion = usage.get("completion_tokens")
    problem = usage_problem(completion, reasoning, budget)
    if getattr(response, "finish_reason", None) == "length":
        output = replace(output, flag=CUT_OFF, explanation="")
    return replace(
        output,
        output_tokens=completion if _whole(completion) and not problem else None,
        thinking_tokens=reasoning if _whole(reasoning) and not problem else None,
        usage_problem=problem,
        generation_error=getattr(response, "failure", "") or "",  # api_model.APIAnswer: refused, so empty and flagged
    )


def warn_on_usage(outputs: Sequence[Output]) -> None:
    """Responses whose token counts cannot be: say how many and why, once."""
    flagged = [out.usage_problem for out in outputs if out.usage_problem]
    if flagged:
        log.warning(
            "REG: %d of %d responses reported token usage that cannot be their answer's (%s); their lengths are "
            "left out of output_tokens and thinking_tokens, and each such row's usage_problem says why.",
            len(flagged),
            len(outputs),
            "; ".join(sorted(set(flagged))[:3]),
        )
