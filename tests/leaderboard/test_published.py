"""The transcribed published rows: their table files checked against the papers' text when it is
at hand, read by the one reader (a malformed row is one error naming its file, line and field)."""

from __future__ import annotations

import os
import re
from decimal import Decimal
from pathlib import Path

import pytest

import custom_metrics.geese.published as geese_board
import custom_metrics.ibe.published as ibe_board
import custom_metrics.reg.published as reg_board
import custom_metrics.rule.published as rule_board
from custom_metrics.common.board_words import read_words
from custom_metrics.common.errors import DataError
from custom_metrics.common.published import PublishedCell, read_table
from ibe_postprocess.paper import TABLE_1 as IBE_TABLE_1


@pytest.fixture(scope="module")
def papers() -> Path:
    """The papers folder: $EXPLAIN_EVAL_PAPERS, else beside the data mirror; skip without it."""
    explicit = os.environ.get("EXPLAIN_EVAL_PAPERS")
    data = os.environ.get("EXPLAIN_EVAL_DATA")
    folder = Path(explicit) if explicit else Path(data).resolve().parent / "papers" if data else None
    if folder is None or not (folder / "rule.txt").is_file():
        pytest.skip("the papers are not available (set EXPLAIN_EVAL_PAPERS)")
    return folder


def test_geese_table_2_matches_paper(papers: Path) -> None:
    text = " ".join((papers / "geese.txt").read_text(encoding="utf-8").split())
    for row in read_table(geese_board.TABLES / "table_2.csv"):
        assert f"{row['Tasks']} 0 acc {row['acc']} {row['stderr']}" in text, row.printed()


def test_rule_table_2_matches_paper_row_by_row(papers: Path) -> None:
    text = (papers / "rule.txt").read_text(encoding="utf-8")
    body = text[text.index("Model\t# Param") : text.index("Table 2: Model performance")]
    paper_rows, paper_sections = [], []
    for raw in body.splitlines()[1:]:
        cells = raw.split("\t")
        if len(cells) == 1:
            if raw.strip():
                paper_sections.append((raw.strip(), len(paper_rows)))
            continue
        cells = [re.sub(r"\s*\$\{\}_\{\\pm ([0-9.]+)\\hphantom\{0\}\}\$", r"±\1", c).replace("_±", "±") for c in cells]
        paper_rows.append(" | ".join(c.strip() for c in cells))
    ours = read_table(rule_board.TABLES / "table_2.csv")
    assert [row.printed("setting") for row in ours] == paper_rows
    starts = [i for i, row in enumerate(ours) if i == 0 or row["setting"] != ours[i - 1]["setting"]]
    # The paper's four settings start where ours do; ours also separates the human row.
    assert starts[:4] == [start for _, start in paper_sections]
    assert starts[4] == len(paper_rows) - 1 and paper_rows[-1].startswith("Human")


def test_reg_tables_1_and_2_match_paper(papers: Path) -> None:
    text = (papers / "reg.md").read_text(encoding="utf-8")
    table_1 = text[text.index("| --- | --- | --- |") : text.index("##### Evaluation metrics")]
    for row in read_table(reg_board.TABLES / "table_1.csv"):
        assert f"| {row.printed()} |" in table_1
    table_2 = text[text.index("| Qwen 3.5 | Qwen3.5-0.8B") :]
    for row in read_table(reg_board.TABLES / "table_2.csv"):
        assert f"| {row.printed()} |" in table_2, row.printed()


def test_reg_table_3_matches_paper(papers: Path) -> None:
    text = (papers / "reg.md").read_text(encoding="utf-8")
    table_3 = text[text.index("Table 3: Comparison of mean output tokens") : text.index("We discuss results of our")]
    table_3 = table_3.replace("26B- A4B", "26B-A4B")  # a line break in the paper's cell
    transcribed = [row.printed() for row in read_table(reg_board.TABLES / "table_3.csv")]
    assert len(transcribed) == 13
    for line in transcribed:
        assert f"| {line} |" in table_3, line


def test_ibe_table_1_matches_paper(papers: Path) -> None:
    text = (papers / "ibe-eval.md").read_text(encoding="utf-8")
    table = text[text.index("| Baselines |") : text.index("Table 1: An ablation study")]
    for row in read_table(IBE_TABLE_1):
        assert f"| {row.printed()} |" in table, row.printed()


def test_published_rows_convert_percent_exactly() -> None:
    rule = {f"{row.model} ({row.setting})": row for row in rule_board.published_rows()}
    cell = rule["Flan-UL2 (zero-shot)"].cells["rule/subq_acc"]
    assert (cell.value, cell.pm) == (Decimal("0.657"), Decimal("0.052"))
    # Tables 2 and 6 (less its copy of Table 2's Human row), 8, then 3 (a row per split and the average), 5, 7, 9
    assert len(rule) == 28 + 50 + 46 + 6 + 4
    assert rule["Human (majority vote of three annotators)"].cells["rule/consistency"].value == Decimal("0.529")
    reg = {f"{row.model} ({row.setting})": row for row in reg_board.published_rows()}
    assert len(reg) == 26 + 9  # Tables 1-3 in both modes, and ChaosNLI's own model rows (reg_judge_humans)
    assert (
        reg["RoBERTa-large (fine-tuned on MNLI; ChaosNLI's paper, not REG's)"].origin == "ChaosNLI (Nie et al., 2020)"
    )
    assert reg["gpt-5.6-sol (thinking)"].cells["reg_chaos/effectiveness"].value == Decimal("0.7949")
    assert "reg_judge_select/answer_acc" not in reg["gpt-5.6-sol (thinking)"].cells
    # Table 3: token counts as printed (no percent), thinking rows only
    lengths = reg["Gemma-4-26B-A4B-it (thinking)"].cells
    assert lengths["reg_chaos/output_tokens_unsuccessful"].value == Decimal("3797.07")
    assert "reg_chaos/output_tokens_successful" not in reg["gpt-5.6-sol (non-thinking)"].cells
    ibe = {row.model: row for row in ibe_board.published_rows()}
    assert ibe["LLaMA 2 13B"].cells["ibe_copa_selection/human"].value == Decimal("1.0")
    # The paper's judge is GPT 3.5 for every generator: its numbers sit in rows named for it.
    assert ibe["GPT 3.5 judging LLaMA 2 7B's explanations"].cells["ibe_judge_ecare/acc"].value == Decimal(".52")
    assert not any(key.startswith("ibe_judge_") for model in ibe_board.IBE_MODELS for key in ibe[model].cells)
    geese, *_ = geese_board.published_rows()
    assert geese.cells["geese_llama3/acc"] == PublishedCell(Decimal("0.7812"), Decimal("0.0146"))


def test_geese_authors_repository_run_is_a_row_of_its_own(tmp_path: Path) -> None:
    """The authors' 800-doc whynot and implicit numbers (calamita-geese@de12d08), marked as
    their repository run and not Table 2, on the page beside Table 2's row."""
    import custom_metrics.leaderboard.build as leaderboard

    table_2, authors, *_ = geese_board.published_rows()
    assert table_2.setting == "zero-shot, M2" and "batch-size-24" in table_2.source
    assert "geese_llama3_whynot/acc" not in table_2.cells  # the paper printed none
    assert authors.cells["geese_llama3_whynot/acc"].value == Decimal("0.64875")
    assert authors.cells["geese_llama3_implicit/acc"].value == Decimal("0.58125")
    assert authors.cells["geese_llama3_implicit/n"].value == 800
    assert "not Table 2" in authors.setting and "results_2024-11-04T15-03-26.521608.json" in authors.source
    (tmp_path / "runs").mkdir()
    leaderboard.build_leaderboard([tmp_path / "runs"], tmp_path / "board", papers=["geese"])  # no run: asked for
    page = (tmp_path / "board" / "geese.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if "authors' repository run, not Table 2 | published" in line]
    assert any("0.64875 ±" in row and "0.58125 ±" in row for row in rows)  # every metric, exact digits
    # the summary: a reference (not ranked), named as the authors' repository run, never "paper"
    assert rows[0].startswith("| ref |") and "| published | authors' repository run |" in rows[0]
    assert "batch size 1 differs by 0.00125-0.00375" in page


def test_a_malformed_row_of_a_table_file_is_one_error_naming_its_file_line_and_field(tmp_path: Path) -> None:
    table = tmp_path / "table_2.csv"
    table.write_text("model,acc\nQwen3.5-0.8B,59.17\nQwen3.5-2B,62,28\n", encoding="utf-8")
    with pytest.raises(DataError, match=rf"^{re.escape(str(table))}:3: 3 cells, but the header names 2$"):
        read_table(table)
    table.write_text("model,acc\nQwen3.5-0.8B,59.17\nQwen3.5-2B,6x.28\n", encoding="utf-8")
    good, bad = read_table(table)
    assert good.cell("acc", percent=True) == PublishedCell(Decimal("0.5917"))
    with pytest.raises(DataError, match=rf"^{re.escape(str(table))}:3: field 'acc': '6x.28' is not a number \(or"):
        bad.cell("acc", percent=True)
    table.write_text("model,acc\nQwen3.5-0.8B, \n", encoding="utf-8")
    with pytest.raises(DataError, match=r"table_2.csv:2: field 'acc': ' ' is empty$"):
        read_table(table)
    table.write_text("model,model\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"table_2.csv:1: the header must name every column once"):
        read_table(table)


def test_a_malformed_words_file_is_one_error_naming_its_line_and_field(tmp_path: Path) -> None:
    words = tmp_path / "words.yaml"
    words.write_text("tasks:\n  reg_chaos: reconciling\nmetrics:\n  n:\n    lable: N items\n", encoding="utf-8")
    with pytest.raises(DataError, match=rf"^{re.escape(str(words))}:5: field n.lable: a metric has label or defin"):
        read_words(words)
    words.write_text("metrics:\n  reg_chaos/n:\n    label: N\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"words.yaml:3: field reg_chaos/n.label: a metric has definition only$"):
        read_words(words)
    words.write_text("tasks:\n  reg_chaos:\n    - a list\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"words.yaml:3: field reg_chaos: expected text$"):
        read_words(words)
    words.write_text("tasks: {reg_chaos: a, reg_chaos: b}\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"words.yaml:1: field tasks: a name given twice"):
        read_words(words)
    words.write_text("metrics:\n  n:\n    label: |N|\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"words.yaml:3: not YAML: expected chomping or indentation indicators"):
        read_words(words)
    words.write_text("metrics:\n  n:\n    label: '0.5'\n", encoding="utf-8")  # text as written, never a number
    assert read_words(words) == {"metric_labels": {"n": "0.5"}}
