"""GEESE (Zaninello & Magnini, CLiC-it 2024): prompts, anonymization and data.

M1 writes an explanation for an Italian RTE pair given its gold label; M2 predicts the
label with that explanation as a "Hint". The prompts are the authors' (see the task
README for the whitespace choice). Anonymization is the authors' regex: the published
``anon_*`` fields were produced with exactly this pattern, so our M1 outputs are
comparable with theirs.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

from lm_eval.api.filter import Filter

from custom_metrics.classification import Pair, label_accuracy, macro_f1, predicted_index
from custom_metrics.data import DATA_ENV, DataError, Source, load_rows
from custom_metrics.samples import logged_response, read_samples

LABELS = ("YES", "NO", "UNKNOWN")
FIELDS = ("id", "text_t", "text_h", "label", "text_label", "anon_human", "anon_whyexp")

SOURCE = Source(
    name="GEESE (e-RTE-3-it explained, test)",
    hub_id="azaninello/explained-full-llama-3",
    hub_split="test",
    mirror_path="geese/explained-full-llama-3/test.jsonl",
)

# Whole label words, then any word *starting* with these stems (the paper's list: entail,
# contradict, neutr, impl, contradd); case-insensitive like the authors' code, so "no",
# "imply" and "implicit" are masked too. This reproduces every published anon_* field.
ANON_PATTERN = re.compile(
    r"(\bYES\b|\bNO\b|\bUNKNOWN\b|\bentail\w*\b|\bcontradict\w*\b|\bneutr\w*\b"
    r"|\bimpl\w*\b|\bcontradd\w*\b)",
    flags=re.IGNORECASE,
)
ANON_TOKEN = "XXX"

NO_HINT = "Not given"

M2_PROMPT = (
    "Your task is to predict the entailment label between two sentences, selecting one "
    "label among YES (entailment), NO (contradiction), or UNKNOWN (neutrality).\n"
    "Sentence 1: {text_t}\n"
    "Sentence 2: {text_h}\n"
    "Hint: {hint}.\n"
    "Entailment label:"
)

_M1_HEAD = "Your task is to {goal}.\nSentence 1: {text_t}\nSentence 2: {text_h}\n"
_M1_LABEL = "Entailment relation label: {label} ({text_label}).\n"
M1_GOALS = {
    "whyexp": "clarify the entailment relationship between a pair of sentences by "
    "explaining why a classifier predicted a specific entailment label",
    "whynot": "clarify the entailment relationship between a pair of sentences by "
    "explaining why a classifier did not predict any other entailment label",
    "implicit": "explain the entailment relationship between a pair of sentences by "
    "providing the implicit information connecting them",
}


def anonymize(text: str) -> str:
    """Mask label words and relation stems so a hint cannot simply state the answer."""
    return ANON_PATTERN.sub(ANON_TOKEN, text).strip()


def _clean(text: str) -> str:
    return text.strip()


def m2_prompt(doc: dict[str, Any], hint: str) -> str:
    return M2_PROMPT.format(text_t=_clean(doc["text_t"]), text_h=_clean(doc["text_h"]), hint=_clean(hint))


def m1_prompt(doc: dict[str, Any], kind: str) -> str:
    """The authors' M1 prompt for explanation type ``kind`` (whyexp, whynot, implicit)."""
    label = doc["label"]
    if kind == "whyexp":
        ask = f"Explain why label {label} is correct."
    elif kind == "whynot":
        others = [other for other in LABELS if other != label]
        ask = f"Explain why labels {others[0]} and {others[1]} are not correct."
    elif kind == "implicit":
        ask = "Explain how the two sentences are connected."
    else:
        raise ValueError(f"unknown GEESE explanation type {kind!r}; expected one of {sorted(M1_GOALS)}")
    head = _M1_HEAD.format(goal=M1_GOALS[kind], text_t=_clean(doc["text_t"]), text_h=_clean(doc["text_h"]))
    return head + _M1_LABEL.format(label=label, text_label=doc["text_label"]) + ask


# Hint for each M2 setting of the paper's Table 2 (dummy uses text_h, as the authors' code).
HINTS: dict[str, Callable[[dict[str, Any]], str]] = {
    "noexp": lambda doc: NO_HINT,
    "dummy": lambda doc: doc["text_h"],
    "human": lambda doc: doc["anon_human"],
    "llama3": lambda doc: doc["anon_whyexp"],
    "selfexp": lambda doc: doc["self_explanation"],
}


def _check_label(row: dict[str, Any]) -> None:
    if row["label"] not in LABELS:
        raise ValueError(f"field 'label' is {row['label']!r}, expected one of {LABELS}")


def load_docs() -> list[dict[str, Any]]:
    mirror = os.environ.get(DATA_ENV)
    if not mirror:  # the datasets library caches Hub downloads itself
        return load_rows(SOURCE, required=FIELDS, check=_check_label)
    return [dict(doc) for doc in _mirror_docs(mirror)]


@lru_cache(maxsize=4)
def _mirror_docs(_mirror: str) -> tuple[dict[str, Any], ...]:
    """One read of the mirror file per process: the four M2 tasks of a run share it."""
    return tuple(load_rows(SOURCE, required=FIELDS, check=_check_label))


def _check_doc_id(sample: dict[str, Any]) -> None:
    if "id" not in sample["doc"]:
        raise ValueError("field 'doc.id' missing; is this the samples file of a geese_generate_* run?")


def explanations_from_samples(path: str | Path) -> dict[str, str]:
    """Map GEESE doc id -> logged (filtered) explanation of an M1 run's samples file.

    The filtered response is already anonymized by the M1 task's filter; we anonymize
    again anyway (idempotent) so a samples file from the authors' own harness YAMLs,
    which log raw text, is safe to use as well.
    """
    try:
        samples = read_samples(path, check=_check_doc_id)
    except DataError as err:
        raise DataError(
            f"geese_selfexp: {err} Pass the samples_*.jsonl of an M1 run (geese_generate_*), e.g. "
            "--metadata '{\"explanations\": \"OUT/<model>/samples_geese_generate_whyexp_<ts>.jsonl\"}'."
        ) from err
    return {str(sample["doc"]["id"]): anonymize(logged_response(sample)) for sample in samples}


def process_prediction(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, Any]:
    gold = LABELS.index(doc["label"])
    pred = predicted_index(results)
    pair = (gold, pred)
    return {"acc": float(gold == pred), "f1_macro": pair, "acc_yes": pair, "acc_no": pair, "acc_unknown": pair}


def f1_macro(items: list[Pair]) -> float:
    return macro_f1(items)


def acc_yes(items: list[Pair]) -> float:
    return label_accuracy(items, LABELS.index("YES"))


def acc_no(items: list[Pair]) -> float:
    return label_accuracy(items, LABELS.index("NO"))


def acc_unknown(items: list[Pair]) -> float:
    return label_accuracy(items, LABELS.index("UNKNOWN"))


class AnonymizeFilter(Filter):
    """Apply the paper's anonymization to every generated explanation (M1 output).

    Runs as the task's filter, so the logged ``filtered_resps`` *is* the anonymized
    explanation that ``geese_selfexp`` later feeds to M2.
    """

    def apply(self, resps: Iterable[list[str]], docs: list[dict]) -> Iterable[str]:
        return [anonymize(responses[0]) for responses in resps]


def process_generation(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """Describe an anonymized M1 explanation; an empty one is flagged, not dropped."""
    text = results[0]
    return {
        "words": float(len(text.split())),
        "masked_terms": float(len(re.findall(rf"\b{ANON_TOKEN}\b", text))),
        "empty": float(not text.strip()),
    }


def attach_explanations(docs: list[dict[str, Any]], samples_path: str | Path) -> list[dict[str, Any]]:
    """Docs covered by an M1 run's samples file, each with its explanation as a hint.

    An M1 run made with ``--limit`` covers only some docs; M2 then evaluates exactly
    those (the results file records the count). Ids unknown to GEESE mean the file comes
    from another task or dataset, which is an error rather than a silent partial join.
    """
    explanations = explanations_from_samples(samples_path)
    known = {str(doc["id"]) for doc in docs}
    strangers = sorted(set(explanations) - known)
    if strangers:
        raise DataError(
            f"{samples_path}: {len(strangers)} doc id(s) are not GEESE test ids "
            f"(first: {strangers[:5]}); is this the samples file of a geese_generate_* run?"
        )
    return [{**doc, "self_explanation": explanations[str(doc["id"])]} for doc in docs if str(doc["id"]) in explanations]
