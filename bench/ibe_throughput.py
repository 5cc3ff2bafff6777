"""ibe_postprocess throughput per stage on 1,000 explanations, and janus against a swipl per query.

Each stage of ``ibe_postprocess.features.score`` is timed on its own (explanations per
second, models loaded beforehand and timed separately) over the same 1,000 explanations
(``bench/explanations.py``), in the order ``score`` runs them: spaCy reads every distinct
premise, conclusion and clause once (shared by formalization and drift), formalization
names the predicates from those words, every distinct predicate name is embedded in one
pass, drift tags the joined step texts. Coherence on the embedded LM judge is timed on a
subset (it is the one stage bounded by model forward passes, about 9 requests per
explanation); the same stage on a tiny stand-in classifier shows what the orchestration
costs at full size. Proofs: every program through janus (one process), and a subset
through one ``swipl`` process per query on the same programs and similarities, results
compared.

    python -m bench.ibe_throughput [--size 1000] [--coherence-subset 16] [--swipl-subset 100]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import figure, peak_rss_mib, save_section, scratch, setup_env, table, timed, verdict

PROVE_SPEEDUP_TARGET = 20.0
MEDIAN_PROOF_TARGET_MS = 5.0


def _prolog_list(value) -> str:
    """A Python value (lists, strings, numbers) as a Prolog term; strings stay strings."""
    if isinstance(value, list):
        return "[" + ",".join(_prolog_list(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)  # "..." is a string in SWI-Prolog 7+
    if isinstance(value, float):
        return f"{value:.9f}"
    return str(value)


def swipl_subprocess_proof(swipl: str, args: dict) -> list:
    """One fresh swipl process: load prover.pl, run the same ibe_prove query, print the result."""
    from ibe_postprocess.prover import PROVER_FILE

    terms = ", ".join(_prolog_list(args[k]) for k in ("Facts", "Rules", "Query", "Sims", "T", "D", "I", "S"))
    goal = (
        f"ibe_prover:ibe_prove({terms}, R), R = [Score, Rules, Status|_], "
        "format('~w~n~w~n~w~n', [Score, Rules, Status])"
    )
    done = subprocess.run(
        [swipl, "-q", "-g", goal, "-t", "halt", str(PROVER_FILE)], capture_output=True, text=True, timeout=60
    )
    if done.returncode != 0:
        raise RuntimeError(f"swipl failed: {done.stderr[:300]}")
    score, rules, status = done.stdout.splitlines()[:3]
    return [float(score), json.loads(rules), status]


def each_timed(function: Callable[[Any], Any], items: list[Any]) -> tuple[list[float], list[Any]]:
    """Wall seconds of each call of ``function`` on ``items``, and its results."""
    seconds, results = [], []
    for item in items:
        start = time.perf_counter()
        results.append(function(item))
        seconds.append(time.perf_counter() - start)
    return seconds, results


def run(size: int, coherence_subset: int, swipl_subset: int) -> dict:
    from bench.explanations import build
    from bench.tiny_judge import tiny_nli_model
    from ibe_postprocess import nlp
    from ibe_postprocess.cache import JsonlCache
    from ibe_postprocess.coherence import Coherence, valid_chunk
    from ibe_postprocess.drift import drift_many
    from ibe_postprocess.embeddings import PredicateEmbedder
    from ibe_postprocess.formalize import clause_texts, formalize_many
    from ibe_postprocess.parsing import parse_explanation
    from ibe_postprocess.prover import QUERY, Prover, janus, swi_home
    from ibe_postprocess.uncertainty import PAPER_CERTAINTY_MODEL, UncertaintyScorer

    work = scratch("ibe_throughput")
    records = build(size)
    stages: list[dict] = []
    loads: dict[str, float] = {}

    def stage(name: str, n: int, seconds: float, note: str = "") -> None:
        stages.append(
            {
                "stage": name,
                "explanations": n,
                "seconds": round(seconds, 3),
                "per_s": round(n / seconds, 1) if seconds else None,
                "peak_rss_mib": round(peak_rss_mib()),
                "note": note,
            }
        )

    with timed() as t:
        parsed = [parse_explanation(r.explanation) for r in records]
    stage("parsing", size, t["s"])

    with timed() as t:
        nlp.pipeline()
    loads["spacy"] = t["s"]
    items = [(r.premise, r.conclusion, p) for r, p in zip(records, parsed)]
    texts = list(clause_texts(items))
    with timed() as t:
        words = nlp.words_of(texts)
    stage("spaCy reading (premises, conclusions, clauses)", size, t["s"], f"{len(words)} distinct texts")

    with timed() as t:
        programs = formalize_many(items, words)
    stage("formalization (names from the words)", size, t["s"])

    with timed() as t:
        drift_many(items, words)
    stage("drift (spaCy on the joined steps, no parser)", size, t["s"])

    embedder = PredicateEmbedder(None, None)
    with timed() as t:
        embedder.load()
    loads["sentence encoder"] = t["s"]
    names = sorted({n for p in programs for n in p.predicates()})
    with timed() as t:
        embedder.embed(names)
    stage("predicate embedding (MiniLM, one pass)", size, t["s"], f"{len(names)} distinct predicate names")

    with timed() as t:
        janus()
    loads["janus + prover.pl"] = t["s"]
    prover = Prover(embedder)
    with timed() as t:
        per_proof, proofs = each_timed(prover.prove, programs)
    stage("proof (janus)", size, t["s"], "similarities + one query per program")
    consistent = sum(p.consistent for p in proofs)

    # The same programs and similarities through one swipl process per query.
    swipl = str(Path(swi_home()).parents[1] / "bin" / "swipl")
    if not Path(swipl).is_file():
        swipl = shutil.which("swipl") or swipl
    prolog = janus()
    subset = programs[:swipl_subset]
    queries = [prover.query_args(p) for p in subset]
    janus_times, janus_results = each_timed(lambda args: prolog.query_once(QUERY, args)["R"], queries)
    process_times, process_results = each_timed(lambda args: swipl_subprocess_proof(swipl, args), queries)
    mismatches = sum(
        not (
            abs(got[0] - float(expected[0])) < 1e-6 and list(got[1]) == list(expected[1]) and got[2] == str(expected[2])
        )
        for got, expected in zip(process_results, janus_results)
    )
    janus_query_ms = statistics.median(janus_times) * 1000
    process_ms = statistics.median(process_times) * 1000
    speedup = sum(process_times) / sum(janus_times)

    # Coherence: the embedded LM judge (the default's offline fallback) on a subset, fresh
    # cache, then a cached rerun.
    with timed() as t:
        lm_coherence = Coherence("embedded", work / "verdicts-lm")
        lm_coherence.judge.backend  # noqa: B018  (load the model outside the timed stage)
    loads["embedded LM judge"] = t["s"]
    few = parsed[:coherence_subset]
    steps = sum(len(p.steps) for p in few)
    verdicts = JsonlCache(work / "coherence-lm.jsonl", valid_chunk)  # score's coherence cache
    with timed() as t:
        lm_coherence.score_many(few, verdicts)
    stage("coherence, embedded LM judge", len(few), t["s"], f"subset: {steps} steps, {3 * steps} label log-likelihoods")
    calls_before = lm_coherence.computed
    with timed() as t:
        lm_coherence.score_many(few, verdicts)
    stage(
        "coherence, same subset again (cache)",
        len(few),
        t["s"],
        f"{lm_coherence.computed - calls_before} model calls",
    )
    del lm_coherence

    tiny = tiny_nli_model(scratch("tiny-nli", fresh=False))
    cheap = Coherence(f"seqcls:{tiny}", work / "verdicts-tiny")
    cheap.judge.backend  # noqa: B018
    with timed() as t:
        cheap.score_many(parsed)
    stage("coherence, tiny seqcls stand-in", size, t["s"], "2-layer random BERT: orchestration + sqlite cache cost")

    with timed() as t:
        scorer = UncertaintyScorer(PAPER_CERTAINTY_MODEL)
    loads[f"certainty model ({scorer.source})"] = t["s"]
    with timed() as t:
        scorer.score_many(parsed)
    stage("uncertainty", size, t["s"], f"estimate: {scorer.source}")

    return {
        "explanations": size,
        "steps": sum(len(p.steps) for p in parsed),
        "flagged": sum(bool(p.flags) for p in parsed),
        "consistent": consistent,
        "stages": stages,
        "model_loads_s": {k: round(v, 2) for k, v in loads.items()},
        "peak_rss_mib": round(peak_rss_mib()),
        "proofs": {
            "median_proof_ms": round(statistics.median(per_proof) * 1000, 3),
            "p95_proof_ms": round(sorted(per_proof)[int(0.95 * len(per_proof)) - 1] * 1000, 3),
            "janus_median_query_ms": round(janus_query_ms, 3),
            "swipl_process_median_ms": round(process_ms, 1),
            "compared_programs": len(subset),
            "result_mismatches": mismatches,
            "speedup_janus_vs_process": round(speedup, 1),
            "targets": {"speedup": PROVE_SPEEDUP_TARGET, "median_proof_ms": MEDIAN_PROOF_TARGET_MS},
            "pass_speedup": speedup >= PROVE_SPEEDUP_TARGET,
            "pass_median": statistics.median(per_proof) * 1000 < MEDIAN_PROOF_TARGET_MS,
        },
    }


def report(result: dict) -> str:
    rows = [
        [s["stage"], s["explanations"], s["seconds"], s["per_s"], s["peak_rss_mib"], s["note"]]
        for s in result["stages"]
    ]
    proofs = result["proofs"]
    lines = [
        table(rows, ["stage", "explanations", "s", "expl/s", "peak RSS MiB", "note"]),
        "",
        "model loads (s, outside the stages): " + ", ".join(f"{k} {v}" for k, v in result["model_loads_s"].items()),
        f"proofs: median {proofs['median_proof_ms']} ms per explanation (target < {MEDIAN_PROOF_TARGET_MS}) "
        f"{verdict(proofs['pass_median'])}; janus query median {proofs['janus_median_query_ms']} ms vs swipl process "
        f"{proofs['swipl_process_median_ms']} ms over {proofs['compared_programs']} programs: "
        f"{proofs['speedup_janus_vs_process']}x (target >= {PROVE_SPEEDUP_TARGET:g}x) "
        f"{verdict(proofs['pass_speedup'])}; "
        f"{proofs['result_mismatches']} result mismatches",
    ]
    return "\n".join(lines)


def figures(result: dict) -> list[dict]:
    proofs, command = result["proofs"], result["command"]
    return [
        figure(
            f"median proof (janus: similarities + query), {result['explanations']:,} explanations",
            f"< {MEDIAN_PROOF_TARGET_MS:g} ms",
            f"{proofs['median_proof_ms']} ms (p95 {proofs['p95_proof_ms']} ms)",
            proofs["pass_median"],
            command,
        ),
        figure(
            f"janus vs one `swipl` process per query, {proofs['compared_programs']} programs",
            f">= {PROVE_SPEEDUP_TARGET:g}x",
            f"{proofs['speedup_janus_vs_process']}x, {proofs['result_mismatches']} result mismatches",
            proofs["pass_speedup"] and proofs["result_mismatches"] == 0,
            command,
            peer=f"swipl process: {proofs['swipl_process_median_ms']} ms median vs janus "
            f"{proofs['janus_median_query_ms']} ms",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--coherence-subset", type=int, default=16)
    parser.add_argument("--swipl-subset", type=int, default=100)
    args = parser.parse_args()
    setup_env()
    result = run(args.size, args.coherence_subset, args.swipl_subset)
    result["command"] = (
        f"python -m bench.ibe_throughput --size {args.size} --coherence-subset {args.coherence_subset} "
        f"--swipl-subset {args.swipl_subset}"
    )
    result["figures"] = figures(result)
    save_section("ibe_throughput", result)
    print(report(result))


if __name__ == "__main__":
    main()
