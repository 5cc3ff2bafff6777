"""JSON that Python's ``json`` reads silently wrong: a key given twice (the last wins) and a
number no float holds (``1e999`` becomes infinity). Every reader of the suite refuses both,
naming file and line, through the real commands; what Python's own writer produces (NaN,
Infinity) stays readable where lm-eval writes it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from custom_metrics.cli import main as explain_eval
from custom_metrics.common.errors import DataError
from custom_metrics.common.jsonl import read_json, read_jsonl
from custom_metrics.common.samples import read_samples
from tests.helpers import BALLOON


def test_correct_twice_in_an_ibe_input_is_an_error_naming_file_line_and_key(tmp_path: Path, capsys) -> None:
    """Before, ``"correct": 1, ..., "correct": 0`` silently made the wrong option the right one."""
    first, second = BALLOON.read_text(encoding="utf-8").splitlines()
    flipped = second[:-1] + f', "correct": {1 - json.loads(second)["correct"]}}}'
    inputs = tmp_path / "explanations.jsonl"
    inputs.write_text(f"{first}\n{flipped}\n", encoding="utf-8")

    assert explain_eval(["ibe", "score", str(inputs), "--out", str(tmp_path / "out")]) == 2

    assert f"{inputs}:2: key 'correct' appears twice in one object.\n" in capsys.readouterr().err


def test_a_number_no_float_holds_in_an_ibe_input_is_an_error_naming_file_and_line(tmp_path: Path, capsys) -> None:
    first, second = BALLOON.read_text(encoding="utf-8").splitlines()
    inputs = tmp_path / "explanations.jsonl"
    inputs.write_text(f'{first}\n{second[:-1]}, "score": 1e999}}\n', encoding="utf-8")

    assert explain_eval(["ibe", "score", str(inputs), "--out", str(tmp_path / "out")]) == 2

    assert f"{inputs}:2: number 1e999 is too large for a float." in capsys.readouterr().err


def test_whole_json_files_name_the_line_of_a_duplicate_key(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.json"
    prompts.write_text('{\n "main": "A",\n "sub": {"x": 1,\n  "x": 2}\n}\n', encoding="utf-8")
    with pytest.raises(DataError, match=rf"^{prompts}:4: key 'x' appears twice in one object\.$"):
        read_json(prompts)


def test_nan_and_infinity_as_python_writes_them_stay_readable(tmp_path: Path) -> None:
    """lm-eval logs NaN metrics and infinite log-likelihoods: rows written are rows read."""
    sample = {"doc_id": 0, "doc": {"id": "d0"}, "filtered_resps": ["text"], "acc": math.nan, "ll": -math.inf}
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(sample) + "\n", encoding="utf-8")
    (row,) = read_samples(path)
    assert math.isnan(row["acc"]) and row["ll"] == -math.inf
    assert read_jsonl(path)[0]["ll"] == -math.inf
