"""The shared readers under careless and hostile input (issue 17): every problem is an
error naming file, line and field, never a traceback, a silent coercion or a duplicate."""

from __future__ import annotations

import json
import logging
import math
import random
from pathlib import Path

import pytest

from custom_metrics.common.classification import NO_PREDICTION, label_accuracy, macro_f1, predicted_index
from custom_metrics.common.errors import DataError
from custom_metrics.common.jsonl import read_json, read_jsonl
from custom_metrics.common.samples import read_samples
from custom_metrics.rule.metrics import Outcome


def _sample(doc_id: int, text: str = "an explanation", **extra) -> dict:
    return {"doc_id": doc_id, "doc": {"id": f"d{doc_id}"}, "filtered_resps": [text], "filter": "none", **extra}


def _jsonl(path: Path, *rows) -> Path:
    path.write_bytes(b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in rows))
    return path


@pytest.mark.parametrize(
    "line, message",
    [
        (b'{"a": "caf\xe9"}', r"rows.jsonl:2: not UTF-8 text \(byte b'\\xe9' at byte offset 10"),
        (b'{"a": 1', r"rows.jsonl:2: not valid JSON"),
        (b"[1, 2]", r"rows.jsonl:2: expected a JSON object, got list"),
        (b"[" * 50_000, r"rows.jsonl:2: JSON nested too deeply"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path, line, message):
    with pytest.raises(DataError, match=message):
        read_jsonl(_jsonl(tmp_path / "rows.jsonl", {"a": 1}, line))


def test_an_unreadable_path_is_named(tmp_path):
    with pytest.raises(DataError, match=rf"{tmp_path}: is a folder"):
        read_jsonl(tmp_path)
    (tmp_path / "prompts.json").write_bytes(b"\xff")
    with pytest.raises(DataError, match=r"prompts.json: not UTF-8 text"):
        read_json(tmp_path / "prompts.json")


def test_a_doc_logged_twice_in_a_samples_file_is_refused(tmp_path):
    path = _jsonl(tmp_path / "samples.jsonl", _sample(0), _sample(1), _sample(0, "later text"))
    with pytest.raises(DataError, match=rf"samples.jsonl:3: doc_id 0 \(filter 'none'\) was already read at {path}:1"):
        read_samples(path)
    # One doc under two filters is two samples, not a duplicate.
    assert len(read_samples(_jsonl(tmp_path / "two.jsonl", _sample(0), _sample(0, filter="other")))) == 2


def test_a_multiple_choice_samples_file_does_not_pass_for_generations(tmp_path):
    pair = ["-1.5", "False"]
    path = _jsonl(tmp_path / "samples.jsonl", _sample(0, filtered_resps=[pair], resps=[[pair]]))
    with pytest.raises(DataError, match=r"samples.jsonl:1: field 'filtered_resps' holds no generated text"):
        read_samples(path)


@pytest.mark.parametrize(
    "logliks",
    [[math.nan, -9.0, -9.5], [-9.0, math.nan, -0.5], [math.nan] * 3, [-2.0, math.inf, -1.0], ["nan", "-1.0", "-2"]],
)
def test_a_nan_log_likelihood_is_no_prediction_and_a_warning(caplog, logliks):
    with caplog.at_level(logging.WARNING):
        assert predicted_index([(value, False) for value in logliks], "GEESE doc 7") == NO_PREDICTION
    assert "GEESE doc 7: log-likelihoods" in caplog.text and "counts as wrong" in caplog.text


def test_minus_infinity_is_a_log_likelihood_and_ties_pick_the_first():
    assert predicted_index([(-math.inf, False), (-3.0, False), (-3.0, True)]) == 1
    assert predicted_index([(-math.inf, False), (-math.inf, False)]) == 0


def test_no_prediction_is_wrong_for_its_gold_label_and_no_label_of_its_own():
    pairs = [(0, 0), (1, 1), (2, 2), (1, NO_PREDICTION)]
    assert label_accuracy(pairs, 1) == 0.5
    # Three labels, not four: label 1 has recall 1/2 (F1 2/3), the others F1 1.
    assert macro_f1(pairs) == pytest.approx((1 + 2 / 3 + 1) / 3)


def _f1_inputs() -> list[list[tuple[int, int]]]:
    """GEESE-sized and small runs of three labels, skewed and not, with NO_PREDICTION, and the
    degenerate ones: one doc, all right, all wrong, no prediction at all, one gold label only, a label
    only predicted."""
    rng = random.Random(7)
    drawn = []
    for size in (1, 2, 3, 5, 8, 13, 50, 800, 800, 800):
        for right in (0.0, 0.3, 0.6, 1.0):
            golds = rng.choices(range(3), weights=rng.choice([(1, 1, 1), (8, 1, 1), (1, 0, 0), (0, 3, 1)]), k=size)
            drawn.append([(g, g if rng.random() < right else rng.choice([NO_PREDICTION, 0, 1, 2])) for g in golds])
    fixed = [[(1, 1)], [(0, 2)], [(2, NO_PREDICTION)], [(0, NO_PREDICTION)] * 5, [(1, 0)] * 4, [(0, 0)] * 9]
    return drawn + fixed + [[(0, 1), (0, 2), (0, 0)], [(g, (g + 1) % 3) for g in range(3)] * 7]


def test_macro_f1_is_scikit_learns_to_the_bit() -> None:
    """lm-eval 0.5 calls it 100,000 times a run (its bootstrap), so it is counted here, not in
    scikit-learn; the numbers must not move: every value equal to f1_score's, not merely close."""
    from sklearn.metrics import f1_score

    for pairs in _f1_inputs():
        golds, predictions = zip(*pairs)
        labels = sorted((set(golds) | set(predictions)) - {NO_PREDICTION})
        expected = float(f1_score(golds, predictions, labels=labels, average="macro", zero_division=0))
        assert macro_f1(pairs) == expected, pairs
    assert math.isnan(macro_f1([]))  # no labels, no F1 (scikit-learn's call raised)


@pytest.mark.parametrize(
    "value, message",
    [
        (["a", "a", "main", 0, "false", False, 0], "correct must be a bool"),
        (["a", "a", "main", 1.7, True, False, 0], "split must be a whole number"),
        (["a", "a", "main", 0, True, False, -1], "group_size must be a whole number"),
        (["a", "a", "mian", 0, True, False, 0], "kind must be one of"),
        (["a", "a", "main", 0, True, False], "expected a list of 7"),
        ("a,a,main", "expected a list of 7"),
    ],
)
def test_rule_outcomes_are_read_strictly(value, message):
    with pytest.raises(ValueError, match=message):
        Outcome.parse(value)
