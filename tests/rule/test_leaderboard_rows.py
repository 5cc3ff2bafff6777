"""RULE's new settings on the leaderboard: one-shot and chain-of-thought split runs become one
row per setting beside the paper's Table 6 / CoT rows, the five-prompt tasks a five-shot row
beside Tables 5, 7 and 9; and those tables are transcribed as printed (checked against the
paper's text when it is at hand)."""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal
from pathlib import Path

import pytest

import custom_metrics.rule.leaderboard as rule_board
import custom_metrics.rule.published as rule_tables
from custom_metrics.common.published import read_table
from custom_metrics.common.results import load_runs
from custom_metrics.leaderboard.tables import build_tables
from custom_metrics.leaderboard.versus_paper import paper_row
from custom_metrics.rule.metrics import TABLE8_METRICS
from custom_metrics.rule.protocol import task_name


def results_file(folder: Path, name: str, scores: dict[str, dict[str, float]], date: float) -> None:
    data = {
        "results": {
            task: {f"{metric},none": value for metric, value in values.items()} for task, values in scores.items()
        },
        "n-samples": {task: {"original": 1500, "effective": 1500} for task in scores},
        "config": {"model": "hf", "model_args": {"pretrained": "org/model"}, "limit": None},
        "model_name": "org/model",
        "date": date,
        "lm_eval_version": "0.4.13",
    }
    (folder / f"results_{name}.json").write_text(json.dumps(data))


def rule_table(folder: Path):
    return next(table for table in build_tables(load_runs([folder])[0]) if table.key == "rule")


def test_one_shot_and_cot_splits_are_rows_of_their_settings(tmp_path: Path) -> None:
    for split, (plain, cot) in enumerate([(0.5, 0.25), (0.75, 0.75)], start=1):
        scores = {
            task_name(1, split, "reclor"): {"mainq_acc": plain},
            task_name(1, split, "cot"): {"mainq_acc": cot, "unparsed": 0.1 * split},
        }
        results_file(tmp_path, str(split), scores, float(split))
    table = rule_table(tmp_path)
    rows = {(row.model, row.setting): row for row in table.rows}
    one_shot = rows["org/model", "one-shot on ReClor (2 of 5 splits)"].cells["rule/mainq_acc"]
    cot = rows["org/model", "one-shot on ReClor, CoT (2 of 5 splits)"]
    assert (one_shot.value, one_shot.pm) == (0.625, 0.125)
    assert (cot.cells["rule/mainq_acc"].value, cot.cells["rule/unparsed"].value) == (0.5, pytest.approx(0.15))
    notes = "\n".join(table.notes)
    assert "--shots 1 --demos cot --summarize-only" in notes
    assert "938 of 943 with five, 942 with one" in notes and "Appendix E asks all 943" in notes
    # a chain-of-thought run compares with "InstructGPT + CoT" of its setting, a plain run with InstructGPT
    spec, published = rule_board.SPEC, [row for row in table.rows if row.kind == "published"]
    for row, setting in (
        (cot, "one-shot on ReClor, CoT"),
        (rows["org/model", "one-shot on ReClor (2 of 5 splits)"], "one-shot on ReClor"),
    ):
        found, key, same_model = paper_row(spec, spec.board.headlines[1], row, published)
        assert (found.model, found.setting, key, same_model) == ("InstructGPT", setting, "rule/mainq_acc", False)
    paper_cot = rows["InstructGPT", "one-shot on ReClor, CoT"].cells["rule/mainq_acc"]
    assert (paper_cot.text, paper_cot.pm_text) == ("0.643", "0.025")


def test_five_prompt_tasks_are_a_five_shot_row_beside_tables_5_7_and_9(tmp_path: Path) -> None:
    scores = {
        "rule_5shot_alignment": {"correct_option_acc": 0.8, "incorrect_option_acc": 0.3},
        "rule_5shot_rationale_both": {"mainq_acc": 0.6},
        "rule_5shot_noctx": {"mainq_acc": 0.4},
        "rule_alignment": {"correct_option_acc": 0.7},
    }
    results_file(tmp_path, "1", scores, 1.0)
    rows = {(row.model, row.setting): row for row in rule_table(tmp_path).rows}
    five = rows["org/model", rule_board.FIVE_PROMPTS]
    assert set(five.cells) >= {"rule_5shot_alignment/correct_option_acc", "rule_5shot_noctx/mainq_acc"}
    assert "rule_alignment/correct_option_acc" in rows["org/model", "zero-shot"].cells  # zero-shot, said so
    labels = rule_board.SPEC.board.task_labels
    assert "zero-shot" in labels["rule_alignment"] and "five-shot" in labels["rule_rationale_both"]
    assert labels["rule_1shot_cot_split3"] == "one-shot on ReClor, CoT, run 3"  # the split tasks' labels
    table_7 = rows["InstructGPT", "five-shot, five prompts (Table 7)"].cells
    assert table_7["rule_5shot_alignment_noinstr/incorrect_option_acc"].text == "0.281"
    assert rows["InstructGPT", "five-shot (Table 5)"].cells["rule_5shot_rationale_both/mainq_acc"].text == "0.896"
    assert rows["InstructGPT", "zero-shot (Table 9)"].cells["rule_noctx/subq_acc"].text == "0.588"
    assert rows["InstructGPT", "five-shot (Table 9)"].cells["rule_5shot_noctx/eliminative_acc"].text == "0.647"


def test_table_6_rows_are_the_papers_settings() -> None:
    rows = {(row.model, row.setting): row for row in rule_tables.published_rows()}
    assert rows["LLaMA 65B", "one-shot on ReClor"].cells["rule/consistency"].value == Decimal("0.094")
    assert rows["UnifiedQA-v2-11B", "one-shot on RULE, for reference"].cells["rule/subq_acc"].pm == Decimal("0.117")
    assert rows["InstructGPT", "five-shot on ReClor, CoT"].cells["rule/mainq_acc"].value == Decimal("0.678")
    assert (
        "rule/mainq_acc" in rows["LLaMA2 7B", "zero-shot"].cells
        and not rows["LLaMA2 7B", "zero-shot"].cells["rule/mainq_acc"].pm
    )  # the zero-shot main questions have no spread
    humans = [row.setting for row in rule_tables.published_rows() if row.model == "Human"]
    assert humans == ["majority vote of three annotators", "majority vote of three annotators (Table 8)"]  # Table 6's
    # copy of Table 2's row is kept once; Table 8's is another metric


def test_tables_3_and_8_are_reference_rows_of_their_own() -> None:
    rows = {(row.model, row.setting): row for row in rule_tables.published_rows()}
    split_3 = rows["InstructGPT", "five-shot on RULE, split 3 (Table 3)"]
    assert {key: cell.value for key, cell in split_3.cells.items()} == {
        "rule/subq_acc": Decimal("0.729"),
        "rule/none_acc": Decimal("0"),
    }
    assert "# None in shot: 0" in split_3.source and "Table 3" in split_3.source
    average = rows["InstructGPT", "five-shot on RULE, 5 splits (Table 3)"]
    assert average.cells["rule/none_acc"].value == Decimal("0.32") and "# None in shot: 0.4" in average.source
    deberta = rows["DeBERTa-v3-Large", "fully finetuned on ReClor (Table 8)"].cells
    assert deberta["rule/mainq_acc"].value == Decimal("0.66") and not deberta["rule/mainq_acc"].pm
    assert deberta["rule/consistency_mainq_correct"].value == Decimal("0.037")  # Table 2 prints 2.4
    cot = rows["InstructGPT", "five-shot on ReClor, CoT (Table 8)"].cells
    selective = cot["rule/selective_acc_mainq_correct"]
    assert (selective.value, selective.pm) == (Decimal("0.895"), Decimal("0.042"))
    table_8 = [row for row in rule_tables.published_rows() if row.setting.endswith("(Table 8)")]
    columns = {f"rule/{m}" for m in ("mainq_acc", *TABLE8_METRICS)}  # MainQ as in Table 2, the rest Table 8's
    assert len(table_8) == 46 and all(set(row.cells) == columns for row in table_8)
    assert "rule/subq_acc" not in {key for row in table_8 for key in row.cells}  # never compared with Table 2's


@pytest.fixture(scope="module")
def paper() -> str:
    """The paper's text: $EXPLAIN_EVAL_PAPERS, else beside the data mirror; skip without it."""
    explicit, data = os.environ.get("EXPLAIN_EVAL_PAPERS"), os.environ.get("EXPLAIN_EVAL_DATA")
    folder = Path(explicit) if explicit else Path(data).resolve().parent / "papers" if data else None
    if folder is None or not (folder / "rule.txt").is_file():
        pytest.skip("the papers are not available (set EXPLAIN_EVAL_PAPERS)")
    return (folder / "rule.txt").read_text(encoding="utf-8")


def _paper_rows(body: str) -> list[str]:
    """A table's rows as the transcriptions write them: cells joined by " | ", ± as printed."""
    rows = []
    for raw in body.splitlines():
        cells = raw.split("\t")
        if len(cells) > 1:
            cells = [
                re.sub(r"\s*\$\{\}_\{\\pm ([0-9.]+)\\hphantom\{0\}\}\$", r"±\1", c).replace("_±", "±") for c in cells
            ]
            rows.append(" | ".join(c.strip() for c in cells))
    return rows


def test_table_8_matches_the_paper_row_by_row(paper: str) -> None:
    table_8 = paper[paper.rindex("Model\t# Param", 0, paper.index("Table 8:")) : paper.index("Table 8:")]
    rows = read_table(rule_tables.TABLES / "table_8.csv")
    ours = [row.printed("setting") for row in rows]
    assert ours == _paper_rows(table_8)[1:] and len(ours) == 46
    sections = [line.strip() for line in table_8.splitlines()[1:] if line.strip() and "\t" not in line]
    assert sections == [
        "Fully Finetuned on ReClor",
        "Five-Shot on ReClor",
        "Five-Shot on RULE (for reference)",
        "Zero-Shot",
    ]
    settings = list(dict.fromkeys(row["setting"] for row in rows))
    assert settings == [
        "fully finetuned on ReClor",
        "five-shot on ReClor",
        "five-shot on RULE, for reference",
        "zero-shot",
        "majority vote of three annotators",  # the Human row, as Table 2 separates it
    ]


def test_tables_6_3_5_7_and_9_match_the_paper_row_by_row(paper: str) -> None:
    header = "\t".join(["Model", "# Param", "MainQ Acc.", "SubQ Acc.", "Selective SubQ Acc.", "Eliminative SubQ Acc."])
    table_6 = paper[paper.index(f"{header}\tConsist.\tMainQ-wise Acc.") : paper.index("Table 6:")]
    ours = [row.printed("setting") for row in read_table(rule_tables.TABLES / "table_6.csv")]
    assert ours == _paper_rows(table_6)[1:]
    sections = [line.strip() for line in table_6.splitlines()[1:] if line.strip() and "\t" not in line]
    assert sections == [
        "Five-Shot on ReClor",
        "One-Shot on ReClor",
        "Five-Shot on RULE (for reference)",
        "One-Shot on RULE (for reference)",
        "Zero-Shot",
    ]
    for name in rule_tables.ANALYSIS_TABLES:
        before = paper[: paper.index(f"Table {name}:")].rstrip("\n")
        body = before[before.rindex("\n\n") :]  # the table printed right above its caption
        ours = [row.printed("task", "setting") for row in read_table(rule_tables.TABLES / f"table_{name}.csv")]
        assert ours == _paper_rows(body)[1:], name
