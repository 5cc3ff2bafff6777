"""Run every benchmark, each in its own process, and print their tables (``make bench``).

    python -m bench.run_all            # the sizes of the README's performance section
    python -m bench.run_all --quick    # tiny sizes: checks that the scripts work (numbers meaningless)

Results are merged into bench/results.json section by section; a failed benchmark is
reported and the others still run. At the end every section's headline figures are
printed in one table against their targets (``bench/summary.py``), which a full run also
writes into bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from bench import summary
from bench.common import REPO, RESULTS, WORK

# each benchmark: its arguments at the README's sizes, and at --quick's tiny sizes
PLAN = {
    "suite_overhead": (["--limit", "8"], ["--limit", "1"]),
    "judge_sharing": (["--pairs", "100"], ["--pairs", "3"]),
    "prefix_lm": ([], ["--docs", "rule_5shot_split1=1,rule_sub=1,geese_noexp=2,ibe_judge_copa=1"]),
    "prefix_memory": (
        ["--options", "10,100,1000", "--hf-max", "100"],
        ["--options", "2,4", "--context-tokens", "64", "--hf-max", "4"],
    ),
    "ibe_throughput": (
        ["--size", "1000", "--coherence-subset", "16", "--swipl-subset", "100"],
        ["--size", "40", "--coherence-subset", "1", "--swipl-subset", "5"],
    ),
    "ibe_scaling": (["--sizes", "100,1000,5000"], ["--sizes", "20,40,80"]),
    "task_cost": (["--requests", "32"], ["--requests", "2"]),
    "leaderboard_scale": (
        ["--sizes", "10,50,100,200", "--limit", "16", "--repeats", "3"],
        ["--sizes", "2,4", "--limit", "4", "--repeats", "1"],
    ),
    "sweep_plan": (
        ["--models", "100", "--tasks", "30", "--repeats", "3"],
        ["--models", "5", "--tasks", "3", "--repeats", "1"],
    ),
    "aggregations": (["--calls", "10000"], ["--calls", "10"]),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated benchmark names")
    args = parser.parse_args()
    plan = {name: both[args.quick] for name, both in PLAN.items()}
    names = [n for n in args.only.split(",") if n] or list(plan)
    env = {**os.environ, "LMEVAL_LOG_LEVEL": os.environ.get("LMEVAL_LOG_LEVEL", "ERROR")}
    results = RESULTS
    if args.quick:  # a check run: its figures go to a scratch file, never over the measured ones
        results = WORK / "results-quick.json"
        results.parent.mkdir(parents=True, exist_ok=True)
        env["BENCH_RESULTS"] = str(results)
    failed = []
    start = time.perf_counter()
    for name in names:
        print(f"\n## {name}  (python -m bench.{name} {' '.join(plan[name])})", flush=True)
        step = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", f"bench.{name}", *plan[name]],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
        )
        print(done.stdout.rstrip())
        if done.returncode != 0:
            failed.append(name)
            print(f"FAILED (exit {done.returncode}):\n{done.stderr[-3000:]}")
        print(f"[{name}: {time.perf_counter() - step:.0f} s]", flush=True)
    print(
        f"\nall benchmarks: {time.perf_counter() - start:.0f} s; results in {results}"
        + (f"; FAILED: {', '.join(failed)}" if failed else "")
    )
    if results.is_file():
        text = summary.render(json.loads(results.read_text(encoding="utf-8")))
        print("\n## every figure against its target\n\n" + text)
        if not args.quick:  # quick runs' numbers are meaningless: the README keeps the last real ones
            summary.write_readme(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
