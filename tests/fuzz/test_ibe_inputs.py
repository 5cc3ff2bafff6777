"""The explanations ``explain-eval ibe score`` reads (ibe_postprocess/inputs.py): plain
JSONL rows and the samples of the ibe_* and ibe_judge_* tasks.

Any file is records or a DataError naming it, within a time bound; no number is rounded
into an option, a gold label or a choice (1.7 is not option 1, NaN never decides the
judge's choice); rows written are records read, each once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from custom_metrics.common.errors import DataError
from ibe_postprocess.inputs import read_inputs
from tests.fuzz.support import SECONDS, names, scratch, within

pytestmark = pytest.mark.fuzz


@contextmanager
def one_file(lines: list[str]) -> Iterator[Path]:
    with scratch() as base:
        path = base / "explanations.jsonl"
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        yield path


numbers = st.one_of(
    st.integers(-2, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.0, 1.7, 2.0, "1", "2", "1.5", " 2 ", "one", True, None, [], {}]),
)
texts = st.one_of(st.text(max_size=30), st.sampled_from(["", " ", "IF a, THEN b.\nTherefore, b."]), st.integers())
plain_row = st.fixed_dictionaries(
    {},
    optional={
        "qid": st.one_of(st.text(max_size=5), st.integers(0, 5), st.none(), st.lists(st.integers(), max_size=1)),
        "option": numbers,
        "correct": numbers,
        "premise": texts,
        "conclusion": texts,
        "explanation": texts,
        "split": st.sampled_from(["train", "test", "dev", 1]),
    },
)
judge_sample = st.fixed_dictionaries(
    {
        "doc": st.fixed_dictionaries(
            {"explanations": st.just([])}, optional={"qid": st.text(max_size=4), "gold": numbers}
        ),
        "filtered_resps": st.lists(st.one_of(st.tuples(numbers, st.just("False")).map(list), numbers), max_size=3),
    }
)


def _integral(value: object) -> float | None:
    """The number a field stands for, if it is a whole one (as the reader may accept it)."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(value) and float(value).is_integer():
        return float(value)
    return None


@given(st.lists(st.one_of(plain_row, judge_sample), min_size=1, max_size=8))
@example([{"qid": "q", "option": 1.7, "correct": 1, "premise": "p", "conclusion": "c", "explanation": "e"}])
@example([{"doc": {"explanations": [], "qid": "q", "gold": 2}, "filtered_resps": [["NaN", "False"], ["-1", "False"]]}])
def test_any_file_is_records_or_an_error_and_no_number_is_rounded(rows: list[dict]) -> None:
    with one_file([json.dumps(row) for row in rows]) as path:
        try:
            records, judged = within(SECONDS, lambda: read_inputs([path]))
        except DataError as error:
            assert names(error, path)
            return
    plain = [row for row in rows if "doc" not in row]
    for record, row in zip(records, plain):  # records keep the order of the rows
        assert _integral(row["option"]) == record.option and _integral(row["correct"]) == record.correct
        assert record.correct in (0, 1)
    for decision, sample in zip(judged, [row for row in rows if "doc" in row]):
        assert _integral(sample["doc"]["gold"]) == decision.gold and decision.choice in (1, 2)
        logliks = [resp[0] if isinstance(resp, list) else resp for resp in sample["filtered_resps"]]
        assert all(math.isfinite(float(value)) for value in logliks)  # NaN never decides
        assert decision.choice == 1 + max(range(2), key=lambda index: float(logliks[index]))


clause = st.from_regex(r"[A-Za-z][a-z ]{0,20}[a-z]", fullmatch=True)


@given(
    st.lists(st.tuples(st.text(min_size=1, max_size=6), st.integers(1, 2)), min_size=1, max_size=10, unique=True),
    st.data(),
)
def test_rows_written_are_records_read_each_once(keys: list[tuple[str, int]], data) -> None:
    rows = [
        {
            "qid": qid,
            "option": option,
            "correct": data.draw(st.integers(0, 1)),
            "premise": data.draw(clause),
            "conclusion": data.draw(clause),
            "explanation": data.draw(st.text(max_size=80)),
            "split": data.draw(st.sampled_from(["train", "test"])),
        }
        for qid, option in keys
    ]
    with one_file([json.dumps(row) for row in rows]) as path:
        records, judged = read_inputs([path])
        assert judged == []
        assert [(r.qid, r.option, r.correct, r.premise, r.conclusion, r.explanation, r.split) for r in records] == [
            tuple(row[name] for name in ("qid", "option", "correct", "premise", "conclusion", "explanation", "split"))
            for row in rows
        ]
        with pytest.raises(DataError, match="already read at"):
            read_inputs([path, path])  # the same rows twice: refused, never counted twice
