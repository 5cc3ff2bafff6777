"""A model whose log-likelihoods overflow to NaN (float16, say), through the real harness:
every doc counts as wrong and is named in a warning; none is right by the accident of a
NaN being the argmax, as the first choice used to be (issue 17)."""

from __future__ import annotations

import logging
import math

import pytest
from lm_eval import simple_evaluate
from lm_eval.api.model import LM
from lm_eval.tasks import TaskManager

from tests.helpers import TASKS_DIR


class OverflowingLM(LM):
    """Every log-likelihood NaN, as a float16 model that overflowed returns them."""

    def loglikelihood(self, requests):
        return [(math.nan, False) for _ in requests]

    def loglikelihood_rolling(self, requests):
        raise NotImplementedError

    def generate_until(self, requests):
        raise NotImplementedError


@pytest.mark.parametrize(
    ("task", "metric"), [("geese_noexp", "acc"), ("rule_main", "mainq_acc"), ("reg_judge_select_loglik", "acc")]
)
def test_nan_log_likelihoods_count_as_wrong_and_are_named(fixture_mirror, caplog, task, metric):
    with caplog.at_level(logging.WARNING, logger="custom_metrics.common.classification"):
        results = simple_evaluate(
            model=OverflowingLM(),
            tasks=[task],
            task_manager=TaskManager(include_path=str(TASKS_DIR), include_defaults=False),
            limit=3,
        )
    assert results["results"][task][f"{metric},none"] == 0.0  # the first choice would be gold for some docs
    warned = [r.getMessage() for r in caplog.records if "log-likelihoods [nan" in r.getMessage()]
    assert len(warned) == 3 and all("counts as wrong" in message for message in warned)
