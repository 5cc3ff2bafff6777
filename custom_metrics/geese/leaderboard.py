"""GEESE on the leaderboard: Table 2's published row, the authors' repository run of all six
hints (the only published 800-doc numbers for whynot and implicit), explanation effectiveness and
label leakage (LAS), the authors' own task names read into our columns, and how the page shows
GEESE (column words and definitions, logged samples).

Effectiveness = acc(task with hint) - acc(geese_noexp) of the same model, computed only
when both runs exist (no stderr: the two accuracies are paired on the same documents,
so their stderrs cannot simply be combined; the leaderboard's paired differences give
its confidence interval from the logged samples instead, McNemar's test on the docs).
LAS (``custom_metrics.geese.leakage``) is computed from the logged samples of three runs of
the same model: no hint, the hint with the pair, the hint alone (``<task>_only``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from decimal import Decimal
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.leaderboard_types import (
    Board,
    Cell,
    Column,
    Comparison,
    Family,
    Headline,
    Row,
    SampleView,
    doc_field_key,
)
from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.common.published import PublishedCell, PublishedRow, plain, table_lines
from custom_metrics.common.results import TaskRun
from custom_metrics.common.samples import logged_response
from custom_metrics.geese import data as geese_data
from custom_metrics.geese.leakage import doc_outcomes, leakage

SOURCE = "GEESE (Zaninello & Magnini, CLiC-it 2024) Table 2"
BASELINE = "geese_noexp"

# Table 2 ("Results for the 0-shot baseline experiments on the full test set"):
# task | acc | stderr. M2 = Llama-3-8B, zero-shot, 800 test items.
GEESE_TABLE_2 = """
geese_dummy | 0.5850 | 0.0174
geese_noexp | 0.5437 | 0.0176
geese_llama3 | 0.7812 | 0.0146
geese_human | 0.7575 | 0.0152
"""
# Table 2 is the authors' batch-size-24 run (calamita-geese@de12d08, scripts/prediction_output/
# meta-llama__Meta-Llama-3-8B/results_2024-11-04T17-03-27.790181.json: .54375, .585, .7575,
# .78125). Their batch-size-1 runs of the same template differ by 1 to 3 of the 800 documents
# (0.00125 to 0.00375, bf16 arithmetic).
BATCH_NOTE = "Table 2 is the authors' batch-size-24 run; batch size 1 differs by 0.00125-0.00375 (1-3 of 800 docs)"

# The authors' repository run of all six hints, not in the paper: calamita-geese@de12d08,
# scripts/prediction_output/meta-llama__Meta-Llama-3-8B/results_2024-11-04T15-03-26.521608.json
# (800 docs, bf16, batch size 1, the Table 2 template): task | acc | stderr, as the file prints
# them. Its whynot and implicit rows are the only published 800-doc numbers for those hints.
AUTHORS_RUN_FILE = "results_2024-11-04T15-03-26.521608.json"
GEESE_AUTHORS_RUN = """
geese_noexp | 0.5425 | 0.017624712071250784
geese_dummy | 0.58875 | 0.017407845594308736
geese_human | 0.75875 | 0.015135947873275997
geese_llama3 | 0.78375 | 0.014564428416311686
geese_llama3_whynot | 0.64875 | 0.016887814978363225
geese_llama3_implicit | 0.58125 | 0.01745361947895465
"""
AUTHORS_RUN_SETTING = "zero-shot, M2; authors' repository run, not Table 2"

# CALAMITA's own GEESE tasks (CALAMITA-AILC/calamita-eval, tasks/geese: the Table 2 template, but
# on azaninello/e-rte-3-it_4_calamita_v1.0, whose hints include ANITA-8B's explanations) and the
# four models its results page reports (results/results.md at 54c1a80, two decimals, no stderr,
# no document count): task | Minerva-7B | ANITA-8B | Llama-3.1-8B | Llama-3.1-70B, as printed.
# The columns are CALAMITA's task names (its geese_noexp shares ours); n is not published.
CALAMITA_COMMIT = "54c1a80f6e9114d284182365b96a05192107001d"
CALAMITA_MODELS = (
    "sapienzanlp/Minerva-7B-instruct-v1.0",
    "swap-uniba/LLaMAntino-3-ANITA-8B-Inst-DPO-ITA",
    "meta-llama/Llama-3.1-8B-Instruct",
    "meta-llama/Llama-3.1-70B-Instruct",
)
CALAMITA_RESULTS = """
geese_anon_anita | 0.57 | 0.83 | 0.66 | 0.89
geese_anon_dummy | 0.49 | 0.54 | 0.49 | 0.61
geese_anon_gold | 0.58 | 0.71 | 0.62 | 0.82
geese_anon_llama | 0.57 | 0.79 | 0.60 | 0.86
geese_noexp | 0.49 | 0.47 | 0.50 | 0.57
"""
CALAMITA_TASKS = tuple(row[0] for row in table_lines(CALAMITA_RESULTS) if row[0] != BASELINE)
CALAMITA_SETTING = "zero-shot, M2; CALAMITA harness, not the paper"


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
    """Runs of the authors' tasks as runs of ours, in a row marked as read from their names.

    The marked row keeps an authors' run apart from a run of our tasks by the same model,
    so the two compare side by side; the notes say which file and names each came from. An
    authors' task with no counterpart keeps its name, in the marked row.
    """
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


def _cells(block: str) -> dict[str, PublishedCell]:
    rows = table_lines(block)
    cells = {f"{task}/acc": PublishedCell(Decimal(acc), Decimal(stderr)) for task, acc, stderr in rows}
    return cells | {f"{task}/n": PublishedCell(Decimal(800)) for task, _, _ in rows}


def calamita_rows() -> list[PublishedRow]:
    """One row per model of CALAMITA's results page, its GEESE cells as printed (no ±, no n)."""
    source = (
        f"CALAMITA harness results (CALAMITA-AILC/calamita-eval@{CALAMITA_COMMIT[:7]}, results/results.md, "
        "GEESE rows; tasks/geese on azaninello/e-rte-3-it_4_calamita_v1.0): M2 = {model}, zero-shot; two decimals "
        "as printed, no stderr; the number of documents is not published (the dataset is on the Hub only)"
    )
    lines = table_lines(CALAMITA_RESULTS)
    return [
        PublishedRow(
            "geese",
            model,
            source.format(model=model),
            {f"{task}/acc": PublishedCell(Decimal(values[index])) for task, *values in lines},
            setting=CALAMITA_SETTING,
            origin="CALAMITA harness",
        )
        for index, model in enumerate(CALAMITA_MODELS)
    ]


def published_rows() -> list[PublishedRow]:
    table_2 = f"{SOURCE}; M2 = Llama-3-8B, zero-shot, full test set; ± = stderr; {BATCH_NOTE}"
    authors = (
        f"GEESE authors' repository run, not Table 2 (andreazaninello/calamita-geese@de12d08, "
        f"scripts/prediction_output/meta-llama__Meta-Llama-3-8B/{AUTHORS_RUN_FILE}): M2 = Llama-3-8B, zero-shot, "
        "800 docs, batch size 1; ± = stderr"
    )
    return [
        PublishedRow("geese", "Llama-3-8B", table_2, _cells(GEESE_TABLE_2), setting="zero-shot, M2"),
        PublishedRow(
            "geese",
            "Llama-3-8B",
            authors,
            _cells(GEESE_AUTHORS_RUN),
            setting=AUTHORS_RUN_SETTING,
            origin="authors' repository run",
        ),
        *calamita_rows(),
    ]


def _basis(task: str, ours, theirs, our_file, their_file) -> str:
    """What an effectiveness was computed from: the two runs' documents, and their files when two."""
    docs = lambda counts: f"{counts[0]} docs" if counts and counts[0] is not None else "docs not recorded"
    text = f"acc of {task} ({docs(ours)}) − acc of {BASELINE} ({docs(theirs)})"
    if our_file != their_file:
        text += f", from two results files: {our_file} and {their_file}"
    return text


def add_effectiveness(columns: list[Column], rows: list[Row], runs: list[TaskRun], notes: list[str]) -> list[Column]:
    """GEESE's explanation effectiveness: acc with a hint minus acc with none, same model."""
    baseline = f"{BASELINE}/acc"
    hint_tasks = [
        c.task
        for c in columns
        if c.metric == "acc"
        and c.key == f"{c.task}/acc"
        and c.task not in (BASELINE, "geese")
        and not c.task.endswith(ALONE)
    ]
    samples = {(run.model, run.task): (run.n_samples, run.limit) for run in runs}
    files = {(run.model, run.task): run.path for run in runs}
    derived = []
    for task in hint_tasks:
        key = f"{task}/effectiveness"
        derived.append(Column(key, f"{task} effectiveness (acc − {BASELINE} acc)", task, "effectiveness", "derived"))
        for row in rows:
            with_hint, without = row.cells.get(f"{task}/acc"), row.cells.get(baseline)
            if with_hint is None or without is None or with_hint.value is None or without.value is None:
                continue
            if row.kind == "published":
                exact = Decimal(with_hint.text) - Decimal(without.text)
                row.cells[key] = Cell(float(exact), text=plain(exact))
                continue
            ours, theirs = samples.get((row.model, task)), samples.get((row.model, BASELINE))
            row.cells[key] = Cell(
                with_hint.value - without.value,
                basis=_basis(task, ours, theirs, files.get((row.model, task)), files.get((row.model, BASELINE))),
            )
            if ours != theirs:
                notes.append(
                    f"{row.model}: {task} effectiveness compares runs of different size "
                    f"(#samples, limit) {ours} vs {BASELINE} {theirs}."
                )
    return _placed_after(columns, derived, ("acc",))


def _placed_after(columns: list[Column], derived: list[Column], metrics: tuple[str, ...]) -> list[Column]:
    """``derived`` placed right after the last of their task's ``metrics`` columns the table has."""
    position = {c.key: float(i) for i, c in enumerate(columns)}
    for column in derived:
        anchor = [position[key] for metric in metrics if (key := f"{column.task}/{metric}") in position]
        position[column.key] = anchor[-1] + 0.5
    return sorted([*columns, *derived], key=lambda c: position[c.key])


# The explanation sources with an explanation-only task ``<task>_only`` (the hint without the
# sentence pair): Hase et al.'s explanation-only simulator, whose correctness marks a leaking document.
ALONE = "_only"
EXPLANATION_TASKS = ("geese_human", "geese_llama3", "geese_llama3_whynot", "geese_llama3_implicit", "geese_selfexp")
LAS = "las"


def add_leakage(columns: list[Column], rows: list[Row], runs: list[TaskRun], notes: list[str]) -> list[Column]:
    """Leakage-adjusted simulatability per explanation source, from the logged samples of the
    same model's three runs: no hint, the hint with the pair, the hint alone."""

    def inputs(task: str) -> tuple[str, str, str]:  # the three runs a source's LAS needs
        return BASELINE, task, task + ALONE

    def ran(row: Row, task: str) -> bool:
        return row.kind == "run" and all(f"{name}/acc" in row.cells for name in inputs(task))

    sources = [task for task in EXPLANATION_TASKS if any(ran(row, task) for row in rows)]
    derived = [
        Column(f"{task}/{LAS}", f"{task} LAS (leakage-adjusted simulatability)", task, LAS, "derived")
        for task in sources
    ]
    for row in rows:
        mine = [task for task in sources if ran(row, task)]
        outcomes: dict[str, dict[str, float]] = {}
        for name in dict.fromkeys(name for task in mine for name in inputs(task)):
            path = row.samples.get(name)
            if path is None:
                continue
            try:
                outcomes[name] = doc_outcomes(path)
            except DataError as error:
                notes.append(f"{row.model}: LAS not computed from {name}'s samples: {error}")
        for task in mine:
            if not all(name in outcomes for name in inputs(task)):
                needed = ", ".join(inputs(task))
                notes.append(f"{row.model}: {task} LAS needs the logged samples (--log_samples) of {needed}.")
                continue
            found = leakage(*(outcomes[name] for name in inputs(task)))
            if found.n == 0:
                notes.append(f"{row.model}: {task} LAS: the three runs share no document.")
                continue
            value = found.value
            row.cells[f"{task}/{LAS}"] = Cell(math.nan if value is None else value, basis=found.describe())
    return _placed_after(columns, derived, ("acc", "effectiveness"))


def derive_columns(columns: list[Column], rows: list[Row], runs: list[TaskRun], notes: list[str]) -> list[Column]:
    """GEESE's derived columns: effectiveness, then leakage-adjusted simulatability."""
    return add_leakage(add_effectiveness(columns, rows, runs, notes), rows, runs, notes)


HINT_TASKS = ("geese_dummy", *EXPLANATION_TASKS)
TASK_LABELS = {
    "geese_noexp": "M2, no hint",
    "geese_dummy": "M2, dummy hint (hypothesis)",
    "geese_human": "M2, human explanation",
    "geese_llama3": "M2, Llama-3 explanation",
    "geese_llama3_whynot": "M2, Llama-3 why-not explanation",
    "geese_llama3_implicit": "M2, Llama-3 implicit explanation",
    "geese_selfexp": "M2, your M1's explanations",
    "geese_human_only": "M2, human explanation alone (no sentence pair)",
    "geese_llama3_only": "M2, Llama-3 explanation alone (no sentence pair)",
    "geese_llama3_whynot_only": "M2, Llama-3 why-not explanation alone (no sentence pair)",
    "geese_llama3_implicit_only": "M2, Llama-3 implicit explanation alone (no sentence pair)",
    "geese_selfexp_only": "M2, your M1's explanations alone (no sentence pair)",
    "geese": "M2, the four settings (group)",
    "geese_generate_whyexp": "M1: why the label is correct",
    "geese_generate_whynot": "M1: why the other labels are not",
    "geese_generate_implicit": "M1: the implicit link",
    "geese_anon_anita": "CALAMITA's M2, ANITA-8B explanation (its dataset; no task of ours)",
    "geese_anon_dummy": "CALAMITA's M2, dummy hint (its dataset)",
    "geese_anon_gold": "CALAMITA's M2, gold (human) explanation (its dataset)",
    "geese_anon_llama": "CALAMITA's M2, Llama explanation (its dataset)",
}
METRIC_LABELS = {
    "acc": "accuracy",
    "effectiveness": "effectiveness",
    LAS: "LAS (leakage-adjusted simulatability)",
    "f1_macro": "macro-F1",
    "acc_yes": "YES accuracy",
    "acc_no": "NO accuracy",
    "acc_unknown": "UNKNOWN accuracy",
    "words": "words",
    "masked_terms": "masked label words",
    "empty": "empty explanations",
}
# From lm_eval_tasks/geese/README.md.
DEFINITIONS = {
    "acc": "Share of documents where M2's most likely label (YES / NO / UNKNOWN, scored by "
    "log-likelihood) is the gold label. The paper's metric.",
    "effectiveness": "Explanation effectiveness: accuracy with this hint minus accuracy of the same "
    "model with no hint (geese_noexp). Positive = the explanation helps M2.",
    LAS: "Leakage-adjusted simulatability (Hase et al. 2020): the explanation's effect on accuracy (with "
    "the hint − without, same documents) computed apart on the documents where the explanation alone gives "
    "M2 the gold label (leaking) and on the others, then averaged; positive = it helps beyond giving the "
    "answer away. Tested with an exact sign-flip test; undefined when either group is empty.",
    **{
        f"{task}{ALONE}/acc": "Label leakage: share of documents where M2, given this explanation alone (no "
        "sentence pair), predicts the gold label (Hase et al. 2020's leaking documents)."
        for task in EXPLANATION_TASKS
    },
    "f1_macro": "Macro-F1 over the labels present in gold or predictions: whether a hint helps "
    "beyond the majority label.",
    "acc_yes": "Accuracy on the documents whose gold label is YES (recall of YES); NaN without such a document.",
    "acc_no": "Accuracy on the documents whose gold label is NO (recall of NO); NaN without such a document.",
    "acc_unknown": "Accuracy on the documents whose gold label is UNKNOWN (recall of UNKNOWN); NaN "
    "without such a document.",
    "words": "Mean length of M1's anonymized explanation, in whitespace words.",
    "masked_terms": "Mean number of label words the anonymization masked per explanation (label leakage).",
    "empty": "Share of empty explanations (kept and flagged, never dropped).",
}


def _yes(value: Any) -> str:
    return "yes" if value else "no"


def sample_fields(task: str, sample: dict[str, Any]) -> dict[str, Any]:
    """GEESE docs in the sample viewer: the pair, its gold label and, for M2, the hint."""
    doc = sample.get("doc") or {}
    fields: dict[str, Any] = {
        "id": doc.get("id"),
        "gold": doc.get("label"),
        "sentence 1": str(doc.get("text_t", "")).strip(),
        "sentence 2": str(doc.get("text_h", "")).strip(),
    }
    if "acc" in sample:
        fields["correct"] = _yes(sample["acc"])
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
        task_labels=TASK_LABELS,
        metric_labels=METRIC_LABELS,
        definitions=DEFINITIONS,
        samples=SampleView(
            sample_fields,
            facets=("gold", "prediction", "correct"),
            outcomes=sample_outcomes,
            doc_key=doc_field_key("id"),
        ),
        comparisons=tuple(Comparison(task, BASELINE, "acc", "effectiveness") for task in HINT_TASKS),
        remark=remark,
        headlines=HEADLINES,
        families=FAMILIES,
        reference_model="Llama-3-8B",
        published_pm_is_se=True,
        suite_datasets=(AUTHORS_DATASET,),
        normalize_template=authors_template,
    ),
)
