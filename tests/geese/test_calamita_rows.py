"""CALAMITA's own GEESE results (CALAMITA-AILC/calamita-eval, results/results.md: four models,
five tasks of its harness) as reference rows: transcribed as printed (checked against a verbatim
copy of the page's GEESE lines), one row per model, marked as the CALAMITA harness, never as
the paper, with no ± and no document count (the page prints neither)."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import custom_metrics.geese.published as geese_board
from custom_metrics.common.published import read_table
from custom_metrics.leaderboard.build import build_leaderboard
from tests.helpers import FIXTURES

PAGE = FIXTURES / "geese" / "calamita" / "results-geese.md"
TABLE = read_table(geese_board.TABLES / "calamita.csv")
MODELS = tuple(TABLE[0].cells)[1:]  # the file's columns after the task: CALAMITA's four models


def test_the_rows_are_the_pages_as_printed() -> None:
    header, _, *lines = PAGE.read_text(encoding="utf-8").splitlines()
    assert tuple(re.findall(r"\[([^\]]+)\]\(https://huggingface", header)) == MODELS
    printed = [[cell.strip().strip("*") for cell in line.split("|")[2:-2]] for line in lines]
    ours = [[row["task"].removeprefix("geese_"), *(row[model] for model in MODELS)] for row in TABLE]
    assert ours == [[task, *values] for task, metric, *values in printed if metric == "accuracy"]
    assert len(ours) == 5


def test_one_reference_row_per_model_marked_as_the_calamita_harness() -> None:
    rows = {row.model: row for row in geese_board.published_rows() if row.origin == "CALAMITA harness"}
    assert tuple(rows) == MODELS
    assert {task for row in rows.values() for task in row.cells} == {  # its tasks of no counterpart: columns
        f"{task}/acc" for task in (*geese_board.CALAMITA_TASKS, "geese_noexp")
    }
    big = rows["meta-llama/Llama-3.1-70B-Instruct"]
    assert {key: cell.value for key, cell in big.cells.items()} == {
        "geese_noexp/acc": Decimal("0.57"),
        "geese_anon_gold/acc": Decimal("0.82"),
        "geese_anon_llama/acc": Decimal("0.86"),
        "geese_anon_anita/acc": Decimal("0.89"),
        "geese_anon_dummy/acc": Decimal("0.61"),
    }
    for row in rows.values():
        assert row.setting == geese_board.CALAMITA_SETTING and "not the paper" in row.setting
        assert all(cell.pm is None for cell in row.cells.values()) and not any(k.endswith("/n") for k in row.cells)
        assert geese_board.CALAMITA_COMMIT[:7] in row.source and "not published" in row.source


def test_the_page_shows_them_beside_table_2(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    build_leaderboard([tmp_path / "runs"], tmp_path / "board", papers=["geese"])
    page = (tmp_path / "board" / "geese.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if "CALAMITA harness, not the paper | published" in line]
    assert {model for model in MODELS if any(f"| {model} |" in row for row in rows)} == set(MODELS)
    big = [row for row in rows if "| meta-llama/Llama-3.1-70B-Instruct |" in row]
    assert any("0.89" in row and "0.57" in row and "0.82" in row for row in big)  # the full table
    assert "geese_anon_anita" in page  # CALAMITA's task name: no task of ours
