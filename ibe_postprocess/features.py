"""IBE features for every explanation: the ``score`` stage.

Stages run over all explanations in batches (spaCy pipes, one embedding batch, judge
and certainty-model batches); the costly ones (proofs, LLM formalization, coherence,
uncertainty) are cached on disk batch by batch under the output folder, so an
interrupted run resumes where it stopped. Nothing is dropped: an explanation that
cannot be parsed or measured keeps its row, with the reasons in ``flag``.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from custom_metrics.ibe.inputs import ExplanationRecord, JudgeRecord
from custom_metrics.ibe.parsing import ParsedExplanation, parse_explanation
from ibe_postprocess import cache as kv
from ibe_postprocess.drift import drift_many
from ibe_postprocess.formalize import Program, formalize_many
from ibe_postprocess.selector import FEATURES
from ibe_postprocess.uncertainty import PAPER_CERTAINTY_MODEL

CSV_COLUMNS = (
    "qid",
    "option",
    "split",
    "correct",
    *FEATURES,
    "flag",
    "n_steps",
    "proof_score",
    "proof_status",
    "formalization",
    "coherence_judge",
    "uncertainty_source",
    "hedge_epistemic",
    "hedge_doxastic",
    "hedge_conditional",
    "hedge_ratio",
    "source",
)


@dataclass(frozen=True)
class ScoreSettings:
    nli_judge: str | None = None  # None: the paper's NLI model, the embedded LM where it cannot load
    certainty_model: str | None = PAPER_CERTAINTY_MODEL  # "lexicon" forces the lexicon estimate
    formalizer: str = "deterministic"  # or "lm:<hf id or path>"
    encoder: str | None = None  # sentence encoder for weak unification; None: all-MiniLM-L6-v2
    batch_size: int = 32


def _chunks(indices: list[int], size: int) -> list[list[int]]:
    return [indices[start : start + size] for start in range(0, len(indices), size)]


def cached_stage(
    name: str, keys: Sequence[str], compute: Callable[[list[int]], list[Any]], store: kv.JsonlCache, batch_size: int
) -> list[Any]:
    """Values for every key: cached ones read back, the others computed batch by batch."""
    todo = [index for index, key in enumerate(keys) if key not in store]
    for chunk in tqdm(_chunks(todo, batch_size), desc=name, unit="batch", disable=not todo):
        store.put_many(dict(zip((keys[i] for i in chunk), compute(chunk))))
    return [store[key] for key in keys]


def _programs(
    records: Sequence[ExplanationRecord], parsed: Sequence[ParsedExplanation], settings: ScoreSettings, cache_dir: Path
) -> tuple[list[Program], list[str], list[list[str]]]:
    """Programs per explanation, how each was made, and formalization flags."""
    items = [(r.premise, r.conclusion, p) for r, p in zip(records, parsed)]
    programs = formalize_many(items)
    methods = ["deterministic"] * len(records)
    flags: list[list[str]] = [[] for _ in records]
    if settings.formalizer == "deterministic":
        return programs, methods, flags
    if not settings.formalizer.startswith("lm:"):
        raise ValueError(f"--formalizer must be 'deterministic' or 'lm:<model>', got {settings.formalizer!r}")
    from ibe_postprocess.autoformalize import LMFormalizer, formalization_prompt, program_from_output
    from ibe_postprocess.prolog_guard import GuardError
    from ibe_postprocess.prover import system_predicate_check

    spec = settings.formalizer[3:]
    prompts = [formalization_prompt(*item) for item in items]
    holder: dict[str, LMFormalizer] = {}

    def generate(chunk: list[int]) -> list[str]:
        holder.setdefault("model", LMFormalizer(spec))
        return holder["model"].generate([prompts[i] for i in chunk])

    store = kv.JsonlCache(cache_dir / "autoformalized.jsonl")
    outputs = cached_stage("autoformalize", [kv.key(spec, p) for p in prompts], generate, store, settings.batch_size)
    is_system = system_predicate_check()
    for index, output in enumerate(outputs):
        if not parsed[index].steps:
            continue  # nothing to formalize; the parse flag already says why
        try:
            programs[index] = program_from_output(output, is_system)
            methods[index] = f"lm:{spec}"
        except GuardError as err:
            flags[index].append(f"autoformalized program rejected ({err}); deterministic formalization used")
    return programs, methods, flags


def score(
    records: Sequence[ExplanationRecord], out_dir: Path, settings: ScoreSettings, judged: Sequence[JudgeRecord] = ()
) -> list[dict[str, Any]]:
    """Compute the feature rows and write ``features.csv``/``features.jsonl`` (and ``judge.jsonl``)."""
    from ibe_postprocess.coherence import Coherence
    from ibe_postprocess.embeddings import PredicateEmbedder
    from ibe_postprocess.prover import Prover
    from ibe_postprocess.uncertainty import UncertaintyScorer

    out_dir.mkdir(parents=True, exist_ok=True)
    cache_dir = out_dir / "cache"
    parsed = [parse_explanation(record.explanation) for record in records]
    programs, methods, formal_flags = _programs(records, parsed, settings, cache_dir)

    prover = Prover(PredicateEmbedder(settings.encoder, cache_dir / "embeddings.jsonl"))
    proof_keys = [kv.key("proof", program.text(), prover.settings()) for program in programs]

    def prove(chunk: list[int]) -> list[dict]:
        return [asdict(proof) for proof in prover.prove_many([programs[i] for i in chunk])]

    proofs = cached_stage("proofs", proof_keys, prove, kv.JsonlCache(cache_dir / "proofs.jsonl"), settings.batch_size)

    drifts = drift_many([(r.premise, r.conclusion, p) for r, p in zip(records, parsed)])

    coherence = Coherence(settings.nli_judge, cache_dir / "nli-verdicts")
    coherence_keys = [kv.key("coherence", coherence.name, [asdict(s) for s in p.steps]) for p in parsed]
    coherences = cached_stage(
        "coherence",
        coherence_keys,
        lambda chunk: [list(v) for v in coherence.score_many([parsed[i] for i in chunk])],
        kv.JsonlCache(cache_dir / "coherence.jsonl"),
        settings.batch_size,
    )

    uncertainty = UncertaintyScorer(settings.certainty_model)
    uncertainty_keys = [
        kv.key("uncertainty", uncertainty.source, p.assumptions, p.summary, [asdict(s) for s in p.steps])
        for p in parsed
    ]
    uncertainties = cached_stage(
        "uncertainty",
        uncertainty_keys,
        lambda chunk: [asdict(v) for v in uncertainty.score_many([parsed[i] for i in chunk])],
        kv.JsonlCache(cache_dir / "uncertainty.jsonl"),
        settings.batch_size,
    )

    rows = []
    for index, record in enumerate(records):
        proof, (coherence_value, unparsed), unc = proofs[index], coherences[index], uncertainties[index]
        flags = list(parsed[index].flags) + formal_flags[index]
        if proof["status"] != "complete":
            flags.append(f"proof search stopped at the {proof['status'].replace('_', ' ')}")
        if unparsed:
            flags.append(f"{unparsed} NLI verdict(s) unparsed")
        rows.append(
            {
                "qid": record.qid,
                "option": record.option,
                "split": record.split,
                "correct": record.correct,
                "consistent": int(proof["consistent"]),
                "depth": proof["depth"],
                "drift": drifts[index],
                "coherence": coherence_value,
                "uncertainty": unc["uncertainty"],
                "flag": "; ".join(flags),
                "n_steps": len(parsed[index].steps),
                "proof_score": proof["score"],
                "proof_status": proof["status"],
                "formalization": methods[index],
                "coherence_judge": coherence.source,
                "uncertainty_source": uncertainty.source,
                "hedge_epistemic": unc["epistemic"],
                "hedge_doxastic": unc["doxastic"],
                "hedge_conditional": unc["conditional"],
                "hedge_ratio": unc["hedge_ratio"],
                "source": record.source,
                "premise": record.premise,
                "conclusion": record.conclusion,
                "explanation": record.explanation,
                "program": programs[index].text(),
                "proof_rules": proof["rules"],
            }
        )
    write_rows(rows, out_dir)
    if judged:
        with open(out_dir / "judge.jsonl", "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(asdict(j)) + "\n" for j in judged)
    return rows


def _csv_value(value: Any) -> Any:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else value


def write_rows(rows: Sequence[dict[str, Any]], out_dir: Path) -> None:
    with open(out_dir / "features.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    with open(out_dir / "features.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows({k: _csv_value(v) for k, v in row.items()} for row in rows)
