"""RULE in the sample viewer: each main question followed by its subquestions, with the
consistency outcome the ``consistency`` metric counts for it."""

from __future__ import annotations

import json
from pathlib import Path

from custom_metrics.common.results import TaskRun
from custom_metrics.leaderboard.samples import read_logged_task
from custom_metrics.rule.leaderboard import SPEC
from custom_metrics.rule.metrics import Outcome, consistency

STAMP = "2026-01-01T00-00-00.000000"


def _sample(number: int, doc_id: str, main_id: str, kind: str, correct: bool, size: int) -> dict:
    outcome = [doc_id, main_id, kind, 0 if kind == "main" else 1, correct, False, size]
    prompt = f"Context: c \n Question: question {doc_id} \n Option0: a \n Answer: The answer is Option"
    metrics = ["mainq_acc", "subq_acc"]
    return {
        "doc_id": number,
        "doc": {"doc_id": doc_id, "main_id": main_id, "prompt": prompt, "label": 0},
        "metrics": metrics,
        **dict.fromkeys(metrics, outcome),
    }


# As the `rule` task logs them (main questions first, subquestions after), out of group order:
# m1 right with both subquestions right (consistent); m2 right, one subquestion wrong (not);
# m3 with 1 of its 2 subquestions in the run (incomplete); a subquestion whose main is absent.
LOGGED = [
    ("m1", "m1", "main", True, 2),
    ("m2", "m2", "main", True, 2),
    ("m3", "m3", "main", False, 2),
    ("m2_sub2", "m2", "eliminative", False, 2),
    ("m1_sub2", "m1", "eliminative", True, 2),
    ("m1_sub1", "m1", "selective", True, 2),
    ("m2_sub1", "m2", "selective", True, 2),
    ("m3_sub1", "m3", "selective", True, 2),
    ("m9_sub1", "m9", "selective", True, 3),
]


def test_main_questions_come_with_their_subquestions_and_consistency(tmp_path: Path) -> None:
    samples = tmp_path / f"samples_rule_{STAMP}.jsonl"
    lines = [_sample(number, *fields) for number, fields in enumerate(LOGGED)]
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines) + "not json\n", encoding="utf-8")
    run = TaskRun("m", "rule", {}, len(LOGGED), None, tmp_path / f"results_{STAMP}.json", 0.0, None)
    rows = read_logged_task(run, SPEC, samples).rows
    assert [row.get("id") for row in rows] == [
        "m1", "m1_sub1", "m1_sub2", "m2", "m2_sub1", "m2_sub2", "m3", "m3_sub1", "m9_sub1", None,
    ]  # fmt: skip
    verdicts = {row["id"]: row["consistency"] for row in rows if row.get("id")}
    assert verdicts["m1"] == verdicts["m1_sub2"] == "consistent"
    assert verdicts["m2"] == verdicts["m2_sub1"] == "not consistent"
    assert verdicts["m3"] == "incomplete (left out of consistency)"
    assert verdicts["m9_sub1"] == "main question not in this run"
    assert rows[3]["its group"] == "main question right; subquestions right: 1 of the 2 in this run (2 in the task)"
    assert "line 10: not valid JSON" in rows[-1]["problem"]  # an unreadable line stays, last
    # The same verdicts as the metric: of the complete groups m1 and m2, one is consistent.
    outcomes = [Outcome(doc_id, main, kind, 0, correct, False, size) for doc_id, main, kind, correct, size in LOGGED]
    assert consistency(outcomes) == 0.5
    assert "consistency" in read_logged_task(run, SPEC, samples).facets
