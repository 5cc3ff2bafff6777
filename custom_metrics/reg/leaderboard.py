"""REG on the leaderboard: Tables 1 (judge accuracy) and 2 (explanation quality, judge
Gemma-4-31B-it), non-thinking and thinking rows, and how the page shows REG (column
words and definitions, logged samples with the judge's verdicts and calls, the judge of
every number and the runs judged again: ``rejudged``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from custom_metrics.common.display_names import friendly_spec
from custom_metrics.common.leaderboard_types import Board, Family, Headline, SampleView, doc_field_key
from custom_metrics.common.paper_spec import PaperSpec, RunSteps
from custom_metrics.common.published import PublishedRow, cell, table_lines
from custom_metrics.common.rejudging import Rejudging
from custom_metrics.common.results import TaskRun
from custom_metrics.reg import data as reg_data
from custom_metrics.reg.generation import NO_REASONING
from custom_metrics.reg.judge_calls import calls_field, calls_text, logged_record
from custom_metrics.reg.rejudged import judge_calls, judge_of_each_number, rejudged_runs

SOURCE = "REG (Chan, Zhao & Gaizauskas, arXiv 2603.22735) Tables 1-3"

# Table 1, in percent: judge model | accuracy on ChaosNLI-MNLI items with >= 80% agreement
# (every candidate tested in non-thinking mode).
REG_TABLE_1 = """
Qwen3.5-0.8B | 59.17
Qwen3.5-2B | 62.28
Qwen3.5-4B | 88.58
Qwen3.5-9B | 91.35
Qwen3.5-27B | 93.08
Gemma-4-E2B-it | 74.74
Gemma-4-E4B-it | 80.97
Gemma-4-12B-it | 93.08
Gemma-4-26B-A4B-it | 89.27
Gemma-4-31B-it | 94.46
gpt-5.6-luna | 91.70
gpt-5.6-terra | 93.08
gpt-5.6-sol | 92.39
"""
# ChaosNLI's own model rows (Nie et al., EMNLP 2020; all 1,599 ChaosNLI-MNLI items), the
# authors' predictions scored by their script (easonnie/ChaosNLI README, "How to reproduce the
# results"): model | JSD | KL | accuracy against the 100-annotator majority. Fine-tuned MNLI
# classifiers, not prompted judges: references beside reg_judge_humans, never REG's numbers.
CHAOSNLI_TABLE = """
BERT-base | 0.3055 | 0.7204 | 0.5591
XLNet-base | 0.3069 | 0.7927 | 0.5891
RoBERTa-base | 0.3073 | 0.7807 | 0.5922
BERT-large | 0.3152 | 0.8449 | 0.5691
XLNet-large | 0.3116 | 0.8818 | 0.6185
RoBERTa-large | 0.3112 | 0.8701 | 0.6354
BART-large | 0.3165 | 0.8845 | 0.5922
ALBERT-xxlarge | 0.3159 | 0.8620 | 0.5897
DistilBERT | 0.3133 | 0.6652 | 0.5103
"""
CHAOSNLI_N = 1599
CHAOSNLI_SOURCE = "Nie et al. (2020), ChaosNLI-MNLI; easonnie/ChaosNLI model_pref.py"
CHAOSNLI_ORIGIN = "ChaosNLI (Nie et al., 2020)"
CHAOSNLI_KEYS = ("reg_judge_humans/jsd", "reg_judge_humans/kl", "reg_judge_humans/acc")


def chaosnli_rows() -> dict[str, tuple[float, float, float]]:
    """ChaosNLI's model rows: model -> (JSD, KL, accuracy)."""
    return {model: (float(jsd), float(kl), float(acc)) for model, jsd, kl, acc in table_lines(CHAOSNLI_TABLE)}


# Table 2, in percent, judge Gemma-4-31B-it: model | coherence non-thinking | thinking |
# effectiveness non-thinking | thinking | success non-thinking | thinking.
REG_TABLE_2 = """
Qwen3.5-0.8B | 72.31 | 72.82 | 26.67 | 22.05 | 11.28 | 16.41
Qwen3.5-2B | 66.15 | 66.15 | 38.46 | 57.95 | 18.46 | 33.33
Qwen3.5-4B | 76.41 | 74.36 | 17.95 | 57.44 | 13.33 | 40.51
Qwen3.5-9B | 86.67 | 81.54 | 30.26 | 64.10 | 24.62 | 51.28
Qwen3.5-27B | 75.90 | 80.51 | 61.54 | 70.77 | 44.10 | 54.36
Gemma-4-E2B-it | 87.18 | 82.05 | 26.67 | 30.77 | 20.00 | 23.08
Gemma-4-E4B-it | 90.77 | 85.13 | 18.46 | 38.46 | 13.33 | 31.28
Gemma-4-12B-it | 82.56 | 80.51 | 43.59 | 57.95 | 30.77 | 46.67
Gemma-4-26B-A4B-it | 80.51 | 85.13 | 47.69 | 55.38 | 34.36 | 44.10
Gemma-4-31B-it | 81.54 | 81.03 | 57.44 | 62.05 | 45.64 | 47.18
gpt-5.6-luna | 81.54 | 89.23 | 49.23 | 70.26 | 35.38 | 62.05
gpt-5.6-terra | 84.10 | 81.03 | 55.90 | 77.44 | 44.10 | 61.03
gpt-5.6-sol | 85.64 | 80.00 | 73.33 | 79.49 | 62.05 | 62.56
"""

# Table 3, thinking mode only: model | mean # of output tokens (including reasoning tokens) of
# successful explanations | of unsuccessful explanations (judge Gemma-4-31B-it).
REG_TABLE_3 = """
Qwen3.5-0.8B | 6211.84 | 6470.07
Qwen3.5-2B | 5757.32 | 6173.87
Qwen3.5-4B | 5596.57 | 6153.34
Qwen3.5-9B | 5324.74 | 5409.26
Qwen3.5-27B | 4905.58 | 5542.65
Gemma-4-E2B-it | 509.71 | 523.18
Gemma-4-E4B-it | 669.92 | 707.34
Gemma-4-12B-it | 2031.88 | 2544.56
Gemma-4-26B-A4B-it | 3065.27 | 3797.07
Gemma-4-31B-it | 1043.45 | 1585.96
gpt-5.6-luna | 178.07 | 181.65
gpt-5.6-terra | 116.79 | 160.21
gpt-5.6-sol | 118.30 | 121.90
"""
TABLE_3_KEYS = ("reg_chaos/output_tokens_successful", "reg_chaos/output_tokens_unsuccessful")


def published_rows() -> list[PublishedRow]:
    judge = {model: cell(acc, percent=True) for model, acc in table_lines(REG_TABLE_1)}
    lengths = {model: dict(zip(TABLE_3_KEYS, cells)) for model, *cells in table_lines(REG_TABLE_3)}
    rows = []
    for model, coh_nt, coh_t, eff_nt, eff_t, suc_nt, suc_t in table_lines(REG_TABLE_2):
        for mode, (coh, eff, suc) in (
            ("non-thinking", (coh_nt, eff_nt, suc_nt)),
            ("thinking", (coh_t, eff_t, suc_t)),
        ):
            cells = {
                "reg_chaos/coherence": cell(coh, percent=True),
                "reg_chaos/effectiveness": cell(eff, percent=True),
                "reg_chaos/success": cell(suc, percent=True),
            }
            if mode == "non-thinking":  # Table 1 tested every judge in non-thinking mode
                cells["reg_judge_select/acc"] = judge[model]
            else:  # Table 3 counts thinking-mode outputs only
                cells |= {key: cell(value, percent=False) for key, value in lengths[model].items()}
            source = f"{SOURCE}, {mode}; judge Gemma-4-31B-it"
            rows.append(PublishedRow("reg", model, source, cells, setting=mode))
    for model, *values in table_lines(CHAOSNLI_TABLE):
        cells = {key: cell(value, percent=False) for key, value in zip(CHAOSNLI_KEYS, values, strict=True)}
        setting = "fine-tuned on MNLI; ChaosNLI's paper, not REG's"
        source = f"{CHAOSNLI_SOURCE}, all {CHAOSNLI_N:,} items"
        rows.append(PublishedRow("reg", model, source, cells, setting=setting, origin=CHAOSNLI_ORIGIN))
    return rows


TASK_LABELS = {
    "reg_chaos": "reconciling explanations",
    "reg_judge_select": "the model as NLI judge (Table 1)",
    "reg_judge_humans": "the model as NLI judge against ChaosNLI's humans",
    "reg_cot_faithfulness": "thinking-trace faithfulness: early answering and filler (Lanham et al. 2023)",
}
METRIC_LABELS = {
    "n": "|N| items judged contradictions",
    "coherence": "coherence",
    "effectiveness": "effectiveness",
    "success": "success",
    "malformed": "malformed outputs",
    "thinking_words": "thinking words",
    "output_tokens_successful": "output tokens, successful (Table 3)",
    "output_tokens_unsuccessful": "output tokens, unsuccessful (Table 3)",
    "unparsed": "unparsed verdicts",
    "judge_check_acc": "judge check accuracy",
    "judge_degenerate": "judge degenerate",
    "acc": "accuracy",
    "jsd": "JS distance to the humans",
    "kl": "KL(humans || judge)",
    "not_comparable": "items without comparable log-likelihoods",
    **{f"same_at_{p}": f"same verdict, {p}% of the trace" for p in (0, 25, 50, 75, 100)},
    "early_aoc": "early answering AOC",
    "filler_same": "same verdict, filler trace",
    "not_compared": "new verdicts not compared",
    "original_unusable": "original generations unusable",
}
# From lm_eval_tasks/reg/README.md; J(x, y) is the NLI judge's label for premise x, hypothesis y.
DEFINITIONS = {
    "n": "|N|: the items the judge called a contradiction, J(p, h) = contradiction. Only these are scored; "
    "0 means every other score is undefined (NaN).",
    "coherence": "Share of N whose explanation e does not contradict the premise: J(p, e) != contradiction.",
    "effectiveness": "Share of N where premise and explanation together entail the hypothesis: J(p;e, h) = entailment.",
    "success": "Share of N that is both coherent and effective.",
    "malformed": "Share of N whose output held no explanation (empty, or a thinking block never closed); "
    "these fail every criterion.",
    "thinking_words": "Mean length of the stripped thinking trace, in words, over all docs.",
    "output_tokens_successful": "Mean output length (thinking trace included) of the successful explanations in N, "
    "in the generator's tokens (an API reasoning model's: from its usage); Table 3, thinking mode.",
    "output_tokens_unsuccessful": "Mean output length (thinking trace included) of the unsuccessful explanations in "
    "N (outputs without an explanation included); Table 3, thinking mode.",
    "unparsed": "Share of the judge's verdicts that could not be read as a label.",
    "judge_check_acc": "The judge's accuracy on the sanity-check pairs run before scoring.",
    "judge_degenerate": "1 when the judge answers (nearly) one label for everything: its scores mean nothing.",
    "reg_judge_select/acc": "Accuracy of the model as NLI judge on the 289 ChaosNLI-MNLI items with >= 80% "
    "annotator agreement (Table 1 protocol, label words scored by log-likelihood).",
    "reg_judge_humans/jsd": "Mean Jensen-Shannon distance (natural log) between the judge's softmax over the label "
    "words and the item's 100 human labels, over all 1,599 ChaosNLI-MNLI items (ChaosNLI's JSD column).",
    "reg_judge_humans/kl": "Mean KL(humans || judge), the judge's probabilities floored at 1e-15 (ChaosNLI's KL).",
    "reg_judge_humans/acc": "Accuracy of the judge's label against the 100-annotator majority, all 1,599 items.",
    **{
        f"same_at_{p}": f"Faithfulness, early answering: share of a thinking run's explanations whose judge verdict "
        f"(success) is unchanged when the model writes its explanation again after only the first {p}% of its "
        "trace's sentences (Lanham et al. 2023)."
        + (" The whole trace again: sampling and judge noise, the ceiling of the others." if p == 100 else "")
        for p in (0, 25, 50, 75, 100)
    },
    "early_aoc": "Faithfulness: area over the curve of the unchanged-verdict share against the fraction of the trace "
    "kept (0: the verdict never depends on the trace; larger: it does).",
    "filler_same": "Faithfulness: share of verdicts unchanged when the trace is replaced by as many ' ...' as it has "
    "words.",
    "reg_cot_faithfulness/malformed": "Share of the new outputs that held no explanation (empty, or a new trace "
    "never closed); they count as unsuccessful, as in reg_chaos.",
    "not_compared": "Share of the new verdicts that could not be compared (unparsed, the judge failed, or it put "
    "the item outside N); left out of the shares.",
    "original_unusable": "Share of the thinking run's generations with nothing to compare (trace cut off or empty, no "
    "explanation, item outside N, an unparsed verdict), left out of the task.",
}


def _label(verdict: Any) -> str | None:
    return verdict.get("label") if isinstance(verdict, dict) else None


def _yes(value: float | None) -> str:
    return "-" if value is None else "yes" if value else "no"


def sample_fields(task: str, sample: dict[str, Any]) -> dict[str, Any]:
    """REG items in the sample viewer: the pair, the explanation and the judge's three verdicts."""
    doc = sample.get("doc") or {}
    fields: dict[str, Any] = {"uid": doc.get("uid"), "premise": doc.get("premise"), "hypothesis": doc.get("hypothesis")}
    record = logged_record(sample)
    if record is None:
        fields["gold"] = doc.get("majority_label")
        if isinstance(sample.get("acc"), (int, float)):
            fields["correct"] = "yes" if sample["acc"] else "no"
        return fields
    from custom_metrics.reg.metrics import record_scores  # imports the harness' Filter: only when needed

    scores = record_scores(record)
    fields.update(
        {
            "explanation": record.get("explanation"),
            "flag": record.get("flag") or "",
            "J(p, h)": _label(record["initial"]),
            "in N": _yes(scores["success"] is not None),
            "J(p, e)": _label(record.get("coherence")),
            "coherent": _yes(scores["coherence"]),
            "J(p;e, h)": _label(record.get("effectiveness")),
            "effective": _yes(scores["effectiveness"]),
            "success": _yes(scores["success"]),
            "w_con": doc.get("w_con"),
            "judge": friendly_spec(record["judge"]) if isinstance(record.get("judge"), str) else record.get("judge"),
        }
    )
    fields[calls_field(record)] = calls_text(record, doc)
    if "condition" in doc:  # reg_cot_faithfulness: the trace given and both verdicts
        fields |= faithfulness_fields(doc, scores["success"])
    return fields


def faithfulness_fields(doc: dict[str, Any], success: float | None) -> dict[str, Any]:
    """A faithfulness doc: how much of the trace it was given, that trace, and the verdicts now and before."""
    kept = "filler" if doc.get("condition") == "filler" else f"{float(doc.get('fraction', 0)):.0%}"
    original = doc.get("original")
    return {
        "trace kept": kept,
        "trace given": doc.get("cot"),
        "original success": _yes(original),
        "same": _yes(None if success is None or original is None else success == original),
    }


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


def sample_outcomes(task: str, sample: dict[str, Any]) -> dict[str, float | None]:
    record = logged_record(sample)
    if record is None:
        return {"acc": float(sample["acc"])} if isinstance(sample.get("acc"), (int, float)) else {}
    from custom_metrics.reg.metrics import record_scores

    scores = record_scores(record)
    return {key: scores[key] for key in ("coherence", "effectiveness", "success")}


QUALITY, JUDGE = "quality", "judge"
HEADLINES = (
    Headline(("reg_chaos/success",), "success", QUALITY),
    Headline(("reg_chaos/coherence",), "coherence", QUALITY),
    Headline(("reg_chaos/effectiveness",), "effectiveness", QUALITY),
    Headline(("reg_judge_select/acc",), "as NLI judge", JUDGE),
)
FAMILIES = {
    QUALITY: Family("Reconciling explanations, over the items the judge calls contradictions (N)", "share of N"),
    JUDGE: Family("The model as NLI judge, on the 289 high-agreement items", "accuracy (share of items)"),
}
# Every Table 2 percentage is k/195 and every Table 1 one k/289: the paper's |N| (items its
# judge called contradictions) and judge items, the documents behind each number.
_PUBLISHED_N = {"reg_chaos": 195, "reg_judge_select": 289, "reg_judge_humans": CHAOSNLI_N}


# Each REG task's paper setting: the mode its explanations are generated in (in-process and
# served alike, lm_eval_tasks/reg/DETAILS.md); Table 1 tested every judge in non-thinking mode.
# An API reasoning model's mode is its reasoning effort's (``run_mode``).
MODES = {
    "reg_chaos": "non-thinking",
    "reg_chaos_served": "non-thinking",
    "reg_chaos_thinking": "thinking",
    "reg_chaos_thinking_served": "thinking",
    "reg_chaos_reasoning_served": "thinking",
    "reg_judge_select": "non-thinking",
    "reg_judge_select_loglik": "non-thinking",
    "reg_judge_select_reasoning_served": "non-thinking",
    "reg_judge_humans": "non-thinking",
    "reg_cot_faithfulness": "thinking",  # it asks a thinking run's traces again: that run's row
}
# Variants read as the task whose paper rows they reproduce.
SHOWN_AS = {"reg_judge_select_reasoning_served": "reg_judge_select"}


def run_mode(run: TaskRun) -> str | None:
    """The mode a run generated in: its task's, or for an API reasoning model its logged
    reasoning effort's ("none" is non-thinking)."""
    mode = MODES.get(run.task)
    if run.task == "reg_chaos_reasoning_served":
        config = run.task_config or {}
        effort = (config.get("generation_kwargs") or {}).get("reasoning_effort")
        mode = "non-thinking" if effort == NO_REASONING else mode
    return mode


def mode_rows(runs: list[TaskRun], notes: list[str]) -> list[TaskRun]:
    """REG rows per mode, as Table 2 has them: each run's setting says its mode, so a thinking
    run is a row of its own beside the paper's thinking rows, and a model's non-thinking
    explanations and judge accuracy share a row; every ``reg_chaos`` variant is read as
    ``reg_chaos`` (a served run joins the in-process one of its mode). Which task each came
    from is kept for its samples and said in the notes."""
    adjusted = []
    for run in runs:
        mode = run_mode(run)
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
        task_order=("reg_chaos", "reg_judge_select"),
        pm_note="Published rows print no ± (the paper's bootstrap intervals are in its Appendix J). "
        "Published reg_judge_select acc is REG Table 1 (judge accuracy, non-thinking mode).",
        published=published_rows,
        adjust_runs=mode_rows,
        derive=judge_of_each_number,
        read_extra=rejudged_runs,
        task_labels=TASK_LABELS,
        metric_labels=METRIC_LABELS,
        definitions=DEFINITIONS,
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
        published_n=lambda setting, key: None if key in TABLE_3_KEYS else _PUBLISHED_N.get(key.split("/", 1)[0]),
        share_of=share_of,
    ),
    runs=RunSteps(
        check_run=check_run,
    ),
    rejudge=Rejudging(
        what="reg_chaos* explanations, judged twice by an NLI judge (J(p, h); then J(p;e, h) and J(p, e))",
        module="custom_metrics.reg.rejudge",
    ),
)
