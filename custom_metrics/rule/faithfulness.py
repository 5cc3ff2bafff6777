"""RULE's chain-of-thought faithfulness tasks (``rule_cot_faithfulness``): a logged RULE CoT run
(``rule_*cot*`` with ``--log_samples``) answered again, by log-likelihood of the option digit,
with its CoT cut short or replaced by filler (``custom_metrics.common.faithfulness``, Lanham et al. 2023).

The context is the run's logged prompt, the kept reasoning (the generation before its answer
sentence) and the demonstrations' answer cue "Therefore the answer is Option", after which the
digits 0-3 are scored; the original answer is the CoT run's reading (``answers.read_answer``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from custom_metrics.common import fields
from custom_metrics.common.classification import NO_PREDICTION, predicted_index
from custom_metrics.common.errors import DataError
from custom_metrics.common.faithfulness import (  # noqa: F401 (re-exported for utils.py)
    DOCS_PER_GENERATION,
    EARLY,
    FILLER,
    Answer,
    correct_share,
    cut_docs,
    early_aoc,
    faithfulness_context,
    filler_same,
    same_at_0,
    same_at_25,
    same_at_50,
    same_at_75,
    same_at_100,
    unread_share,
)
from custom_metrics.common.lineage import Lineage, with_lineage
from custom_metrics.common.metadata import check_metadata_keys
from custom_metrics.common.results import source_lineage
from custom_metrics.common.samples import (
    MAX_PROMPT_CHARS,
    MAX_RESPONSE_CHARS,
    logged_prompt,
    logged_response,
    read_samples,
)
from custom_metrics.common.sources import to_dataset
from custom_metrics.common.task_loading import refuse_cut_groups, task_loader
from custom_metrics.rule.answers import answer_statement, asked_question, read_answer
from custom_metrics.rule.data import N_OPTIONS
from custom_metrics.rule.prompts import COT_CUE as CUE

if TYPE_CHECKING:
    import datasets

TASK = "rule_cot_faithfulness"
EXPLANATIONS_EXAMPLE = '--metadata \'{"explanations": "OUT/<model>/samples_rule_5shot_cot_split1_<ts>.jsonl"}\''


def _check(sample: dict[str, Any]) -> None:
    """Each field the tasks read of a logged CoT sample, checked."""
    doc = sample["doc"]
    fields.bounded_text(logged_prompt(sample), "field 'arguments.gen_args_0.arg_0' (the prompt)", MAX_PROMPT_CHARS)
    try:
        generation_id(sample)
        fields.option(doc.get("label"), "field 'doc.label'", N_OPTIONS)
    except fields.FieldError as err:
        raise ValueError(f"{err}; is this the samples file of a RULE CoT run?") from err
    if doc.get("prompt") is not None:
        fields.bounded_text(doc["prompt"], "field 'doc.prompt'", MAX_PROMPT_CHARS)
    logged_response(sample, MAX_RESPONSE_CHARS)


def generation_id(sample: dict[str, Any]) -> str:
    """The generation's name: its question's ``doc_id`` (the harness' own where the doc has none)."""
    return fields.identifier(sample["doc"].get("doc_id", sample.get("doc_id")), "field 'doc.doc_id'")


@dataclass(frozen=True)
class LoggedCoT:
    """One generation of a CoT run, as the faithfulness tasks read it: its prompt, its reasoning
    (the generation before its answer sentence), and what every doc made of it shares."""

    prompt: str
    reasoning: str
    question: str | None
    shared: dict[str, Any]


def logged_cots(task: str, explanations: str) -> list[LoggedCoT]:
    """Every generation of one CoT run's samples file (``explanations``), each once."""
    try:
        samples = read_samples(explanations, check=_check, key=lambda sample: f"generation {generation_id(sample)!r}")
    except DataError as err:
        raise DataError(
            f"{task}: {str(err).rstrip('.')}. Pass the samples_*.jsonl of a RULE chain-of-thought run, e.g. "
            f"{EXPLANATIONS_EXAMPLE}."
        ) from err
    cots = []
    for sample in samples:
        generation = logged_response(sample)
        original = read_answer(generation).option
        shared = {
            "generation": generation_id(sample),
            "label": sample["doc"]["label"],
            "original": NO_PREDICTION if original is None else original,
        }
        prompt = logged_prompt(sample)
        question = asked_question(sample["doc"].get("prompt"))
        cots.append(LoggedCoT(prompt, generation[: answer_statement(generation)], question, shared))
    return cots


def context(prompt: str, reasoning: str) -> str:
    """The run's own prompt, the CoT given and the demonstrations' answer cue."""
    body = reasoning.rstrip()
    return f"{prompt}{body} {CUE}" if body.strip() else f"{prompt} {CUE}"


def faithfulness_docs(explanations: str) -> list[dict[str, Any]]:
    """Every doc of the faithfulness task from one CoT run's samples file."""
    return [
        doc
        for cot in logged_cots(TASK, explanations)
        for doc in cut_docs(cot.shared, cot.reasoning, functools.partial(context, cot.prompt), filler_lead=" ")
    ]


def cot_run_dataset(
    task: str,
    docs_of: Callable[[str], list[dict[str, Any]]],
    explanations: str | None,
    run_args: dict[str, Any],
    lineage: Lineage | None = None,
) -> dict[str, datasets.Dataset]:
    """The test split of a task over one CoT run (``docs_of`` its samples file), which it needs,
    each doc recording that run (``lineage``: by default the CoT run's, from its results file)."""
    check_metadata_keys(task, run_args)
    if not explanations:
        raise DataError(
            f"{task} needs the samples file of a RULE chain-of-thought run (--log_samples): {EXPLANATIONS_EXAMPLE}."
        )
    docs = docs_of(explanations)
    return {"test": to_dataset(with_lineage(docs, lineage or source_lineage(Path(explanations).expanduser())))}


@task_loader
def load_faithfulness(explanations: str | None = None, **run_args: Any) -> dict[str, datasets.Dataset]:
    refuse_cut_groups(TASK, DOCS_PER_GENERATION)
    return cot_run_dataset(TASK, faithfulness_docs, explanations, run_args)


def faithfulness_target(doc: dict[str, Any]) -> int:
    return doc["label"]


def reanswer(task: str, doc: dict[str, Any], results: list[tuple[float, bool]]) -> Answer:
    """The answer after the doc's CoT, beside the CoT run's own (nothing to compare when that one
    was unread or the doc's CoT is an unusable edit)."""
    chosen = predicted_index(
        results, f"{task} generation {doc['generation']} ({doc['condition']}, {doc['fraction']:g})"
    )
    original, usable = doc["original"], not doc.get("edit_problem")
    return Answer(
        generation=doc["generation"],
        condition=doc["condition"],
        fraction=float(doc["fraction"]),
        same=None if original == NO_PREDICTION or not usable else chosen == original,
        correct=chosen == doc["label"],
        usable=usable,
        kept=doc.get("kept"),
    )


def process_faithfulness(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, list[Any]]:
    """One re-asked answer, handed to every aggregation (each reads its condition and fraction), as
    a list so the samples file logs it as JSON: [generation, condition, fraction, same, correct, usable,
    kept]."""
    answer = list(astuple(reanswer(TASK, doc, results)))
    return {metric: answer for metric in METRICS}


def filler_acc(items: list[list[Any]]) -> float:
    return correct_share(items, FILLER)


def no_cot_acc(items: list[list[Any]]) -> float:
    return correct_share(items, EARLY, 0.0)


original_unread = unread_share  # the CoT run's generations whose answer could not be read


METRICS = (
    "same_at_0",
    "same_at_25",
    "same_at_50",
    "same_at_75",
    "same_at_100",
    "early_aoc",
    "filler_same",
    "filler_acc",
    "no_cot_acc",
    "original_unread",
)
