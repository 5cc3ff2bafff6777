"""RULE's warnings from inside its aggregations under lm-eval's bootstrap: once for the run's
values, never per resample (lm-eval 0.5 calls every custom aggregation on 100,000 resamples; one
run printed a warning 93,702 times), and again for the next task of the same process."""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from lm_eval.api.metrics import bootstrap_stderr

from custom_metrics.rule import metrics
from custom_metrics.rule.metrics import Outcome, mainq_wise_subq_acc, unparsed

# A --limit cut: main question m0 has 3 subquestions in the task, the run holds 2 of them; m1 is whole.
CUT = [
    Outcome("m0_1", "m0", "selective", 1, True, False, 3),
    Outcome("m0_2", "m0", "eliminative", 1, False, False, 3),
    Outcome("m1_1", "m1", "selective", 1, True, False, 1),
]
# Another task's run, cut the same way (the same words would be printed for it).
OTHER = [Outcome(f"x{k}", "x", "eliminative", 2, k == 0, False, 4) for k in range(3)]
PROBLEMS = ["", "no answer", "", "two different answers (Option1, Option2)"]
HARNESS_MOVED = (
    "lm-eval's bootstrap no longer calls the aggregation from the module that defines bootstrap_stderr: "
    "custom_metrics/common/resampling.in_bootstrap must learn where it resamples now"
)


@pytest.fixture(params=["pool", "in-process"])
def logged(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """RULE's log as a file, written to by this process and by the bootstrap's forked workers; the
    bootstrap in lm-eval's worker pool (its default) or in this process."""
    if request.param == "in-process":
        monkeypatch.setenv("DISABLE_MULTIPROC", "1")  # lm-eval 0.4 reads it at each bootstrap
        stderr_module = sys.modules[bootstrap_stderr.__module__]
        monkeypatch.setattr(stderr_module, "DISABLE_MULTIPROC", True, raising=False)  # 0.5 read it at import
    path = tmp_path / "rule.log"
    handler = logging.FileHandler(path)
    metrics.log.addHandler(handler)
    try:
        yield path
    finally:
        metrics.log.removeHandler(handler)
        handler.close()


def _run(aggregation: Callable[[list], float], values: list, iters: int = 1000) -> None:
    """What the harness does for one metric of one task: the aggregation, then its bootstrap."""
    aggregation(values)
    bootstrap_stderr(aggregation, values, iters=iters)


@pytest.mark.parametrize("aggregation, values", [(mainq_wise_subq_acc, CUT), (unparsed, PROBLEMS)])
def test_a_thousand_and_one_calls_print_one_warning(logged: Path, aggregation, values) -> None:
    _run(aggregation, values)
    lines = logged.read_text().splitlines()
    assert len(lines) == 1, f"{len(lines)} lines; {HARNESS_MOVED}"
    assert lines[0].startswith("RULE")


def test_each_task_of_a_process_warns_once(logged: Path) -> None:
    """Two tasks, then a third whose values are the first's again: three runs, three warnings."""
    for values in (CUT, OTHER, CUT):
        _run(mainq_wise_subq_acc, values, iters=100)
    lines = logged.read_text().splitlines()
    assert [line.split(";")[0] for line in lines] == [
        "RULE mainq_wise_subq_acc: 1 main question(s) left out because the run holds only some of their "
        "subquestions (e.g. --limit)",
    ] * 3


@pytest.mark.parametrize(
    "aggregation", [metrics.consistency, metrics.mainq_wise_subq_acc, metrics.consistency_mainq_correct]
)
def test_a_metric_over_groups_gets_no_standard_error_from_resampled_documents(logged: Path, aggregation) -> None:
    """Resampling single documents breaks RULE's groups (a main question with all its
    subquestions): the harness gets NaN for their standard error, never a number about its own
    draws; a per-document accuracy keeps its bootstrap. The run's own value is unchanged."""
    subs = [
        Outcome(f"g{g}_{k}", f"g{g}", "selective", 2, (g + k) % 4 != 0, False, 3) for g in range(6) for k in range(3)
    ]
    mains = [Outcome(f"g{g}", f"g{g}", metrics.MAIN, 0, g != 3, False, 3) for g in range(6)]
    values = [*mains, *subs]
    value = aggregation(values)
    assert 0.0 < value < 1.0
    assert math.isnan(bootstrap_stderr(aggregation, values, iters=1000)), HARNESS_MOVED
    assert math.isfinite(bootstrap_stderr(metrics.subq_acc, values, iters=1000))
    assert aggregation(values) == value
