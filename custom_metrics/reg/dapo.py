"""Section 7 as a runnable recipe: DAPO training on REG with TRL, then Table 5's evaluation.

Section 7.1 trains Qwen3.5-2B on ChaosNLI-MNLI-C with DAPO (Yu et al., 2025) through TRL's
``GRPOTrainer``: rollouts in non-thinking mode, 8 outputs per pair, each rewarded by Table 4
from the judge's verdicts (``reward.REGReward``); TRL's default hyperparameters (Appendix L,
not in our text) except the upper clip of the importance-sampling ratio, epsilon_high in
{0.2, 0.28, 0.36}; three seeds per setting; each trained model evaluated in non-thinking
mode on True Detective and MuSR, the mean over seeds reported (Table 5).

Here each (epsilon_high, seed) is one ``GRPOTrainer`` run with ``loss_type="dapo"`` (token-level
normalisation, clip-higher through ``epsilon_high``), then the harness' MuSR tasks on its checkpoint.
True Detective has no harness task (the REG task README says what it needs).

Everything that could fail is checked before the policy loads, in seconds, each in one line: the
device and precision (TRL trains in bf16 by default, which ``TrainingArguments`` refuses without a
GPU, a traceback after everything loaded), the output folder, the policy's chat template, and the
reward's judge, checked on the gold items as a ``reg_chaos`` run checks it (one that cannot answer
or is degenerate gives every rollout the same reward: hours of training on noise). A run stopped
part-way resumes from its last ``checkpoint-<step>``; one saved whole (``trained.json``) is not
trained again.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from custom_metrics.common.arguments import positive_int
from custom_metrics.common.errors import DataError
from custom_metrics.common.files import atomic_write_bytes, unwritable

log = logging.getLogger(__name__)

PAPER_MODEL = "Qwen/Qwen3.5-2B"
EPSILON_HIGH = (0.2, 0.28, 0.36)  # section 7.1, Table 5
SEEDS = (0, 1, 2)  # "three training runs using different random seeds"
ROLLOUTS = 8  # "sample 8 outputs from the model"
EVAL_TASKS = "leaderboard_musr"  # the harness' MuSR: murder mysteries, object placements, team allocation
EVAL_METRIC = "acc_norm"
NON_THINKING = {"enable_thinking": False}
# Section 7.1 trains "with the default hyperparameters" of TRL: GRPOConfig inherits
# TrainingArguments' num_train_epochs, 3.0. Passed explicitly, so a TRL release that changes
# its default changes no run of the recipe silently.
EPOCHS = 3.0
TRAINED = "trained.json"  # in a run's folder once its checkpoint is saved whole: a rerun skips its training
PRECISIONS = ("bf16", "fp16", "fp32")
DEFAULT_PRECISION = "bf16"  # TRL's GRPOConfig: bf16 unless fp16 is set
# What the judge check's messages tell a reg-dapo user to pass.
JUDGE_OPTIONS = ("--judge SPEC", "--judge-check warn")
REWARD = "the reward's judge"  # what the judge check's messages begin with (a task's name under lm_eval)


@dataclass(frozen=True)
class Setting:
    epsilon_high: float
    seed: int

    @property
    def folder(self) -> str:
        return f"eps{self.epsilon_high:g}-seed{self.seed}"


def positive_epochs(text: str) -> float:
    """``--num-train-epochs``: a finite number above 0 (a fraction trains part of one epoch)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a number of epochs above 0, got {text!r}")
    return value


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


def dapo_config(output_dir: Path, setting: Setting, **overrides: Any) -> Any:
    """TRL's ``GRPOConfig`` for one run; ``overrides`` are any other ``GRPOConfig`` field (rollouts,
    batch sizes, steps, lengths, the epochs), TRL's defaults otherwise."""
    import trl

    return trl.GRPOConfig(
        output_dir=str(output_dir),
        loss_type="dapo",
        epsilon_high=setting.epsilon_high,
        seed=setting.seed,
        chat_template_kwargs=NON_THINKING,
        **{"num_train_epochs": EPOCHS, "num_generations": ROLLOUTS, **overrides},
    )


def train(
    model: Any,
    judge: Any,
    docs: Sequence[dict[str, Any]],
    output_dir: Path,
    setting: Setting,
    *,
    processing_class: Any = None,
    **overrides: Any,
) -> Any:
    """One DAPO run on REG docs (``training_rows``: the Appendix C.1 prompt as a user turn), saved to
    ``output_dir/checkpoint``. Returns the trainer (its ``state`` holds the logged rewards)."""
    import trl

    from custom_metrics.common.sources import to_dataset
    from custom_metrics.reg.reward import REGReward, training_rows

    reward = judge if isinstance(judge, REGReward) else REGReward(judge)
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=reward,
        args=dapo_config(output_dir, setting, **overrides),
        train_dataset=to_dataset(training_rows(docs)),
        processing_class=processing_class,
    )
    last = last_checkpoint(output_dir)
    if last is not None:
        print(f"reg-dapo: resuming {output_dir.name} from {last.name} (step {last.name.rsplit('-', 1)[-1]})")
    trainer.train(resume_from_checkpoint=str(last) if last is not None else None)
    checkpoint = output_dir / "checkpoint"
    trainer.save_model(str(checkpoint))
    trainer.processing_class.save_pretrained(str(checkpoint))
    record = {"global_step": trainer.state.global_step, "epsilon_high": setting.epsilon_high, "seed": setting.seed}
    atomic_write_bytes(output_dir / TRAINED, json.dumps(record).encode("utf-8"))
    return trainer


def last_checkpoint(output_dir: Path) -> Path | None:
    from transformers.trainer_utils import get_last_checkpoint

    found = get_last_checkpoint(str(output_dir)) if output_dir.is_dir() else None
    return Path(found) if found else None


def evaluate_command(checkpoint: Path, out: Path, tasks: str = EVAL_TASKS, extra: Sequence[str] = ()) -> list[str]:
    """The harness run of Table 5's MuSR column on a trained checkpoint, non-thinking."""
    model_args = json.dumps({"pretrained": str(checkpoint), "chat_template_args": NON_THINKING})
    lm_eval = str(Path(sys.executable).with_name("lm_eval"))
    return [
        lm_eval, "--model", "hf", "--model_args", model_args, "--apply_chat_template",
        "--tasks", tasks, "--output_path", str(out), "--log_samples", *extra,
    ]  # fmt: skip


def evaluate(checkpoint: Path, out: Path, tasks: str = EVAL_TASKS, extra: Sequence[str] = ()) -> Path:
    completed = subprocess.run(evaluate_command(checkpoint, out, tasks, extra), capture_output=True, text=True)
    if completed.returncode != 0:
        raise DataError(
            f"reg-dapo: lm_eval on {checkpoint} failed ({completed.returncode}); its last lines:\n"
            f"{completed.stderr[-3000:]}"
        )
    found = sorted(out.glob("*/results_*.json"))
    if not found:
        raise DataError(f"reg-dapo: lm_eval on {checkpoint} wrote no results file under {out}")
    return found[-1]


def score(results: Path, task: str, metric: str = EVAL_METRIC) -> float:
    from custom_metrics.common.results import read_json_object

    entry = read_json_object(results, "lm-eval results file").get("results", {}).get(task, {})
    value = entry.get(f"{metric},none")
    if not isinstance(value, (int, float)):
        raise DataError(f"{results}: results for {task} hold no {metric},none (it has {sorted(entry)})")
    return float(value)


def table_5(scores: dict[Setting, float]) -> list[tuple[float, float, int]]:
    """(epsilon_high, mean over seeds, seeds) per setting, as Table 5 reports them."""
    by_epsilon: dict[float, list[float]] = {}
    for setting, value in scores.items():
        by_epsilon.setdefault(setting.epsilon_high, []).append(value)
    return [(eps, statistics.mean(values), len(values)) for eps, values in sorted(by_epsilon.items())]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="explain-eval reg-dapo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=PAPER_MODEL, help="policy to train (Hub id or folder)")
    parser.add_argument("--judge", required=True, help="judge spec for the reward (the paper: Gemma-4-31B-it)")
    parser.add_argument("--out", required=True, type=Path, help="folder for each run's checkpoint and evaluation")
    parser.add_argument(
        "--epsilon-high", type=float, nargs="+", default=list(EPSILON_HIGH), help="upper clips (the paper's three)"
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS), help="seeds per clip (the paper's three)")
    parser.add_argument("--num-generations", type=positive_int, default=ROLLOUTS, help="rollouts per pair")
    parser.add_argument(
        "--num-train-epochs",
        type=positive_epochs,
        default=EPOCHS,
        help=f"epochs over the items (default: {EPOCHS:g}, TRL's GRPOConfig default, which section 7.1 uses)",
    )
    parser.add_argument("--max-steps", type=positive_int, help="stop after this many steps (else: the epochs)")
    parser.add_argument(
        "--per-device-train-batch-size", type=positive_int, default=ROLLOUTS, help="completions per device and step"
    )
    parser.add_argument("--max-completion-length", type=positive_int, help="rollout budget (TRL's default: 512)")
    parser.add_argument("--eval-tasks", default=EVAL_TASKS, help="harness tasks to evaluate each checkpoint on")
    parser.add_argument("--eval-args", default="", help="more lm_eval arguments, e.g. '--device cuda:0 --limit 10'")
    parser.add_argument("--no-eval", action="store_true", help="train only")
    parser.add_argument("--use-cpu", action="store_true", help="train on the CPU (TRL's use_cpu; slow)")
    parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        default=DEFAULT_PRECISION,
        help=f"training precision (default: {DEFAULT_PRECISION}, TRL's; checked against the device before training)",
    )
    parser.add_argument(
        "--judge-cache", help="verdict cache folder (default: $EXPLAIN_EVAL_JUDGE_CACHE, else the suite's)"
    )
    parser.add_argument(
        "--judge-check",
        choices=("stop", "warn"),
        default="stop",
        help="a judge degenerate on the gold items of its check: stop (default), or train with it anyway",
    )
    args = parser.parse_args(argv)

    from custom_metrics.reg.data import load_items, reg_docs
    from custom_metrics.reg.judging import check_before_generation, locate_judge
    from custom_metrics.reg.reward import REGReward

    # Before the policy loads: the device and precision, the folder (each run's checkpoints, its
    # evaluation), its chat template, the judge (checked as reg_chaos checks it before generation)
    overrides = precision_settings(args.use_cpu, args.precision)
    if problem := unwritable(args.out):
        raise DataError(f"{problem}: the checkpoints are saved under --out; pass a writable folder")
    check_policy(args.model)
    *_, judge = locate_judge(REWARD, args.judge, args.judge_cache)
    check_before_generation(REWARD, judge, args.judge_check, JUDGE_OPTIONS)
    reward = REGReward(judge)
    overrides |= {"per_device_train_batch_size": args.per_device_train_batch_size}
    overrides |= {"num_generations": args.num_generations, "num_train_epochs": args.num_train_epochs}
    overrides |= {key: value for key in ("max_steps", "max_completion_length") if (value := getattr(args, key))}
    docs = reg_docs(load_items())
    scores: dict[Setting, float] = {}
    for epsilon_high in args.epsilon_high:
        for seed in args.seeds:
            setting = Setting(epsilon_high, seed)
            folder = args.out / setting.folder
            if (folder / TRAINED).is_file():
                print(f"reg-dapo: {folder} is trained already ({TRAINED}); its checkpoint is kept")
            else:
                print(f"reg-dapo: training {args.model} with epsilon_high={epsilon_high:g}, seed {seed} -> {folder}")
                train(args.model, reward, docs, folder, setting, **overrides)
            if not args.no_eval:
                results = evaluate(folder / "checkpoint", folder / "eval", args.eval_tasks, args.eval_args.split())
                scores[setting] = score(results, args.eval_tasks)
    for epsilon_high, mean, runs in table_5(scores):
        print(f"epsilon_high={epsilon_high:g}: {args.eval_tasks} {EVAL_METRIC} {mean:.4f} (mean of {runs} seeds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
