"""Total ``ibe_postprocess score`` time at 100, 1,000 and 5,000 explanations: throughput,
linearity, its distance to the models' floor and how it scales with processes.

Each size runs ``ibe_postprocess.features.score`` (the whole ``score`` command minus
argument parsing: parsing, spaCy, formalization, embeddings, proofs, drift, coherence,
uncertainty, feature files) in a fresh process with an empty cache. Nothing is skipped or
mocked; two settings are cheapened, the same at every size, because the defaults are
infeasible on this CPU at 5,000 (about 15,000 steps x 3 label log-likelihoods through the
embedded LM judge would take hours):

- coherence judge: ``seqcls:`` backend on a tiny random-weight BERT (``bench/tiny_judge.py``),
  i.e. the real batching and caches with a near-free model;
- uncertainty: ``lexicon`` (the certainty model is Hub-only; offline it falls back to the
  lexicon anyway).

spaCy and janus are loaded before the run starts (their load times are reported apart);
per-stage time (wall and CPU) is taken by wrapping the stage functions. Headlines, at the
largest size:

- the stages without a model (everything but the judge, the spaCy pipeline and the MiniLM
  encoder), target >= 1,000 explanations per second;
- everything outside the judge against its **model-compute floor**: the same spaCy
  batches (``nlp.pipe`` over the same texts, the same components, nothing read from the
  docs) and the same MiniLM chunks (the same forward passes), on the same number of
  processes, each model cold in a fresh process after its load, as in ``score``; target
  <= 1.15x on 1 process (what the suite adds around its models), reported beside it on
  the default process count (the usable cores);
- everything outside the judge on 1 and on 2 processes (fresh process and cache each):
  target >= 1.8x, and the two ``features.jsonl`` must be the same bytes. ``score`` keeps
  both cores busy by queueing drift's spaCy reading before the proofs (``workers``), so
  on 2 processes the stage table shows only the wait that the proofs did not hide.

"Linear" is judged on the time per explanation, which should stay flat.

    python -m bench.ibe_scaling [--sizes 100,1000,5000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import time
from functools import partial, wraps

from bench.common import child_json, figure, peak_rss_mib, save_section, scratch, setup_env, table, timed, verdict
from ibe_postprocess.workers import usable_cores

LINEAR_TOLERANCE = 1.5  # per-explanation time at the largest size at most 1.5x that at 1,000 (or the smallest)
THROUGHPUT_TARGET = 1000.0  # explanations per second of the stages without a model, at the largest size
FLOOR_TARGET = 1.15  # outside the judge / the models' compute on the same batches
SCALING_TARGET = 1.8  # outside the judge, 1 process / 2 processes
SPACY = ("spaCy: premises, conclusions, clauses", "spaCy: joined steps (drift)")
COLUMNS = {  # the report's columns before the stages: header -> a run's key
    "explanations": "size",
    "processes": "processes",
    "total s": "total_s",
    "outside judge s": "outside_judge_s",
    "floor s": "floor_total_s",
    "/ floor": "floor_ratio",
    "peak RSS MiB": "peak_rss_mib",
}


def _timed(function, label: str, totals: dict[str, float], cpu: dict[str, float]):
    """``function``, adding its wall and CPU time to ``label``'s."""

    @wraps(function)
    def timed_call(*args, **kwargs):
        start, start_cpu = time.perf_counter(), time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            totals[label] = totals.get(label, 0.0) + time.perf_counter() - start
            cpu[label] = cpu.get(label, 0.0) + time.process_time() - start_cpu

    return timed_call


def _wrap(owner, name: str, label: str, totals: dict[str, float], cpu: dict[str, float], queued: bool) -> None:
    """Time ``owner.name`` under ``label``; a ``queued`` one's queueing and the wait for its result:
    all of it on one process; on more, what the work done meanwhile in this process did not hide."""
    timed_call = _timed(getattr(owner, name), label, totals, cpu)

    @wraps(timed_call)
    def queue(*args, **kwargs):
        return _timed(timed_call(*args, **kwargs), label, totals, cpu)

    setattr(owner, name, queue if queued else timed_call)


def _spacy_floor(disabled: list[str], texts: list[str]) -> int:
    """``nlp.words_of``'s (without the parser: ``nouns_of``'s) model compute on one batch: the same
    components, nothing read back."""
    from ibe_postprocess.nlp import BATCH_SIZE, pipeline

    nlp = pipeline()
    with nlp.select_pipes(disable=disabled):
        return sum(len(doc) for doc in nlp.pipe(texts, batch_size=BATCH_SIZE))


def floor(size: int, processes: int) -> dict[str, float]:
    """The models' compute on ``score``'s own batches (spaCy's two readings, MiniLM's chunks),
    each model cold in this fresh process with only its load done before, as in ``score``.

    A floor taken in ``score``'s process after the run would reuse its warm caches (the
    lemma memo, torch's kernels for every batch shape) and be lower than any run can be.
    """
    from bench.explanations import build
    from ibe_postprocess import nlp
    from ibe_postprocess.drift import step_texts
    from ibe_postprocess.embeddings import PredicateEmbedder, _encode_chunk
    from ibe_postprocess.formalize import clause_texts, formalize_many
    from ibe_postprocess.parsing import parse_explanation
    from ibe_postprocess.workers import Workers

    records = build(size)
    parsed = [parse_explanation(record.explanation) for record in records]
    items = [(r.premise, r.conclusion, p) for r, p in zip(records, parsed)]
    embedder = PredicateEmbedder()
    nlp.pipeline()
    embedder.load()

    def minilm_jobs() -> list[tuple[str, list[str]]]:  # the names formalization gives, read after spaCy's floor
        programs = formalize_many(items, nlp.words_of(clause_texts(items)))
        names = {name for program in programs for name in program.predicates()}
        return [(embedder.name, [name.replace("_", " ") for name in chunk]) for chunk in embedder.chunks(names)]

    times = {}
    for label, function, chunks in (
        (SPACY[0], partial(_spacy_floor, ["lemmatizer"]), lambda: nlp._chunks(clause_texts(items))),
        (SPACY[1], partial(_spacy_floor, ["parser", "lemmatizer"]), lambda: nlp._chunks(step_texts(items))),
        ("MiniLM: predicate names", _encode_chunk, minilm_jobs),
    ):
        work = chunks()
        with timed() as t, Workers(processes) as workers:
            workers.map(function, work)
        times[label] = round(t["s"], 3)
    return times


def _cpu_with_workers() -> float:
    """CPU seconds of this process and its ended workers (``score`` shuts its pool down)."""
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def one_size(size: int, processes: int) -> dict:
    """Run score() on ``size`` explanations in this process; stage times by wrapping."""
    from bench.explanations import build
    from bench.tiny_judge import tiny_nli_model
    from ibe_postprocess import coherence, embeddings, features, features_file, nlp, prover, uncertainty
    from ibe_postprocess.folder import FeaturesFolder

    tiny = tiny_nli_model(scratch("tiny-nli", fresh=False))
    records = build(size)
    loads: dict[str, float] = {}
    for label, load in (
        ("spaCy", nlp.pipeline),
        ("janus + prover.pl", prover.janus),
        ("MiniLM", lambda: embeddings.PredicateEmbedder().load()),
    ):
        with timed() as t:
            load()
        loads[label] = t["s"]
    totals: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for owner, name, label, queued in (
        (features, "parse_explanation", "parsing", False),
        (features, "queue_words_of", SPACY[0], True),
        (features, "formalize_many", "formalization (names)", False),
        (embeddings.PredicateEmbedder, "queue_embedding", "embedding", True),
        (prover.Prover, "prove_many", "proofs", False),
        (features, "new_concepts_many", "drift (after its spaCy)", False),
        (features, "queue_nouns_of", SPACY[1], True),
        (coherence.Coherence, "step_verdicts", "coherence (judge)", False),
        (uncertainty.UncertaintyScorer, "score_many", "uncertainty", False),
        (features_file, "write", "feature files", False),
    ):
        _wrap(owner, name, label, totals, cpu, queued)
    settings = features.ScoreSettings(nli_judge=f"seqcls:{tiny}", certainty_model="lexicon", processes=processes)
    out = scratch(f"ibe_scaling_{size}_p{processes}")
    start, start_cpu = time.perf_counter(), _cpu_with_workers()
    rows = features.score(records, out, settings)
    total, total_cpu = time.perf_counter() - start, _cpu_with_workers() - start_cpu
    outside_judge = total - totals.get("coherence (judge)", 0.0)
    neural = sum(totals.get(name, 0.0) for name in SPACY) + totals.get("embedding", 0.0)
    return {
        "size": size,
        "processes": processes,
        "rows": len(rows),
        "features_sha256": hashlib.sha256(FeaturesFolder(out).features.read_bytes()).hexdigest(),
        "total_s": round(total, 2),
        "cpu_s": round(total_cpu, 2),
        "outside_judge_s": round(outside_judge, 2),
        "neural_s": round(neural, 2),
        "loads_s": {k: round(v, 2) for k, v in loads.items()},
        "stages_s": {k: round(v, 3) for k, v in totals.items()},
        "stages_cpu_s": {k: round(v, 3) for k, v in cpu.items()},
        "peak_rss_mib": round(peak_rss_mib()),
    }


def _one(size: int, processes: int) -> dict:
    """``score`` on ``size`` explanations in a fresh process, then its floor in another."""
    run = child_json("bench.ibe_scaling", "--one", str(size), "--processes", str(processes))
    run["floor_s"] = child_json("bench.ibe_scaling", "--floor", str(size), "--processes", str(processes))
    run["floor_total_s"] = round(sum(run["floor_s"].values()), 2)
    run["ms_per_explanation"] = round(1000 * run["total_s"] / run["size"], 2)
    run["outside_judge_per_s"] = round(run["size"] / run["outside_judge_s"], 1)
    run["without_neural_per_s"] = round(run["size"] / max(run["outside_judge_s"] - run["neural_s"], 1e-9), 1)
    run["floor_ratio"] = round(run["outside_judge_s"] / run["floor_total_s"], 3)
    return run


def run(sizes: list[int], processes: int) -> dict:
    """Every size on ``processes`` processes, then the largest on 1 and on 2 (for the scaling figure)."""
    runs = [_one(size, processes) for size in sizes]
    largest = runs[-1]
    by_count = {processes: largest}
    for count in (1, 2):
        if count not in by_count:
            by_count[count] = _one(largest["size"], count)
    by_size = {r["size"]: r for r in runs}
    reference = by_size.get(1000, runs[0])
    ratio = largest["ms_per_explanation"] / reference["ms_per_explanation"]
    one, two = by_count[1], by_count[2]
    scaling = one["outside_judge_s"] / two["outside_judge_s"]
    return {
        "judge": "seqcls: tiny random BERT (bench/tiny_judge.py)",
        "uncertainty": "lexicon",
        "processes": processes,
        "runs": runs,
        "by_processes": {str(count): r for count, r in sorted(by_count.items())},
        "reference_size": reference["size"],
        "per_explanation_ratio": round(ratio, 2),
        "tolerance": LINEAR_TOLERANCE,
        "pass": ratio <= LINEAR_TOLERANCE,
        "throughput_target": THROUGHPUT_TARGET,
        "pass_without_models": largest["without_neural_per_s"] >= THROUGHPUT_TARGET,
        "floor_target": FLOOR_TARGET,
        "pass_floor": one["floor_ratio"] <= FLOOR_TARGET,
        "scaling": round(scaling, 3),
        "scaling_target": SCALING_TARGET,
        "same_features": one["features_sha256"] == two["features_sha256"],
        "pass_scaling": scaling >= SCALING_TARGET and one["features_sha256"] == two["features_sha256"],
    }


def report(result: dict) -> str:
    stages = list(dict.fromkeys(k for r in result["runs"] for k in r["stages_s"]))
    runs = result["runs"] + [r for k, r in result["by_processes"].items() if int(k) != result["processes"]]
    rows = [[*(r[key] for key in COLUMNS.values()), *(r["stages_s"].get(s, "") for s in stages)] for r in runs]
    largest = result["runs"][-1]
    one, two = result["by_processes"]["1"], result["by_processes"]["2"]
    return table(rows, [*COLUMNS, *stages]) + (
        f"\nat {largest['size']:,}: stages without a model {largest['without_neural_per_s']:,}/s "
        f"(target >= {THROUGHPUT_TARGET:,.0f}) {verdict(result['pass_without_models'])}; outside the judge "
        f"{one['outside_judge_s']} s = {one['floor_ratio']}x the models' floor of {one['floor_total_s']} s on 1 "
        f"process (target <= {FLOOR_TARGET}) {verdict(result['pass_floor'])}, {largest['floor_ratio']}x on "
        f"{largest['processes']}; "
        f"1 -> 2 processes {one['outside_judge_s']} s -> {two['outside_judge_s']} s = {result['scaling']}x "
        f"(target >= {SCALING_TARGET}), features {'identical' if result['same_features'] else 'DIFFERENT'} "
        f"{verdict(result['pass_scaling'])}. Loads before the run: "
        + ", ".join(f"{k} {v} s" for k, v in largest["loads_s"].items())
        + f"\nper-explanation time at {largest['size']} / at {result['reference_size']}: "
        f"{result['per_explanation_ratio']} (linear: <= {result['tolerance']}) {verdict(result['pass'])}; "
        f"judge {result['judge']}, uncertainty {result['uncertainty']}"
    )


def figures(result: dict) -> list[dict]:
    largest, command = result["runs"][-1], result["command"]
    one, two = result["by_processes"]["1"], result["by_processes"]["2"]
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
            f"IBE `score` outside the judge / its models' compute (spaCy + MiniLM alone, same texts and batches), "
            f"{largest['size']:,}, 1 process",
            f"<= {FLOOR_TARGET}x",
            f"{one['floor_ratio']}x ({one['outside_judge_s']} s vs {one['floor_total_s']} s; on "
            f"{largest['processes']} processes {largest['floor_ratio']}x, {largest['outside_judge_s']} s vs "
            f"{largest['floor_total_s']} s)",
            result["pass_floor"],
            command,
        ),
        figure(
            f"IBE `score` outside the judge, 1 -> 2 processes, {largest['size']:,}; features.jsonl identical",
            f">= {SCALING_TARGET}x, same bytes",
            f"{result['scaling']}x ({one['outside_judge_s']} s -> {two['outside_judge_s']} s), "
            f"features {'identical' if result['same_features'] else 'DIFFERENT'}",
            result["pass_scaling"],
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
    parser.add_argument(
        "--processes", type=int, default=usable_cores(), help="processes of the runs at every size (default: cores)"
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: score one size, JSON on stdout
    parser.add_argument("--floor", type=int, help=argparse.SUPPRESS)  # internal: one size's floor, JSON on stdout
    args = parser.parse_args()
    setup_env()
    if args.one:
        print(json.dumps(one_size(args.one, args.processes)))
        return
    if args.floor:
        print(json.dumps(floor(args.floor, args.processes)))
        return
    sizes = sorted(int(s) for s in args.sizes.split(","))
    result = run(sizes, args.processes)
    result["command"] = f"python -m bench.ibe_scaling --sizes {','.join(map(str, sizes))}"
    result["figures"] = figures(result)
    save_section("ibe_scaling", result)
    print(report(result))


if __name__ == "__main__":
    main()
