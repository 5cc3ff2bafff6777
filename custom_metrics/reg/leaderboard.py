"""REG on the leaderboard: its published rows (``published``: Tables 1-3, ChaosNLI's model rows), a
row per model and mode (non-thinking, thinking), and how the page shows REG (``words.yaml``; logged
samples with the judge's verdicts and calls: ``sample_view``; the judge of every number and the
runs judged again: ``rejudged``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from custom_metrics.common.board_words import read_words
from custom_metrics.common.leaderboard_types import Board, Family, Headline, SampleView, doc_field_key
from custom_metrics.common.paper_spec import PaperSpec, RunSteps
from custom_metrics.common.rejudging import Rejudging
from custom_metrics.common.results import TaskRun
from custom_metrics.reg import data as reg_data
from custom_metrics.reg.generation import NO_REASONING, TASKS
from custom_metrics.reg.published import published_rows
from custom_metrics.reg.rejudged import judge_calls, judge_of_each_number, rejudged_runs
from custom_metrics.reg.sample_view import sample_fields, sample_outcomes


def remark(task: str, values: Mapping[str, float | None]) -> str:
    """Why a reg_chaos row has no scores, instead of bare NaN (shown on the page and by the CLI)."""
    if task != "reg_chaos":
        return ""
    n, degenerate, check = values.get("n"), values.get("judge_degenerate"), values.get("judge_check_acc")
    unparsed = values.get("unparsed")
    parts = []
    if n is not None and n == 0:
        parts.append(
            "no item was judged a contradiction (|N| = 0), so coherence, effectiveness and success are undefined"
        )
    if degenerate is not None and degenerate >= 0.5:
        accuracy = f", {check:.2f} on its sanity check" if check is not None and math.isfinite(check) else ""
        parts.append(f"the judge is degenerate (one label for nearly every pair{accuracy}): its verdicts mean nothing")
    elif n is not None and n == 0:
        parts.append("usually a weak judge (the embedded gemma-3-270m calls nearly every pair entailment)")
    if unparsed is not None and math.isfinite(unparsed) and unparsed > 0:
        parts.append(f"{unparsed:.0%} of the judge's verdicts were unparsed")
    if parts:
        parts.append("pass a real judge (lm_eval_tasks/reg/DETAILS.md, 'Choosing the judge')")
    return "; ".join(parts)


QUALITY, JUDGE = "quality", "judge"
HEADLINES = (
    Headline(("reg_chaos/success",), "success", QUALITY),
    Headline(("reg_chaos/coherence",), "coherence", QUALITY),
    Headline(("reg_chaos/effectiveness",), "effectiveness", QUALITY),
    Headline(("reg_judge_select/answer_acc",), "as NLI judge", JUDGE),
)
FAMILIES = {
    QUALITY: Family("Reconciling explanations, over the items the judge calls contradictions (N)", "share of N"),
    JUDGE: Family("The model as NLI judge, on the 289 high-agreement items", "accuracy (share of items)"),
}


# Each REG task's paper setting: the mode its explanations are generated in (in-process and
# served alike, lm_eval_tasks/reg/DETAILS.md); Table 1 tested every judge in non-thinking mode.
# An API reasoning model's mode is its reasoning effort's ("none" is non-thinking, ``mode_rows``).
MODES = {
    **{task: mode for (mode, _), task in TASKS.items()},
    "reg_judge_select": "non-thinking",
    "reg_judge_select_loglik": "non-thinking",
    "reg_judge_select_reasoning_served": "non-thinking",
    "reg_judge_humans": "non-thinking",
    "reg_cot_faithfulness": "thinking",  # it asks a thinking run's traces again: that run's row
}
# Variants read as the task whose paper rows they reproduce.
SHOWN_AS = {"reg_judge_select_reasoning_served": "reg_judge_select"}


def mode_rows(runs: list[TaskRun], notes: list[str]) -> list[TaskRun]:
    """REG rows per mode, as Table 2 has them: each run's setting says its mode (a model's
    non-thinking explanations and judge accuracy share a row); every ``reg_chaos`` variant is read as
    ``reg_chaos``, the task it came from kept for its samples and said in the notes."""
    adjusted = []
    for run in runs:
        mode = MODES.get(run.task)
        effort = ((run.task_config or {}).get("generation_kwargs") or {}).get("reasoning_effort")
        if run.task == "reg_chaos_reasoning_served" and effort == NO_REASONING:
            mode = "non-thinking"
        if mode is None:
            adjusted.append(run)
            continue
        setting = ", ".join(part for part in (run.setting, mode) if part)
        task = "reg_chaos" if run.task.startswith("reg_chaos") else SHOWN_AS.get(run.task, run.task)
        adjusted.append(replace(run, task=task, setting=setting, source_task=run.task if task != run.task else ""))
        if task != run.task:
            notes.append(f"{run.model} ({setting}): {task} read from {run.task} ({run.path}).")
    return adjusted


def share_of(key: str, values: Mapping[str, float | None]) -> float | None:
    """The items a REG number is a share of: |N| (the run's ``n``) for reg_chaos, else the documents."""
    return values.get("n") if key.startswith("reg_chaos/") else values.get("#samples")


def paper_setting(setting: str) -> str:
    return "thinking" if setting.endswith(", thinking") or setting == "thinking" else "non-thinking"


def check_run(tasks: Sequence[str], metadata: Mapping[str, Any], here: bool) -> None:
    """REG's judge, checked before a sweep's pairs load their models (``judging.check_run_judge``;
    imported here on use: the judging module loads lm-eval, which the leaderboard never needs)."""
    from custom_metrics.reg.judging import check_run_judge

    check_run_judge(tasks, metadata, here=here)


SPEC = PaperSpec(
    key="reg",
    title="REG: reconciliatory explanations on ChaosNLI-MNLI contradictions",
    datasets={"chaosnli": (reg_data.SOURCE,)},
    board=Board(
        **read_words(Path(__file__).with_name("words.yaml")),
        task_order=("reg_chaos", "reg_judge_select"),
        pm_note="Published rows print no ± (the paper's bootstrap intervals are in its Appendix J). "
        "Published reg_judge_select acc is REG Table 1 (judge accuracy, non-thinking mode).",
        published=published_rows,
        adjust_runs=mode_rows,
        derive=judge_of_each_number,
        read_extra=rejudged_runs,
        samples=SampleView(
            sample_fields,
            facets=(
                "in N",
                "coherent",
                "effective",
                "success",
                "flag",
                "J(p, h)",
                "gold",
                "prediction",
                "correct",
                "trace kept",
                "same",
            ),
            outcomes=sample_outcomes,
            doc_key=doc_field_key("uid"),
            extras=judge_calls,
            show_filtered=False,
        ),
        remark=remark,
        headlines=HEADLINES,
        families=FAMILIES,
        reference_model="Gemma-4-31B-it",
        paper_setting=paper_setting,
        share_of=share_of,
    ),
    runs=RunSteps(
        check_run=check_run,
        request_tokens=((r"reg_judge_.*", 351),),
    ),
    rejudge=Rejudging(
        what="reg_chaos* explanations, judged twice by an NLI judge (J(p, h); then J(p;e, h) and J(p, e))",
        module="custom_metrics.reg.rejudge",
    ),
)
