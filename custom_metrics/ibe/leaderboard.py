"""IBE-Eval on the leaderboard: what the page shows of it, in one ``PaperSpec``.

The parts live by what they read: ``published`` (the paper's Table 1 as rows),
``selection`` (the selector accuracies of ``report.json`` files, through
``ibe_postprocess.report_file``), ``samples`` (logged explanations and their features, through
``ibe_postprocess.features_file``) and ``post_run`` (what a sweep runs after ``lm_eval``:
``ibe score`` and ``ibe report`` on a generation pair, judge tasks after the task they judge).

The LLM-as-a-judge baseline is labelled by who judged: a judge accuracy goes in the
``ibe_judge_D`` column (``ibe_judge_D_chat`` for generated answers) of the judging model's row,
and the paper's Table 1 judge numbers, GPT 3.5 judging each generator's explanations, in rows
named so.
"""

from __future__ import annotations

from custom_metrics.common.leaderboard_types import Board, Family, Headline, SampleView
from custom_metrics.common.paper_spec import PaperSpec, RunSteps
from custom_metrics.common.rejudging import Rejudging
from custom_metrics.ibe import data as ibe_data
from custom_metrics.ibe import post_run
from custom_metrics.ibe.published import IBE_METHODS, judge_row, published_rows
from custom_metrics.ibe.samples import STEP_COLUMNS, doc_key, feature_rows, sample_fields, sample_outcomes
from custom_metrics.ibe.selection import load_ibe_tables, note_scorers
from ibe_postprocess.folder import FEATURES
from ibe_postprocess.paper import PAPER_JUDGE

TASK_LABELS = {
    "ibe_copa": "COPA: explanation format",
    "ibe_copa_selection": "COPA: best-explanation selection (Table 1)",
    "ibe_judge_copa": "COPA: LLM-as-a-judge baseline",
    "ibe_judge_copa_chat": "COPA: LLM-as-a-judge baseline, generated answer (chat)",
    "ibe_judge_copa_position": "COPA: LLM-as-a-judge baseline, both orders (position control)",
    "ibe_ecare": "e-CARE: explanation format",
    "ibe_ecare_selection": "e-CARE: best-explanation selection (Table 1)",
    "ibe_judge_ecare": "e-CARE: LLM-as-a-judge baseline",
    "ibe_judge_ecare_chat": "e-CARE: LLM-as-a-judge baseline, generated answer (chat)",
    "ibe_judge_ecare_position": "e-CARE: LLM-as-a-judge baseline, both orders (position control)",
}
METRIC_LABELS = {
    "acc": "judge accuracy",
    "unparsed": "unparsed answers",
    "human": "human",
    "consistency": "consistency",
    "depth": "depth (parsimony)",
    "drift": "drift (parsimony)",
    "coherence": "coherence",
    "uncertainty": "linguistic uncertainty",
    "random": "random",
    "cum_consistency": "+ consistency",
    "cum_depth": "+ depth",
    "cum_drift": "+ drift",
    "cum_coherence": "+ coherence",
    "cum_uncertainty": "IBE-Eval (all five)",
    "steps": "IF-THEN steps",
    "well_formed": "well-formed",
    "no_steps": "no steps",
    "position_bias": "position bias",
    "first_slot": "first slot picked",
}
_SELECTION = "Accuracy of the linear selector picking the correct option's explanation on the test questions, "
# From lm_eval_tasks/ibe/DETAILS.md (Metric definitions).
DEFINITIONS = {
    "acc": "LLM-as-a-judge baseline: share of test questions where the model, shown both explanations, "
    "prefers the correct option's (log-likelihood of ' explanation 1' vs ' explanation 2').",
    **{
        f"ibe_judge_{dataset}_chat/acc": "LLM-as-a-judge baseline for chat models: share of test questions where "
        "the model, shown both explanations, answers with the correct option's ('explanation 1' or 'explanation "
        "2', read from its generated answer; an answer naming no single explanation is wrong)."
        for dataset in ("copa", "ecare")
    },
    **{
        f"ibe_judge_{dataset}_chat/unparsed": "Share of the chat judge's answers that name no single explanation "
        "(scored as wrong choices)."
        for dataset in ("copa", "ecare")
    },
    **{
        f"ibe_judge_{dataset}_position/acc": "LLM-as-a-judge baseline over both orders: share of the test questions, "
        "each shown with its explanations as generated and swapped, where the model prefers the correct option's."
        for dataset in ("copa", "ecare")
    },
    "position_bias": "Share of the questions on which the judge picked the same slot (first or second) in both "
    "orders: it followed the position, not the explanation (0: content only; 1: one slot always).",
    "first_slot": "Share of the judge's choices, over both orders, that went to the first slot (0.5: no preference).",
    "human": "Human judges picking the best explanation (published rows only).",
    "consistency": _SELECTION + "feature alone: a Prolog proof of the conclusion from the premise through "
    "the explanation's IF-THEN rules clears the 0.13 threshold.",
    "depth": _SELECTION + "feature alone: rules used in the best proof (parsimony).",
    "drift": _SELECTION + "feature alone: nouns of the IF/THEN clauses absent from premise and conclusion "
    "(concept drift, parsimony).",
    "coherence": _SELECTION + "feature alone: mean over steps of P(entailment) - P(contradiction) of IF => THEN.",
    "uncertainty": _SELECTION + "feature alone: hedging of the assumptions and summary (6 - certainty).",
    "random": "Expected accuracy of picking one explanation at random (0.5 for two options).",
    "cum_consistency": _SELECTION + "features up to consistency.",
    "cum_depth": _SELECTION + "features up to depth.",
    "cum_drift": _SELECTION + "features up to drift.",
    "cum_coherence": _SELECTION + "features up to coherence.",
    "cum_uncertainty": _SELECTION + "all five features: IBE-Eval.",
    "steps": "Mean number of IF-THEN steps parsed from an explanation.",
    "well_formed": "Share of explanations with IF-THEN steps, a 'Therefore' summary and no format problem.",
    "no_steps": "Share of explanations without any IF-THEN step.",
}
SELECTION, JUDGE = "selection", "judge"
HEADLINES = (
    Headline(("ibe_copa_selection/cum_uncertainty",), "IBE-Eval, COPA", SELECTION, reference="GPT 3.5"),
    Headline(("ibe_ecare_selection/cum_uncertainty",), "IBE-Eval, e-CARE", SELECTION, reference="GPT 3.5"),
    Headline(
        ("ibe_judge_copa/acc", "ibe_judge_copa_chat/acc"), "LLM judge, COPA", JUDGE, reference=judge_row("GPT 3.5")
    ),
    Headline(
        ("ibe_judge_ecare/acc", "ibe_judge_ecare_chat/acc"), "LLM judge, e-CARE", JUDGE, reference=judge_row("GPT 3.5")
    ),
)
FAMILIES = {
    SELECTION: Family("IBE-Eval: the selector on all five criteria", "accuracy (share of test questions)"),
    JUDGE: Family("LLM-as-a-judge baseline", "accuracy (share of test questions)"),
}

SPEC = PaperSpec(
    key="ibe",
    title="IBE-Eval: selecting the best explanation (COPA, e-CARE)",
    datasets={"copa": tuple(ibe_data.COPA_SOURCES.values()), "ecare": tuple(ibe_data.ECARE_SOURCES.values())},
    board=Board(
        task_order=(
            "ibe_judge_copa",
            "ibe_judge_copa_chat",
            "ibe_judge_copa_position",
            "ibe_copa_selection",
            "ibe_copa",
            "ibe_judge_ecare",
            "ibe_judge_ecare_chat",
            "ibe_judge_ecare_position",
            "ibe_ecare_selection",
            "ibe_ecare",
        ),
        # Table 1's columns, from `explain-eval ibe report` (read_extra), in the row of the model that explained.
        extra_tasks={f"ibe_{dataset}_selection": tuple(IBE_METHODS.values()) for dataset in ("copa", "ecare")},
        pm_note="Published rows print no ±. ibe_judge_* columns hold the accuracy of the row's model as judge: the "
        f"paper's judge is always {PAPER_JUDGE}, so its judge numbers are in the rows '{PAPER_JUDGE} judging "
        "<generator>'s explanations'. ibe_*_selection columns come from `explain-eval ibe report` and sit in "
        "the row of the model that wrote the explanations; cum_uncertainty = all five criteria = IBE-Eval.",
        metric_names={
            **{key: name for name, key in IBE_METHODS.items()},
            "cum_uncertainty": "+ Linguistic Uncertainty = IBE-Eval",
        },
        published=published_rows,
        adjust_runs=note_scorers,
        read_extra=load_ibe_tables,
        task_labels=TASK_LABELS,
        metric_labels=METRIC_LABELS,
        definitions=DEFINITIONS,
        samples=SampleView(
            sample_fields,
            facets=("split", "correct option", "well formed", "flagged", "consistent", "judge right"),
            outcomes=sample_outcomes,
            doc_key=doc_key,
            extras=feature_rows,
            together=("explanation", *STEP_COLUMNS),
        ),
        headlines=HEADLINES,
        families=FAMILIES,
        reference_model="GPT 3.5",
        # Table 1's accuracies are over the 500 test questions of each dataset.
        published_n=lambda setting, key: 500,
    ),
    runs=RunSteps(
        post_run=post_run.POST_RUN,
        samples_input=post_run.SAMPLES_INPUT,
    ),
    rejudge=Rejudging(
        what=f"the coherence feature of an `explain-eval ibe score` folder ({FEATURES}: each IF-THEN step's "
        "NLI verdict)",
        module="ibe_postprocess.rejudge",
    ),
)
