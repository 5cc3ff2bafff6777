"""REG with no model named: as upstream's task checks build it, and from Python with an LM object.

The harness merges model arguments into a task's metadata only for a model named by string;
``simple_evaluate(model=<an LM object>)`` and a plain ``TaskManager`` name none. The task must
build then (its model checks deferred), and ``--metadata`` must be able to name what the checks
need (docs/python-api.md), so that a wrong judge still stops the run before the first request.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lm_eval import simple_evaluate
from lm_eval.models.dummy import DummyLM
from lm_eval.tasks import TaskManager

from custom_metrics.common.errors import DataError
from custom_metrics.common.samples import normalised
from custom_metrics.judge.spec import resolve_judge
from custom_metrics.reg.judging import DEFAULT_JUDGE, read_record
from tests.helpers import TASKS_DIR
from tests.reg.judges import tiny_judge_metadata
from tests.tiny_models import small_tokenizer


class CountingLM(DummyLM):
    """The harness' dummy model, counting the generation requests it is sent."""

    tokenizer = None  # the dummy's own is a Hub model; the harness logs tokenizer details only when there is one

    def __init__(self) -> None:
        super().__init__()
        self.requests = 0

    def generate_until(self, requests, disable_tqdm: bool = False):
        self.requests += len(requests)
        return ["Maybe the premise describes another day. The end."] * len(requests)


def _manager(**metadata: str) -> TaskManager:
    return TaskManager(include_path=[str(TASKS_DIR)], include_defaults=False, metadata=metadata or None)


def test_a_plain_task_manager_builds_every_reg_variant_without_loading_anything(fixture_mirror: Path) -> None:
    tasks = _manager().load(["reg_chaos", "reg_chaos_thinking", "reg_chaos_served", "reg_chaos_thinking_served"])
    default = resolve_judge(None, None, DEFAULT_JUDGE).name  # parsed, never loaded
    for name, task in tasks["tasks"].items():
        doc = next(iter(task.test_docs()))
        assert doc["judge"] == default and doc["length_tokenizer"] == "", name


def test_an_lm_object_with_the_metadata_checks_before_generation_and_counts_tokens(
    fixture_mirror: Path, tmp_path: Path
) -> None:
    tokenizer = str(small_tokenizer(tmp_path / "tokenizer"))
    metadata = {"tokenizer": tokenizer, **tiny_judge_metadata(tmp_path / "judge")}
    model = CountingLM()
    out = simple_evaluate(
        model=model, tasks=["reg_chaos"], limit=2, task_manager=_manager(**metadata), log_samples=True
    )
    assert model.requests == 2
    records = [read_record(normalised(sample)["filtered_resps"][0]) for sample in out["samples"]["reg_chaos"]]
    assert all(isinstance(record["output_tokens"], int) and record["output_tokens"] > 0 for record in records)
    assert {record["judge"] for record in records} == {metadata["judge"]}

    missing = CountingLM()
    with pytest.raises(DataError, match=r"reg_chaos: .*judge"):
        simple_evaluate(
            model=missing, tasks=["reg_chaos"], limit=2, task_manager=_manager(judge=f"seqcls:{tmp_path / 'none'}")
        )
    assert missing.requests == 0  # a wrong judge named in the metadata stops the run before any request
