"""Output lengths in the generator's tokens, and the trace markers its tokenizer writes.

Table 3 and section 6 count output tokens, but the harness hands the task text only, so the
run's tokenizer is loaded before any generation and re-encodes each output.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.judge.traces import MARKERS
from custom_metrics.reg.modes import IN_PROCESS, Mode

log = logging.getLogger(__name__)


def tokenizer_name(task: str, run_args: Mapping[str, Any]) -> str:
    """The tokenizer that counts output tokens: ``tokenizer`` (``--metadata`` or the API
    models' argument), else the model itself (``pretrained``, or a served ``model``)."""
    for key in ("tokenizer", "pretrained", "model"):
        value = run_args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    raise DataError(
        f"{task} counts output lengths in the generator's tokens (Table 3, section 6) and needs its tokenizer: "
        "the model arguments name none (pretrained, model or tokenizer); pass --metadata tokenizer=<Hugging Face "
        "id or folder>."
    )


@lru_cache(maxsize=4)
def load_tokenizer(name: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(name)


def count_tokens(name: str, texts: Sequence[str]) -> list[int]:
    """Each text's length in the tokenizer's tokens, without special tokens added: the
    generated text re-encoded, the end-of-turn token the decoder dropped not counted."""
    if not texts:
        return []
    encoded = load_tokenizer(name)(list(texts), add_special_tokens=False)["input_ids"]
    return [len(ids) for ids in encoded]


def special_trace_markers(name: str) -> list[str]:
    """The trace markers (``judge.traces.MARKERS``) that are special tokens of this tokenizer:
    a decoder with ``skip_special_tokens=True`` (``--model hf``, a server's default) drops
    them, and the trace can no longer be told from the explanation."""
    tokenizer = load_tokenizer(name)
    special = set(getattr(tokenizer, "all_special_tokens", ()))
    special |= {token.content for token in getattr(tokenizer, "added_tokens_decoder", {}).values() if token.special}
    return [marker for pair in MARKERS for marker in pair if marker in special]


def check_trace_markers(task: str, chosen: Mode, backend: str, name: str, run_args: Mapping[str, Any]) -> None:
    """Special-token trace markers (Gemma 4's ``<|channel>``/``<channel|>`` may be) survive a
    served vLLM (the task asks for them) but not ``--model hf``, which decodes with
    ``skip_special_tokens=True``: every thinking output would count as cut off."""
    kept = run_args.get("trace_markers")
    if kept not in (None, "", "kept"):
        raise DataError(f'{task}: --metadata trace_markers is {kept!r}; the one value it takes is "kept"')
    markers = special_trace_markers(name)
    if not markers or backend != IN_PROCESS or kept == "kept":
        return
    message = (
        f"{task}: the tokenizer {name!r} writes the thinking-trace markers {markers} as special tokens, which "
        "--model hf drops when it decodes (skip_special_tokens=True), so the task could not find any trace"
    )
    remedy = (
        "serve the model with vLLM and run the _served task (it asks vLLM for skip_special_tokens=false), or, on a "
        'backend that keeps special tokens (lm-eval\'s --model vllm), pass --metadata \'{"trace_markers": "kept"}\' '
        "(lm_eval_tasks/reg/DETAILS.md, 'Running each mode')"
    )
    if chosen.thinking:
        raise DataError(f"{message}: every output would count as cut off. To run it, {remedy}.")
    log.warning(
        "%s; in non-thinking mode a trace the model writes anyway would be judged as the explanation: %s.",
        message,
        remedy,
    )
