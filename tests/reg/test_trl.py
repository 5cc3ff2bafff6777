"""Section 7's recipe (``custom_metrics.reg.dapo``): a real TRL ``GRPOTrainer`` in DAPO mode on
the embedded model, judged by the embedded LM, then the recipe's evaluation step through the
real ``lm_eval`` CLI on the checkpoint it saved.

Two optimisation steps on two fixture ChaosNLI items, two rollouts each (the paper: 8 rollouts,
the full 275 items): TRL calls ``REGReward`` the way it calls any reward function, receives
Table 4 rewards for its completions and logs them under the function's name; the trainer runs
DAPO's loss with the run's clip-higher; the checkpoint it saves is a model the harness runs.
MuSR's data is on the Hub only, so here the evaluation step runs a REG log-likelihood task
instead of ``leaderboard_musr`` (its command is the same otherwise).
"""

from __future__ import annotations

import gc
import json
import math
import sqlite3
import statistics
from collections.abc import Sequence
from typing import Any

import pytest

from custom_metrics.reg import dapo
from custom_metrics.reg.reward import NO_EXPLANATION_REWARD, REWARD_MATRIX, REGReward
from tests.helpers import MIRROR, TASKS_DIR
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


def test_the_paper_settings_are_the_recipes() -> None:
    """Section 7.1: three upper clips, three seeds, 8 rollouts, DAPO's loss, non-thinking rollouts."""
    pytest.importorskip("trl", reason="the trl extra is not installed: pip install -e '.[trl]'")
    assert (dapo.EPSILON_HIGH, dapo.SEEDS, dapo.ROLLOUTS, dapo.PAPER_MODEL) == (
        (0.2, 0.28, 0.36), (0, 1, 2), 8, "Qwen/Qwen3.5-2B",
    )  # fmt: skip
    config = dapo.dapo_config("unused", dapo.Setting(0.36, 2), use_cpu=True)
    assert (config.loss_type, config.epsilon, config.epsilon_high, config.num_generations, config.seed) == (
        "dapo", 0.2, 0.36, 8, 2,
    )  # fmt: skip
    assert config.chat_template_kwargs == {"enable_thinking": False}
    assert dapo.table_5({dapo.Setting(0.2, 0): 0.4, dapo.Setting(0.2, 1): 0.5, dapo.Setting(0.28, 0): 0.3}) == [
        (0.2, pytest.approx(0.45), 2),
        (0.28, 0.3, 1),
    ]


def test_two_dapo_steps_on_the_embedded_model_then_the_harness_on_the_checkpoint(
    embedded_model, fixture_mirror, tmp_path, monkeypatch
) -> None:
    trl = pytest.importorskip("trl", reason="the trl extra is not installed: pip install -e '.[trl]'")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from custom_metrics.judge.build import build_judge
    from custom_metrics.reg.data import load_items, reg_docs

    # The REG prompt is a user turn (training_rows), so the policy needs a chat template.
    policy = chat_model_folder(embedded_model, tmp_path / "policy")
    judge = build_judge(None, cache_dir=tmp_path / "verdicts")  # the embedded LM as NLI judge
    reward = RecordingReward(judge)
    setting = dapo.Setting(epsilon_high=0.28, seed=0)
    model = AutoModelForCausalLM.from_pretrained(policy, dtype=torch.float32)
    # Two CPU cores: the 168 M-parameter (tied) token embedding stays frozen, so AdamW keeps state
    # for the transformer blocks only; the DAPO loss, the rollouts and the rewards are unchanged.
    model.get_input_embeddings().weight.requires_grad_(False)
    trainer = dapo.train(
        model,
        reward,
        reg_docs(load_items())[:2],
        tmp_path / setting.folder,
        setting,
        processing_class=AutoTokenizer.from_pretrained(policy),
        num_generations=2,
        use_cpu=True,
        max_steps=2,
        per_device_train_batch_size=2,
        max_completion_length=8,
        gradient_checkpointing=False,  # TRL's default recomputes activations: memory a CPU run has, time it lacks
        logging_steps=1,
        save_strategy="no",
        report_to="none",
    )
    assert isinstance(trainer, trl.GRPOTrainer) and trainer.state.global_step == 2
    assert (trainer.args.loss_type, trainer.args.epsilon_high) == ("dapo", 0.28)
    assert len(reward.returned) == 2 and all(len(batch) == 2 for batch in reward.returned)
    assert {value for batch in reward.returned for value in batch} <= TABLE_4_VALUES
    key = "rewards/reg_reward/mean"
    logged = [entry[key] for entry in trainer.state.log_history if key in entry]
    assert logged == pytest.approx([statistics.mean(batch) for batch in reward.returned])
    assert all(not math.isnan(entry.get("loss", 0.0)) for entry in trainer.state.log_history)
    # Every judged completion went through the shared, cached judge.
    db = sqlite3.connect(tmp_path / "verdicts" / "verdicts.sqlite")
    assert db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == judge.computed > 0

    # The evaluation step, as the recipe runs it (leaderboard_musr there), on the saved checkpoint;
    # the trainer's and the judge's weights are freed first (the harness loads the checkpoint again).
    del trainer, model
    judge.release()
    gc.collect()
    checkpoint = tmp_path / setting.folder / "checkpoint"
    command = dapo.evaluate_command(checkpoint, tmp_path / "eval", "leaderboard_musr")
    assert json.loads(command[command.index("--model_args") + 1])["chat_template_args"] == {"enable_thinking": False}
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))
    extra = ["--include_path", str(TASKS_DIR), "--limit", "2", "--device", "cpu", "--batch_size", "2"]
    results = dapo.evaluate(checkpoint, tmp_path / "eval", "reg_judge_select_loglik", extra)
    assert 0 <= dapo.score(results, "reg_judge_select_loglik", "acc") <= 1
    config = json.loads(results.read_text())["config"]
    assert str(checkpoint) in str(config["model_args"])  # the trained weights, not the policy's


class Stopped(BaseException):
    """The run stopped there (killed, out of time), as far as the trainer can tell."""


def test_a_stopped_training_resumes_from_its_last_checkpoint(tmp_path, fixture_mirror) -> None:
    pytest.importorskip("trl", reason="the trl extra is not installed: pip install -e '.[trl]'")
    from transformers import AutoTokenizer

    from custom_metrics.judge.build import build_judge
    from custom_metrics.judge.spec import parse_spec
    from custom_metrics.reg.data import load_items, reg_docs
    from tests.judge.conftest import tiny_llama, with_chat_template
    from tests.reg.judges import tiny_judge_metadata

    # a tiny random policy and judge: the trainer's checkpoints and resumption are what is tested
    policy = with_chat_template(tiny_llama(tmp_path / "policy"))
    judge = build_judge(parse_spec(tiny_judge_metadata(tmp_path)["judge"]), cache_dir=tmp_path / "verdicts")
    setting, docs = dapo.Setting(epsilon_high=0.28, seed=0), reg_docs(load_items())[:2]
    folder = tmp_path / setting.folder
    settings = {
        "processing_class": AutoTokenizer.from_pretrained(policy),
        "num_generations": 2, "per_device_train_batch_size": 2, "max_completion_length": 4, "max_steps": 2,
        "use_cpu": True, "bf16": False, "gradient_checkpointing": False, "save_steps": 1, "report_to": "none",
    }  # fmt: skip

    class StoppedInStep2(RecordingReward):
        def __call__(self, *args: Any, **kwargs: Any) -> list[float]:
            if self.returned:
                raise Stopped
            return super().__call__(*args, **kwargs)

    with pytest.raises(Stopped):
        dapo.train(str(policy), StoppedInStep2(judge), docs, folder, setting, **settings)
    assert dapo.last_checkpoint(folder) == folder / "checkpoint-1" and not (folder / dapo.TRAINED).exists()

    reward = RecordingReward(judge)
    trainer = dapo.train(str(policy), reward, docs, folder, setting, **settings)
    assert trainer.state.global_step == 2 and len(reward.returned) == 1  # step 2 alone: step 1 was resumed
    assert json.loads((folder / dapo.TRAINED).read_text())["global_step"] == 2
    assert (folder / "checkpoint" / "config.json").is_file()
