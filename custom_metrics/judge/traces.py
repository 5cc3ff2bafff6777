"""Thinking traces in a model's text: where each starts and ends, and the text outside them.

REG splits a generator's output into its trace and its explanation (``reg.outputs``), and a
judge's answer is read after its trace (``answer.parse_label``): one scan serves both, so they
agree on what a trace is.
"""

from __future__ import annotations

from dataclasses import dataclass

# Trace markers as the models write them: Qwen3/3.5 (and most open reasoning models) and
# Gemma 4, whose trace opens with the channel token followed by the word "thought". In
# Gemma 4's tokenizer the channel markers may be special tokens, which decoders drop by
# default (``skip_special_tokens``): the REG task README says how each backend keeps them.
OPEN, CLOSE = "<think>", "</think>"
GEMMA_OPEN, GEMMA_CLOSE = "<|channel>", "<channel|>"
MARKERS = ((OPEN, CLOSE), (GEMMA_OPEN, GEMMA_CLOSE))
GEMMA_CHANNEL_NAME = "thought"


@dataclass(frozen=True)
class Traces:
    """A text split at its trace markers."""

    rest: str  # the text outside every trace (the answer)
    thinking: tuple[str, ...]  # each trace's text, in order
    closed: bool  # a trace ended inside the text (a closing marker was seen)
    unclosed: bool  # a trace opened and never ended: the text stopped inside it


def think_blocks(raw: str, open_tag: str = OPEN, close_tag: str = CLOSE) -> tuple[list[str], str]:
    """The closed ``open_tag ... close_tag`` blocks (each opening tag with the next closing
    one) and the text outside them.

    A scan with ``str.find``, not the lazy pattern ``<think>(.*?)</think>``: that one
    searches to the end of the text again for every unclosed ``<think>``, quadratic in a
    degenerate generation that repeats the tag (2,000 repeats took a second).
    """
    blocks, outside, at = [], [], 0
    while (start := raw.find(open_tag, at)) >= 0 and (end := raw.find(close_tag, start + len(open_tag))) >= 0:
        outside.append(raw[at:start])
        blocks.append(raw[start + len(open_tag) : end])
        at = end + len(close_tag)
    outside.append(raw[at:])
    return blocks, "".join(outside)


def _trace_text(text: str, open_tag: str) -> str:
    text = text.strip()
    if open_tag == GEMMA_OPEN and text.startswith(GEMMA_CHANNEL_NAME):
        text = text[len(GEMMA_CHANNEL_NAME) :].strip()
    return text


def split_traces(raw: str) -> Traces:
    """Closed blocks (``<think>...</think>``, Gemma 4's ``<|channel>thought ...<channel|>``),
    a trace whose opening tag sat in the prompt (Qwen3.5's templates open ``<think>``
    themselves: only the closing tag appears) and a trace that never ended (an opening tag
    without its close: everything after it is trace)."""
    rest, thinking, closed, unclosed = raw, [], False, False
    for open_tag, close_tag in MARKERS:
        blocks, rest = think_blocks(rest, open_tag, close_tag)
        closed = closed or bool(blocks)
        thinking += [_trace_text(block, open_tag) for block in blocks]
        if close_tag in rest:  # the opening tag was part of the prompt
            before, _, rest = rest.rpartition(close_tag)
            thinking.insert(0, _trace_text(before, open_tag))
            closed = True
        if open_tag in rest:
            rest, _, trace = rest.partition(open_tag)
            thinking.append(_trace_text(trace, open_tag))
            unclosed = True
    return Traces(rest, tuple(thinking), closed, unclosed)
