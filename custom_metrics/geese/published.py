"""GEESE's published rows, read from the tables as printed (``tables/*.csv``): Table 2's row, the
authors' repository run of all six hints (the only published 800-doc numbers for whynot and
implicit) and CALAMITA's harness results for four models."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from custom_metrics.common.published import PublishedCell, PublishedRow, read_table

TABLES = Path(__file__).with_name("tables")
SOURCE = "GEESE (Zaninello & Magnini, CLiC-it 2024) Table 2"
# Table 2 ("Results for the 0-shot baseline experiments on the full test set", M2 = Llama-3-8B,
# zero-shot, 800 test items) is the authors' batch-size-24 run (calamita-geese@de12d08, scripts/
# prediction_output/meta-llama__Meta-Llama-3-8B/results_2024-11-04T17-03-27.790181.json: .54375,
# .585, .7575, .78125). Their batch-size-1 runs of the same template differ by 1 to 3 of the 800
# documents (0.00125 to 0.00375, bf16 arithmetic).
BATCH_NOTE = "Table 2 is the authors' batch-size-24 run; batch size 1 differs by 0.00125-0.00375 (1-3 of 800 docs)"
# The authors' repository run of all six hints, not in the paper (800 docs, bf16, batch size 1,
# the Table 2 template), as its results file prints them: its whynot and implicit rows are the
# only published 800-doc numbers for those hints.
AUTHORS_RUN_FILE = "results_2024-11-04T15-03-26.521608.json"
AUTHORS_RUN_SETTING = "zero-shot, M2; authors' repository run, not Table 2"
# CALAMITA's own GEESE tasks (the Table 2 template on azaninello/e-rte-3-it_4_calamita_v1.0) and
# the four models its results page reports, as printed (no stderr, no n). Its task names but
# geese_noexp are its own (CALAMITA_TASKS: columns of their own).
CALAMITA_COMMIT = "54c1a80f6e9114d284182365b96a05192107001d"
CALAMITA_SETTING = "zero-shot, M2; CALAMITA harness, not the paper"
CALAMITA_TASKS = ("geese_anon_anita", "geese_anon_dummy", "geese_anon_gold", "geese_anon_llama")


def _cells(name: str) -> dict[str, PublishedCell]:
    """A table of task | acc | stderr over the 800 test documents."""
    rows = read_table(TABLES / name)
    cells = {f"{row['Tasks']}/acc": PublishedCell(row.number("acc"), row.number("stderr")) for row in rows}
    return cells | {f"{row['Tasks']}/n": PublishedCell(Decimal(800)) for row in rows}


def calamita_rows() -> list[PublishedRow]:
    """One row per model of CALAMITA's results page, its GEESE cells as printed (no ±, no n)."""
    source = (
        f"CALAMITA harness results (CALAMITA-AILC/calamita-eval@{CALAMITA_COMMIT[:7]}, results/results.md, "
        "GEESE rows; tasks/geese on azaninello/e-rte-3-it_4_calamita_v1.0): M2 = {model}, zero-shot; two decimals "
        "as printed, no stderr; the number of documents is not published (the dataset is on the Hub only)"
    )
    lines = read_table(TABLES / "calamita.csv")
    return [
        PublishedRow(
            "geese",
            model,
            source.format(model=model),
            {f"{line['task']}/acc": PublishedCell(line.number(model)) for line in lines},
            setting=CALAMITA_SETTING,
            origin="CALAMITA harness",
        )
        for model in list(lines[0].cells)[1:]  # the columns after the task: a model each
    ]


def published_rows() -> list[PublishedRow]:
    table_2 = f"{SOURCE}; M2 = Llama-3-8B, zero-shot, full test set; ± = stderr; {BATCH_NOTE}"
    authors = (
        f"GEESE authors' repository run, not Table 2 (andreazaninello/calamita-geese@de12d08, "
        f"scripts/prediction_output/meta-llama__Meta-Llama-3-8B/{AUTHORS_RUN_FILE}): M2 = Llama-3-8B, zero-shot, "
        "800 docs, batch size 1; ± = stderr"
    )
    return [
        PublishedRow("geese", "Llama-3-8B", table_2, _cells("table_2.csv"), setting="zero-shot, M2", pm_is_se=True),
        PublishedRow(
            "geese",
            "Llama-3-8B",
            authors,
            _cells("authors_run.csv"),
            setting=AUTHORS_RUN_SETTING,
            origin="authors' repository run",
            pm_is_se=True,
        ),
        *calamita_rows(),
    ]
