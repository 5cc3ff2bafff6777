"""Readers of lm-eval samples files and other JSONL a user hands us: the shared JSONL and
samples readers, the RULE protocol's run reader and the REG analysis reader.

Any bytes give rows or a DataError naming the file, within a time bound; rows written are
rows read (NaN, any Unicode, line separators inside strings); a doc logged twice is refused;
and a run cut at any byte is never taken for a finished one.
"""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from custom_metrics.common.errors import DataError
from custom_metrics.common.jsonl import read_jsonl
from custom_metrics.common.samples import read_samples
from custom_metrics.reg.analysis import read_samples as read_reg_samples
from custom_metrics.rule.metrics import ELIMINATIVE, MAIN, SELECTIVE, TABLE2_METRICS
from custom_metrics.rule.protocol import IncompleteRun, finished_samples, read_run
from tests.fuzz.support import SECONDS, json_values, names, scratch, within

pytestmark = pytest.mark.fuzz


def _dump(row: object) -> str:
    return json.dumps(row, ensure_ascii=False)  # as lm-eval writes samples: raw Unicode


objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)
# Bytes shaped like a damaged JSONL file: JSON lines, cut lines, Latin-1, NUL, deep nesting.
damaged_lines = st.lists(
    st.one_of(
        objects.map(lambda row: _dump(row).encode()),
        st.binary(max_size=40),
        st.sampled_from([b"", b"{", b'{"a": "caf\xe9"}', b"\x00", b"[" * 5_000, b"NaN", b'{"a": Infinity}', b"\r"]),
    ),
    max_size=12,
).map(b"\n".join)


@given(damaged_lines)
def test_any_bytes_are_rows_or_an_error_naming_the_file(data: bytes) -> None:
    with scratch() as base:
        path = base / "rows.jsonl"
        path.write_bytes(data)
        try:
            rows = within(SECONDS, lambda: read_jsonl(path))
        except DataError as error:
            assert names(error, path)
            return
        assert rows and all(isinstance(row, dict) for row in rows)


@given(st.lists(objects, min_size=1, max_size=20))
@example([{"text": "line\u2028separator\x85and\x1cothers\r\n"}, {"nan": math.nan, "inf": -math.inf}])
def test_rows_written_are_rows_read(rows: list[dict]) -> None:
    with scratch() as base:
        path = base / "rows.jsonl"
        path.write_text("".join(_dump(row) + "\n" for row in rows), encoding="utf-8")
        assert _dump(read_jsonl(path)) == _dump(rows)  # NaN compares equal in its JSON form


def _generation(doc_id: int, text: str, filter_name: str = "none") -> dict:
    return {
        "doc_id": doc_id,
        "doc": {"id": str(doc_id)},
        "filter": filter_name,
        "resps": [[text]],
        "filtered_resps": [text],
    }


@given(st.lists(st.text(), min_size=1, max_size=15), st.data())
def test_samples_are_read_whole_and_a_doc_logged_twice_is_refused(texts: list[str], data) -> None:
    samples = [_generation(index, text) for index, text in enumerate(texts)]
    with scratch() as base:
        path = base / "samples.jsonl"
        path.write_text("".join(_dump(sample) + "\n" for sample in samples), encoding="utf-8")
        assert [sample["filtered_resps"][0] for sample in read_samples(path)] == texts
        again = data.draw(st.integers(0, len(samples) - 1))
        position = data.draw(st.integers(again + 1, len(samples)))
        doubled = [*samples[:position], samples[again], *samples[position:]]
        path.write_text("".join(_dump(sample) + "\n" for sample in doubled), encoding="utf-8")
        with pytest.raises(DataError, match=rf"samples.jsonl:{position + 1}: doc_id {again} .* already read at"):
            read_samples(path)


# --- strict JSON: a key twice, a number no float holds -----------------------------------------


def _with_duplicate(row: dict, key: str, nested: bool) -> str:
    """``row`` as one JSONL line whose (nested) object gives ``key`` twice: first, then as in ``row``."""
    pairs = [(key, "first"), *row.items(), *([] if key in row else [(key, 0)])]
    text = "{" + ", ".join(f"{json.dumps(k)}: {_dump(v)}" for k, v in pairs) + "}"
    return '{"outer": 1, "nested": ' + text + "}" if nested else text


@given(st.lists(objects, min_size=1, max_size=8), st.text(max_size=6), st.booleans(), st.data())
@example([{"correct": 1}], "correct", False, None)
def test_a_key_given_twice_is_refused_naming_file_line_and_key(rows, key, nested, data) -> None:
    """Python's json keeps the last of two equal keys: ``"correct"`` twice would silently flip a label."""
    line = data.draw(st.integers(0, len(rows) - 1)) if data is not None else 0
    lines = [_dump(row) for row in rows]
    lines[line] = _with_duplicate(rows[line], key, nested)
    with scratch() as base:
        path = base / "rows.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(DataError) as caught:
            within(SECONDS, lambda: read_jsonl(path))
    assert str(caught.value) == f"{path}:{line + 1}: key {key!r} appears twice in one object."


big_numbers = st.one_of(
    st.integers(309, 100_000).map(lambda exponent: f"1e{exponent}"),
    st.integers(309, 400).map(lambda digits: "9" * digits),
    st.integers(309, 999).map(lambda exponent: f"-2.5E+{exponent}"),
)


@given(st.lists(objects, min_size=1, max_size=8), big_numbers, st.data())
def test_a_number_no_float_holds_is_refused_naming_file_and_line(rows, number: str, data) -> None:
    """``1e999`` reads as infinity in Python ("accuracy ∞"); Python's own writer never writes it."""
    line = data.draw(st.integers(0, len(rows) - 1))
    lines = [_dump(row) for row in rows]
    lines[line] = '{"value": [' + number + "], " + lines[line][1:] if rows[line] else '{"value": [' + number + "]}"
    with scratch() as base:
        path = base / "rows.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(DataError, match=rf"^{path}:{line + 1}: number [-0-9.eE+]+ is too large for a float\.$"):
            within(SECONDS, lambda: read_jsonl(path))


# --- the RULE protocol: a run cut at any byte ------------------------------------------------

STAMP = "2026-11-30T10-00-00.000000"
outcome = st.tuples(
    st.sampled_from([MAIN, SELECTIVE, ELIMINATIVE]), st.integers(0, 5), st.booleans(), st.booleans(), st.integers(0, 4)
)


def _write_run(base: Path, outcomes: list[tuple], original: int) -> tuple[Path, bytes]:
    """A zero-shot ``rule`` run laid out as lm_eval writes it: results first, samples beside."""
    model = base / "zeroshot" / "model"
    model.mkdir(parents=True)
    scores = {"alias": "rule", **{f"{name},none": 0.5 for name in TABLE2_METRICS}}
    results = {"results": {"rule": scores}, "n-samples": {"rule": {"original": original, "effective": len(outcomes)}}}
    (model / f"results_{STAMP}.json").write_text(json.dumps(results))
    lines = []
    for index, (kind, split, correct, none_gold, size) in enumerate(outcomes):
        value = [f"q{index}", f"m{index // 3}", kind, split, correct, none_gold, size]
        sample = {
            "doc_id": index,
            "doc": {"doc_id": f"q{index}"},
            "filter": "none",
            "filtered_resps": [["-1.0", "False"]],
        }
        lines.append(_dump({**sample, **dict.fromkeys(TABLE2_METRICS, value)}) + "\n")
    samples = model / f"samples_rule_{STAMP}.jsonl"
    data = "".join(lines).encode()
    samples.write_bytes(data)
    return samples, data


@given(st.lists(outcome, min_size=1, max_size=12), st.data())
def test_a_run_cut_at_any_byte_is_never_a_finished_run(outcomes: list[tuple], data) -> None:
    with scratch() as base:
        samples, whole = _write_run(base, outcomes, original=len(outcomes) + data.draw(st.integers(0, 3)))
        assert len(read_run(base / "zeroshot", "rule").outcomes) == len(outcomes)
        cut = data.draw(st.integers(0, len(whole) - 1))
        samples.write_bytes(whole[:cut])
        if whole[:cut].rstrip() == whole.rstrip():  # only the final newline went: every sample is whole
            assert len(read_run(base / "zeroshot", "rule").outcomes) == len(outcomes)
            return
        with pytest.raises(IncompleteRun) as caught:
            within(SECONDS, lambda: read_run(base / "zeroshot", "rule"))
        assert names(caught.value, samples) and samples in caught.value.leftovers


@given(st.lists(outcome, min_size=1, max_size=8), damaged_lines)
def test_a_damaged_run_is_an_error_naming_the_samples_file(outcomes: list[tuple], damage: bytes) -> None:
    with scratch() as base:
        samples, whole = _write_run(base, outcomes, original=len(outcomes))
        samples.write_bytes(whole + damage)
        try:
            rows, _ = finished_samples(base / "zeroshot", "rule")
            run = read_run(base / "zeroshot", "rule")
        except DataError as error:
            assert names(error, samples)
            return
        assert len(rows) == len(run.outcomes) == len(outcomes)  # only blank lines were added


# --- REG section 6: any samples file ------------------------------------------------------------

verdict = st.fixed_dictionaries({"label": st.sampled_from(["entailment", "neutral", "contradiction"])})
record = st.fixed_dictionaries(
    {
        "flag": st.sampled_from(["", "", "empty"]),
        "thinking_words": st.integers(0, 9),
        "initial": verdict,
        "coherence": verdict,
        "effectiveness": verdict,
    }
)
reg_sample = st.fixed_dictionaries(
    {
        "doc": st.fixed_dictionaries(
            {"uid": st.text(max_size=5), "w_con": st.one_of(st.floats(0, 1), st.floats(), st.integers(-1, 2))}
        ),
        "resps": st.just([["some words <think>x</think> here"]]),
        "filtered_resps": st.lists(record.map(json.dumps), min_size=1, max_size=1),
    }
)


def _read_reg(samples: list[dict]) -> list[dict]:
    """The analysis' rows of these samples; DataError naming file and line otherwise."""
    with scratch() as base:
        path = base / "samples_reg_chaos.jsonl"
        path.write_text("".join(_dump(sample) + "\n" for sample in samples), encoding="utf-8")
        try:
            return within(SECONDS, lambda: read_reg_samples(path, "m", lambda text: len(text.split())))
        except DataError as error:
            assert names(error, f"{path}:")
            raise


@given(st.lists(reg_sample, min_size=1, max_size=10))
def test_reg_samples_give_every_item_in_n_or_an_error(samples: list[dict]) -> None:
    try:
        rows = _read_reg(samples)
    except DataError:
        assert any(not 0 <= sample["doc"]["w_con"] <= 1 for sample in samples)  # NaN compares False too
        return
    in_n = [s for s in samples if json.loads(s["filtered_resps"][0])["initial"]["label"] == "contradiction"]
    assert len(rows) == len(in_n)  # none dropped
    assert all(0 <= row["w_con"] <= 1 and row["success"] in (0, 1) for row in rows)


@given(st.lists(st.one_of(reg_sample, objects), min_size=1, max_size=10))
def test_any_reg_samples_give_rows_or_an_error_naming_file_and_line(samples: list[dict]) -> None:
    with contextlib.suppress(DataError):
        _read_reg(samples)
