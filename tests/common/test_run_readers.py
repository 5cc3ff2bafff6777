"""The tasks that build their documents from another run's samples file refuse a bad line in one
line naming file, line and field: each failure an adversary found (a traceback inside the reader
or the harness, a coerced label, an unbounded chain of thought, a document read twice or dropped)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from custom_metrics.common.errors import DataError
from custom_metrics.common.samples import MAX_RESPONSE_CHARS
from custom_metrics.geese.data import explanations_from_samples
from custom_metrics.reg.faithfulness import faithfulness_docs as reg_docs
from custom_metrics.rule.cot_edits import edit_request_docs, edited_docs
from custom_metrics.rule.faithfulness import faithfulness_docs as rule_docs
from custom_metrics.rule.variants import docs_for
from custom_metrics.rule.zeroshot_cot import answer_docs
from tests.helpers import write_samples
from tests.reg.thinking_run import thinking_sample
from tests.rule.conftest import ENV

COT = " The premise names a cause. It rules out Option0!\nTherefore the answer is Option2."
PROMPT = "Context: A town. \n Question: What follows? \n Option0: a \n Answer:"


def _cot_sample(index: int, **changes: Any) -> dict[str, Any]:
    """One line of a RULE CoT run (the harness' layout), with ``changes`` over it."""
    sample = {
        "doc_id": index,
        "doc": {"doc_id": f"q{index}", "label": 2, "prompt": PROMPT},
        "arguments": {"gen_args_0": {"arg_0": PROMPT, "arg_1": {"until": ["\n\n"]}}},
        "filtered_resps": [COT],
    }
    return sample | changes


def _cot_run(tmp_path: Path, samples: list[dict[str, Any]]) -> str:
    return write_samples(tmp_path / "samples_rule_5shot_cot_split1_2026-01-01T00-00-00.jsonl", samples)


def _label(value: Any) -> dict[str, Any]:
    return _cot_sample(1, doc={"doc_id": "q1", "label": value, "prompt": PROMPT})


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"arguments": {"gen_args_0": "oops"}}, r"field 'arguments\.gen_args_0\.arg_0' \(the prompt\) missing"),
        (_label(7), r"field 'doc\.label' is 7, not an option number from 0 to 3"),
        (_label(True), r"field 'doc\.label' is True, not an option number"),
        (_label(10**25), r"field 'doc\.label' is 10000000000000000000000000, not an option number"),
        (_label("2"), r"field 'doc\.label' is '2', not an option number"),
        ({"filtered_resps": ["x." * MAX_RESPONSE_CHARS]}, r"field 'filtered_resps' \(the generated text\) is 40,000"),
        ({"doc": {"doc_id": ["q"], "label": 2}}, r"field 'doc\.doc_id' is \['q'\], not an id"),
    ],
    ids=["arguments not an object", "label 7", "label true", "label 10**25", "label text", "50 MB", "id"],
)
def test_a_bad_line_of_a_cot_run_is_named(tmp_path: Path, bad: dict[str, Any], field: str) -> None:
    """A label out of range reached the harness (IndexError), ``true`` became Arrow's problem
    (ArrowInvalid, or option 1 in a one-row file), 10**25 an OverflowError; now each is its line."""
    path = _cot_run(tmp_path, [_cot_sample(0), _cot_sample(1) | bad])
    for read in (rule_docs, edit_request_docs):
        with pytest.raises(DataError, match=rf"\.jsonl:2: {field}") as caught:
            read(path)
        assert "\n" not in str(caught.value)


def test_a_generation_logged_twice_is_refused_with_or_without_doc_id(tmp_path: Path) -> None:
    twice = [_cot_sample(0), _cot_sample(1)]
    twice += [{key: value for key, value in sample.items() if key != "doc_id"} for sample in twice]
    with pytest.raises(DataError, match=r"\.jsonl:3: generation 'q0' \(filter 'none'\) was already read at .*:1"):
        rule_docs(_cot_run(tmp_path, twice))


def test_an_edit_logged_twice_is_refused(tmp_path: Path) -> None:
    """Without a top-level doc_id (a file written by another tool) an edit read twice was scored twice."""
    cots = _cot_run(tmp_path, [_cot_sample(0)])
    requests = edit_request_docs(cots)
    rows = [{"doc": request, "filtered_resps": ["A new sentence."]} for request in requests]
    edits = write_samples(tmp_path / "samples_rule_cot_edits_2026-01-01T00-00-01.jsonl", rows + rows[:1])
    with pytest.raises(DataError, match=rf"\.jsonl:{len(rows) + 1}: the mistake of generation 'q0', sentence 0"):
        edited_docs(cots, edits)
    flagged = [{**rows[0], "doc": {**requests[0], "sentence": True}}]
    with pytest.raises(DataError, match=r"\.jsonl:1: field 'doc.kind' or 'doc.sentence'"):
        edited_docs(cots, write_samples(tmp_path / "samples_rule_cot_edits_x.jsonl", flagged))


def test_a_reg_generation_logged_twice_or_malformed_is_named(tmp_path: Path) -> None:
    """REG's thinking run: 18 documents were built from 12 when two lines told one item twice."""
    item = {"uid": "s001", "premise": "Premise.", "hypothesis": "Hypothesis."}
    raw = "He read. It helped.\n</think>\n\nTom read guidebooks."
    sample = {key: value for key, value in thinking_sample(0, item, raw, "embedded").items() if key != "doc_id"}
    path = tmp_path / "samples_reg_chaos_thinking_2026-01-01T00-00-00.jsonl"
    with pytest.raises(DataError, match=r"\.jsonl:2: item 's001' \(filter 'judged'\) was already read"):
        reg_docs(write_samples(path, [sample, sample]))
    with pytest.raises(DataError, match=r"\.jsonl:1: field 'arguments\.gen_args_0\.arg_0' \(the prompt\) missing"):
        reg_docs(write_samples(path, [{**sample, "arguments": {"gen_args_0": "oops"}}]))
    with pytest.raises(DataError, match=r"\.jsonl:1: field 'doc\.premise' is 3, not a string"):
        reg_docs(write_samples(path, [{**sample, "doc": {**sample["doc"], "premise": 3}}]))


def test_the_zero_shot_reasoning_of_one_question_twice_is_refused(tmp_path: Path, monkeypatch) -> None:
    """One copy was dropped without a word: the later line silently won."""
    monkeypatch.setenv(*next(iter(ENV.items())))
    reasoning = docs_for("zeroshot_cot_reasoning")[:2]
    rows = [{"doc": doc, "filtered_resps": [" It follows."]} for doc in reasoning]
    path = tmp_path / "samples_rule_zeroshot_cot_reasoning_2026-01-01T00-00-00.jsonl"
    doc_id = reasoning[0]["doc_id"]
    with pytest.raises(DataError, match=rf"\.jsonl:3: doc\.doc_id '{doc_id}' \(filter 'none'\) was already read"):
        answer_docs(reasoning, write_samples(path, [*rows, rows[0]]))
    too_long = [{**rows[0], "filtered_resps": ["x" * (MAX_RESPONSE_CHARS + 1)]}]
    with pytest.raises(DataError, match=r"\.jsonl:1: field 'filtered_resps' \(the generated text\) is 20,001"):
        answer_docs(reasoning, write_samples(path, too_long))


@pytest.mark.parametrize(
    "row, field",
    [
        ({"doc": {"id": "1"}, "filtered_resps": ["Because."]}, r"\.jsonl:2: doc\.id '1' \(filter 'none'\) was already"),
        ({"doc": {"id": True}, "filtered_resps": ["Because."]}, r"\.jsonl:2: field 'doc\.id' is True, not an id"),
    ],
)
def test_geese_self_explanations_read_once_and_by_id(tmp_path: Path, row: dict, field: str) -> None:
    path = tmp_path / "samples_geese_generate_whyexp_2026-01-01T00-00-00.jsonl"
    with pytest.raises(DataError, match=field):
        explanations_from_samples(write_samples(path, [{"doc": {"id": "1"}, "filtered_resps": ["Because."]}, row]))
