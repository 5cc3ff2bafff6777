"""How long a lab's sweep takes to plan: 100 models x 30 tasks, one ``lm_eval`` per model.

    python -m bench.sweep_plan [--models 100] [--tasks 30] [--repeats 3]

Two figures, each the median of ``--repeats``: the plan alone in this process (model
settings and tasks parsed, each model's pending tasks found from its pair markers, one
command per model built) and ``explain-eval sweep --dry-run`` as a user runs it, in a
fresh process (imports, the check of every task name against the harness' task list and
of each model's ``lm_eval`` arguments, the printed commands), beside the same for 1 model x
1 task (what any command pays before it plans: imports of lm-eval, transformers and the
papers' modules). Target: the plan under 5 s. Also
counts the commands printed (one per model) and the model loads of the sweep against one
``lm_eval`` per pair. Writes the ``sweep_plan`` section of bench/results.json.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from bench.common import REPO, figure, save_section, scratch, setup_env, table

TASKS = [f"rule_5shot_split{s}" for s in range(1, 6)] + [f"rule_1shot_split{s}" for s in range(1, 6)]
TASKS += [f"rule_5shot_cot_split{s}" for s in range(1, 6)] + [f"rule_1shot_cot_split{s}" for s in range(1, 6)]
TASKS += ["rule_main", "rule_sub", "rule_noctx", "rule_alignment", "geese_noexp", "geese_human", "geese_dummy"]
TASKS += ["geese_llama3", "reg_chaos", "ibe_copa"]
TARGET_S = 5.0


def plan_in_process(models: str, tasks: list[str], out) -> tuple[float, int]:
    """Seconds to plan the sweep here, and the number of commands planned."""
    from custom_metrics.sweep.batch import plan_model, shared_command
    from custom_metrics.sweep.runner import SweepOptions, parse_models, parse_tasks

    start = time.perf_counter()
    options = SweepOptions(models=parse_models(models), tasks=parse_tasks(",".join(tasks)), out=out, device="cpu")
    commands = [
        shared_command(options, setting, plan.shared)
        for setting in options.models
        if (plan := plan_model(options, setting)).shared
    ]
    return time.perf_counter() - start, len(commands)


def dry_run(models: str, tasks: list[str], out) -> tuple[float, int]:
    """Seconds of ``explain-eval sweep --dry-run`` in a fresh process, and the commands it printed."""
    command = [sys.executable, "-m", "custom_metrics.cli", "sweep", "--models", models, "--tasks", ",".join(tasks)]
    command += ["--out", str(out), "--dry-run", "--device", "cpu"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, check=True)
    seconds = time.perf_counter() - start
    return seconds, sum(" -m lm_eval " in line for line in done.stdout.splitlines())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=30, help=f"at most {len(TASKS)}")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    setup_env()
    tasks = TASKS[: args.tasks]
    folder = scratch("sweep_plan")
    checkpoint = folder / "checkpoint"  # a folder as a local checkpoint path: nothing is loaded
    checkpoint.mkdir()
    models = " ".join(f"m{i}::pretrained={checkpoint}" for i in range(args.models))
    planned = [plan_in_process(models, tasks, folder / "out") for _ in range(args.repeats)]
    printed = [dry_run(models, tasks, folder / "out") for _ in range(args.repeats)]
    alone = [dry_run(f"m0::pretrained={checkpoint}", tasks[:1], folder / "out") for _ in range(args.repeats)]
    plan_s, dry_s = statistics.median(s for s, _ in planned), statistics.median(s for s, _ in printed)
    base_s = statistics.median(s for s, _ in alone)
    commands = printed[0][1]
    pairs = args.models * len(tasks)
    size = f"{args.models} models x {len(tasks)} tasks"
    rows = [
        ["plan in process", f"{plan_s:.2f} s", planned[0][1]],
        ["`sweep --dry-run`, fresh process", f"{dry_s:.2f} s", commands],
        ["`sweep --dry-run` of 1 model x 1 task, fresh process", f"{base_s:.2f} s", alone[0][1]],
    ]
    print(table(rows, [size, "median wall time", "lm_eval commands"]))
    print(f"model loads: {commands} (one per model), against {pairs} with one lm_eval per pair")
    run = f"python -m bench.sweep_plan --models {args.models} --tasks {len(tasks)} --repeats {args.repeats}"
    save_section(
        "sweep_plan",
        {
            "models": args.models,
            "tasks": len(tasks),
            "plan_s": round(plan_s, 3),
            "dry_run_s": round(dry_s, 3),
            "dry_run_1x1_s": round(base_s, 3),
            "commands": commands,
            "loads_one_per_pair": pairs,
            "figures": [
                figure(f"sweep plan, {size}", f"< {TARGET_S:g} s", f"{plan_s:.2f} s", plan_s < TARGET_S, run),
                figure(
                    f"sweep --dry-run, {size}, fresh process",
                    "",
                    f"{dry_s:.2f} s ({base_s:.2f} s for 1 x 1)",
                    None,
                    run,
                ),
                figure(
                    f"sweep model loads, {size}",
                    "one per model",
                    f"{commands}",
                    commands == args.models,
                    run,
                    peer=f"{pairs} (one lm_eval per pair)",
                ),
            ],
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
