"""The summary view of a paper: who is best, how far from the paper, is it significant
(docs/leaderboard.md, "The summary view").

One row per model and setting, one column per task's headline metric (``Board.headlines``),
each number with its 95% interval (``evidence``) and, on run rows, its Δ vs paper
(``versus_paper``). Rows fall in groups, each ranked on its own (``ranks``): **ranked** (full-data
runs), **limited** (runs on part of the data, or derived from such a run, e.g. an IBE selector
fitted on a ``--samples`` run) and **unranked** (no finite headline number). A row's rank is its
rank on the paper's main metric (the first headline that is not a sanity check), else on the
first headline it is ranked on, named beside it; the paper's rows are references unless
``rank_published``, and sanity checks are never ranked on. Rows are ordered your runs first (by
group), then the published rows, each block by the main metric: a newcomer's own numbers open
the page however many rows the paper prints.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from custom_metrics.common.leaderboard_types import Cell, Family, Headline, Row, Table
from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.leaderboard import procedures
from custom_metrics.leaderboard.differences import Difference, row_label
from custom_metrics.leaderboard.evidence import Evidence, Outcomes, paper_evidence, run_evidence
from custom_metrics.leaderboard.numbers import finite
from custom_metrics.leaderboard.ranks import rank_group
from custom_metrics.leaderboard.versus_paper import PaperDelta, adjust, paper_delta

RANKED, LIMITED, UNRANKED = "ranked", "limited", "unranked"
OTHER_FAMILY = "score"


@dataclass
class SummaryCell:
    headline: Headline
    key: str | None  # the table column that held the number (None: the row has none)
    cell: Cell | None
    limited: str | None = None  # how the run behind it was cut short
    delta: PaperDelta | None = None
    samples: Path | None = None  # the logged samples behind it
    config: str = ""  # how the run's task config differs from the suite's
    evidence: Evidence | None = None  # its items and 95% interval
    rank: int | None = None  # its rank on this column within the row's group (None: not ranked)
    tied: int = 0  # how many other rows share that rank
    compared: int = 0  # rows of its group a test compared it with on this column
    unranked: str = ""  # why it has no rank, where it has a number

    @property
    def task(self) -> str | None:
        return self.key.split("/", 1)[0] if self.key else None

    @property
    def value(self) -> float | None:
        return self.cell.value if self.cell is not None else None

    @property
    def interval(self):
        return self.evidence.interval if self.evidence is not None else None


@dataclass
class SummaryRow:
    row: Row
    cells: list[SummaryCell]
    group: str = UNRANKED
    rank: int | None = None  # the rank on the main metric, else on the first headline ranked
    rank_index: int | None = None  # the headline that rank is on
    contender: bool = True  # False: a reference row (the paper's), shown but not ranked

    @property
    def limited(self) -> bool:
        return self.group == LIMITED

    @property
    def config_differences(self) -> dict[str, str]:
        return {cell.task: cell.config for cell in self.cells if cell.config and cell.task}


@dataclass
class Summary:
    headlines: tuple[Headline, ...]  # those some row has a number for
    main: Headline | None
    families: Mapping[str, Family]
    rows: list[SummaryRow] = field(default_factory=list)
    rank_published: bool = False
    margin: float = procedures.EQUIVALENCE_MARGIN  # δ of the reproduction verdict

    @property
    def full_runs(self) -> bool:
        """Any full-data run ranked: then limited runs start hidden."""
        return any(r.row.kind == "run" and r.group == RANKED for r in self.rows)

    @property
    def tests(self) -> int:
        """How many Δ-vs-paper tests the summary shows (in families of one run row each)."""
        return sum(cell.delta.tested for entry in self.rows for cell in entry.cells if cell.delta is not None)


def build_summary(
    table: Table,
    spec: PaperSpec,
    outcomes: Outcomes | None = None,
    rank_published: bool = False,
    differences: Sequence[Difference] = (),
    margin: float = procedures.EQUIVALENCE_MARGIN,
) -> Summary:
    """The summary of one paper's table; ``differences`` are the tab's paired tests (their pair
    families' adjusted p rank the rows)."""
    published = [row for row in table.rows if row.kind == "published"]
    headlines, families = spec.board.headlines, spec.board.families
    if not headlines:  # tasks of no paper: each task's first charted metric
        headlines = tuple(Headline((key,), key.replace("/", " "), OTHER_FAMILY) for key in table.chart_keys)
        families = {OTHER_FAMILY: Family("Scores", "score as the harness reports it", None, None)}
    present = [
        h
        for h in headlines
        if any(k in row.cells and row.cells[k].value is not None for row in table.rows for k in h.keys)
    ]
    main = next((h for h in present if not h.sanity), None) if not spec.board.headlines else spec.board.main
    summary = Summary(
        tuple(present), main if main in present else None, families, rank_published=rank_published, margin=margin
    )
    for row in table.rows:
        cells = [_cell(spec, headline, row, published, outcomes or {}, margin) for headline in summary.headlines]
        if any(cell.key for cell in cells):
            summary.rows.append(SummaryRow(row, cells, contender=row.kind == "run" or rank_published))
    for entry in summary.rows:  # Holm within each run row's own tests against the paper: its stars rest on it alone
        cells = [cell for cell in entry.cells if cell.delta is not None]
        family = f"Δ vs paper of {row_label(entry.row.model, entry.row.setting)}"
        for cell, delta in zip(cells, adjust([cell.delta for cell in cells], family)):
            cell.delta = delta
    _rank(summary, differences)
    return summary


def _cell(
    spec: PaperSpec, headline: Headline, row: Row, published: Sequence[Row], outcomes: Outcomes, margin: float
) -> SummaryCell:
    key = next((key for key in headline.keys if key in row.cells and row.cells[key].value is not None), None)
    if key is None:
        return SummaryCell(headline, None, None)
    task = key.split("/", 1)[0]
    cell = row.cells[key]
    if row.kind == "run":
        evidence = run_evidence(spec, row, key, cell, outcomes)
        delta = paper_delta(spec, headline, row, key, published, evidence, margin)
    else:
        evidence, delta = paper_evidence(spec, row, key, cell), None
    return SummaryCell(
        headline,
        key,
        cell,
        limited=row.subsets.get(task),
        delta=delta,
        samples=row.samples.get(task),
        config=row.config_differences.get(task, ""),
        evidence=evidence,
    )


def _rank(summary: Summary, differences: Sequence[Difference]) -> None:
    main_index = summary.headlines.index(summary.main) if summary.main else None
    for entry in summary.rows:
        main = entry.cells[main_index] if main_index is not None else None
        limited = main.limited if main is not None and main.key else any(cell.limited for cell in entry.cells)
        entry.group = LIMITED if limited else RANKED if any(finite(cell.value) for cell in entry.cells) else UNRANKED
    order = [i for i, h in enumerate(summary.headlines) if not h.sanity]  # sanity checks never rank
    for group in (RANKED, LIMITED):
        members = [e for e in summary.rows if e.group == group and e.contender]
        rank_group(
            [row_label(e.row.model, e.row.setting) for e in members],
            [[e.cells[i] for i in order] for e in members],
            differences,
        )
    if main_index is not None:
        order = [main_index] + [i for i in order if i != main_index]
    for entry in summary.rows:  # a row without the main metric (REG's without success) on what it has
        entry.rank_index = next((i for i in order if entry.cells[i].rank is not None), main_index)
        entry.rank = entry.cells[entry.rank_index].rank if entry.rank_index is not None else None

    def main_value(entry: SummaryRow) -> float:
        value = entry.cells[main_index].value if main_index is not None else None
        return value if finite(value) else -math.inf

    order = {RANKED: 0, LIMITED: 1, UNRANKED: 2}
    summary.rows.sort(
        key=lambda e: (e.row.kind != "run", order[e.group], -main_value(e), e.row.model.lower(), e.row.setting)
    )
