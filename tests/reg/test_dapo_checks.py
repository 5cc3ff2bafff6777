"""``explain-eval reg-dapo`` before training: the device and precision TRL would train with,
the output folder and the reward's judge (REG's own check on the gold items) are checked in
seconds, before the policy or the data set loads, each failure one line saying what to pass
(on a CPU the recipe ended in TRL's bf16 traceback). Training itself is tests/reg/test_trl.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from custom_metrics.cli import main
from custom_metrics.reg import dapo
from tests.reg.judges import tiny_judge_metadata


@pytest.fixture()
def no_training(monkeypatch: pytest.MonkeyPatch) -> None:
    def train(*args, **kwargs):
        raise AssertionError("training started")

    monkeypatch.setattr(dapo, "train", train)


def _one_line(argv: list[str], capsys) -> str:
    capsys.readouterr()
    assert main(["reg-dapo", *argv, "--no-eval"]) == 2
    error = capsys.readouterr().err
    line = error.strip().splitlines()[-1]  # after the judge's loading bar, where it loads
    assert "Traceback" not in error and line.startswith("explain-eval reg-dapo: "), error
    return line


def test_a_device_or_precision_trl_cannot_train_with_is_one_line(
    tmp_path: Path, no_training: None, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import torch
    import transformers.utils

    out = ["--judge", "embedded", "--out", str(tmp_path / "out")]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # a machine without a GPU
    assert "pass --use-cpu" in _one_line(out, capsys)
    assert "--precision bf16 or fp32" in _one_line([*out, "--use-cpu", "--precision", "fp16"], capsys)
    monkeypatch.setattr(transformers.utils, "is_torch_bf16_available_on_device", lambda device: False)
    assert "has no bf16" in _one_line([*out, "--use-cpu"], capsys)  # TRL's default precision, on this CPU
    assert not (tmp_path / "out").exists()
    assert dapo.precision_settings(True, "fp32") == {"use_cpu": True, "bf16": False, "fp16": False}


def test_a_judge_that_cannot_work_stops_before_training(
    tmp_path: Path, fixture_mirror: Path, no_training: None, capsys
) -> None:
    from tests.judge.conftest import tiny_llama, with_chat_template

    base = ["--out", str(tmp_path / "out"), "--use-cpu", "--precision", "fp32", "--judge-cache", str(tmp_path / "v")]
    base += ["--model", str(with_chat_template(tiny_llama(tmp_path / "policy")))]  # a policy that passes its check
    missing = _one_line([*base, "--judge", f"lm:{tmp_path / 'no-such-judge'}"], capsys)
    assert f"there is no folder {tmp_path / 'no-such-judge'}" in missing
    tiny = tiny_judge_metadata(tmp_path)["judge"]  # random weights: degenerate on the gold items
    degenerate = _one_line([*base, "--judge", tiny], capsys)
    assert "is degenerate on the gold items of its check" in degenerate
    assert "--judge-check warn" in degenerate and "--metadata" not in degenerate  # reg-dapo's own options


def test_the_stated_epochs_are_the_ones_trained() -> None:
    """Section 7.1: "We train models using the TRL library ... with the default hyperparameters";
    TRL's GRPOConfig inherits TrainingArguments' num_train_epochs, 3, and the recipe passes it."""
    trl = pytest.importorskip("trl", reason="the trl extra is not installed: pip install -e '.[trl]'")
    assert dapo.EPOCHS == trl.GRPOConfig.__dataclass_fields__["num_train_epochs"].default == 3.0
    assert dapo.dapo_config("unused", dapo.Setting(0.2, 0), use_cpu=True).num_train_epochs == dapo.EPOCHS


def test_a_policy_whose_tokenizer_has_no_chat_template_stops_before_training(
    tmp_path: Path, fixture_mirror: Path, capsys
) -> None:
    """The rollouts are chat turns: such a policy ended in TRL's traceback, after the judge had
    loaded and been checked. Training is not stubbed here: the command must stop before it."""
    pytest.importorskip("trl", reason="the trl extra is not installed: pip install -e '.[trl]'")
    from tests.judge.conftest import tiny_llama

    policy = tiny_llama(tmp_path / "policy")  # a base model's tokenizer: no chat template
    judge = tiny_judge_metadata(tmp_path)["judge"]
    argv = ["--model", str(policy), "--judge", judge, "--judge-check", "warn", "--out", str(tmp_path / "out")]
    argv += ["--use-cpu", "--precision", "fp32", "--judge-cache", str(tmp_path / "v"), "--max-steps", "1"]
    argv += ["--num-generations", "2", "--per-device-train-batch-size", "2", "--max-completion-length", "4"]
    line = _one_line(argv, capsys)
    assert f"--model {policy}: its tokenizer has no chat template" in line, line
    assert not list((tmp_path / "out").glob("*/checkpoint*"))
