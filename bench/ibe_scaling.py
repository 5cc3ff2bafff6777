"""Total ``ibe_postprocess score`` time at 100, 1,000 and 5,000 explanations: throughput and linearity.

Each size runs ``ibe_postprocess.features.score`` (the whole ``score`` command minus
argument parsing: parsing, spaCy, formalization, embeddings, proofs, drift, coherence,
uncertainty, feature files) in a fresh process with an empty cache. Nothing is skipped or
mocked; two settings are cheapened, the same at every size, because the defaults are
infeasible on this CPU at 5,000 (about 15,000 steps x 3 label log-likelihoods through the
embedded LM judge would take hours):

- coherence judge: ``seqcls:`` backend on a tiny random-weight BERT (``bench/tiny_judge.py``),
  i.e. the real batching and sqlite cache with a near-free model;
- uncertainty: ``lexicon`` (the certainty model is Hub-only; offline it falls back to the
  lexicon anyway).

spaCy and janus are loaded before the run starts (their load times are reported apart);
per-stage time (wall and CPU) is taken by wrapping the stage functions. Headline, at the
largest size, target >= 1,000 explanations per second, read two ways:

- the stages without a model: everything but the judge, the spaCy pipeline and the
  MiniLM encoder (parsing, predicate names, drift's set arithmetic, proofs, uncertainty
  by lexicon, caches, feature files);
- everything outside the judge (the above plus spaCy and MiniLM), model loads apart.

"Linear" is judged on the time per explanation, which should stay flat.

    python -m bench.ibe_scaling [--sizes 100,1000,5000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from functools import wraps

from bench.common import REPO, figure, peak_rss_mib, save_section, scratch, setup_env, table, timed, verdict

LINEAR_TOLERANCE = 1.5  # per-explanation time at the largest size at most 1.5x that at 1,000 (or the smallest)
THROUGHPUT_TARGET = 1000.0  # explanations per second outside the judge, at the largest size
SPACY = ("spaCy: premises, conclusions, clauses", "spaCy: joined steps (drift)")


def _wrap(owner, name: str, label: str, totals: dict[str, float], cpu: dict[str, float]) -> None:
    original = getattr(owner, name)

    @wraps(original)
    def timed_call(*args, **kwargs):
        start, start_cpu = time.perf_counter(), time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            totals[label] = totals.get(label, 0.0) + time.perf_counter() - start
            cpu[label] = cpu.get(label, 0.0) + time.process_time() - start_cpu

    setattr(owner, name, timed_call)


def one_size(size: int) -> dict:
    """Run score() on ``size`` explanations in this process; stage times by wrapping."""
    from bench.explanations import build
    from bench.tiny_judge import tiny_nli_model
    from ibe_postprocess import coherence, drift, embeddings, features, features_file, nlp, prover, uncertainty

    tiny = tiny_nli_model(scratch("tiny-nli", fresh=False))
    records = build(size)
    loads: dict[str, float] = {}
    with timed() as t:
        nlp.pipeline()
    loads["spaCy"] = t["s"]
    with timed() as t:
        prover.janus()
    loads["janus + prover.pl"] = t["s"]
    totals: dict[str, float] = {}
    cpu: dict[str, float] = {}
    _wrap(features, "parse_explanation", "parsing", totals, cpu)
    _wrap(features, "words_of", SPACY[0], totals, cpu)
    _wrap(features, "formalize_many", "formalization (names)", totals, cpu)
    _wrap(embeddings.PredicateEmbedder, "_load", "encoder load", totals, cpu)
    _wrap(embeddings.PredicateEmbedder, "embed", "embedding (incl. encoder load)", totals, cpu)
    _wrap(prover.Prover, "prove_many", "proofs", totals, cpu)
    _wrap(features, "drift_many", "drift (incl. its spaCy)", totals, cpu)
    _wrap(drift, "nouns_of", SPACY[1], totals, cpu)
    _wrap(coherence.Coherence, "score_many", "coherence (judge)", totals, cpu)
    _wrap(uncertainty.UncertaintyScorer, "score_many", "uncertainty", totals, cpu)
    _wrap(features_file, "write", "feature files", totals, cpu)
    settings = features.ScoreSettings(nli_judge=f"seqcls:{tiny}", certainty_model="lexicon")
    start = time.perf_counter()
    rows = features.score(records, scratch(f"ibe_scaling_{size}"), settings)
    total = time.perf_counter() - start
    outside_judge = total - totals.get("coherence (judge)", 0.0) - totals.get("encoder load", 0.0)
    neural = sum(totals.get(name, 0.0) for name in SPACY) + totals.get("embedding (incl. encoder load)", 0.0)
    neural -= totals.get("encoder load", 0.0)
    return {
        "size": size,
        "rows": len(rows),
        "total_s": round(total, 2),
        "outside_judge_s": round(outside_judge, 2),
        "neural_s": round(neural, 2),
        "loads_s": {k: round(v, 2) for k, v in loads.items()},
        "stages_s": {k: round(v, 3) for k, v in totals.items()},
        "stages_cpu_s": {k: round(v, 3) for k, v in cpu.items()},
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
        r["outside_judge_per_s"] = round(r["size"] / r["outside_judge_s"], 1)
        r["without_neural_per_s"] = round(r["size"] / max(r["outside_judge_s"] - r["neural_s"], 1e-9), 1)
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
        "throughput_target": THROUGHPUT_TARGET,
        "pass_without_models": largest["without_neural_per_s"] >= THROUGHPUT_TARGET,
        "pass_outside_judge": largest["outside_judge_per_s"] >= THROUGHPUT_TARGET,
    }


def report(result: dict) -> str:
    stages = list(dict.fromkeys(k for r in result["runs"] for k in r["stages_s"]))
    rows = [
        [
            r["size"],
            r["total_s"],
            r["outside_judge_per_s"],
            r["peak_rss_mib"],
            *(r["stages_s"].get(s, "") for s in stages),
        ]
        for r in result["runs"]
    ]
    largest = result["runs"][-1]
    return table(rows, ["explanations", "total s", "expl/s outside judge", "peak RSS MiB", *stages]) + (
        f"\nat {largest['size']:,} (target >= {THROUGHPUT_TARGET:,.0f} explanations/s): stages without a model "
        f"{largest['without_neural_per_s']:,}/s {verdict(result['pass_without_models'])}; outside the judge "
        f"{largest['outside_judge_per_s']:,}/s {verdict(result['pass_outside_judge'])} ({largest['neural_s']} s "
        f"of its {largest['outside_judge_s']} s in spaCy and MiniLM). Loads before the run: "
        + ", ".join(f"{k} {v} s" for k, v in largest["loads_s"].items())
        + f"\nper-explanation time at {largest['size']} / at {result['reference_size']}: "
        f"{result['per_explanation_ratio']} (linear: <= {result['tolerance']}) {verdict(result['pass'])}; "
        f"judge {result['judge']}, uncertainty {result['uncertainty']}"
    )


def figures(result: dict) -> list[dict]:
    largest, command = result["runs"][-1], result["command"]
    models = largest["neural_s"]
    return [
        figure(
            f"IBE `score`, stages without a model (all but judge, spaCy, MiniLM), {largest['size']:,} explanations",
            f">= {THROUGHPUT_TARGET:,.0f} expl/s",
            f"{largest['without_neural_per_s']:,} expl/s ({largest['outside_judge_s'] - models:.2f} s)",
            result["pass_without_models"],
            command,
        ),
        figure(
            f"IBE `score` outside the judge (the above + spaCy + MiniLM), {largest['size']:,}, model loads apart",
            f">= {THROUGHPUT_TARGET:,.0f} expl/s",
            f"{largest['outside_judge_per_s']:,} expl/s ({largest['outside_judge_s']} s, {models} s in spaCy + MiniLM)",
            result["pass_outside_judge"],
            command,
        ),
        figure(
            f"time per explanation at {largest['size']:,} / at {result['reference_size']:,} (linear)",
            f"<= {result['tolerance']}",
            f"{result['per_explanation_ratio']} ({largest['ms_per_explanation']} ms per explanation, judge included)",
            result["pass"],
            command,
        ),
    ]


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
    result["figures"] = figures(result)
    save_section("ibe_scaling", result)
    print(report(result))


if __name__ == "__main__":
    main()
