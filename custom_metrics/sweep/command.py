"""``explain-eval sweep``: every model x task pair, on this machine or as Slurm jobs, then the leaderboard.

Here the models run one after another, each loaded once for its pending tasks (``batch.py``,
``runner.py``); ``--launcher slurm`` submits one job array, a task per model (``cluster.py``,
``slurm.py``), with resources from ``--slurm-*`` flags or ``--slurm-config`` (``resources.py``).
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from custom_metrics.common.arguments import OneLineParser, non_negative_int, positive_int
from custom_metrics.common.errors import DataError
from custom_metrics.common.harness_args import check_batch_size, check_harness_args, check_limit, check_tasks
from custom_metrics.leaderboard.registry import check_run, logits_memory_warning
from custom_metrics.sweep.batch import plan_model, run_sweep, shared_command
from custom_metrics.sweep.resources import RESOURCE_KEYS, ResourcePlan, load_plan
from custom_metrics.sweep.runner import (
    DEFAULT_INCLUDE,
    PairOutcome,
    SweepOptions,
    lm_eval_command,
    pair_complete,
    pair_folder,
    parse_models,
    parse_tasks,
)

# --slurm-<key> flags: the resources a flag can set (sbatch extras and setup lines go in the file)
FLAG_RESOURCES = [key for key in RESOURCE_KEYS if key not in ("sbatch", "setup")]


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="explain-eval sweep",
        description="Run every model x task pair through lm_eval (resumable), then the leaderboard.",
    )
    parser.add_argument(
        "--models", required=True, help='space-separated: "NAME::MODEL_ARGS", "MODEL_ARGS" or a checkpoint id/path'
    )
    parser.add_argument("--tasks", required=True, help="comma- or space-separated task names")
    parser.add_argument("--out", type=Path, required=True, help="sweep folder (one subfolder per pair)")
    parser.add_argument("--limit", help="lm_eval --limit (docs per task, or a fraction)")
    parser.add_argument(
        "--model-args",
        "--model_args",
        default="",
        help="added to every model's args (the model's own value wins), e.g. dtype=bfloat16",
    )
    parser.add_argument("--backend", choices=("hf", "vllm"), default="hf", help="lm_eval --model: hf (default) or vllm")
    parser.add_argument(
        "--launcher",
        choices=("plain", "accelerate", "slurm"),
        default="plain",
        help="plain: here, one model after another (one lm_eval per model); accelerate: here, one model copy "
        "per GPU; slurm: one Slurm job array, a task per model (see the --slurm-* options)",
    )
    parser.add_argument("--num-processes", type=positive_int, help="accelerate --num_processes (default: its config)")
    parser.add_argument(
        "--batch-size", "--batch_size", default="8", help="lm_eval --batch_size: a number or auto (default 8)"
    )
    parser.add_argument("--device", help="hf device (default: cuda when available, else cpu)")
    parser.add_argument(
        "--include-path",
        "--include_path",
        type=Path,
        default=DEFAULT_INCLUDE,
        help="lm_eval --include_path (default: the installed tasks, explain-eval tasks-path)",
    )
    parser.add_argument("--lm-eval-args", default="", help="more lm_eval arguments, e.g. '--num_fewshot 5'")
    parser.add_argument("--leaderboard-out", type=Path, help="leaderboard folder (default: OUT/leaderboard)")
    parser.add_argument("--no-leaderboard", action="store_true", help="skip the leaderboard after the sweep")
    parser.add_argument("--dry-run", action="store_true", help="print each model's pending command, run nothing")
    slurm = parser.add_argument_group("Slurm (--launcher slurm)")
    slurm.add_argument(
        "--job-launcher",
        choices=("plain", "accelerate"),
        help="how lm_eval starts inside each job (default plain; accelerate: one process per GPU of the job)",
    )
    slurm.add_argument(
        "--slurm-config", type=Path, help="YAML: resources per model and task (docs/comparing-models.md)"
    )
    slurm.add_argument("--slurm-gpus", type=non_negative_int, help="GPUs per job (default 0)")
    slurm.add_argument("--slurm-cpus", type=positive_int, help="CPUs per job (default: the partition's)")
    slurm.add_argument("--slurm-mem", help="memory per job, with a unit: 64G (default: the partition's)")
    slurm.add_argument("--slurm-time", help="time limit per job: minutes or [D-]HH:MM:SS (default 4:00:00)")
    slurm.add_argument("--slurm-partition", help="partition the jobs are submitted to (default: the cluster's)")
    slurm.add_argument("--slurm-account", help="account the jobs are charged to (default: yours)")
    slurm.add_argument(
        "--no-wait", action="store_true", help="submit and return; rerun the same command to re-attach and finish"
    )
    slurm.add_argument("--poll-seconds", type=float, default=30.0, help="how often job states are read (default 30)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    on_slurm = args.launcher == "slurm"
    try:
        _check_slurm_flags(args, on_slurm)
        options = SweepOptions(
            models=parse_models(args.models, args.model_args),
            tasks=parse_tasks(args.tasks),
            out=args.out.resolve(),
            limit=args.limit,
            backend=args.backend,
            launcher=(args.job_launcher or "plain") if on_slurm else args.launcher,
            num_processes=args.num_processes,
            batch_size=args.batch_size,
            device=args.device,
            include_path=args.include_path.resolve(),
            extra=shlex.split(args.lm_eval_args),
        )
        flags = {key: getattr(args, f"slurm_{key}") for key in FLAG_RESOURCES}
        plan = load_plan(args.slurm_config, flags) if on_slurm else None
        check_sweep(options, args.poll_seconds, here=not on_slurm)
        if args.dry_run:
            print_dry_run(options, plan)
            return 0
    except (ValueError, DataError) as error:
        parser.error(str(error))
    options.out.mkdir(parents=True, exist_ok=True)
    from custom_metrics.sweep.cluster import SchedulerUnavailable

    try:
        if plan is None:
            outcomes = run_sweep(options)
        else:
            from custom_metrics.sweep.cluster import run_cluster_sweep
            from custom_metrics.sweep.slurm import SlurmScheduler

            outcomes = run_cluster_sweep(
                options, SlurmScheduler(), plan, wait=not args.no_wait, poll_s=args.poll_seconds
            )
    except (SchedulerUnavailable, DataError) as error:  # no scheduler, or a sweep file that is a link
        print(f"explain-eval sweep: {error}", file=sys.stderr)
        return 2
    return finish(outcomes, options.out, args.leaderboard_out, build=not args.no_leaderboard, waited=not args.no_wait)


def check_sweep(options: SweepOptions, poll_seconds: float, *, here: bool) -> None:
    """Every task name, count and model setting, before any pair runs or any job is
    submitted (on Slurm a typo otherwise costs a queue wait per pair): the tasks against the
    harness' task list, the counts, each model's ``lm_eval`` arguments as lm-eval parses them,
    and what each paper checks of a run (REG: its judge spec and, here, its judge's folder)."""
    check_limit(options.limit, "--limit")
    check_batch_size(options.batch_size, "--batch-size")
    if not math.isfinite(poll_seconds) or poll_seconds <= 0:
        raise ValueError(f"--poll-seconds {poll_seconds}: pass a number of seconds above 0")
    check_tasks(options.tasks, options.include_path, "--include-path")
    for setting in options.models:
        for task in options.tasks:
            try:
                command = lm_eval_command(options, setting, task, options.out / "check")
            except FileNotFoundError:
                continue  # reads its source task's samples, not written yet: the next task shows the arguments
            config = check_harness_args(command[command.index("lm_eval") + 1 :], f"model {setting.name}", here=here)
            # the papers' own (REG: its judge), and whole groups of documents under --limit
            check_run(options.tasks, config.metadata or {}, here=here, limit=options.limit)
            warning = logits_memory_warning(config, options.tasks) if here else None  # a job's memory is its node's
            if warning:
                print(f"explain-eval sweep: warning: model {setting.name}: {warning}", file=sys.stderr, flush=True)
            break


def _check_slurm_flags(args: argparse.Namespace, on_slurm: bool) -> None:
    given = [name for name in ("job_launcher", "slurm_config", "no_wait") if getattr(args, name)]
    given += [f"slurm_{key}" for key in FLAG_RESOURCES if getattr(args, f"slurm_{key}") is not None]
    if given and not on_slurm:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise ValueError(f"{flags} only apply with --launcher slurm")
    if on_slurm and args.job_launcher == "accelerate" and args.backend == "vllm":
        raise ValueError("vLLM parallelises itself: use --job-launcher plain with --backend vllm")


def print_dry_run(options: SweepOptions, plan: ResourcePlan | None) -> None:
    """Each pair's state and, per model, its one ``lm_eval`` over its pending tasks (plus one
    per task that must run alone); on Slurm, the array task's resources."""
    from custom_metrics.sweep.cluster import job_options, model_resources

    for setting in options.models:
        model = plan_model(options, setting)
        for task in model.complete:
            done = pair_complete(pair_folder(options.out, setting, task), task)
            state = "complete, skipped" if done else "lm_eval complete; post-run step pending"
            print(f"# {setting.name} x {task}: {state}")
        pending = [*model.shared, *model.alone]
        if not pending:
            continue
        job = f"; Slurm array task: {model_resources(plan, setting.name, pending).summary()}" if plan else ""
        print(f"# {setting.name}: {len(pending)} pending task(s) ({', '.join(pending)}), one load per command{job}")
        model_options = job_options(options, model_resources(plan, setting.name, pending)) if plan else options
        if model.shared:
            print(shlex.join(shared_command(model_options, setting, model.shared)))
        for task in model.alone:
            folder = pair_folder(options.out, setting, task)
            try:
                print(shlex.join(lm_eval_command(model_options, setting, task, folder)))
            except FileNotFoundError as error:
                print(f"# (runs after its source task) {error}")


def finish(outcomes: list[PairOutcome], out: Path, board: Path | None, *, build: bool, waited: bool) -> int:
    """The leaderboard (once no pair is still queued or running), the summary line, the failures."""
    count = Counter(o.status for o in outcomes)
    if build and count["pending"]:
        print(f"leaderboard not built yet: {count['pending']} pair(s) still queued or running")
    elif build:
        from custom_metrics.leaderboard.build import main as leaderboard_main

        leaderboard_main([str(out), "--out", str(board or out / "leaderboard")])
    summary = f"sweep: {count['done']} run, {count['skipped']} skipped (already complete), {count['failed']} failed"
    if count["adopted"]:
        summary += f", {count['adopted']} adopted (finished after an earlier sweep stopped)"
    if count["pending"]:
        summary += f", {count['pending']} still queued or running (rerun the same command to re-attach)"
    print(summary, flush=True)
    for outcome in outcomes:
        if outcome.status == "failed":
            print(f"FAILED {outcome.model} x {outcome.task}: {outcome.detail}", file=sys.stderr)
    return 1 if count["failed"] or (count["pending"] and waited) else 0
