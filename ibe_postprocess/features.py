"""IBE features for every explanation: the ``score`` stage.

Stages run over all explanations in batches: spaCy reads each distinct text once for
formalization and drift together, every distinct predicate name of the whole input is
embedded in one pass, and judge and certainty-model requests go in batches. spaCy and
MiniLM run on ``processes`` forked workers (``workers``: the same bytes on any number). The
costly stages (proofs, LLM formalization, coherence, uncertainty) are cached on
disk batch by batch under the output folder, so an interrupted run resumes where it
stopped. Nothing is dropped: an explanation that cannot be parsed or measured keeps its
row, with the reasons in ``flag``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from custom_metrics.common.errors import DataError
from custom_metrics.common.fields import is_number
from ibe_postprocess import cache as kv
from ibe_postprocess import features_file
from ibe_postprocess.autoformalize import (
    ENDPOINT_PREFIX,
    EndpointFormalizer,
    LMFormalizer,
    formalization_prompt,
    parse_endpoint,
    program_from_answer,
    program_from_output,
)
from ibe_postprocess.coherence import Coherence, StepVerdict, coherence_of, valid_chunk
from ibe_postprocess.drift import new_concepts_many, step_texts
from ibe_postprocess.folder import FeaturesFolder
from ibe_postprocess.formalize import Program, clause_texts, formalize_many
from ibe_postprocess.inputs import ExplanationRecord, JudgeRecord, fingerprint, input_files
from ibe_postprocess.nlp import Word, pipeline, queue_nouns_of, queue_words_of
from ibe_postprocess.parsing import ParsedExplanation, parse_explanation
from ibe_postprocess.uncertainty import (
    DEFAULT_AGGREGATION,
    DEFAULT_INVERSION,
    HEDGE_CUES,
    UncertaintyScorer,
    cues_found,
    hedge_text,
)
from ibe_postprocess.workers import Workers


@dataclass(frozen=True)
class ScoreSettings:
    nli_judge: str | None = None  # None: the paper's NLI model, the embedded LM where it cannot load
    certainty_model: str | None = None  # None: the paper's model, the lexicon where it cannot load; or "lexicon"
    uncertainty_aggregation: str = DEFAULT_AGGREGATION  # "sum" (§4), "mean" (Algorithm 4), "mean-all" (A.8)
    uncertainty_inversion: str = DEFAULT_INVERSION  # "6-c" (PEIRCE's) or "7-c": a certainty c as uncertainty
    formalizer: str = "deterministic"  # or "lm:<hf id or path>", "openai:<model>@<base_url>"
    encoder: str | None = None  # sentence encoder for weak unification; None: all-MiniLM-L6-v2
    batch_size: int = 32
    processes: int = 1  # spaCy and MiniLM workers; like the batch size, it must not change a byte

    def recorded(self) -> dict[str, Any]:
        """The settings a features file records: all but the batch size and the process count."""
        return {key: value for key, value in asdict(self).items() if key not in ("batch_size", "processes")}


def cached_stage(
    name: str, keys: Sequence[str], compute: Callable[[list[int]], list[Any]], store: kv.JsonlCache, batch_size: int
) -> list[Any]:
    """Values for every key: cached ones read back, the others computed batch by batch."""
    todo = [index for index, key in enumerate(keys) if key not in store]
    chunks = [todo[start : start + batch_size] for start in range(0, len(todo), batch_size)]
    for chunk in tqdm(chunks, desc=name, unit="batch", disable=not todo):
        store.put_many(dict(zip((keys[i] for i in chunk), compute(chunk))))
    return [store[key] for key in keys]


# Shapes of the cached values: a line of another shape is computed again, never crashes the run.
def _valid_proof(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("consistent"), bool)
        and isinstance(value.get("depth"), int)
        and is_number(value.get("score"))
        and isinstance(value.get("rules"), list)
        and isinstance(value.get("status"), str)
        and isinstance(value.get("unifications"), list)  # a proof cached before the steps were kept: proved again
    )


def _valid_uncertainty(value: Any) -> bool:
    fields = ("epistemic", "doxastic", "conditional", "hedge_ratio")
    return (
        isinstance(value, dict)
        and (value.get("uncertainty") is None or is_number(value.get("uncertainty")))
        and all(is_number(value.get(field)) for field in fields)
    )


class _Autoformalization:
    """The formalizer's output for every item, cached batch by batch; the LM loads (or the
    endpoint is checked) with the other named models, before spaCy and Prolog, unless every
    output is cached: then a rerun loads no model and sends no request."""

    def __init__(self, formalizer: str, items: Sequence[tuple[str, str, ParsedExplanation]], folder: FeaturesFolder):
        self.endpoint = parse_endpoint(formalizer) if formalizer.startswith(ENDPOINT_PREFIX) else None
        # What rows record and outputs are cached under: the endpoint's canonical name, or the LM's id.
        self.spec = self.endpoint.name if self.endpoint else formalizer.removeprefix("lm:")
        self.method = self.spec if self.endpoint else f"lm:{self.spec}"
        # Only explanations with steps have anything to formalize: the others cost no request.
        self.indices = [index for index, item in enumerate(items) if item[2].steps]
        self.prompts = [formalization_prompt(*items[index]) for index in self.indices]
        self.keys = [kv.key(self.spec, prompt) for prompt in self.prompts]
        self.store = kv.JsonlCache(folder.cache("autoformalized"), lambda value: isinstance(value, str))
        self.model: Any = None
        # The program in one output: an endpoint's whole chat answer, or the LM's continuation.
        self.program = program_from_answer if self.endpoint else program_from_output

    def load(self) -> None:
        if all(key in self.store for key in self.keys):
            return
        if self.endpoint is not None:
            self.model = EndpointFormalizer(self.endpoint)
            self.model.check()
            return
        try:
            self.model = LMFormalizer(self.spec)
        except Exception as err:
            reason = (str(err).strip().splitlines() or [""])[0]
            raise DataError(
                f"--formalizer lm:{self.spec}: the formalizing LM cannot be loaded ({type(err).__name__}: {reason}); "
                "pass lm:<model folder that exists, or Hub id in the local Hub cache>, openai:<model>@<base_url>, "
                "or leave --formalizer out for the deterministic formalization."
            ) from err

    def outputs(self, batch_size: int) -> dict[int, str]:
        """The formalizer's output per item index (items with steps only)."""

        def generate(chunk: list[int]) -> list[str]:
            return self.model.generate([self.prompts[i] for i in chunk])

        return dict(zip(self.indices, cached_stage("autoformalize", self.keys, generate, self.store, batch_size)))


def _programs(
    items: Sequence[tuple[str, str, ParsedExplanation]],
    words: dict[str, tuple[Word, ...]],
    autoformalization: _Autoformalization | None,
    batch_size: int,
) -> tuple[list[Program], list[str], list[list[str]]]:
    """Programs per explanation, how each was made, and formalization flags."""
    programs = formalize_many(items, words)
    methods = ["deterministic"] * len(items)
    flags: list[list[str]] = [[] for _ in items]
    if autoformalization is None:
        return programs, methods, flags
    from ibe_postprocess.prolog_guard import GuardError
    from ibe_postprocess.prover import system_predicate_check

    is_system = system_predicate_check()
    for index, output in autoformalization.outputs(batch_size).items():  # no steps: the parse flag says why
        try:
            programs[index] = autoformalization.program(output, is_system)
            methods[index] = autoformalization.method
        except GuardError as err:
            flags[index].append(f"autoformalized program rejected ({err}); deterministic formalization used")
    return programs, methods, flags


def proof_steps(program: Program, unifications: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The best proof's unifications, each with the clause it used: a rule of the program, or
    the premise fact it ended on."""
    facts = {atom.name: f"{atom}." for atom in program.facts}
    return [
        {**step, "clause": str(program.rules[step["rule"] - 1]) if step["rule"] else facts.get(step["matched"], "")}
        for step in unifications
    ]


def step_coherence(parsed: ParsedExplanation, verdicts: Sequence[StepVerdict]) -> list[dict[str, Any]]:
    """Each IF-THEN step's NLI verdict: what its coherence, the features' mean, is made of."""
    return [
        {
            "if": step.condition,
            "then": step.consequence,
            "entailment": entailment,
            "contradiction": contradiction,
            "coherence": entailment - contradiction,
            "unparsed": unparsed,
        }
        for step, (entailment, contradiction, unparsed) in zip(parsed.steps, verdicts)
    ]


def score(
    records: Sequence[ExplanationRecord],
    out_dir: Path,
    settings: ScoreSettings,
    judged: Sequence[JudgeRecord] = (),
    provenance: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Compute the feature rows and write them (``features_file``): ``features.jsonl``, whose
    header records what they are computed from (the inputs' fingerprint, the settings and
    ``provenance``, the models behind the explanations), ``features.csv`` and ``judge.jsonl``.
    """
    # A formalizer the scorer knows, and a well-formed endpoint spec, before the folder is touched.
    if settings.formalizer != "deterministic" and not settings.formalizer.startswith(("lm:", ENDPOINT_PREFIX)):
        raise ValueError(
            f"--formalizer must be 'deterministic', 'lm:<model>' or '{ENDPOINT_PREFIX}<model>@<base_url>', "
            f"got {settings.formalizer!r}"
        )
    if settings.formalizer.startswith(ENDPOINT_PREFIX):
        parse_endpoint(settings.formalizer)
    folder = FeaturesFolder(out_dir)
    origin = features_file.Origin(
        input_files(records, judged), fingerprint(records, judged), settings.recorded(), provenance or {}
    )
    # Before the models load: a run killed half-way leaves a features file that says so.
    features_file.begin(folder, origin)

    # The models a user names load first, before spaCy and Prolog: a formalizer (an endpoint
    # is asked for its models: the quickest check, so it goes first), certainty model or judge
    # that cannot load stops the run in seconds. The parser is cheap and gives the cache keys,
    # so a rerun whose values are all cached loads no judge or LM and sends no request.
    parsed = [parse_explanation(record.explanation) for record in records]
    items = [(r.premise, r.conclusion, p) for r, p in zip(records, parsed)]
    autoformalization = None
    if settings.formalizer != "deterministic":
        autoformalization = _Autoformalization(settings.formalizer, items, folder)
        autoformalization.load()
    uncertainty = UncertaintyScorer(
        settings.certainty_model, settings.uncertainty_aggregation, settings.uncertainty_inversion
    )
    coherence = Coherence(settings.nli_judge, folder.cache("nli_verdicts"))
    coherence_store = kv.JsonlCache(folder.cache("coherence"), valid_chunk)
    if not coherence.cached(parsed, coherence_store):
        coherence.load()

    logic = _prove(items, autoformalization, settings, folder)
    step_verdicts = coherence.step_verdicts(parsed, coherence_store)
    # Each explanation's uncertainty and hedge counts, cached by chunk under the scorer's settings.
    scorer = (uncertainty.source, uncertainty.aggregation, uncertainty.inversion)
    uncertainties = cached_stage(
        "uncertainty",
        [kv.key("uncertainty", *scorer, p.assumptions, p.summary, [asdict(s) for s in p.steps]) for p in parsed],
        lambda chunk: [asdict(v) for v in uncertainty.score_many([parsed[i] for i in chunk])],
        kv.JsonlCache(folder.cache("uncertainty"), _valid_uncertainty),
        settings.batch_size,
    )
    sources = {"coherence_judge": coherence.source, "uncertainty_source": uncertainty.source}
    rows = [
        _row(record, parsed[index], logic, index, step_verdicts[index], uncertainties[index], sources)
        for index, record in enumerate(records)
    ]
    features_file.write(folder, origin, rows, judged)
    return rows


@dataclass(frozen=True)
class _Logic:
    """What the logical stage found per explanation: its program, how it was made and the
    formalization's flags, its best proof, and the concepts its steps bring in (drift)."""

    programs: list[Program]
    methods: list[str]
    flags: list[list[str]]
    proofs: list[dict[str, Any]]
    concepts: list[list[str] | None]


def _prove(
    items: Sequence[tuple[str, str, ParsedExplanation]],
    autoformalization: _Autoformalization | None,
    settings: ScoreSettings,
    folder: FeaturesFolder,
) -> _Logic:
    """Formalize, embed every predicate name, prove (cached by chunk), and read drift's nouns
    on the workers meanwhile."""
    from ibe_postprocess.embeddings import PredicateEmbedder
    from ibe_postprocess.prover import Prover

    with Workers(settings.processes) as workers:
        embedder = PredicateEmbedder(settings.encoder, folder.cache("embeddings"), workers=workers)
        pipeline()  # both models load before the first queued work forks the workers, which share them
        embedder.load()
        words_read = queue_words_of(clause_texts(items), workers)  # formalization and drift read the same texts
        # Drift's own spaCy reading keeps the workers busy whenever they have nothing else
        # to do: while this process formalizes, at the ends of the stages, during the proofs.
        step_nouns = queue_nouns_of(step_texts(items), workers, filler=True)
        words = words_read()
        programs, methods, formal_flags = _programs(items, words, autoformalization, settings.batch_size)

        prover = Prover(embedder)
        # Every predicate name of the input, embedded in chunks that depend on these names alone
        # (``embeddings``); a proof is reused only when cached with these very vectors.
        embedder.embed({name for program in programs for name in program.predicates()})
        proof_keys = [
            kv.key("proof", program.text(), prover.settings(), embedder.digest(program.predicates()))
            for program in programs
        ]
        proofs = cached_stage(
            "proofs",
            proof_keys,
            lambda chunk: [asdict(proof) for proof in prover.prove_many([programs[i] for i in chunk])],
            kv.JsonlCache(folder.cache("proofs"), _valid_proof),
            settings.batch_size,
        )
        concepts = new_concepts_many(items, words, step_nouns())
    return _Logic(programs, methods, formal_flags, proofs, concepts)


def _row(
    record: ExplanationRecord,
    parsed: ParsedExplanation,
    logic: _Logic,
    index: int,
    verdicts: Sequence[StepVerdict],
    unc: dict[str, Any],
    sources: dict[str, str],
) -> dict[str, Any]:
    """One explanation's features row (``features_file``'s schema), its flags said in words."""
    proof, program, concepts = logic.proofs[index], logic.programs[index], logic.concepts[index]
    coherence_value, unparsed = coherence_of(verdicts)
    flags = list(parsed.flags) + logic.flags[index]
    if proof["status"] != "complete":
        flags.append(f"proof search stopped at the {proof['status'].replace('_', ' ')}")
    if unparsed:
        flags.append(f"{unparsed} NLI verdict(s) unparsed")
    return {
        "qid": record.qid,
        "option": record.option,
        "split": record.split,
        "correct": record.correct,
        "consistent": int(proof["consistent"]),
        "depth": proof["depth"],
        "drift": None if concepts is None else len(concepts),
        "coherence": coherence_value,
        "uncertainty": unc["uncertainty"],
        "flag": "; ".join(flags),
        "n_steps": len(parsed.steps),
        "proof_score": proof["score"],
        "proof_status": proof["status"],
        "formalization": logic.methods[index],
        "coherence_judge": sources["coherence_judge"],
        "uncertainty_source": sources["uncertainty_source"],
        **{f"hedge_{category}": unc[category] for category in HEDGE_CUES},
        "hedge_ratio": unc["hedge_ratio"],
        "source": {"file": record.source.file, "line": record.source.line},
        "premise": record.premise,
        "conclusion": record.conclusion,
        "explanation": record.explanation,
        "program": program.text(),
        "proof_rules": proof["rules"],
        # The steps behind the numbers (features schema 2), for the sample viewer.
        "proof_steps": proof_steps(program, proof["unifications"]),
        "step_coherence": step_coherence(parsed, verdicts),
        "drift_concepts": concepts,
        "hedge_cues": [{"cue": cue, "category": kind} for cue, kind in cues_found(hedge_text(parsed))],
    }
