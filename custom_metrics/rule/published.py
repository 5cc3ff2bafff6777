"""RULE's published rows: Tables 2, 6 and 8 (a row per model and setting) and the InstructGPT rows of
Tables 3, 5, 7 and 9, read from the paper's tables as printed (``tables/*.csv``).

± is the std over the five test splits; the paper's ±0.00 for single-run settings and for the
zero-shot main questions (which the five splits share) is no spread at all, so those cells carry none.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from custom_metrics.common.published import PublishedCell, PublishedRow, read_table

TABLES = Path(__file__).with_name("tables")
PAPER = "RULE (Kawabata & Sugawara, EMNLP 2023)"
# Settings the paper ran once: their "±0.00" is no std at all.
SINGLE_RUN_SETTINGS = ("fully finetuned on ReClor", "majority vote of three annotators")
ZERO_SHOT = "zero-shot"
# "InstructGPT + CoT" is InstructGPT with chain-of-thought prompts: its own setting, so a CoT
# run compares with it and a plain run with plain InstructGPT.
_COT_MODEL = re.compile(r"^(?P<model>.+?)\s*\+\s*CoT$")
# The Appendix E split protocol: the few-shot rows are a mean over five runs, and each run of
# the suite leaves out the main questions its ReClor demonstrations show.
MAIN_QUESTIONS_NOTE = (
    "each run leaves out the main questions its ReClor demonstrations show (938 of 943 with five, 942 with "
    "one); the paper's Appendix E asks all 943 in every run"
)
# Documents behind Table 2's numbers where every row of a setting ran on all of them
# (zero-shot, fine-tuned, human): 943 main questions, 3,003 subquestions; none for the
# few-shot rows (a mean over five splits).
_PUBLISHED_N = {"rule/mainq_acc": 943, "rule/subq_acc": 3003, "rule/consistency": 943}
# Tables 2, 6 and 8 print one row per model under its setting, the columns after these the
# metrics. Table 6 prints Table 2's Human row again (kept once); Tables 6 and 8 give the "on
# RULE" "InstructGPT + CoT" row the numbers of their "on ReClor" one, as printed.
NAME_COLUMNS = ("setting", "model", "params")


def _table_rows(name: str, suffix: str = "", skip: frozenset[tuple[str, str]] = frozenset()) -> list[PublishedRow]:
    """The rows of Table ``name``, each setting followed by ``suffix``, less the (setting, printed
    row) pairs in ``skip``."""
    rows = []
    for line in read_table(TABLES / f"table_{name}.csv"):
        setting, model, params = (line[column] for column in NAME_COLUMNS)
        if (setting, line.printed("setting")) in skip:
            continue
        metrics = [column for column in line.cells if column not in NAME_COLUMNS]
        cells = {f"rule/{metric}": line.cell(metric, percent=True) for metric in metrics}
        if setting in SINGLE_RUN_SETTINGS:
            cells = {key: PublishedCell(value.value) for key, value in cells.items()}
        elif setting == ZERO_SHOT:  # the five splits share the main questions: their std is 0 by construction
            cells["rule/mainq_acc"] = PublishedCell(cells["rule/mainq_acc"].value)
        few_shot = setting.startswith(("five-shot", "one-shot"))
        cells = {key: replace(value, n=None if few_shot else _PUBLISHED_N.get(key)) for key, value in cells.items()}
        cot = _COT_MODEL.match(model)
        row_setting = (f"{setting}, CoT" if cot else setting) + suffix
        source = f"{PAPER} Table {name}, {setting}; model printed as {model!r}; # params {params}; ± = std over the 5 "
        source += "test splits" + (f"; {MAIN_QUESTIONS_NOTE}" if few_shot else "")
        rows.append(PublishedRow("rule", cot["model"] if cot else model, source, cells, setting=row_setting))
    return rows


# Tables 3, 5, 7 and 9 (InstructGPT, text-davinci-003) as printed, with the task and setting each
# row lands in. Table 3's "Avg." None Acc. pools the splits' subquestions (71 of 222); the suite's
# split row averages the five values instead.
ANALYSIS_TABLES = {
    "3": "subquestion accuracy and None accuracy (gold 'None of the above choices') per split",
    "5": "MainQ accuracy with rationales in the input",
    "7": "rationale alignment with (Yes) and without (No) the task instruction; (n) items",
    "9": "context-ablated accuracy; _gap to the full input",
}
NOTE_COLUMNS = ("# None in shot",)


def _analysis_rows() -> list[PublishedRow]:
    """One InstructGPT row per setting of Tables 3, 5, 7 and 9; a cell is the printed number
    before its count or gap."""
    rows: dict[str, PublishedRow] = {}
    for name, what in ANALYSIS_TABLES.items():
        for line in read_table(TABLES / f"table_{name}.csv"):
            _, *columns = [column for column in line.cells if column not in ("task", "setting")]  # after the row's name
            notes = "".join(f"; {column}: {line[column]}" for column in columns if column in NOTE_COLUMNS)
            source = f"{PAPER} Table {name}: {what}; InstructGPT (text-davinci-003){notes}"
            row = rows.setdefault(line["setting"], PublishedRow("rule", "InstructGPT", source, setting=line["setting"]))
            for metric in (column for column in columns if column not in NOTE_COLUMNS):
                row.cells[f"{line['task']}/{metric}"] = PublishedCell(line.number(metric, percent=True, leading=True))
    return list(rows.values())


def published_rows() -> list[PublishedRow]:
    """Table 2, Table 6 (less the rows Table 2 already has), Table 8 (its own settings) and the
    InstructGPT rows of Tables 3, 5, 7 and 9: every table of the paper that prints scores."""
    table_2 = read_table(TABLES / "table_2.csv")
    in_table_2 = frozenset((line["setting"], line.printed("setting")) for line in table_2)
    return [
        *_table_rows("2"),
        *_table_rows("6", skip=in_table_2),
        *_table_rows("8", suffix=" (Table 8)"),
        *_analysis_rows(),
    ]
