"""GEESE prompts (Zaninello & Magnini, CLiC-it 2024): M1 explains a pair given its gold
label, M2 predicts the label with an explanation as a "Hint". Both are the authors' code,
not the paper's Section 4.1 text (see the task README's choices).
"""

from __future__ import annotations

from typing import Any

from custom_metrics.geese.data import LABELS

# M1's decoding and M2's prompt (the authors' jinja template, byte for byte) live in the task
# YAMLs alone; tests/geese renders the authors' recorded templates to check them.
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
_M1_ASKS = {
    "whyexp": "Explain why label {label} is correct.",
    "whynot": "Explain why labels {others[0]} and {others[1]} are not correct.",
    "implicit": "Explain how the two sentences are connected.",
}


def m1_prompt(doc: dict[str, Any]) -> str:
    """The authors' M1 prompt for the doc's ``explanation_type`` (whyexp, whynot, implicit)."""
    kind, label = doc["explanation_type"], doc["label"]
    if kind not in _M1_ASKS:
        raise ValueError(f"unknown GEESE explanation type {kind!r}; expected one of {sorted(M1_GOALS)}")
    ask = _M1_ASKS[kind].format(label=label, others=[other for other in LABELS if other != label])
    head = _M1_HEAD.format(goal=M1_GOALS[kind], text_t=doc["text_t"].strip(), text_h=doc["text_h"].strip())
    return head + _M1_LABEL.format(label=label, text_label=doc["text_label"]) + ask
