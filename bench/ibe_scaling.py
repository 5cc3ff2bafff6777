"""Total ``ibe_postprocess score`` time at 100, 1,000 and 5,000 explanations: is it linear?

Each size runs ``ibe_postprocess.features.score`` (the whole ``score`` command minus
argument parsing: parsing, formalization, embeddings, proofs, drift, coherence,
uncertainty, feature files) in a fresh process with an empty cache, so model loads count
at every size. Nothing is skipped or mocked; two settings are cheapened, the same at every
size, because the defaults are infeasible on this CPU at 5,000 (about 15,000 steps x 3
label log-likelihoods through the embedded LM judge would take hours):

- coherence judge: ``seqcls:`` backend on a tiny random-weight BERT (``bench/tiny_judge.py``),
  i.e. the real batching and sqlite cache with a near-free model;
- uncertainty: ``lexicon`` (the certainty model is Hub-only; offline it falls back to the
  lexicon anyway).

Per-stage time is taken by wrapping the stage functions; "linear" is judged on the time
per explanation, which should stay flat (fixed costs such as model loads make it fall).

    python -m bench.ibe_scaling [--sizes 100,1000,5000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from functools import wraps

from bench.common import REPO, peak_rss_mib, save_section, scratch, setup_env, table, verdict

LINEAR_TOLERANCE = 1.5  # per-explanation time at the largest size at most 1.5x that at 1,000 (or the smallest)


def _wrap(owner, name: str, label: str, totals: dict[str, float]) -> None:
    original = getattr(owner, name)

    @wraps(original)
    def timed_call(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            totals[label] = totals.get(label, 0.0) + time.perf_counter() - start

    setattr(owner, name, timed_call)


def one_size(size: int) -> dict:
    """Run score() on ``size`` explanations in this process; stage times by wrapping."""
    from bench.explanations import build
    from bench.tiny_judge import tiny_nli_model
    from ibe_postprocess import coherence, embeddings, features, prover, uncertainty

    tiny = tiny_nli_model(scratch("tiny-nli", fresh=False))
    records = build(size)
    totals: dict[str, float] = {}
    _wrap(features, "parse_explanation", "parsing", totals)
    _wrap(features, "formalize_many", "formalization", totals)
    _wrap(features, "drift_many", "drift", totals)
    _wrap(embeddings.PredicateEmbedder, "_load", "encoder load", totals)
    _wrap(embeddings.PredicateEmbedder, "embed", "embedding (incl. encoder load)", totals)
    _wrap(prover.Prover, "prove_many", "proofs (incl. embedding)", totals)
    _wrap(coherence.Coherence, "score_many", "coherence", totals)
    _wrap(uncertainty.UncertaintyScorer, "score_many", "uncertainty", totals)
    _wrap(features, "write_rows", "feature files", totals)
    settings = features.ScoreSettings(nli_judge=f"seqcls:{tiny}", certainty_model="lexicon")
    start = time.perf_counter()
    rows = features.score(records, scratch(f"ibe_scaling_{size}"), settings)
    total = time.perf_counter() - start
    return {
        "size": size,
        "rows": len(rows),
        "total_s": round(total, 2),
        "stages_s": {k: round(v, 3) for k, v in totals.items()},
        "peak_rss_mib": round(peak_rss_mib()),
    }


def run(sizes: list[int]) -> dict:
    runs = []
    for size in sizes:
        done = subprocess.run(
            [sys.executable, "-m", "bench.ibe_scaling", "--one", str(size)],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"size {size} failed:\n{done.stderr[-2000:]}")
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    for r in runs:
        r["ms_per_explanation"] = round(1000 * r["total_s"] / r["size"], 2)
    by_size = {r["size"]: r for r in runs}
    reference = by_size.get(1000, runs[0])
    largest = runs[-1]
    ratio = largest["ms_per_explanation"] / reference["ms_per_explanation"]
    return {
        "judge": "seqcls: tiny random BERT (bench/tiny_judge.py)",
        "uncertainty": "lexicon",
        "runs": runs,
        "reference_size": reference["size"],
        "per_explanation_ratio": round(ratio, 2),
        "tolerance": LINEAR_TOLERANCE,
        "pass": ratio <= LINEAR_TOLERANCE,
    }


def report(result: dict) -> str:
    stages = list(dict.fromkeys(k for r in result["runs"] for k in r["stages_s"]))
    rows = [
        [
            r["size"],
            r["total_s"],
            r["ms_per_explanation"],
            r["peak_rss_mib"],
            *(r["stages_s"].get(s, "") for s in stages),
        ]
        for r in result["runs"]
    ]
    return table(rows, ["explanations", "total s", "ms/expl", "peak RSS MiB", *stages]) + (
        f"\nper-explanation time at {result['runs'][-1]['size']} / at {result['reference_size']}: "
        f"{result['per_explanation_ratio']} "
        f"(linear: <= {result['tolerance']}) {verdict(result['pass'])}; judge {result['judge']}, "
        f"uncertainty {result['uncertainty']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: one size, JSON on stdout
    args = parser.parse_args()
    setup_env()
    if args.one:
        print(json.dumps(one_size(args.one)))
        return
    sizes = sorted(int(s) for s in args.sizes.split(","))
    result = run(sizes)
    result["command"] = f"python -m bench.ibe_scaling --sizes {','.join(map(str, sizes))}"
    save_section("ibe_scaling", result)
    print(report(result))


if __name__ == "__main__":
    main()
