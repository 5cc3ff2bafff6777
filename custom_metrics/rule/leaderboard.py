"""RULE on the leaderboard: Table 2's published rows, the five-shot setting row, and how
the page shows RULE (column words and definitions, logged samples).

± on published rows is the std over the five test splits printed in Table 2; the paper
also prints ±0.00 for its single-run settings (fine-tuned models, humans), which is no
spread at all, and for the zero-shot main questions, which the five splits share (0 by
construction), so those cells carry no ±.
The suite's five-shot split runs become one row per model and setting (ReClor or RULE
demonstrations) with the mean and population std over the splits, as the protocol command
computes them.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import replace
from typing import Any

from custom_metrics.common.leaderboard_types import Family, Headline, PaperSpec, SampleView, doc_field_key
from custom_metrics.common.published import PublishedCell, PublishedRow, cell
from custom_metrics.common.results import Score, TaskRun
from custom_metrics.rule import data as rule_data
from custom_metrics.rule.data import DEMO_SETTINGS
from custom_metrics.rule.metrics import MAIN, SUB_KINDS, Group, Outcome, groups

SOURCE = "RULE (Kawabata & Sugawara, EMNLP 2023) Table 2"

# Table 2, in percent: model | # params | MainQ | SubQ | Selective SubQ | Eliminative SubQ
# | Consistency | MainQ-wise SubQ. "±" is the standard deviation over the five test splits
# (few/zero-shot) and 0.00 for single-run settings; "## " lines name the setting.
RULE_TABLE_2 = """
## fully finetuned on ReClor
DeBERTa-v3-Large | 304M | 66.0±0.00 | 33.1±0.00 | 56.1±0.00 | 25.0±0.00 | 2.4 | 32.8
UnifiedQA-v2-Base | 220M | 40.5±0.00 | 25.8±0.00 | 21.3±0.00 | 27.4±0.00 | 0.7 | 26.0
UnifiedQA-v2-Large | 770M | 57.7±0.00 | 25.0±0.00 | 19.9±0.00 | 26.8±0.00 | 1.4 | 24.7
UnifiedQA-v2-3B | 3B | 66.8±0.00 | 25.3±0.00 | 21.8±0.00 | 26.6±0.00 | 1.4 | 25.2
## five-shot on ReClor
Vicuna 13B | 13B | 46.2±0.7 | 50.0±4.4 | 78.2±3.0 | 40.1±4.6 | 5.6 | 49.4
Flan-UL2 | 20B | 58.5±0.3 | 65.5±5.1 | 88.0±4.0 | 57.6±5.4 | 16.9 | 64.3
InstructGPT | N/A | 71.8±1.0 | 65.3±1.8 | 88.4±2.5 | 57.1±1.5 | 18.2 | 64.0
InstructGPT + CoT | N/A | 67.8±0.5 | 63.2±2.1 | 88.5±2.5 | 54.2±2.8 | 17.2 | 61.8
LLaMA2 13B | 13B | 48.5±2.5 | 44.6±3.2 | 75.3±3.4 | 33.8±4.0 | 5.3 | 44.7
LLaMA2 70B | 70B | 80.3±0.4 | 60.0±2.6 | 90.0±1.1 | 49.4±2.9 | 17.7 | 59.3
Mistral 7B | 7B | 59.9±0.9 | 55.3±3.4 | 83.6±3.4 | 45.4±3.6 | 9.0 | 54.4
## five-shot on RULE, for reference
Vicuna 13B | 13B | 43.9±1.3 | 44.2±2.7 | 72.6±2.6 | 34.2±2.6 | 4.1 | 44.0
Flan-UL2 | 20B | 57.9±0.2 | 66.0±4.9 | 87.7±4.6 | 58.4±5.0 | 17.8 | 64.9
InstructGPT | N/A | 70.2±0.4 | 70.1±2.3 | 90.0±3.5 | 63.0±2.0 | 23.1 | 69.2
LLaMA2 13B | 13B | 47.7±3.0 | 46.3±4.0 | 80.0±2.1 | 34.4±4.7 | 5.1 | 47.1
LLaMA2 70B | 70B | 78.9±0.6 | 64.0±4.8 | 90.6±2.5 | 54.6±5.5 | 21.1 | 63.5
Mistral 7B | 7B | 58.2±1.6 | 57.5±5.4 | 88.1±3.0 | 46.7±7.3 | 9.4 | 57.2
## zero-shot
UnifiedQA-v2-3B | 3B | 45.5±0.00 | 47.9±2.1 | 71.6±2.9 | 39.4±2.2 | 5.7 | 47.8
UnifiedQA-v2-11B | 11B | 55.2±0.00 | 57.3±2.7 | 74.8±5.2 | 51.1±2.7 | 9.7 | 56.5
Flan-T5-XXL | 11B | 60.0±0.00 | 64.3±4.0 | 86.2±5.4 | 56.5±3.3 | 14.7 | 63.4
Vicuna 13B | 13B | 44.2±0.00 | 49.5±2.7 | 77.1±1.7 | 39.7±2.7 | 6.2 | 49.4
Flan-UL2 | 20B | 56.2±0.00 | 65.7±5.2 | 84.5±4.4 | 59.1±5.1 | 14.7 | 64.2
InstructGPT | N/A | 64.1±0.00 | 62.8±2.2 | 89.9±2.0 | 53.2±2.1 | 15.5 | 61.8
InstructGPT+ CoT | N/A | 63.8±0.00 | 62.3±1.0 | 89.6±1.5 | 52.6±1.5 | 14.2 | 61.2
LLaMA2 13B | 13B | 43.8±0.00 | 44.4±3.0 | 75.3±3.1 | 33.5±2.5 | 4.7 | 44.5
LLaMA2 70B | 70B | 70.8±0.00 | 58.0±3.7 | 88.1±3.4 | 47.3±4.0 | 14.1 | 57.3
Mistral 7B | 7B | 54.0±0.00 | 55.9±3.2 | 85.9±2.0 | 45.3±3.6 | 8.6 | 55.0
## majority vote of three annotators
Human | - | 91.5±0.00 | 82.6±0.00 | 93.0±0.00 | 78.9±0.00 | 52.9 | 81.5
"""
# Settings the paper ran once: their "±0.00" is no std at all.
SINGLE_RUN_SETTINGS = ("fully finetuned on ReClor", "majority vote of three annotators")
ZERO_SHOT = "zero-shot"
METRICS = (
    "mainq_acc",
    "subq_acc",
    "selective_acc",
    "eliminative_acc",
    "consistency",
    "mainq_wise_subq_acc",
)


def published_rows() -> list[PublishedRow]:
    rows, setting = [], ""
    for line in RULE_TABLE_2.strip().splitlines():
        if line.startswith("## "):
            setting = line[3:]
            continue
        model, params, *values = (cell.strip() for cell in line.split("|"))
        cells = {f"rule/{metric}": cell(text, percent=True) for metric, text in zip(METRICS, values)}
        if setting in SINGLE_RUN_SETTINGS:
            cells = {key: PublishedCell(value.value) for key, value in cells.items()}
        elif setting == ZERO_SHOT:  # the five splits share the main questions: their std is 0 by construction
            cells["rule/mainq_acc"] = PublishedCell(cells["rule/mainq_acc"].value)
        source = f"{SOURCE}, {setting}; # params {params}; ± = std over the 5 test splits"
        rows.append(PublishedRow("rule", model, source, cells, setting=setting))
    return rows


# Five-shot split tasks -> the paper's setting: ``rule_5shot_split{k}`` (ReClor
# demonstrations) and ``rule_5shot_rule_split{k}`` (RULE demonstrations, Table 3).
_SPLIT_TASK = re.compile(r"rule_5shot_(?:(?P<demos>rule)_)?split\d+")


def rule_settings(runs: list[TaskRun], notes: list[str]) -> list[TaskRun]:
    """RULE rows per setting, as in the paper's Table 2: zero-shot tasks as they are, and
    the five-shot split runs of each setting as one ``rule`` row whose values are the mean
    and ± the population std over the splits (as ``explain-eval rule-protocol``).
    """
    plain, splits = [], {}
    for run in runs:
        match = _SPLIT_TASK.fullmatch(run.task)
        if match:
            splits.setdefault((run.model, run.setting, match["demos"] or "reclor"), []).append(run)
        else:
            plain.append(replace(run, setting=run.setting or "zero-shot"))
    for (model, setting, demos), group in splits.items():
        group.sort(key=lambda run: run.task)
        metrics = sorted({key for run in group for key in run.scores})
        scores = {}
        for key in metrics:
            values = [run.scores[key].value for run in group if key in run.scores]
            finite = [v for v in values if v is not None and math.isfinite(v)]
            scores[key] = Score(
                statistics.fmean(finite) if finite else None, statistics.pstdev(finite) if len(finite) > 1 else None
            )
        sizes = [run.n_samples for run in group]
        parts = ", ".join(f"{run.task} ({run.n_samples if run.n_samples is not None else '?'} docs)" for run in group)
        limits = {run.limit for run in group} - {None}
        extra = [part for part in setting.split(", ") if part and not part.endswith("-shot")]
        label = ", ".join([f"{DEMO_SETTINGS[demos]} ({len(group)} of 5 splits)", *extra])
        flag = "" if demos == "reclor" else f" --demos {demos}"
        originals = [run.n_original for run in group]
        plain.append(
            TaskRun(
                model,
                "rule",
                scores,
                sum(sizes) if None not in sizes else None,
                max(limits) if limits else None,
                group[0].path,
                max(run.timestamp for run in group),
                group[0].harness_version,
                setting=label,
                n_original=sum(originals) if None not in originals else None,
                model_id=group[0].model_id,
                derived=f"mean ± population std over {len(group)} split runs: {parts}",
            )
        )
        notes.append(
            f"{model}, {label}: mean ± population std over "
            f"{', '.join(f'{run.task} ({run.path})' for run in group)}; the "
            "paper's Consistency and MainQ-wise columns pool the five runs instead "
            f"(`explain-eval rule-protocol{flag} --summarize-only` computes those)."
        )
    return plain


TASK_LABELS = {
    "rule": "main questions + subquestions",
    "rule_main": "main questions",
    "rule_sub": "subquestions",
    "rule_noctx": "no context (App. M)",
    "rule_alignment": "rationale alignment (App. J)",
    "rule_rationale_none": "MainQ, no rationale (Table 5)",
    "rule_rationale_selective": "MainQ + selective rationale (Table 5)",
    "rule_rationale_eliminative": "MainQ + eliminative rationales (Table 5)",
    "rule_rationale_both": "MainQ + all rationales (Table 5)",
    **{f"rule_5shot_split{k}": f"five-shot run {k}" for k in range(1, 6)},
}
METRIC_LABELS = {
    "mainq_acc": "MainQ accuracy",
    "subq_acc": "SubQ accuracy",
    "selective_acc": "selective SubQ accuracy",
    "eliminative_acc": "eliminative SubQ accuracy",
    "consistency": "consistency",
    "mainq_wise_subq_acc": "MainQ-wise SubQ accuracy",
    "none_acc": "None accuracy",
    "correct_option_acc": "correct-option alignment",
    "incorrect_option_acc": "incorrect-option alignment",
}
# From lm_eval_tasks/rule/README.md (Section 4 of the paper).
DEFINITIONS = {
    "mainq_acc": "Accuracy on the ReClor main questions (option digit scored by log-likelihood).",
    "subq_acc": "Accuracy on the subquestions (micro average): each asks which rationale explains why "
    "one option of its main question is right or wrong.",
    "selective_acc": "Accuracy on subquestions about the correct option of their main question.",
    "eliminative_acc": "Accuracy on subquestions about an incorrect option of their main question.",
    "consistency": "Share of main questions answered correctly together with all of their subquestions "
    "(groups cut by --limit are left out).",
    "mainq_wise_subq_acc": "Mean over main questions of the share of their subquestions answered correctly "
    "(macro average).",
    "none_acc": "Accuracy on subquestions whose gold answer is 'None of the above choices' (Table 3).",
    "correct_option_acc": "Rationale alignment: accuracy on items built for the correct option.",
    "incorrect_option_acc": "Rationale alignment: accuracy on items built for an incorrect option.",
}


def _outcome(sample: dict[str, Any]) -> list[Any] | None:
    """The logged ``Outcome`` of a sample (any metric carries the same one), if readable."""
    value = sample.get("mainq_acc", sample.get("subq_acc"))
    return value if isinstance(value, list) and len(value) == 7 else None


# The asked question of a prompt: its last "Question:" line (five-shot prompts hold the
# demonstrations' questions first), in the layout of ``prompts.question_block``.
_ASKED = re.compile(r"Question: (?P<text>.*?)(?: \n (?:Option|Rationale)|$)", re.DOTALL)


def asked_question(prompt: Any) -> str | None:
    found = list(_ASKED.finditer(prompt)) if isinstance(prompt, str) else []
    return found[-1]["text"].strip() if found else None


def sample_fields(task: str, sample: dict[str, Any]) -> dict[str, Any]:
    """RULE questions in the sample viewer: the question asked, its main question, its kind, right or not."""
    doc = sample.get("doc") or {}
    outcome = _outcome(sample)
    fields: dict[str, Any] = {
        "id": doc.get("doc_id"),
        "question": asked_question(doc.get("prompt")),
        "main question": doc.get("main_id"),
        "gold": doc.get("label"),
    }
    if outcome is not None:
        fields["kind"] = outcome[2]
        fields["correct"] = "yes" if outcome[4] else "no"
        fields[SUBQUESTIONS] = outcome[6]
    elif isinstance(sample.get("acc"), (int, float)):
        fields["correct"] = "yes" if sample["acc"] else "no"
    return fields


SUBQUESTIONS = "subquestions of its main question"
CONSISTENCY_FIELD = "consistency"  # of the row's main question with its subquestions
GROUP_FIELD = "its group"


def group_questions(task: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each main question followed by its subquestions, every row with its group's consistency
    outcome as the ``consistency`` metric counts it (``metrics.Group``); rows of no question
    (unreadable lines) stay at the end."""
    members: dict[str, list[dict[str, Any]]] = {}
    loose = []
    for row in rows:
        if row.get("kind") in (MAIN, *SUB_KINDS) and row.get("main question") is not None:
            members.setdefault(str(row["main question"]), []).append(row)
        else:
            loose.append(row)
    arranged = []
    for main_id, group_rows in members.items():
        outcomes = [
            Outcome(str(row["id"]), main_id, row["kind"], 0, row.get("correct") == "yes", False, int(row[SUBQUESTIONS]))
            for row in group_rows
        ]
        group = groups(outcomes)[main_id]
        ordered = sorted(group_rows, key=lambda row: (row["kind"] != MAIN, str(row["id"])))
        verdict, detail = _consistency(group)
        for row in ordered:
            row[CONSISTENCY_FIELD], row[GROUP_FIELD] = verdict, detail
        arranged += ordered
    return arranged + loose


def _consistency(group: Group) -> tuple[str, str]:
    """The group's consistency outcome (a facet) and what it rests on."""
    right = sum(s.correct for s in group.subs)
    subs = f"subquestions right: {right} of the {len(group.subs)} in this run ({group.size} in the task)"
    if group.main is None:
        return "main question not in this run", subs
    main = f"main question {'right' if group.main.correct else 'wrong'}; {subs}"
    if group.size == 0:
        return "no subquestions", main
    if not group.complete:
        return "incomplete (left out of consistency)", main
    return ("consistent" if group.consistent else "not consistent"), main


def sample_outcomes(task: str, sample: dict[str, Any]) -> dict[str, float | None]:
    outcome = _outcome(sample)
    if outcome is None:
        return {}
    main = outcome[2] == "main"
    return {"mainq_acc": float(outcome[4]) if main else None, "subq_acc": None if main else float(outcome[4])}


def paper_setting(setting: str) -> str:
    """The Table 2 setting a run's setting compares with."""
    for prefix, published in (
        ("five-shot on ReClor", "five-shot on ReClor"),
        ("five-shot on RULE", "five-shot on RULE, for reference"),
    ):
        if setting.startswith(prefix):
            return published
    return ZERO_SHOT


# Documents behind Table 2's numbers where every row of a setting ran on all of them
# (zero-shot, fine-tuned, human): 943 main questions, 3,003 subquestions; none for the
# five-shot rows (a mean over five splits).
_PUBLISHED_N = {"rule/mainq_acc": 943, "rule/subq_acc": 3003, "rule/consistency": 943}


def published_n(setting: str, key: str) -> int | None:
    return None if setting.startswith("five-shot") else _PUBLISHED_N.get(key)


ACCURACY, CONSISTENCY = "accuracy", "consistency"
HEADLINES = (
    Headline(("rule/consistency",), "consistency", CONSISTENCY),
    Headline(("rule/mainq_acc", "rule_main/mainq_acc"), "MainQ", ACCURACY),
    Headline(("rule/subq_acc", "rule_sub/subq_acc"), "SubQ", ACCURACY),
    Headline(("rule/selective_acc", "rule_sub/selective_acc"), "selective SubQ", ACCURACY),
    Headline(("rule/eliminative_acc", "rule_sub/eliminative_acc"), "eliminative SubQ", ACCURACY),
    Headline(("rule/mainq_wise_subq_acc",), "MainQ-wise SubQ", ACCURACY),
)
FAMILIES = {
    CONSISTENCY: Family(
        "Consistency: main questions answered right with all their subquestions", "share of main questions"
    ),
    ACCURACY: Family("Main-question and subquestion accuracy", "accuracy (share of questions)"),
}

SPEC = PaperSpec(
    key="rule",
    title="RULE: rationale understanding (ReClor main questions and subquestions)",
    task_order=("rule", "rule_main", "rule_sub"),
    datasets={"rule": (rule_data.MAIN_SOURCE, *rule_data.SUB_SOURCES.values(), rule_data.PROMPTS_SOURCE)},
    pm_note="± on published rows: the std over the five test splits printed in RULE Table 2 (0.00 where the paper "
    "ran once).",
    published=published_rows,
    adjust_runs=rule_settings,
    task_labels=TASK_LABELS,
    metric_labels=METRIC_LABELS,
    definitions=DEFINITIONS,
    samples=SampleView(
        sample_fields,
        facets=("kind", "correct", CONSISTENCY_FIELD, "prediction"),
        outcomes=sample_outcomes,
        doc_key=doc_field_key("doc_id"),
        arrange=group_questions,
    ),
    headlines=HEADLINES,
    families=FAMILIES,
    reference_model="InstructGPT",
    paper_setting=paper_setting,
    published_n=published_n,
)
