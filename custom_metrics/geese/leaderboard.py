"""GEESE on the leaderboard: Table 2's published row, the authors' repository run and CALAMITA's
rows (``published``), explanation effectiveness and label leakage (``derived``), the authors' own
task names read into our columns, and how the page shows GEESE (``words.yaml``, logged samples).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from custom_metrics.common.board_words import read_words
from custom_metrics.common.leaderboard_types import Board, Comparison, Family, Headline, SampleView, doc_field_key
from custom_metrics.common.paper_spec import PaperSpec, RunSteps
from custom_metrics.common.results import TaskRun
from custom_metrics.common.samples import logged_response
from custom_metrics.geese import data as geese_data
from custom_metrics.geese.derived import ALONE, BASELINE, EXPLANATION_TASKS, LAS, derive_columns
from custom_metrics.geese.published import BATCH_NOTE, CALAMITA_TASKS, published_rows

# The authors' M2 tasks (andreazaninello/calamita-geese, scripts/prediction-*.yaml) and ours
# with the same hint and, since our 2.0, the same template: whyexp is the Llama-3 "why"
# explanation our geese_llama3 uses (the paper's "llama-3" setting, anon_whyexp).
AUTHORS_TASKS = {
    "geese_prediction_noexp": "geese_noexp",
    "geese_prediction_dummy": "geese_dummy",
    "geese_prediction_human": "geese_human",
    "geese_prediction_whyexp": "geese_llama3",
    "geese_prediction_whynot": "geese_llama3_whynot",
    "geese_prediction_implicit": "geese_llama3_implicit",
}
AUTHORS_PREFIX = "geese_prediction_"  # e.g. their geese_prediction_obvious, which has no task of ours
AUTHORS_MARK = "authors' GEESE tasks"


def read_authors_task_names(runs: list[TaskRun], notes: list[str]) -> list[TaskRun]:
    """Runs of the authors' tasks as runs of ours, in a row marked as read from their names (apart
    from a run of our tasks by the same model, so the two compare side by side); an authors' task
    with no counterpart keeps its name."""
    adjusted, renamed = [], {}
    for run in runs:
        if not run.task.startswith(AUTHORS_PREFIX):
            adjusted.append(run)
            continue
        model = f"{run.model} ({AUTHORS_MARK})"
        ours = AUTHORS_TASKS.get(run.task, run.task)
        adjusted.append(replace(run, model=model, task=ours, source_task=run.task))
        if ours != run.task:
            renamed.setdefault((model, str(run.path)), []).append(f"{ours} <- {run.task}")
    for (model, path), pairs in sorted(renamed.items()):
        notes.append(f"{model}: read from the authors' task names in {path}: {', '.join(sorted(pairs))}.")
    return adjusted


# The Hub dataset the authors' tasks load (``dataset_path`` in their results files): the rows
# the suite's loader reads (``custom_metrics.geese.data.HUB_ID``; not imported here, the data
# module loads `datasets`, which a leaderboard build does not need).
AUTHORS_DATASET = "azaninello/explained-full-llama-3"
# The field each authors' task writes as its hint where our template writes {{hint}}
# (tests/geese/authors.py holds their templates).
AUTHORS_HINTS = {
    "geese_noexp": "Not given",
    "geese_dummy": "{{text_h}}",
    "geese_human": "{{anon_human}}",
    "geese_llama3": "{{anon_whyexp}}",
    "geese_llama3_whynot": "{{anon_whynot}}",
    "geese_llama3_implicit": "{{anon_implicit}}",
}


def authors_template(task: str, template: str) -> str:
    """A logged template in our spelling: the authors' hint of this task as {{hint}}."""
    hint = AUTHORS_HINTS.get(task)
    return template.replace(f"Hint: {hint}.", "Hint: {{hint}}.") if hint else template


def sample_fields(task: str, sample: dict[str, Any]) -> dict[str, Any]:
    doc = sample.get("doc") or {}
    fields: dict[str, Any] = {
        "id": doc.get("id"),
        "gold": doc.get("label"),
        "sentence 1": str(doc.get("text_t", "")).strip(),
        "sentence 2": str(doc.get("text_h", "")).strip(),
    }
    if "acc" in sample:
        fields["correct"] = "yes" if sample["acc"] else "no"
        fields["hint"] = doc.get("hint")
    elif "masked_terms" in sample:  # M1: the explanation as M2 will see it
        fields["explanation (anonymized)"] = logged_response(sample)
    return fields


def remark(task: str, values: Mapping[str, float | None]) -> str:
    """Per-label accuracies are NaN when no evaluated document carries that label: say so."""
    missing = [
        label
        for label in ("YES", "NO", "UNKNOWN")
        if (value := values.get(f"acc_{label.lower()}")) is not None and math.isnan(value)
    ]
    if not missing:
        return ""
    return f"no {'/'.join(missing)} document among the evaluated ones: accuracy may reflect one label only"


def sample_outcomes(task: str, sample: dict[str, Any]) -> dict[str, float | None]:
    return {"acc": float(sample["acc"])} if isinstance(sample.get("acc"), (int, float)) else {}


ACCURACY = "accuracy"
EFFECTIVENESS = "effectiveness"
# The summary view: M2 accuracy with each hint, the pipeline's own explanations first
# (Table 2's "llama-3" row, the paper's Step 2), then effectiveness (Step 3), then the
# authors' sanity check whose hint is the gold label.
HEADLINES = (
    Headline(("geese_llama3/acc",), "Llama-3 explanation", ACCURACY),
    Headline(("geese_noexp/acc",), "no hint", ACCURACY),
    Headline(("geese_dummy/acc",), "dummy hint", ACCURACY),
    Headline(("geese_human/acc",), "human explanation", ACCURACY),
    Headline(("geese_llama3_whynot/acc",), "why-not explanation", ACCURACY),
    Headline(("geese_llama3_implicit/acc",), "implicit explanation", ACCURACY),
    Headline(("geese_selfexp/acc",), "your M1's explanation", ACCURACY),
    Headline(("geese_llama3/effectiveness",), "effectiveness, Llama-3", EFFECTIVENESS),
    Headline(("geese_human/effectiveness",), "effectiveness, human", EFFECTIVENESS),
    Headline(("geese_llama3_only/acc",), "leakage, Llama-3", ACCURACY),  # M2's accuracy with the hint alone
    Headline(("geese_llama3/las",), "LAS, Llama-3", EFFECTIVENESS),
    Headline(("geese_human_only/acc",), "leakage, human", ACCURACY),
    Headline(("geese_human/las",), "LAS, human", EFFECTIVENESS),
    Headline(("geese_prediction_obvious/acc", "geese_obvious/acc"), "hint = gold label", ACCURACY, sanity=True),
)
FAMILIES = {
    ACCURACY: Family("M2 accuracy with each hint, or with the hint alone (leakage)", "accuracy (share of pairs)"),
    EFFECTIVENESS: Family(
        "Explanation effectiveness (accuracy with the hint − accuracy without) and its leakage-adjusted form (LAS)",
        "accuracy difference",
        None,
        None,
    ),
}


SPEC = PaperSpec(
    key="geese",
    title="GEESE: explanation effectiveness on e-RTE-3-it",
    datasets={"geese": (geese_data.SOURCE,)},
    board=Board(
        **read_words(Path(__file__).with_name("words.yaml")),
        task_order=(
            BASELINE,
            "geese_dummy",
            *(name for task in EXPLANATION_TASKS for name in (task, task + ALONE)),
            "geese",
            "geese_generate_whyexp",
            "geese_generate_whynot",
            "geese_generate_implicit",
        ),
        derived_metrics=("effectiveness", LAS),
        # The authors' tasks with no counterpart of ours keep their names (read_authors_task_names).
        # CALAMITA's tasks with no counterpart of ours keep their names too (calamita_rows).
        extra_tasks={
            "geese_prediction_obvious": ("acc",),
            "geese_obvious": ("acc",),
            **{task: ("acc",) for task in CALAMITA_TASKS},
        },
        pm_note="± on the published rows: the stderr printed in GEESE Table 2, and in the authors' results file for "
        f"their repository run (CALAMITA's rows print none). {BATCH_NOTE}.",
        published=published_rows,
        adjust_runs=read_authors_task_names,
        derive=derive_columns,
        samples=SampleView(
            sample_fields,
            facets=("gold", "prediction", "correct"),
            outcomes=sample_outcomes,
            doc_key=doc_field_key("id"),
        ),
        comparisons=tuple(
            Comparison(task, BASELINE, "acc", "effectiveness") for task in ("geese_dummy", *EXPLANATION_TASKS)
        ),
        remark=remark,
        headlines=HEADLINES,
        families=FAMILIES,
        reference_model="Llama-3-8B",
        suite_datasets=(AUTHORS_DATASET,),
        normalize_template=authors_template,
    ),
    runs=RunSteps(request_tokens=((r"geese_.*_only", 227), (r"geese_.*", 405))),
)
