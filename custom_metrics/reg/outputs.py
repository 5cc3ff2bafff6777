"""A generated REG output split into its thinking trace and its explanation."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Output:
    """A generation split into its thinking trace and its answer (the explanation)."""

    raw: str
    explanation: str
    thinking: str
    flag: str  # "" (usable), "empty" or "unclosed_thinking" (the trace never ended)


_THINK_BLOCK = re.compile(r"<think>(.*?)</think>", flags=re.DOTALL)


def split_output(raw: str) -> Output:
    """Strip thinking traces, as produced in thinking mode, before the explanation is judged.

    Handles ``<think>...</think>`` blocks, a trace whose opening tag sat in the prompt
    (Qwen-style templates: only ``</think>`` appears) and a trace cut off by the token
    limit (``<think>`` never closed: no explanation, flagged).
    """
    raw = raw if isinstance(raw, str) else ""
    thinking = [match.group(1) for match in _THINK_BLOCK.finditer(raw)]
    rest = _THINK_BLOCK.sub("", raw)
    if "</think>" in rest:  # opening tag was part of the prompt
        before, _, rest = rest.rpartition("</think>")
        thinking.insert(0, before)
    flag = ""
    if "<think>" in rest:
        rest, _, unclosed = rest.partition("<think>")
        thinking.append(unclosed)
        flag = "unclosed_thinking"
    explanation = " ".join(rest.split())
    if not explanation and not flag:
        flag = "empty"
    return Output(
        raw=raw, explanation=explanation if not flag else "", thinking="\n".join(t.strip() for t in thinking), flag=flag
    )


def combine(premise: str, explanation: str) -> str:
    """p;e of the paper: the explanation appended to the premise as its continuation."""
    return f"{premise.rstrip()} {explanation.strip()}"
