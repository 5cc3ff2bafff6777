"""IBE-Eval on the leaderboard: what the page shows of it, in one ``PaperSpec`` (in words: ``words.yaml``).

The parts live by what they read: ``published`` (the paper's Table 1 as rows),
``selection`` (the selector accuracies of ``report.json`` files, through
``ibe_postprocess.report_file``), ``samples`` (logged explanations and their features, through
``ibe_postprocess.features_file``) and ``post_run`` (what a sweep runs after ``lm_eval``:
``ibe score`` and ``ibe report`` on a generation pair, judge tasks after the task they judge).
The LLM-as-a-judge baseline is labelled by who judged: this run's judge model, or GPT 3.5 in
the paper's rows.
"""

from __future__ import annotations

from pathlib import Path

from custom_metrics.common.board_words import read_words
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
from ibe_postprocess.questions import DATASETS

SELECTION, JUDGE = "selection", "judge"
GPT_JUDGE = judge_row("GPT 3.5")  # the paper's judge rows: GPT 3.5 judging each generator's explanations
HEADLINES = (
    Headline(("ibe_copa_selection/cum_uncertainty",), "IBE-Eval, COPA", SELECTION, reference="GPT 3.5"),
    Headline(("ibe_ecare_selection/cum_uncertainty",), "IBE-Eval, e-CARE", SELECTION, reference="GPT 3.5"),
    Headline(("ibe_judge_copa/acc", "ibe_judge_copa_chat/answer_acc"), "LLM judge, COPA", JUDGE, reference=GPT_JUDGE),
    Headline(
        ("ibe_judge_ecare/acc", "ibe_judge_ecare_chat/answer_acc"), "LLM judge, e-CARE", JUDGE, reference=GPT_JUDGE
    ),
)
# Each dataset's columns: the judge tasks, the selector's accuracies, then the generation task.
TASK_ORDER = ("ibe_judge_{}", "ibe_judge_{}_chat", "ibe_judge_{}_position", "ibe_{}_selection", "ibe_{}")
FAMILIES = {
    SELECTION: Family("IBE-Eval: the selector on all five criteria", "accuracy (share of test questions)"),
    JUDGE: Family("LLM-as-a-judge baseline", "accuracy (share of test questions)"),
}

SPEC = PaperSpec(
    key="ibe",
    title="IBE-Eval: selecting the best explanation (COPA, e-CARE)",
    datasets={"copa": tuple(ibe_data.COPA_SOURCES.values()), "ecare": tuple(ibe_data.ECARE_SOURCES.values())},
    board=Board(
        **read_words(Path(__file__).with_name("words.yaml")),
        task_order=tuple(task.format(dataset) for dataset in DATASETS for task in TASK_ORDER),
        # Table 1's columns, from `explain-eval ibe report` (read_extra), in the row of the model that explained.
        extra_tasks={f"ibe_{dataset}_selection": tuple(IBE_METHODS.values()) for dataset in DATASETS},
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
    ),
    runs=RunSteps(
        post_run=post_run.POST_RUN,
        samples_input=post_run.SAMPLES_INPUT,
        request_tokens=((r"ibe_judge_.*", 1168),),
    ),
    rejudge=Rejudging(
        what=f"the coherence feature of an `explain-eval ibe score` folder ({FEATURES}: each IF-THEN step's "
        "NLI verdict)",
        module="ibe_postprocess.rejudge",
    ),
)
