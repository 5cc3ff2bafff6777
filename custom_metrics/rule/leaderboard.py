"""RULE on the leaderboard: the published rows of Tables 2, 3, 5, 6, 7, 8 and 9 (``published``), the
few-shot setting rows, and how the page shows RULE (``words.yaml``; logged samples: ``sample_view``).

The suite's few-shot split runs become one row per model and setting (shots, and ReClor,
RULE or chain-of-thought demonstrations) with the mean and population std over the splits,
as the protocol command computes them; the biased-context runs (``bias``) likewise, in a row per
bias under the task ``rule_bias``, each split run compared with the unbiased run of its split
(``COMPARISONS``), and a row per judge asked again about their chains of thought (``bias_judges``).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from custom_metrics.common.board_words import read_words
from custom_metrics.common.leaderboard_types import Board, Comparison, Family, Headline, SampleView, doc_field_key
from custom_metrics.common.paper_spec import PaperSpec, RunSteps, SamplesInput
from custom_metrics.common.rejudging import Rejudging
from custom_metrics.common.results import Score, TaskRun
from custom_metrics.rule import data as rule_data
from custom_metrics.rule import zeroshot_cot
from custom_metrics.rule.bias import BIAS_DEMOS, BIASES, TARGET_OUTCOMES, bias_task
from custom_metrics.rule.bias_judges import detector_runs
from custom_metrics.rule.data import DEMOS, demo_setting, fewshot_task
from custom_metrics.rule.published import MAIN_QUESTIONS_NOTE, ZERO_SHOT, published_rows
from custom_metrics.rule.sample_view import CONSISTENCY_FIELD, group_questions, sample_fields, sample_outcomes

# Few-shot split tasks -> the paper's setting: ``rule_<shots>shot[_<demos>]_split<k>``
# (``data.fewshot_task``).
_DEMOS = "|".join(sorted(DEMOS, key=len, reverse=True))
_SPLIT_TASK = re.compile(
    rf"rule_(?P<shots>[15])shot(?:_(?P<demos>{_DEMOS}))?(?:_bias_(?P<bias>{'|'.join(BIASES)}))?_split\d+"
)
BIAS_TASK = "rule_bias"  # the biased split runs' rows (``bias``): their numbers are no Table 2 column
# Tasks that ask every question under each of the five published prompts (one run, five prompts).
_FIVE_PROMPTS = re.compile(r"rule_5shot_(?:rationale_\w+|alignment(?:_noinstr)?|noctx)")
FIVE_PROMPTS = "five-shot on ReClor, five prompts"
ZERO_SHOT_COT = "zero-shot, CoT"  # Table 2's zero-shot "InstructGPT+ CoT" row (Kojima et al.'s two requests)


def rule_settings(runs: list[TaskRun], notes: list[str]) -> list[TaskRun]:
    """RULE rows per setting, as in the paper's Tables 2 and 6: zero-shot tasks as they are, the
    five-prompt tasks (Tables 5, 7, 9) in a five-shot row, each few-shot setting's split runs in one."""
    plain, splits = [], {}
    for run in runs:
        match = _SPLIT_TASK.fullmatch(run.task)
        if match:
            key = (run.model, run.setting, int(match["shots"]), match["demos"] or "reclor", match["bias"] or "")
            splits.setdefault(key, []).append(run)
        elif _FIVE_PROMPTS.fullmatch(run.task):
            plain.append(replace(run, setting=", ".join([FIVE_PROMPTS, *_extra(run.setting)])))
        elif run.task == zeroshot_cot.ANSWER_TASK:  # Table 2's zero-shot "InstructGPT+ CoT" row
            setting = ", ".join([ZERO_SHOT_COT, *_extra(run.setting)])
            plain.append(replace(run, task="rule", setting=setting, source_task=run.task))
        else:
            plain.append(replace(run, setting=run.setting or "zero-shot"))
    for (model, setting, shots, demos, bias), group in splits.items():
        group.sort(key=lambda run: run.task)
        scores = {}
        for key in sorted({key for run in group for key in run.scores}):
            values = [run.scores[key].value for run in group if key in run.scores]
            finite = [v for v in values if v is not None and math.isfinite(v)]
            scores[key] = Score(
                statistics.fmean(finite) if finite else None, statistics.pstdev(finite) if len(finite) > 1 else None
            )
        sizes = [run.n_samples for run in group]
        parts = ", ".join(f"{run.task} ({run.n_samples if run.n_samples is not None else '?'} docs)" for run in group)
        limits = {run.limit for run in group} - {None}
        shown = ", ".join([demo_setting(shots, demos), *([BIASES[bias]] if bias else [])])
        label = ", ".join([f"{shown} ({len(group)} of 5 splits)", *_extra(setting)])
        flag = ("" if shots == 5 else f" --shots {shots}") + ("" if demos == "reclor" else f" --demos {demos}")
        originals = [run.n_original for run in group]
        plain.append(
            TaskRun(
                model,
                BIAS_TASK if bias else "rule",
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
        pooled = (
            "each split run is paired with the unbiased run of its split under 'Within a run'"
            if bias
            else "the paper's Consistency and MainQ-wise columns pool the five runs instead "
            f"(`explain-eval rule-protocol{flag} --summarize-only` computes those)"
        )
        notes.append(
            f"{model}, {label}: mean ± population std over {', '.join(f'{run.task} ({run.path})' for run in group)}; "
            + pooled
            + (f"; {MAIN_QUESTIONS_NOTE}." if demos != "rule" else ".")
        )
    return plain


def _extra(setting: str) -> list[str]:
    """A run's setting beyond its shots (the harness' own, always zero here): chat template, system instruction."""
    return [part for part in setting.split(", ") if part and not part.endswith("-shot")]


def paper_setting(setting: str) -> str:
    """The Table 2 setting a run's setting compares with (its rows on RULE's demonstrations: for reference)."""
    for shots in ("five-shot", "one-shot"):
        for demos, published in (("ReClor, CoT", "ReClor, CoT"), ("ReClor", "ReClor"), ("RULE", "RULE, for reference")):
            if setting.startswith(f"{shots} on {demos}"):
                return f"{shots} on {published}"
    return ZERO_SHOT_COT if setting.startswith(ZERO_SHOT_COT) else ZERO_SHOT


# The run columns that are shares of their task's documents: the combined `rule` task mixes
# main questions and subquestions, and the selective/eliminative accuracies are over a part
# of the subquestions, so only the logged samples count theirs.
_SHARES_OF_DOCS = ("rule_main/mainq_acc", "rule_sub/subq_acc", f"{BIAS_TASK}/mainq_acc")


def share_of(key: str, values: Mapping[str, float | None]) -> float | None:
    return values.get("#samples") if key in _SHARES_OF_DOCS else None


WORDS = read_words(Path(__file__).with_name("words.yaml"))
# Each few-shot split task in words (the task names come from ``data.fewshot_task``).
SPLIT_LABELS = {
    fewshot_task(shots, k, demos): f"{demo_setting(shots, demos)}, run {k}"
    for shots in rule_data.SHOTS
    for demos in DEMOS
    for k in rule_data.SPLITS
} | {
    bias_task(demos, bias, k): f"{demo_setting(5, demos)}, {words}, run {k}"
    for demos in BIAS_DEMOS
    for bias, words in BIASES.items()
    for k in rule_data.SPLITS
}
# Each biased split run against the unbiased run of its split, on the documents both logged: the
# accuracy drop (Turpin et al.'s comparison) and the bias target picked with and without the bias.
COMPARISONS = tuple(
    comparison
    for demos in BIAS_DEMOS
    for bias in BIASES
    for k in rule_data.SPLITS
    for task, baseline in [(bias_task(demos, bias, k), fewshot_task(5, k, demos))]
    for comparison in (
        Comparison(task, baseline, "mainq_acc", "MainQ accuracy, biased − unbiased"),
        Comparison(task, baseline, "bias_follow", "picks the bias target, biased − unbiased", TARGET_OUTCOMES[bias]),
    )
)
ACCURACY, CONSISTENCY, BIAS, AGREEMENT = "accuracy", "consistency", "bias", "agreement"
HEADLINES = (
    Headline(("rule/consistency",), "consistency", CONSISTENCY),
    Headline(("rule/mainq_acc", "rule_main/mainq_acc"), "MainQ", ACCURACY),
    Headline(("rule/subq_acc", "rule_sub/subq_acc"), "SubQ", ACCURACY),
    Headline(("rule/selective_acc", "rule_sub/selective_acc"), "selective SubQ", ACCURACY),
    Headline(("rule/eliminative_acc", "rule_sub/eliminative_acc"), "eliminative SubQ", ACCURACY),
    Headline(("rule/mainq_wise_subq_acc",), "MainQ-wise SubQ", ACCURACY),
    Headline((f"{BIAS_TASK}/mainq_acc",), "MainQ, biased context", ACCURACY),
    Headline((f"{BIAS_TASK}/bias_follow",), "follows the bias", BIAS),
    Headline((f"{BIAS_TASK}/articulation",), "says so (articulation)", BIAS),
    Headline((f"{BIAS_TASK}/articulation_range",), "articulation range over detectors", BIAS),
    Headline((f"{BIAS_TASK}/detector_kappa",), "detector agreement (κ)", AGREEMENT),
)
FAMILIES = {
    CONSISTENCY: Family(
        "Consistency: main questions answered right with all their subquestions", "share of main questions"
    ),
    ACCURACY: Family("Main-question and subquestion accuracy", "accuracy (share of questions)"),
    BIAS: Family("Biased context: answers that follow the bias, chains of thought that say so", "share of answers"),
    AGREEMENT: Family("Articulation detectors: a judge's agreement with the default patterns", "Cohen's kappa", -1.0),
}

SPEC = PaperSpec(
    key="rule",
    title="RULE: rationale understanding (ReClor main questions and subquestions)",
    datasets={"rule": (rule_data.MAIN_SOURCE, *rule_data.SUB_SOURCES.values(), rule_data.PROMPTS_SOURCE)},
    board=Board(
        **WORDS | {"task_labels": WORDS.get("task_labels", {}) | SPLIT_LABELS},  # the words file's, and the splits'
        task_order=("rule", "rule_main", "rule_sub", BIAS_TASK),
        extra_tasks={
            BIAS_TASK: ("mainq_acc", "bias_follow", "articulation", "unparsed", "articulation_range", "detector_kappa")
        },
        read_extra=detector_runs,
        comparisons=COMPARISONS,
        pm_note="± on published rows: the std over the five test splits printed in RULE Table 2 (0.00 where the paper "
        "ran once).",
        published=published_rows,
        adjust_runs=rule_settings,
        samples=SampleView(
            sample_fields,
            facets=("kind", "correct", CONSISTENCY_FIELD, "answer read", "prediction"),
            outcomes=sample_outcomes,
            doc_key=doc_field_key("doc_id"),
            arrange=group_questions,
        ),
        headlines=HEADLINES,
        families=FAMILIES,
        reference_model="InstructGPT",
        paper_setting=paper_setting,
        share_of=share_of,
    ),
    rejudge=Rejudging(
        "RULE's biased chain-of-thought runs (rule_5shot_cot_bias_*): whether each chain of thought mentions the hint",
        "custom_metrics.rule.bias_judges",
    ),
    runs=RunSteps(
        samples_input=SamplesInput(
            lambda task: zeroshot_cot.REASONING_TASK if task == zeroshot_cot.ANSWER_TASK else None, "explanations"
        ),
        request_tokens=(
            (r"rule_cot_faithfulness_edits", 2310),
            (r"rule_cot_faithfulness|rule_5shot_(alignment|rationale).*", 2051),
            (r"rule_5shot_noctx", 1004),
            (r"rule_5shot_.*", 1820),
            (r"rule_1shot_.*", 760),
            (r"rule.*", 518),  # zero-shot
        ),
    ),
)
