"""What ``explain-eval reg-dapo`` checks before the policy loads: the device and precision TRL
will train with, the output folder, the policy's chat template, and the reward's judge (found
and checked on the gold items exactly as a ``reg_chaos`` run checks it).

Why: TRL trains in bf16 by default, which ``TrainingArguments`` refuses without a GPU (a
traceback after everything loaded), and a judge that cannot answer or is degenerate gives every
rollout the same reward: hours of training on noise. Each is one line here, in seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import unwritable

PRECISIONS = ("bf16", "fp16", "fp32")
DEFAULT_PRECISION = "bf16"  # TRL's GRPOConfig: bf16 unless fp16 is set
# What the judge check's messages tell a reg-dapo user to pass.
JUDGE_OPTIONS = ("--judge SPEC", "--judge-check warn")
REWARD = "the reward's judge"  # what the judge check's messages begin with (a task's name under lm_eval)


def precision_settings(use_cpu: bool, precision: str) -> dict[str, Any]:
    """``GRPOConfig`` fields for the device and precision asked for, or a DataError saying what to pass."""
    import torch
    from transformers.utils import is_torch_bf16_available_on_device, is_torch_bf16_gpu_available

    if not use_cpu and not torch.cuda.is_available():
        raise DataError(
            "torch sees no GPU here, and TRL trains on one unless told otherwise: pass --use-cpu to train "
            "on the CPU (slow; the paper trained on GPUs), or run on a machine with a GPU"
        )
    if use_cpu and precision == "fp16":
        raise DataError("fp16 mixed precision needs a GPU; with --use-cpu pass --precision bf16 or fp32")
    if precision == "bf16" and not use_cpu and not is_torch_bf16_gpu_available():
        raise DataError(
            "this GPU has no bf16 (TRL's default precision; Ampere or newer has it): pass --precision fp16 "
            "or --precision fp32"
        )
    if precision == "bf16" and use_cpu and not is_torch_bf16_available_on_device("cpu"):
        raise DataError("this CPU (or its torch) has no bf16, TRL's default precision: pass --precision fp32")
    return {"use_cpu": use_cpu, "bf16": precision == "bf16", "fp16": precision == "fp16"}


def check_out(out: Path) -> None:
    """The output folder (each run's checkpoints, its evaluation) writable before any loading."""
    problem = unwritable(out)
    if problem:
        raise DataError(f"{problem}: the checkpoints are saved under --out; pass a writable folder")


def check_policy(model: str) -> None:
    """The policy's tokenizer loads and has a chat template: the rollouts are chat turns
    (``reward.training_rows``) that TRL renders with it. Without one TRL stopped in a traceback,
    after the judge had loaded and been checked."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(model)
    except (OSError, ValueError) as err:
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise DataError(f"--model {model}: its tokenizer cannot be loaded ({reason}); pass a folder or Hub id") from err
    if not getattr(tokenizer, "chat_template", None):
        raise DataError(
            f"--model {model}: its tokenizer has no chat template, and the rollouts are chat turns (TRL renders "
            "them with it): pass a chat model, or add a chat_template to its tokenizer_config.json"
        )


def checked_judge(judge: str, judge_cache: str | None, judge_check: str) -> Any:
    """The reward's judge found, loaded and checked on the gold items as ``reg_chaos`` checks it before
    generation (``judging.check_before_generation``); the cached judge the reward calls."""
    from custom_metrics.reg.judging import check_before_generation, locate_judge

    located = locate_judge(REWARD, judge, judge_cache)
    check_before_generation(REWARD, located, judge_check, JUDGE_OPTIONS)
    return located.judge
