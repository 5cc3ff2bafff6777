"""``explain-eval leaderboard RUN_DIR... --out DIR``: comparison tables of many harness runs, per
paper, beside the papers' published rows, as one self-contained folder (its files:
docs/comparing-models.md). A file that cannot be read is named and skipped; everything else is
still written.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from custom_metrics import __version__
from custom_metrics.common.errors import DataError
from custom_metrics.common.files import replaced_folder
from custom_metrics.common.leaderboard_types import Cell, Table
from custom_metrics.common.results import Problem, load_runs, rename
from custom_metrics.leaderboard.differences import Difference, paired_differences, row_label
from custom_metrics.leaderboard.display import Paths, visible
from custom_metrics.leaderboard.lineage import inherit
from custom_metrics.leaderboard.numbers import cell_text
from custom_metrics.leaderboard.page import write_site
from custom_metrics.leaderboard.procedures import EQUIVALENCE_MARGIN
from custom_metrics.leaderboard.registry import OTHER, PAPERS, paper_of
from custom_metrics.leaderboard.render import markdown, write_csv, write_differences_csv, write_json
from custom_metrics.leaderboard.samples import LoggedTask, read_logged_tasks
from custom_metrics.leaderboard.summary import Summary, build_summary
from custom_metrics.leaderboard.tables import build_tables, newest_runs, separate_batches, task_values

# Written into every site: ``--out`` is replaced whole only when it holds one (or nothing).
SITE_MARKER = ".explain-eval-leaderboard"


@dataclass
class Leaderboard:
    tables: list[Table]
    problems: list[Problem]
    written: list[Path]  # index.html first, then the sample viewer's index, then the rest
    logged: list[LoggedTask]
    differences: dict[str, list[Difference]]
    summaries: list[Summary]


class NoResults(DataError):
    """No input held a readable results file and no paper's published rows were asked for."""

    def __init__(self, message: str, problems: Sequence[Problem]) -> None:
        super().__init__(message)
        self.problems = list(problems)  # the files that were skipped, each named


def build_leaderboard(
    inputs: Sequence[Path],
    out: Path,
    names: Mapping[str, str] | None = None,
    papers: Sequence[str] = (),
    rank_published: bool = False,
    margin: float = EQUIVALENCE_MARGIN,
    all_pairs: bool = False,
) -> Leaderboard:
    """Read every run under ``inputs`` and write the leaderboard folder ``out``: a tab per paper
    with a run, and per paper of ``papers`` (its published rows) even without one; the other
    arguments are the options of ``main``.

    The site is written into a fresh folder that then takes the place of ``out`` whole: two
    runs on one ``out`` at once, or a run killed half-way, never leave a site mixed from two
    runs. ``out`` must be new, empty or a leaderboard folder (checked before any reading).
    Raises ``NoResults`` (``out`` untouched) when nothing was readable and no paper asked for.
    """
    with replaced_folder(out, _is_site, "leaderboard folder") as stage:
        runs, problems = load_runs(inputs)
        for spec in PAPERS:
            extra_runs, extra_problems = spec.board.read_extra(inputs)
            runs += extra_runs
            problems += extra_problems
        if not runs and not papers:
            skipped = f"; {len(problems)} file(s) skipped, named above" if problems else ""
            raise NoResults(
                f"no readable results under {', '.join(map(str, inputs))} (no results*.json of lm-eval, no report of "
                f"ibe_postprocess){skipped}: pass the folder lm_eval --output_path wrote, or --paper KEY to see a "
                "paper's published rows alone",
                problems,
            )
        # Names come from files anyone writes: their control and bidi characters made visible once, here.
        runs = [
            replace(run, model=visible(run.model), setting=visible(run.setting))
            for run in rename(inherit(runs), names or {})
        ]
        runs = separate_batches(runs)
        tables = build_tables(runs, papers)
        specs = {spec.key: spec for spec in (*PAPERS, OTHER)}
        chosen = newest_runs(runs).runs
        roots = [Path(p).resolve() for p in inputs]
        logged = read_logged_tasks(chosen, [paper_of(run.task) for run in chosen], roots)
        differences = {table.key: paired_differences(specs[table.key], logged) for table in tables}
        outcomes = {task.path: task.outcomes for task in logged}
        summaries = [
            build_summary(table, specs[table.key], outcomes, rank_published, differences[table.key], margin)
            for table in tables
        ]
        paths = Paths(inputs)
        pages = write_site(
            stage, tables, [specs[t.key] for t in tables], summaries, problems, logged, differences, inputs
        )
        for table, summary in zip(tables, summaries):  # each paper's exports, in rank order
            mine = differences[table.key]
            (stage / f"{table.key}.md").write_text(markdown(table, summary, problems, mine, paths), encoding="utf-8")
            write_csv(table, summary, stage / f"{table.key}.csv", paths)
            write_json(table, summary, mine, stage / f"{table.key}.json", paths)
            if mine:
                listed = mine if all_pairs else [d for d in mine if d.kind == "same run"]
                write_differences_csv(listed, stage / f"{table.key}_differences.csv", paths)
        index_md = "\n\n".join(
            markdown(table, summary, problems if i == 0 else (), differences[table.key], paths)
            for i, (table, summary) in enumerate(zip(tables, summaries))
        )
        (stage / "index.md").write_text(index_md, encoding="utf-8")
        (stage / SITE_MARKER).write_text(f"explain-eval {__version__} leaderboard\n", encoding="utf-8")
        written = [page.relative_to(stage) for page in pages]
        written += sorted(path.relative_to(stage) for path in stage.glob("*.*") if path not in pages)
    site = Path(os.path.realpath(out))
    return Leaderboard(tables, problems, [site / path for path in written], logged, differences, summaries)


def _is_site(folder: Path) -> bool:
    """Whether ``--out`` may be replaced: empty, or a leaderboard this command wrote before
    (marked, or of a version before the mark: its page, sample viewer and script)."""
    return (
        not any(folder.iterdir())
        or (folder / SITE_MARKER).is_file()
        or all((folder / name).is_file() for name in ("index.html", "samples/index.html", "assets/leaderboard.js"))
    )


# A task none of whose metrics is charted (GEESE M1's lengths, IBE's proof counts) shows its first few.
UNCHARTED_SHOWN = 3


def summary(board: Leaderboard) -> list[str]:
    """One line per model setting and task with its headline numbers (a task with no charted
    metric: its first ones), and why any is missing."""
    lines = []
    specs = {spec.key: spec for spec in (*PAPERS, OTHER)}
    for table in board.tables:
        spec = specs[table.key]
        for row in table.rows:
            if row.kind != "run":
                continue
            for task in dict.fromkeys(c.task for c in table.columns):
                values = task_values(row, task)
                mine = [c for c in table.columns if c.task == task and c.key in row.cells]
                shown = [c for c in mine if c.key in table.chart_keys] or mine[:UNCHARTED_SHOWN]
                if not shown:
                    continue
                numbers = ", ".join(f"{spec.board.metric_label(c.metric)} {_shown(row.cells[c.key])}" for c in shown)
                docs = values.get("#samples")
                subset = row.subsets.get(task)
                extra = f" (⚠ {subset})" if subset else f" ({docs.value:.0f} docs)" if docs else ""
                if row.config_differences.get(task):
                    extra += f" (⚑ not this suite's task config: {row.config_differences[task]})"
                remark = spec.board.remark(task, {k: c.value for k, c in values.items()})
                label = row_label(row.model, row.setting)
                lines.append(
                    f"{table.key.upper():6} {label} | {task}: {numbers}{extra}" + (f" — {remark}" if remark else "")
                )
    return lines


def _shown(cell: Cell) -> str:
    """A number for the terminal; NaN reads "undefined" (the line's remark says why)."""
    if cell.value is None:
        return "n/a"
    return "undefined" if math.isnan(cell.value) else cell_text(cell)


def parse_names(items: Sequence[str]) -> dict[str, str]:
    names = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise argparse.ArgumentTypeError(f"--name {item!r}: expected MODEL=NAME")
        names[key.strip()] = value.strip()
    return names


def _margin(text: str) -> float:
    """A margin δ: a share difference strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a share difference between 0 and 1, e.g. 0.03")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="explain-eval leaderboard",
        description="Per-paper comparison page (HTML, sample viewer) and tables (markdown, CSV) of lm-eval runs.",
    )
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (searched recursively) or results files")
    parser.add_argument("--out", type=Path, required=True, help="folder for the page and tables")
    parser.add_argument(
        "--name",
        action="append",
        default=[],
        metavar="MODEL=NAME",
        help="show MODEL (as the results record it, or as the page shows it) as NAME; repeatable",
    )
    parser.add_argument(
        "--paper",
        action="append",
        default=[],
        choices=[spec.key for spec in PAPERS],
        help="also show this paper's tab (its published rows) when no run is of its tasks; repeatable",
    )
    parser.add_argument(
        "--rank-published",
        action="store_true",
        help="rank the papers' published rows with the runs (by default they are references beside them)",
    )
    parser.add_argument(
        "--equivalence-margin",
        type=_margin,
        default=EQUIVALENCE_MARGIN,
        metavar="DELTA",
        help="δ of the reproduction verdict: a run's share is 'reproduced' when the 90%% interval of its "
        f"difference from the paper's lies inside ±DELTA (default {EQUIVALENCE_MARGIN:g})",
    )
    parser.add_argument(
        "--all-pairs",
        action="store_true",
        help="list every test between two runs in <paper>_differences.csv too (by default each run's tests within "
        "itself; the page shows any pair's tests on demand: their number grows with the square of the runs)",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a file had to be skipped")
    args = parser.parse_args(argv)
    try:
        names = parse_names(args.name)
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))
    missing = [path for path in args.runs if not path.exists()]
    if missing:
        print(
            f"explain-eval leaderboard: {', '.join(map(str, missing))}: no such file or folder "
            "(give the folders lm_eval --output_path wrote, or their results files)",
            file=sys.stderr,
        )
        return 2
    try:
        board = build_leaderboard(
            args.runs, args.out, names, args.paper, args.rank_published, args.equivalence_margin, args.all_pairs
        )
    except NoResults as error:
        for problem in error.problems:
            print(f"skipped {problem.path}: {problem.reason}", file=sys.stderr)
        print(f"explain-eval leaderboard: {error}", file=sys.stderr)
        return 1
    models = sorted({(row.model, row.setting) for table in board.tables for row in table.rows if row.kind == "run"})
    print(f"leaderboard: {len(models)} model setting(s) from {', '.join(map(str, args.runs))}")
    for line in summary(board):
        print(f"  {line}")
    for problem in board.problems:
        print(f"skipped {problem.path}: {problem.reason}", file=sys.stderr)
    if not models:
        print(
            f"no readable results found under {', '.join(map(str, args.runs))}: "
            f"the page holds the published rows of {', '.join(args.paper)} only",
            file=sys.stderr,
        )
    print(f"leaderboard page: {board.written[0].resolve()}")
    print(f"sample viewer:    {board.written[1].resolve()}")
    return 1 if args.strict and board.problems else 0
