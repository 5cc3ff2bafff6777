"""The LLM-as-a-judge baseline's samples (``ibe_judge_*``) as ``ibe_postprocess`` reads them:
a non-finite or non-numeric log-likelihood, or a question judged twice, is an error naming
the file and line, never a silent choice."""

from __future__ import annotations

import json

import pytest

from custom_metrics.common.errors import DataError
from ibe_postprocess.inputs import read_inputs


def _judge_sample(qid: str, loglikelihoods: list) -> dict:
    doc = {"qid": qid, "gold": 2, "explanations": [{"explanation": "e1"}, {"explanation": "e2"}]}
    # as lm-eval logs a multiple-choice sample: one [loglikelihood, is_greedy] pair per option, stringified
    return {"doc_id": 0, "doc": doc, "filtered_resps": [[ll, "False"] for ll in loglikelihoods]}


def _write(path, samples: list[dict]) -> str:
    path.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
    return str(path)


def test_the_judge_choice_is_the_higher_log_likelihood(tmp_path):
    path = _write(tmp_path / "samples_ibe_judge_copa.jsonl", [_judge_sample("copa-501", ["-4.5", "-1.25"])])
    _, judged = read_inputs([path])
    assert [(j.qid, j.choice, j.gold) for j in judged] == [("copa-501", 2, 2)]


@pytest.mark.parametrize("bad", ["nan", "NaN", "inf", "-Infinity", float("nan")])
def test_a_non_finite_log_likelihood_is_rejected(tmp_path, bad):
    path = _write(
        tmp_path / "samples.jsonl",
        [_judge_sample("copa-501", ["-1.0", "-2.0"]), _judge_sample("copa-502", [bad, "-2.0"])],
    )
    with pytest.raises(
        DataError, match=r"samples.jsonl:2: field 'filtered_resps' holds the log-likelihood .*non-finite"
    ):
        read_inputs([path])


def test_a_log_likelihood_that_is_no_number_is_rejected(tmp_path):
    path = _write(tmp_path / "samples.jsonl", [_judge_sample("copa-501", ["-1.0", "yes"])])
    with pytest.raises(DataError, match=r"samples.jsonl:1: field 'filtered_resps' holds 'yes', not a log-likelihood"):
        read_inputs([path])


def test_a_question_judged_twice_is_rejected(tmp_path):
    path = _write(tmp_path / "samples.jsonl", [_judge_sample("copa-501", ["-1.0", "-2.0"])])
    with pytest.raises(
        DataError, match=r"samples.jsonl:1: the judge's choice for qid 'copa-501' was already read at .*samples.jsonl:1"
    ):
        read_inputs([path, path])
