"""REG's reward inside TRL: a real ``GRPOTrainer`` on the embedded model, judged by the embedded LM.

Two optimisation steps on two fixture ChaosNLI items, two completions each: the point is
that TRL calls ``REGReward`` the way it calls any reward function, receives Table 4
rewards for its completions, and logs them under the function's name.
"""

from __future__ import annotations

import math
import sqlite3
import statistics
from collections.abc import Sequence
from typing import Any

import pytest

from custom_metrics.reg.reward import NO_EXPLANATION_REWARD, REWARD_MATRIX, REGReward, training_rows
from tests.serving import chat_model_folder

pytestmark = pytest.mark.e2e

TABLE_4_VALUES = {*REWARD_MATRIX.values(), NO_EXPLANATION_REWARD}


class RecordingReward(REGReward):
    """REGReward, keeping what it returned to TRL so the test can compare it with TRL's logs."""

    def __init__(self, judge: Any) -> None:
        super().__init__(judge)
        self.returned: list[list[float]] = []

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> list[float]:
        rewards = super().__call__(prompts, completions, **columns)
        self.returned.append(rewards)
        return rewards


def test_grpo_trainer_receives_and_logs_table_4_rewards(embedded_model, fixture_mirror, tmp_path) -> None:
    trl = pytest.importorskip("trl", reason="the trl extra is not installed: pip install -e '.[trl]'")
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from custom_metrics.judge.build import build_judge
    from custom_metrics.reg.data import load_items, reg_docs

    # The REG prompt is a user turn (training_rows), so the policy needs a chat template.
    policy = chat_model_folder(embedded_model, tmp_path / "policy")
    docs = reg_docs(load_items())[:2]
    judge = build_judge(None, cache_dir=tmp_path / "verdicts")  # the embedded LM as NLI judge
    reward = RecordingReward(judge)
    config = trl.GRPOConfig(
        output_dir=str(tmp_path / "grpo"),
        use_cpu=True,
        max_steps=2,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=8,
        gradient_checkpointing=False,  # TRL's default recomputes activations: memory a CPU run has, time it lacks
        learning_rate=1e-6,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=0,
    )
    trainer = trl.GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(policy, dtype=torch.float32),
        reward_funcs=reward,
        args=config,
        train_dataset=Dataset.from_list(training_rows(docs)),
        processing_class=AutoTokenizer.from_pretrained(policy),
    )
    trainer.train()

    assert trainer.state.global_step == 2
    assert len(reward.returned) == 2 and all(len(batch) == 2 for batch in reward.returned)
    assert {value for batch in reward.returned for value in batch} <= TABLE_4_VALUES
    key = "rewards/reg_reward/mean"
    logged = [entry[key] for entry in trainer.state.log_history if key in entry]
    assert logged == pytest.approx([statistics.mean(batch) for batch in reward.returned])
    assert all(not math.isnan(entry.get("loss", 0.0)) for entry in trainer.state.log_history)
    # Every judged completion went through the shared, cached judge.
    db = sqlite3.connect(tmp_path / "verdicts" / "verdicts.sqlite")
    assert db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == judge.computed > 0
