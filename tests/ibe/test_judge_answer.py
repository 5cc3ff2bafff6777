"""The chat judge baseline (``ibe_judge_*_chat``): its generated answer read by one strict rule,
in the harness' metrics and in ``ibe score`` alike, on the answers chat models give and on
pathological ones; an answer that names no single explanation is a counted wrong choice, never
a guess; the report and the leaderboard keep it apart from the log-likelihood judge."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from decimal import Decimal
from pathlib import Path

import pytest

from custom_metrics.common.errors import DataError
from custom_metrics.ibe import post_run
from custom_metrics.ibe.metrics import judge_chat_results
from custom_metrics.ibe.prompts import JUDGE_INSTRUCTION, judge_answer
from custom_metrics.ibe.published import published_rows
from custom_metrics.ibe.selection import selection_runs
from ibe_postprocess import report_file
from ibe_postprocess.inputs import read_inputs
from ibe_postprocess.judge_answer import parse_choice
from ibe_postprocess.summary import judge_accuracy

READ = {
    "explanation 1": 1,
    " Explanation 2.": 2,
    "**Explanation 2**": 2,
    "Explanation #1": 1,
    "explanation (2)": 2,
    "Explanation two is the more plausible one.": 2,
    "The more plausible explanation is explanation 1.": 1,
    "Explanation 2 is more plausible because explanation 1 says pricking expands a balloon.": 2,
    "Both explanations are coherent, but explanation 2 is better": 2,
    "Answer: 2": 2,
    "Answer:\n\n2": 2,
    "(1).": 1,
    "<think>Explanation 1 skips a step.</think>\n\nExplanation 2": 2,
    "the trace ends here</think>explanation 1": 1,  # templates that open the trace in the prompt
    "### Answer\nExplanation 1": 1,
}
UNPARSED = {
    "": "empty",
    "I cannot decide.": "names no explanation",
    "Explanation 1 is better than explanation 2.": "names both",
    "Explanations 1 and 2 are equally plausible.": "names both",
    "Not explanation 1.": "negated",
    "Explanation 1 is less plausible.": "inverted",
    "Explanation 2 isn't plausible": "negated after",
    "Neither explanation 1 nor explanation 2": "neither",
    "Explanation 3": "no such explanation",
    "explanation 12": "no such explanation",
    "Explanation 2 (step 3 is weak)": "another number in the deciding clause",
    "<think>Explanation 1 seems right, but": "cut inside the trace",
    "Premise: I blew into the balloon.": "echoes the prompt",
}


@pytest.mark.parametrize("answer", READ, ids=range(len(READ)))
def test_answers_that_name_one_explanation_are_read(answer: str) -> None:
    assert parse_choice(answer) == READ[answer]


@pytest.mark.parametrize("answer", UNPARSED, ids=UNPARSED.values())
def test_answers_that_name_no_single_explanation_are_unparsed(answer: str) -> None:
    assert parse_choice(answer) is None


def test_a_pathological_answer_is_read_in_linear_time() -> None:
    start = time.perf_counter()
    for answer in ("explanation" + " " * 100_000 + "x", "(" + " \t" * 50_000, "answer" + " " * 100_000 + "is 2"):
        parse_choice(answer)
    parse_choice("explanation 1 " * 1_000_000)  # 14 MB: read up to the cap only
    assert time.perf_counter() - start < 1.0


def test_the_task_scores_the_parsed_choice_and_counts_unparsed() -> None:
    doc = {"qid": "copa-501", "gold": 2}
    assert judge_answer(doc) == "explanation 2" and f'"{judge_answer(doc)}"' in JUDGE_INSTRUCTION
    assert judge_chat_results(doc, ["Explanation 2."]) == {"answer_acc": 1.0, "unparsed": 0.0}
    assert judge_chat_results(doc, ["explanation 1"]) == {"answer_acc": 0.0, "unparsed": 0.0}
    assert judge_chat_results(doc, ["Explanation 1 or 2"]) == {"answer_acc": 0.0, "unparsed": 1.0}


def _chat_sample(qid: str, answer: str, gold: int = 2) -> dict:
    doc = {"qid": qid, "gold": gold, "explanations": [{"explanation": "e1"}, {"explanation": "e2"}]}
    return {"doc_id": 0, "doc": doc, "resps": [[answer]], "filtered_resps": [answer]}  # as lm-eval logs generations


def _write(path: Path, samples: list[dict]) -> Path:
    path.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
    return path


def test_ibe_score_reads_a_chat_judges_answers_with_the_same_rule(tmp_path: Path) -> None:
    samples = [_chat_sample("copa-501", "**Explanation 2**"), _chat_sample("copa-502", "Explanation 1 or 2?")]
    _, judged = read_inputs([_write(tmp_path / "samples_ibe_judge_copa_chat_x.jsonl", samples)])
    assert [(j.qid, j.choice, j.gold, j.method) for j in judged] == [
        ("copa-501", 2, 2, "generated"),
        ("copa-502", None, 2, "generated"),
    ]
    scores = judge_accuracy([asdict(j) for j in judged])
    assert scores["copa"].accuracy == 0.5 and (scores["copa"].unparsed, scores["copa"].method) == (1, "generated")


def test_the_two_judges_of_one_dataset_are_not_mixed(tmp_path: Path) -> None:
    loglik = {"doc": {"qid": "copa-502", "gold": 1, "explanations": []}, "filtered_resps": [["-1", "False"]] * 2}
    chat = _write(tmp_path / "chat.jsonl", [_chat_sample("copa-501", "explanation 2")])
    with pytest.raises(DataError, match=r"log.jsonl:1: a loglik judge answer, but .*chat.jsonl:1 holds a generated"):
        read_inputs([chat, _write(tmp_path / "log.jsonl", [loglik])])


def test_a_chat_judge_lands_in_its_own_column(tmp_path: Path) -> None:
    table = (report_file.TableRow("Composed Model", "+ Linguistic Uncertainty", 0.5),)
    judge = report_file.JudgeScore("org/judge", 0.5, 4, 1, "generated")
    report = report_file.Report(
        report_file.FeaturesRef(8, "x", "y"), {"copa": report_file.DatasetReport(table, 4, judge)}, model="org/writer"
    )
    back = report_file.from_json(report_file.to_json(report))
    assert back.datasets["copa"].judge == judge and judge.task("copa") == "ibe_judge_copa_chat"
    runs = {run.task: run for run in selection_runs(back)}
    scores = {metric: score.value for (metric, _), score in runs["ibe_judge_copa_chat"].scores.items()}
    assert runs["ibe_judge_copa_chat"].model == "org/judge" and scores == {"answer_acc": 0.5, "unparsed": 0.25}
    legacy = report_file.to_json(report)
    del legacy["datasets"]["copa"]["judge"]["method"], legacy["datasets"]["copa"]["judge"]["unparsed"]
    assert report_file.from_json(legacy).datasets["copa"].judge.task("copa") == "ibe_judge_copa"  # older reports


def test_the_papers_judge_row_compares_with_both_judge_tasks() -> None:
    rows = {row.model: row for row in published_rows()}
    cells = rows["GPT 3.5 judging GPT 3.5's explanations"].cells
    assert cells["ibe_judge_copa/acc"] == cells["ibe_judge_copa_chat/answer_acc"] and cells[
        "ibe_judge_copa/acc"
    ].value == Decimal(".59")
    assert post_run.judged_task("ibe_judge_ecare_chat") == "ibe_ecare" and post_run.judged_task("ibe_judge_x") is None
