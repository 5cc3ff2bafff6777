"""The authors' M2 prompts, as their results files record them, rendered the way their harness did.

``doc_to_text`` of each setting is copied from ``configs`` in the results files of the
authors' 800-document runs (andreazaninello/calamita-geese@de12d08,
``scripts/prediction_output/meta-llama__Meta-Llama-3-8B/results_2024-11-04T17-03-27.790181.json``
for Table 2's four settings; whynot and implicit from ``results_2024-11-04T14-55-54.474995.json``),
keyed by our setting name. They are rendered with a plain jinja2 environment, independent
of the suite and of lm-eval's own renderer, so a test comparing them with what our tasks
produce checks the prompt, not the code that builds it.
"""

from __future__ import annotations

from typing import Any

import jinja2

_HEAD = (
    "Your task is to predict the entailment label between two sentences, selecting one label among "
    "YES (entailment), NO (contradiction), or UNKNOWN (neutrality). Sentence 1:{{text_t}} Sentence 2: {{text_h}} "
)
AUTHORS_TASKS = {
    "noexp": ("geese_prediction_noexp", _HEAD + "Hint: Not given. Entailment label:"),
    "dummy": ("geese_prediction_dummy", _HEAD + "Hint: {{text_h}}. Entailment label:"),
    "human": ("geese_prediction_human", _HEAD + "Hint: {{anon_human}}. Entailment label:"),
    "llama3": ("geese_prediction_whyexp", _HEAD + "Hint: {{anon_whyexp}}. Entailment label:"),
    "llama3_whynot": ("geese_prediction_whynot", _HEAD + "Hint: {{anon_whynot}}. Entailment label:"),
    "llama3_implicit": ("geese_prediction_implicit", _HEAD + "Hint: {{anon_implicit}}. Entailment label:"),
}
TABLE_2_SETTINGS = ("noexp", "dummy", "human", "llama3")
_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


# The sentence pair of the authors' template: what the explanation-only tasks leave out.
PAIR = "Sentence 1:{{text_t}} Sentence 2: {{text_h}} "


def authors_prompt(setting: str, doc: dict[str, Any]) -> str:
    """The prompt the authors' task of ``setting`` gives ``doc``."""
    return _ENV.from_string(AUTHORS_TASKS[setting][1]).render(**doc)


def alone_prompt(setting: str, doc: dict[str, Any]) -> str:
    """The authors' prompt of ``setting`` without the sentence pair (the hint alone)."""
    template = AUTHORS_TASKS[setting][1]
    assert PAIR in template
    return _ENV.from_string(template.replace(PAIR, "")).render(**doc)
