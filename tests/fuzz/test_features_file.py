"""``features.jsonl`` cut anywhere: at every line end (a full disk stops a write between two
rows, a copy is interrupted) and at any byte. Whatever the rows, the whole file reads back
exactly and every shorter prefix is refused with a FeaturesError naming the file and the
``explain-eval ibe score`` command that rebuilds it; no prefix ever passes for a smaller run.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ibe_postprocess import features_file
from ibe_postprocess.folder import FeaturesFolder
from ibe_postprocess.inputs import JudgeRecord, Source
from tests.fuzz.support import SECONDS, json_values, scratch, within

pytestmark = pytest.mark.fuzz

rows = st.lists(
    st.fixed_dictionaries(
        {"qid": st.text(max_size=8), "option": st.integers(1, 2), "explanation": st.text(max_size=60)},
        optional={"coherence": st.floats(allow_nan=True), "extra": json_values},
    ),
    min_size=1,
    max_size=12,
)


@given(rows, st.integers(0, 2), st.data())
def test_a_features_file_cut_anywhere_is_refused(rows: list[dict], judged: int, data: st.DataObject) -> None:
    with scratch() as base:
        folder = FeaturesFolder(base / "features")
        origin = features_file.Origin(("runs/samples_ibe_copa_t.jsonl",), "0" * 64, {"certainty_model": "lexicon"})
        decisions = [JudgeRecord(f"copa-{k}", 1, 2, Source("judge.jsonl", k + 1)) for k in range(judged)]
        features_file.write(folder, origin, rows, decisions)
        whole = folder.features.read_bytes()
        back = features_file.read(folder)
        assert [json.dumps(row) for row in back.rows] == [json.dumps(row) for row in rows]  # NaN too
        assert len(back.judged) == judged

        line_ends = [index + 1 for index, byte in enumerate(whole) if byte == ord("\n")]
        anywhere = data.draw(st.lists(st.integers(0, len(whole) - 1), max_size=5))
        for cut in sorted(set(line_ends[:-1] + anywhere)):
            folder.features.write_bytes(whole[:cut])
            with pytest.raises(features_file.FeaturesError) as refused:
                within(SECONDS, lambda: features_file.read(folder))
            assert str(folder.features) in str(refused.value)
            assert "explain-eval ibe score" in str(refused.value)
        folder.features.write_bytes(whole)
        if judged:  # the judge file is part of the run: a cut one is refused too
            judge = folder.judge.read_bytes()
            folder.judge.write_bytes(judge[: judge.index(b"\n") + 1] if judged > 1 else judge[:-1])
            with pytest.raises(features_file.FeaturesError, match="judge"):
                features_file.read(folder)
