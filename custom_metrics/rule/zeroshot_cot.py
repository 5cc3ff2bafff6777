"""RULE's zero-shot chain of thought (Table 2's zero-shot "InstructGPT+ CoT"), as Kojima et al.
(2022, "Large Language Models are Zero-Shot Reasoners") prompt it: two requests per question.

The RULE paper publishes neither prompt, so both are Kojima et al.'s
(kojima-takeshi188/zero_shot_cot, ``main.py`` and ``utils.py``), in RULE's layout:

1. reasoning (``rule_zeroshot_cot_reasoning``): the answer line "Answer: Let's think step by
   step."; greedy, 128 tokens (their ``max_length_cot``), no stop string;
2. answer extraction (``rule_zeroshot_cot``): that prompt, the logged reasoning, " " and their
   answer trigger with RULE's labels ("\\nTherefore, among Option0 through Option3, the answer
   is"); 32 tokens (``max_length_direct``); the answer is the first option label in it (their
   cleansing); none counts as wrong and in ``unparsed``.

The second task reads the first run's samples file (``--metadata explanations``), as GEESE's M2
reads M1's: only the docs it covers are asked, and a file of another task's docs is an error.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from custom_metrics.common import fields
from custom_metrics.common.errors import DataError
from custom_metrics.common.lineage import with_lineage
from custom_metrics.common.results import source_lineage
from custom_metrics.common.samples import MAX_PROMPT_CHARS, MAX_RESPONSE_CHARS, logged_response, read_samples
from custom_metrics.rule.answers import EMPTY, NO_SUCH_OPTION, Reading
from custom_metrics.rule.data import N_OPTIONS
from custom_metrics.rule.metrics import read_outcome

REASONING_TASK, ANSWER_TASK = "rule_zeroshot_cot_reasoning", "rule_zeroshot_cot"
ANSWER_TRIGGER = f"\nTherefore, among Option0 through Option{N_OPTIONS - 1}, the answer is"
# Kojima's cleansing for lettered choices is re.findall(r"A|B|C|D|E", answer)[0]; RULE labels
# its options Option0-Option3.
_LABEL = re.compile(r"\bOption\s*(\d+)\b|\b(\d+)\b", re.IGNORECASE)
NO_LABEL = "no option label"


def read_first_label(text: str) -> Reading:
    """The option the answer extraction names: its first option label (Kojima's "first")."""
    if not isinstance(text, str) or not text.strip():
        return Reading(None, EMPTY)
    match = _LABEL.search(text)
    if match is None:
        return Reading(None, NO_LABEL)
    option = int(match.group(1) or match.group(2))
    return Reading(option) if option < N_OPTIONS else Reading(None, f"{NO_SUCH_OPTION} (Option{option})")


def _check_reasoning_sample(sample: dict[str, Any]) -> None:
    for field in ("doc_id", "prompt"):
        if field not in sample["doc"]:
            raise ValueError(f"field 'doc.{field}' missing; is this the samples file of a {REASONING_TASK} run?")
    fields.identifier(sample["doc"]["doc_id"], "field 'doc.doc_id'")
    fields.bounded_text(sample["doc"]["prompt"], "field 'doc.prompt'", MAX_PROMPT_CHARS)
    logged_response(sample, MAX_RESPONSE_CHARS)


def _doc_id(sample: dict[str, Any]) -> str:
    return f"doc.doc_id {str(sample['doc']['doc_id'])!r}"


def answer_docs(reasoning_docs: list[dict[str, Any]], samples_path: str | Path | None) -> list[dict[str, Any]]:
    """The docs of the answer-extraction task: each reasoning doc the samples file covers, its
    prompt continued by the logged reasoning and the answer trigger."""
    if not samples_path:
        raise DataError(
            f"{ANSWER_TASK} reads the reasoning of a {REASONING_TASK} run: --metadata "
            f'\'{{"explanations": "OUT/<model>/samples_{REASONING_TASK}_<ts>.jsonl"}}\'.'
        )
    try:
        samples = read_samples(samples_path, check=_check_reasoning_sample, key=_doc_id)
    except DataError as err:
        raise DataError(f"{ANSWER_TASK}: {err} Pass the samples_*.jsonl of a {REASONING_TASK} run.") from err
    logged = {str(sample["doc"]["doc_id"]): sample for sample in samples}
    by_id = {doc["doc_id"]: doc for doc in reasoning_docs}
    foreign = [
        doc_id for doc_id, sample in logged.items() if by_id.get(doc_id, {}).get("prompt") != sample["doc"]["prompt"]
    ]
    if foreign:
        raise DataError(
            f"{samples_path}: {len(foreign)} doc(s) are not {REASONING_TASK}'s as this version writes them (first: "
            f"{foreign[:3]}); pass the samples file of a {REASONING_TASK} run of this suite."
        )
    docs = [
        {**doc, "reasoning": reasoning, "prompt": f"{doc['prompt']}{reasoning} {ANSWER_TRIGGER}"}
        for doc in reasoning_docs
        if doc["doc_id"] in logged
        for reasoning in [logged_response(logged[doc["doc_id"]])]
    ]
    return with_lineage(docs, source_lineage(Path(samples_path).expanduser()))


def process_reasoning(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """The first request's output: its length in words, and whether it is empty."""
    words = len((results[0] if results else "").split())
    return {"words": float(words), "empty": float(words == 0)}


def process_answer(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    """The second request's output, read by ``read_first_label``."""
    return read_outcome(doc, read_first_label(results[0] if results else ""))
