"""Comparison tables of many harness runs, per paper, beside the papers' published rows.

``explain-eval leaderboard RUN_DIR... --out DIR`` reads every
``results*.json`` under the given folders (any harness version, any task) and the IBE
Table 1 reports that ``explain-eval ibe report`` writes, and renders one table per paper
(GEESE, RULE, REG, IBE) plus "other tasks": markdown, CSV, a self-contained HTML page and
a PNG bar chart each, and ``index.md``/``index.html`` with everything. How the tables are
built (newest run, derived columns, ±) is in ``custom_metrics.leaderboard.tables``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from custom_metrics.common.leaderboard_types import Table
from custom_metrics.common.results import Problem, load_runs
from custom_metrics.leaderboard.registry import PAPERS
from custom_metrics.leaderboard.render import write_outputs
from custom_metrics.leaderboard.tables import build_tables


def build_leaderboard(inputs: Sequence[Path], out: Path) -> tuple[list[Table], list[Problem], list[Path]]:
    """Read every run under ``inputs`` and write the tables to ``out``; returns what it did."""
    runs, problems = load_runs(inputs)
    for spec in PAPERS:
        if spec.read_extra is not None:
            extra_runs, extra_problems = spec.read_extra(inputs)
            runs += extra_runs
            problems += extra_problems
    tables = build_tables(runs)
    written = write_outputs(tables, problems, out)
    return tables, problems, written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="explain-eval leaderboard",
        description="Per-paper comparison tables (markdown, CSV, HTML, PNG) of lm-eval runs.",
    )
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (searched recursively) or results files")
    parser.add_argument("--out", type=Path, required=True, help="folder for the tables")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a file had to be skipped")
    args = parser.parse_args(argv)
    tables, problems, written = build_leaderboard(args.runs, args.out)
    models = sorted({row.model for table in tables for row in table.rows if row.kind == "run"})
    print(f"leaderboard: {len(models)} model(s) from {', '.join(map(str, args.runs))}")
    for problem in problems:
        print(f"skipped {problem.path}: {problem.reason}", file=sys.stderr)
    for path in written:
        print(f"  wrote {path}")
    if not models:
        print("no readable results found: the tables hold the published rows only", file=sys.stderr)
    return 1 if args.strict and problems else 0
