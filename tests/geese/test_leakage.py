"""Leakage-adjusted simulatability (Hase et al. 2020) and its exact test, on examples computed by hand."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest
from scipy import stats

from custom_metrics.common.errors import DataError
from custom_metrics.geese.leakage import Bin, doc_outcomes, leakage, sign_flip_p

# Ten documents: (right with no hint, right with hint and pair, right with the hint alone).
# Leaking (hint alone right): d1 0->1, d2 0->1, d3 1->1, d4 0->1: 3 helped of 4, LAS_1 = 3/4.
# Non-leaking: d5 1->0, d6 0->0, d7 1->1, d8 0->0, d9 1->0, d10 0->0: 2 hurt of 6, LAS_0 = -1/3.
# LAS = (3/4 - 1/3) / 2 = 5/24, while plain effectiveness is (3 - 2) / 10 = 1/10.
HAND = {
    "d1": (0, 1, 1),
    "d2": (0, 1, 1),
    "d3": (1, 1, 1),
    "d4": (0, 1, 1),
    "d5": (1, 0, 0),
    "d6": (0, 0, 0),
    "d7": (1, 1, 0),
    "d8": (0, 0, 0),
    "d9": (1, 0, 0),
    "d10": (0, 0, 0),
}


def _runs(table: dict[str, tuple[int, int, int]]) -> tuple[dict[str, float], ...]:
    return tuple({doc: float(values[i]) for doc, values in table.items()} for i in range(3))


def test_las_equals_the_hand_computed_example() -> None:
    found = leakage(*_runs(HAND))
    assert found.leaking == Bin(4, 3, 0) and found.nonleaking == Bin(6, 0, 2)
    assert found.leaking.effect == 0.75 and found.nonleaking.effect == pytest.approx(-1 / 3)
    assert found.value == pytest.approx(5 / 24)
    without, with_hint, _ = _runs(HAND)
    assert sum(with_hint.values()) / 10 - sum(without.values()) / 10 == pytest.approx(1 / 10)  # effectiveness
    # By hand: S = 6 (2 B1 - 3) + 4 (2 B0 - 2), observed 6*3 + 4*(-2) = 10. |S| >= 10 whenever
    # 2B1 - 3 = +-3 (prob 1/8 each, any B0) or (2B1 - 3, 2B0 - 2) = (-1, -2) or (1, 2) (3/8 * 1/4 each):
    # p = 2/8 + 2 * 3/32 = 7/16.
    assert found.p_value == pytest.approx(7 / 16)
    assert "LAS over 10 docs; leaking 4 docs: effect +0.7500 (3 helped, 0 hurt)" in found.describe()
    assert "p = 0.438" in found.describe()


def test_documents_missing_from_a_run_are_left_out_and_counted() -> None:
    without, with_hint, alone = _runs(HAND)
    del with_hint["d10"], alone["d9"]
    found = leakage(without, with_hint, alone)
    assert found.n == 8 and found.left_out == 2
    assert found.nonleaking == Bin(4, 0, 1)
    assert "2 docs left out (not logged by all three runs)" in found.describe()


def test_an_empty_bin_leaves_las_undefined_and_untested() -> None:
    nothing_leaks = {doc: (x, xe, 0) for doc, (x, xe, _) in HAND.items()}
    found = leakage(*_runs(nothing_leaks))
    assert found.leaking.n == 0 and found.value is None and found.p_value is None
    assert "undefined: no leaking document, so no test" in found.describe()


def _brute_force_p(leaking: Bin, nonleaking: Bin) -> Fraction:
    """Every sign assignment of the discordant documents, counted in exact fractions."""
    m1, m0 = leaking.helped + leaking.hurt, nonleaking.helped + nonleaking.hurt

    def las(helped1: int, helped0: int) -> Fraction:
        return (Fraction(2 * helped1 - m1, leaking.n) + Fraction(2 * helped0 - m0, nonleaking.n)) / 2

    observed = abs(las(leaking.helped, nonleaking.helped))
    signs = list(itertools.product((0, 1), repeat=m1 + m0))
    hits = sum(abs(las(sum(s[:m1]), sum(s[m1:]))) >= observed for s in signs)
    return Fraction(hits, len(signs))


@pytest.mark.parametrize(
    ("leaking", "nonleaking"),
    [
        (Bin(4, 3, 0), Bin(6, 0, 2)),
        (Bin(5, 2, 2), Bin(3, 3, 0)),
        (Bin(9, 1, 5), Bin(7, 4, 1)),
        (Bin(2, 0, 0), Bin(8, 0, 0)),
    ],
)
def test_the_exact_test_equals_enumerating_every_sign_flip(leaking: Bin, nonleaking: Bin) -> None:
    assert sign_flip_p(leaking, nonleaking) == pytest.approx(float(_brute_force_p(leaking, nonleaking)), abs=1e-12)


def test_with_one_bin_unchanged_the_test_is_mcnemars() -> None:
    for helped, hurt in ((7, 1), (3, 3), (0, 5), (12, 2)):
        exact = stats.binomtest(helped, helped + hurt, 0.5).pvalue
        assert sign_flip_p(Bin(20, helped, hurt), Bin(9, 0, 0)) == pytest.approx(exact)
        assert sign_flip_p(Bin(9, 0, 0), Bin(20, helped, hurt)) == pytest.approx(exact)


def _samples(path: Path, lines: list[object]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_outcomes_are_read_by_doc_id_and_bad_lines_are_named(tmp_path: Path) -> None:
    good = _samples(tmp_path / "ok.jsonl", [{"doc": {"id": "7"}, "acc": 1.0}, {"doc": {"id": 8}, "acc": 0.0}])
    assert doc_outcomes(good) == {"7": 1.0, "8": 0.0}
    twice = _samples(tmp_path / "twice.jsonl", [{"doc": {"id": "7"}, "acc": 1.0}, {"doc": {"id": "7"}, "acc": 1.0}])
    with pytest.raises(DataError, match=r"twice.jsonl:2: doc id '7' is logged twice"):
        doc_outcomes(twice)
    generated = _samples(tmp_path / "m1.jsonl", [{"doc": {"id": "7"}, "words": 3.0}])
    with pytest.raises(DataError, match=r"m1.jsonl:1: field 'acc' is None, expected 0 or 1"):
        doc_outcomes(generated)
    foreign = _samples(tmp_path / "rule.jsonl", [{"doc": {"doc_id": "x"}, "acc": 1.0}])
    with pytest.raises(DataError, match=r"rule.jsonl:1: field 'doc.id' missing"):
        doc_outcomes(foreign)


STAMP = "2026-01-01T00-00-00.000000"


def _run_folder(root: Path, model: str, logged: dict[str, dict[str, int]]) -> None:
    """A results file of ``logged``'s tasks (accuracy = mean) with their samples files, as lm_eval writes them."""
    from tests.leaderboard.test_leaderboard import modern_results

    folder = root / model
    folder.mkdir(parents=True)
    accs = {task: sum(values.values()) / len(values) for task, values in logged.items()}
    (folder / f"results_{STAMP}.json").write_text(json.dumps(modern_results(model, accs, 1.0)), encoding="utf-8")
    for task, values in logged.items():
        lines = [{"doc_id": i, "doc": {"id": doc}, "acc": float(acc)} for i, (doc, acc) in enumerate(values.items())]
        _samples(folder / f"samples_{task}_{STAMP}.jsonl", lines)


def test_the_leaderboard_derives_las_from_the_three_runs_samples(tmp_path: Path) -> None:
    """The hand-computed example as three real-layout runs: the GEESE table's LAS cell is its LAS,
    with the test in its basis; a source without its explanation-only run gets no LAS column, and
    a run without samples files is named in the notes."""
    from custom_metrics.common.results import load_runs
    from custom_metrics.leaderboard.tables import build_tables

    without, with_hint, alone = ({doc: values[i] for doc, values in HAND.items()} for i in range(3))
    _run_folder(tmp_path, "org/m", {"geese_noexp": without, "geese_human": with_hint, "geese_human_only": alone})
    _run_folder(tmp_path, "org/llama", {"geese_noexp": without, "geese_llama3": with_hint})  # no _only run
    runs, problems = load_runs([tmp_path])
    assert problems == []
    (table,) = [table for table in build_tables(runs) if table.key == "geese"]
    assert [c.key for c in table.columns if c.metric == "las"] == ["geese_human/las"]
    keys = [c.key for c in table.columns]
    assert keys.index("geese_human/acc") < keys.index("geese_human/effectiveness") < keys.index("geese_human/las")
    row = next(row for row in table.rows if row.model == "org/m")
    assert row.cells["geese_human/las"].value == pytest.approx(5 / 24)
    assert row.cells["geese_human/effectiveness"].value == pytest.approx(1 / 10)
    assert "p = 0.438" in row.cells["geese_human/las"].basis

    (tmp_path / "org/m" / f"samples_geese_human_only_{STAMP}.jsonl").unlink()
    (table,) = [table for table in build_tables(load_runs([tmp_path])[0]) if table.key == "geese"]
    assert "geese_human/las" not in next(row for row in table.rows if row.model == "org/m").cells
    assert any("geese_human LAS needs the logged samples (--log_samples)" in note for note in table.notes)
