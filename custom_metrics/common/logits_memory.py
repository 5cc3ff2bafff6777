"""What ``--model hf``'s log-likelihood batches hold in memory, warned of before the model loads.

The harness' ``hf`` model scores a batch of log-likelihood requests by running the model over
the padded batch and taking the log-softmax over the whole vocabulary at every position of
every request: batch x tokens x vocabulary values, at least twice over (the logits and their
log-softmax), in the model's dtype. With a large vocabulary (gemma-3's 262,144) and long
contexts that is most of a run's memory: ``rule_cot_faithfulness`` at ``--batch_size 8`` on the
embedded gemma-3-270m peaked at 20.3 GB on a 24 GB machine, with nothing said before. The
suite's ``--model hf-prefix`` (the same arguments) computes the same answers without projecting
the context onto the vocabulary.

So ``explain-eval lm-eval`` and the sweep estimate, before the model loads, the logits of one
batch of the run's longest requests (each paper states its tasks' longest request in tokens:
``RunSteps.request_tokens``) from the checkpoint's ``config.json`` (vocabulary, dtype), and warn
when that exceeds the memory this machine has free, naming ``hf-prefix`` and a batch whose logits
take at most half of it. Only a CPU run is checked (``--device cpu``): on a GPU, ``--batch_size auto`` finds the
batch that fits. The estimate is of a batch of the longest requests (of the full data: a run of
shorter documents or a ``--limit`` may hold less) and counts the two copies only (the harness
holds more beside them: tests/common/test_logits_memory.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HF_CLASSES = ("hf", "hf-auto", "huggingface")  # lm-eval's names of its HFLM
COPIES = 2  # the logits and their log-softmax, each batch x tokens x vocabulary
DTYPE_BYTES = {"float32": 4, "float": 4, "bfloat16": 2, "float16": 2, "half": 2}


def checkpoint_config(pretrained: str, revision: str | None = None) -> dict[str, Any] | None:
    """The checkpoint's ``config.json``: in its folder, or in the local Hub cache (no network)."""
    path = Path(pretrained).expanduser() / "config.json"
    if not path.parent.is_dir():
        from huggingface_hub import try_to_load_from_cache
        from huggingface_hub.errors import HFValidationError

        try:
            cached = try_to_load_from_cache(pretrained, "config.json", revision=revision)
        except HFValidationError:
            return None
        if not isinstance(cached, str):
            return None
        path = Path(cached)
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # loading the model names what is wrong with it
    return config if isinstance(config, dict) else None


def logits_shape(config: Mapping[str, Any], dtype: str | None) -> tuple[int, int] | None:
    """(vocabulary size, bytes per value) of the model's logits, or None when the config does not say."""
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    vocab = config.get("vocab_size") or text.get("vocab_size")
    if not isinstance(vocab, int) or vocab < 1:
        return None
    if dtype in (None, "auto"):  # HFLM's default: the checkpoint's own dtype
        dtype = config.get("dtype") or config.get("torch_dtype") or text.get("torch_dtype")
    return vocab, DTYPE_BYTES.get(str(dtype).removeprefix("torch."), 4)


def free_memory() -> int | None:
    """Bytes of memory free for a new process here (Linux's ``MemAvailable``), or None."""
    try:
        line = next(line for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemAvailable:"))
        return int(line.split()[1]) * 1024
    except (OSError, StopIteration, ValueError, IndexError):
        return None


def _gb(count: float) -> str:
    return f"{count / 1e9:.1f} GB"


def logits_warning(
    model: str,
    model_args: Mapping[str, Any],
    batch_size: str,
    device: str | None,
    longest: Mapping[str, int],
) -> str | None:
    """The warning for a CPU ``hf`` run whose batch of its longest requests (``longest``: task ->
    tokens) would hold more logits than this machine has free, or None."""
    pretrained = model_args.get("pretrained")
    if model not in HF_CLASSES or not (device or "").startswith("cpu") or not batch_size.isdigit() or not longest:
        return None
    if not isinstance(pretrained, str) or "gguf_file" in model_args:
        return None
    config = checkpoint_config(pretrained, model_args.get("revision"))
    shape = logits_shape(config, model_args.get("dtype")) if config else None
    free = free_memory()
    if shape is None or not free:
        return None
    vocab, width = shape
    task, tokens = max(longest.items(), key=lambda item: item[1])
    per_request = COPIES * tokens * vocab * width
    batch = int(batch_size)
    if batch * per_request <= free:
        return None
    fits = free // (2 * per_request)  # half the free memory: the model, and what the floor does not count
    smaller = f", or --batch_size {fits} (its logits at most half of that)" if fits >= 1 else ""
    return (
        f"--model {model} --batch_size {batch}: a batch of {task}'s longest requests (about {tokens:,} tokens) holds "
        f"{batch} x {tokens:,} x {vocab:,} logits twice (the logits and their log-softmax, {width} bytes "
        f"each): about {_gb(batch * per_request)}, more than the {_gb(free)} free here. Pass --model hf-prefix "
        f"(the same arguments and answers; it never projects the context onto the vocabulary){smaller}."
    )
