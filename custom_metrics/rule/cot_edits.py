"""RULE's edited-CoT faithfulness tasks (Lanham et al. 2023, adding mistakes and paraphrasing;
``custom_metrics.rule.edits``), chained like GEESE's M1 -> M2 over one logged CoT run:

1. ``rule_cot_edits``: the editor model writes a mistaken version of some sentences of each
   reasoning and a paraphrase of the whole; its samples file is the cache the next task reads.
2. ``rule_cot_faithfulness_edits``: the model under test answers again, by log-likelihood, after
   its prompt, the edited reasoning and the answer cue (an edit not of that CoT run is an error).
"""

from __future__ import annotations

from dataclasses import astuple
from pathlib import Path
from typing import TYPE_CHECKING, Any

from custom_metrics.common import fields
from custom_metrics.common.errors import DataError
from custom_metrics.common.faithfulness import correct_share, same_share, unusable_share
from custom_metrics.common.metadata import check_metadata_keys
from custom_metrics.common.results import source_lineage
from custom_metrics.common.samples import MAX_RESPONSE_CHARS, logged_response, read_samples
from custom_metrics.common.task_loading import task_loader
from custom_metrics.rule.edits import (
    MISTAKE,
    PARAPHRASE,
    mistake_request,
    mistake_sentences,
    paraphrase_request,
    read_edit,
    sentence,
    sentence_spans,
    with_sentence,
)
from custom_metrics.rule.faithfulness import LoggedCoT, context, cot_run_dataset, logged_cots, reanswer

if TYPE_CHECKING:
    import datasets

EDITS_TASK, EDITED_TASK = "rule_cot_edits", "rule_cot_faithfulness_edits"
WHOLE = -1  # the "sentence" of a paraphrase: the whole reasoning
EDITS_EXAMPLE = '"edits": "OUT/<editor>/samples_rule_cot_edits_<ts>.jsonl"'


def edit_request_docs(explanations: str) -> list[dict[str, Any]]:
    """The editor's requests for one CoT run: a mistake in each sentence ``mistake_sentences``
    picks, and a paraphrase of the whole reasoning (none for an empty one)."""
    docs = []
    for cot in logged_cots(EDITS_TASK, explanations):
        whole = cot.reasoning.strip()
        if not whole:
            continue
        steps = [(MISTAKE, index, sentence(cot.reasoning, index)) for index in mistake_sentences(cot.reasoning)]
        for kind, index, original in [*steps, (PARAPHRASE, WHOLE, whole)]:
            request = mistake_request(cot.question, original) if kind == MISTAKE else paraphrase_request(original)
            docs.append(
                {"generation": cot.shared["generation"], "kind": kind, "sentence": index, "original": original}
                | {"request": request}
            )
    if not docs:
        raise DataError(
            f"{EDITS_TASK}: no generation of {explanations} has reasoning before its answer: nothing to edit."
        )
    return docs


@task_loader
def load_edit_requests(explanations: str | None = None, **run_args: Any) -> dict[str, datasets.Dataset]:
    return cot_run_dataset(EDITS_TASK, edit_request_docs, explanations, run_args)


def edit_request(doc: dict[str, Any]) -> str:
    return doc["request"]


def process_edit(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """Whether the editor's response holds a usable edit (``read_edit``)."""
    _, problem = read_edit(results[0] if results else "", doc["original"])
    return {"edit_unusable": float(bool(problem))}


def _edited_doc(cot: LoggedCoT, edit: dict[str, Any], response: str) -> dict[str, Any]:
    text, problem = read_edit(response, edit["original"])
    if edit["kind"] == MISTAKE:
        index = edit["sentence"]
        given = cot.reasoning if problem else with_sentence(cot.reasoning, index, text)
        fraction = index / len(sentence_spans(cot.reasoning))
    else:
        lead = cot.reasoning[: len(cot.reasoning) - len(cot.reasoning.lstrip())] or " "
        given, fraction = (cot.reasoning if problem else lead + text), 1.0
    return {
        **cot.shared,
        "condition": edit["kind"],
        "fraction": fraction,
        "sentence": edit["sentence"],
        "cot": given,
        "edit_problem": problem,
        "context": context(cot.prompt, given),
    }


def _edit_key(sample: dict[str, Any]) -> str:
    edit = sample["doc"]
    return f"the {edit['kind']} of generation {str(edit['generation'])!r}, sentence {edit['sentence']}"


def edited_docs(explanations: str, edits: str) -> list[dict[str, Any]]:
    """Every doc of the edited-CoT task: one per edit in the editor's samples file, each checked
    against the CoT run it was made from."""
    cots = {cot.shared["generation"]: cot for cot in logged_cots(EDITED_TASK, explanations)}

    def check(sample: dict[str, Any]) -> None:
        edit = sample["doc"]
        index = edit.get("sentence")
        if edit.get("kind") not in (MISTAKE, PARAPHRASE) or isinstance(index, bool) or not isinstance(index, int):
            raise ValueError("field 'doc.kind' or 'doc.sentence' missing; is this the samples file of rule_cot_edits?")
        cot = cots.get(fields.identifier(edit.get("generation"), "field 'doc.generation'"))
        if cot is None:
            raise ValueError(f"field 'doc.generation' {edit.get('generation')!r} is not a generation of {explanations}")
        if edit["kind"] == MISTAKE and not 0 <= index < len(sentence_spans(cot.reasoning)):
            raise ValueError(f"field 'doc.sentence' {index} is not a sentence of its generation")
        if edit["kind"] == PARAPHRASE and index != WHOLE:
            raise ValueError(f"field 'doc.sentence' is {index}, not {WHOLE} (the whole reasoning) for a paraphrase")
        logged_response(sample, MAX_RESPONSE_CHARS)
        made_from = sentence(cot.reasoning, edit["sentence"]) if edit["kind"] == MISTAKE else cot.reasoning.strip()
        if edit.get("original") != made_from:
            raise ValueError(
                f"field 'doc.original' is not the text of generation {edit['generation']!r} in {explanations}: "
                "the edits were made from another CoT run"
            )

    try:
        samples = read_samples(edits, check=check, key=_edit_key)
    except DataError as err:
        raise DataError(
            f"{EDITED_TASK}: {str(err).rstrip('.')}. Pass the samples_rule_cot_edits_*.jsonl written from this CoT run."
        ) from err
    return [_edited_doc(cots[str(s["doc"]["generation"])], s["doc"], logged_response(s)) for s in samples]


@task_loader
def load_edited(
    explanations: str | None = None, edits: str | None = None, **run_args: Any
) -> dict[str, datasets.Dataset]:
    check_metadata_keys(EDITED_TASK, run_args)
    if not explanations or not edits:
        raise DataError(
            f"{EDITED_TASK} needs the CoT run's samples file and the editor's (rule_cot_edits) one: --metadata "
            f'\'{{"explanations": "OUT/<model>/samples_rule_5shot_cot_split1_<ts>.jsonl", {EDITS_EXAMPLE}}}\'.'
        )
    editor = source_lineage(Path(edits).expanduser())
    lineage = source_lineage(Path(explanations).expanduser()).and_read(editor)
    return cot_run_dataset(EDITED_TASK, lambda cots: edited_docs(cots, edits), explanations, run_args, lineage)


def process_edited(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, list[Any]]:
    """One answer after an edited CoT, handed to every aggregation as a list (as the samples file logs it)."""
    answer = list(astuple(reanswer(EDITED_TASK, doc, results)))
    return {metric: answer for metric in EDITED_METRICS}


def mistake_same(items: list[list[Any]]) -> float:
    """Share of answers unchanged after one sentence of the CoT was made wrong (usable edits of read answers)."""
    return same_share(items, MISTAKE)


def mistake_acc(items: list[list[Any]]) -> float:
    return correct_share(items, MISTAKE)


def paraphrase_same(items: list[list[Any]]) -> float:
    """Share of answers unchanged after the whole CoT was reworded."""
    return same_share(items, PARAPHRASE)


def paraphrase_acc(items: list[list[Any]]) -> float:
    return correct_share(items, PARAPHRASE)


edit_unusable = unusable_share  # edits the editor left empty or unchanged: scored, flagged, left out of the shares


EDITED_METRICS = ("mistake_same", "mistake_acc", "paraphrase_same", "paraphrase_acc", "edit_unusable")
