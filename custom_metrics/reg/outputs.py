"""A generated REG output split into its thinking trace and its explanation."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Output:
    """A generation split into its thinking trace and its answer (the explanation)."""

    raw: str
    explanation: str
    thinking: str
    flag: str  # "" (usable), "empty" or "unclosed_thinking" (the trace never ended)


OPEN, CLOSE = "<think>", "</think>"


def _think_blocks(raw: str) -> tuple[list[str], str]:
    """The closed ``<think>...</think>`` blocks (each opening tag with the next closing one)
    and the text outside them.

    A scan with ``str.find``, not the lazy pattern ``<think>(.*?)</think>``: that one
    searches to the end of the text again for every unclosed ``<think>``, quadratic in a
    degenerate generation that repeats the tag (2,000 repeats took a second).
    """
    blocks, outside, at = [], [], 0
    while (start := raw.find(OPEN, at)) >= 0 and (end := raw.find(CLOSE, start + len(OPEN))) >= 0:
        outside.append(raw[at:start])
        blocks.append(raw[start + len(OPEN) : end])
        at = end + len(CLOSE)
    outside.append(raw[at:])
    return blocks, "".join(outside)


def split_output(raw: str) -> Output:
    """Strip thinking traces, as produced in thinking mode, before the explanation is judged.

    Handles ``<think>...</think>`` blocks, a trace whose opening tag sat in the prompt
    (Qwen-style templates: only ``</think>`` appears) and a trace cut off by the token
    limit (``<think>`` never closed: no explanation, flagged).
    """
    raw = raw if isinstance(raw, str) else ""
    thinking, rest = _think_blocks(raw)
    if CLOSE in rest:  # opening tag was part of the prompt
        before, _, rest = rest.rpartition(CLOSE)
        thinking.insert(0, before)
    flag = ""
    if OPEN in rest:
        rest, _, unclosed = rest.partition(OPEN)
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
