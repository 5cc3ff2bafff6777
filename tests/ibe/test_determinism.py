"""``ibe score`` writes the same bytes whatever the batch size, the number of processes, the
cache's state or where a run was interrupted, on the real spaCy pipeline and MiniLM.

300 benchmark explanations (``bench/explanations.py`` over the fixture mirror's COPA items),
coherence by the session's tiny random RoBERTa through the real seqcls judge.
Before the fix, a rerun after an interrupted embedding cache computed the missing vectors
in other batches: they differed by about 1e-7 and moved ``proof_score`` on some rows; the
NLI judge's probabilities moved the same way with ``--batch-size``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.explanations import build
from ibe_postprocess.features import ScoreSettings, score
from ibe_postprocess.folder import FeaturesFolder
from tests.helpers import MIRROR

SIZE = 300


@pytest.fixture(scope="module")
def setup(tmp_path_factory, tiny_nli: Path) -> tuple[list, Path, Path, bytes]:
    """The inputs, the judge, a work folder and the reference features (batch size 64, one process)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))
        records = build(SIZE)
    work = tmp_path_factory.mktemp("determinism")
    judge = tiny_nli
    reference = _features(records, judge, work / "reference", batch_size=64, processes=1)
    return records, judge, work, reference


def _features(records: list, judge: Path, out: Path, batch_size: int, processes: int) -> bytes:
    settings = ScoreSettings(
        nli_judge=f"seqcls:{judge}", certainty_model="lexicon", batch_size=batch_size, processes=processes
    )
    score(records, out, settings)
    return FeaturesFolder(out).features.read_bytes()


def _interrupt(folder: Path) -> None:
    """Every cache as a run killed a third of the way through each stage leaves it: the first
    third of its lines, then a line cut short."""
    for path in (folder / "cache").glob("*.jsonl"):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        assert len(lines) >= 3, path
        path.write_text("".join(lines[: len(lines) // 3]) + lines[-1][:40], encoding="utf-8")


def test_batch_size_and_processes_change_no_byte(setup) -> None:
    records, judge, work, reference = setup
    assert reference.count(b"\n") == SIZE + 1  # the header and a row per explanation
    assert _features(records, judge, work / "b8p2", batch_size=8, processes=2) == reference


def test_an_interrupted_run_resumed_beside_other_inputs_changes_no_byte(setup) -> None:
    """Killed a third of the way through every stage, then scored with other inputs (half of
    them) and resumed with batch size 1: the caches hold values of other batches and runs."""
    records, judge, work, reference = setup
    folder = work / "interrupted"
    shutil.copytree(work / "reference", folder)
    _interrupt(folder)
    _features(records[: SIZE // 2], judge, folder, batch_size=32, processes=2)
    assert _features(records, judge, folder, batch_size=1, processes=1) == reference
