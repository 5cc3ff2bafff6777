"""Counts on the command lines: a nonsensical one is a usage error naming the option (issue 17)."""

from __future__ import annotations

import pytest

from ibe_postprocess.cli import main as ibe_main


@pytest.mark.parametrize("value", ["-1", "0", "1.5", "many"])
def test_ibe_score_batch_size_must_be_a_positive_whole_number(tmp_path, capsys, value: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        ibe_main(["score", str(tmp_path / "samples.jsonl"), "--out", str(tmp_path / "out"), "--batch-size", value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --batch-size: {value!r} is not a" in err and "whole number" in err
    assert not (tmp_path / "out").exists()
