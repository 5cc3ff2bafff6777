"""Share of a harness run's wall time spent in the suite's own code, per task family, from cProfile.

One ``lm_eval.simple_evaluate`` per family on the embedded model (HFLM built once,
outside the measurement; batch size 8, CPU) runs under cProfile. Suite code is every
function defined in ``custom_metrics/``, ``ibe_postprocess/`` or ``lm_eval_tasks/``; its
cost is its own time plus the time of everything it calls outside the suite (datasets,
json, regex, tokenizers, sqlite: data loading, prompt building, filters, metrics, judge
orchestration), except calls into torch / transformers models (the judge's forward
passes and model loading), which are reported separately. The share is that cost over
the run's wall time. cProfile slows pure-Python code more than torch's C++ kernels, so
the profiled share overstates the suite's share of an unprofiled run. Persistent caches
(the RULE docs cache, downloads) are warmed in a child process first: the runs measure
what every run after a machine's first one pays.

    python -m bench.suite_overhead [--limit 8] [--families geese,rule,reg_chaos,ibe_copa]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import subprocess
import sys
from pathlib import Path

from bench.common import REPO, figure, save_section, scratch, setup_env, table, task_manager, timed, verdict

TARGET_SHARE = 0.01
SUITE_DIRS = tuple(str(REPO / name) + os.sep for name in ("custom_metrics", "ibe_postprocess", "lm_eval_tasks"))
MODEL_MARKERS = tuple(
    os.sep + name + os.sep for name in ("torch", "transformers", "sentence_transformers", "safetensors")
)
# Generation is capped so a CPU run stays short; the suite's own work per doc does not depend on it.
FAMILIES = {
    "geese": {"tasks": ["geese"], "gen_kwargs": None},
    "rule": {"tasks": ["rule"], "gen_kwargs": None},
    "reg_chaos": {"tasks": ["reg_chaos"], "gen_kwargs": "max_gen_toks=48"},
    "ibe_copa": {"tasks": ["ibe_copa"], "gen_kwargs": "max_gen_toks=160"},
}

Func = tuple[str, int, str]


def is_suite(func: Func) -> bool:
    return func[0].startswith(SUITE_DIRS)


def is_model(func: Func) -> bool:
    """torch / transformers model code (not tokenizers), and torch's C builtins."""
    filename, _, name = func
    if filename == "~":
        return "torch" in name
    return any(marker in filename for marker in MODEL_MARKERS) and "tokenization" not in filename


def attribute(stats: pstats.Stats) -> dict:
    """Split the time of suite code into its own work and the judge's loads and forward passes.

    Suite work = own time of suite functions + time of the non-suite functions they call;
    calls from suite code into ``from_pretrained`` (judge load) and into torch /
    transformers models (judge forward passes) are counted apart. Suite modules are
    imported before profiling (see ``import_suite``), so no suite frame runs nested under
    another through the import machinery and nothing is counted twice.
    """
    per_function: dict[str, float] = {}
    buckets = {"judge_load_s": 0.0, "judge_forward_s": 0.0}
    for func, (_cc, _nc, tottime, _ct, callers) in stats.stats.items():  # type: ignore[attr-defined]
        if is_suite(func):
            per_function[_label(func)] = per_function.get(_label(func), 0.0) + tottime
        for caller, (_c, _n, _tt, edge_cumtime) in callers.items():
            if not is_suite(caller) or is_suite(func):
                continue
            if func[2] == "from_pretrained":  # loading a model or tokenizer: once per process, whatever the size
                buckets["judge_load_s"] += edge_cumtime
            elif is_model(func):
                buckets["judge_forward_s"] += edge_cumtime
            else:
                per_function[_label(caller)] = per_function.get(_label(caller), 0.0) + edge_cumtime
    return {"suite_s": sum(per_function.values()), **buckets, "per_function": per_function}


def import_suite() -> None:
    """Import every task folder's utils.py (and with it the suite and its libraries) once."""
    import importlib.util

    for path in sorted((REPO / "lm_eval_tasks").glob("*/utils.py")):
        spec = importlib.util.spec_from_file_location(f"bench_import_{path.parent.name}", path)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


def warm_persistent_caches(tasks: list[str]) -> None:
    """Load the tasks once in a child process, so the runs measured here find what a second run
    on a machine finds (the RULE docs cache, downloads) while this process's in-memory caches
    stay cold, as in any new ``lm_eval`` process. A first run on a machine also builds them."""
    code = (
        "import sys; from lm_eval.tasks import TaskManager; "
        "TaskManager(include_path=[sys.argv[1]], include_defaults=False).load(sys.argv[2].split(','))"
    )
    command = [sys.executable, "-c", code, str(REPO / "lm_eval_tasks"), ",".join(tasks)]
    subprocess.run(command, cwd=REPO, check=True, capture_output=True)


def _label(func: Func) -> str:
    return f"{Path(func[0]).relative_to(REPO)}:{func[2]}"


def run(limit: int, families: list[str]) -> dict:
    import lm_eval
    from lm_eval.models.huggingface import HFLM

    from custom_metrics.common.embedded_model import ensure_checkpoint

    os.environ["EXPLAIN_EVAL_JUDGE_CACHE"] = str(scratch("suite_overhead_verdicts"))  # judge computes, not reads
    with timed() as warm:
        warm_persistent_caches([task for family in families for task in FAMILIES[family]["tasks"]])
    with timed() as load:
        model = HFLM(pretrained=str(ensure_checkpoint()), dtype="float32", device="cpu", batch_size=8)
    with timed() as imports:
        import_suite()
    with timed() as index:
        # What lm_eval's CLI merges into the metadata: the model arguments (REG counts output
        # tokens with the generator's tokenizer); the embedded judge is degenerate, so REG's
        # check before generation is told to warn.
        manager = task_manager({"pretrained": str(ensure_checkpoint()), "judge_check": "warn"})
    results = {}
    for family in families:
        spec = FAMILIES[family]
        profiler = cProfile.Profile()
        with timed() as wall:
            profiler.enable()
            lm_eval.simple_evaluate(
                model=model,
                tasks=spec["tasks"],
                limit=limit,
                task_manager=manager,
                gen_kwargs=spec["gen_kwargs"],
                log_samples=True,
                bootstrap_iters=0,
                verbosity="WARNING",
            )
            profiler.disable()
        found = attribute(pstats.Stats(profiler))
        top = sorted(found["per_function"].items(), key=lambda item: -item[1])[:10]
        share = found["suite_s"] / wall["s"]
        results[family] = {
            "tasks": spec["tasks"],
            "limit": limit,
            "gen_kwargs": spec["gen_kwargs"],
            "wall_s": round(wall["s"], 2),
            "suite_s": round(found["suite_s"], 3),
            "share": round(share, 4),
            "judge_forward_s": round(found["judge_forward_s"], 2),
            "judge_load_s": round(found["judge_load_s"], 2),
            "top_suite_functions": [[name, round(seconds, 3)] for name, seconds in top],
            "pass": share <= TARGET_SHARE,
        }
    return {
        "cache_warm_up_s": round(warm["s"], 2),
        "model_load_s": round(load["s"], 2),
        "suite_import_s": round(imports["s"], 2),
        "task_index_s": round(index["s"], 2),
        "target_share": TARGET_SHARE,
        "families": results,
    }


def report(result: dict) -> str:
    rows = [
        [
            family,
            r["limit"],
            r["wall_s"],
            r["suite_s"],
            f"{100 * r['share']:.2f}%",
            r["judge_forward_s"],
            r["judge_load_s"],
            verdict(r["pass"]),
            ", ".join(f"{name} {s}" for name, s in r["top_suite_functions"][:3]),
        ]
        for family, r in result["families"].items()
    ]
    header = [
        "family",
        "limit",
        "wall s",
        "suite s",
        f"suite share (<= {TARGET_SHARE:.0%})",
        "judge forward s",
        "judge load s",
        "",
        "largest suite costs (s)",
    ]
    return table(rows, header) + (
        f"\nOnce per process, outside the runs: HFLM load {result['model_load_s']} s, import of the suite's modules "
        f"{result['suite_import_s']} s, task indexing {result['task_index_s']} s; persistent caches warmed "
        f"in a child process first ({result['cache_warm_up_s']} s)."
    )


def figures(result: dict) -> list[dict]:
    return [
        figure(
            f"suite share of wall time, `{family}`, --limit {r['limit']}",
            f"<= {TARGET_SHARE:.0%}",
            f"{100 * r['share']:.2f}% ({r['suite_s']} s of {r['wall_s']} s)",
            r["pass"],
            result["command"],
        )
        for family, r in result["families"].items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--families", default=",".join(FAMILIES))
    args = parser.parse_args()
    setup_env()
    families = [f for f in args.families.split(",") if f]
    unknown = set(families) - set(FAMILIES)
    if unknown:
        parser.error(f"unknown families {sorted(unknown)}; choose from {list(FAMILIES)}")
    result = run(args.limit, families)
    result["command"] = f"python -m bench.suite_overhead --limit {args.limit} --families {','.join(families)}"
    result["figures"] = figures(result)
    save_section("suite_overhead", result)
    print(report(result))


if __name__ == "__main__":
    main()
