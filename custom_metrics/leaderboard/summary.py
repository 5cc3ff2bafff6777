"""The summary view of a paper: who is best, how far from the paper, is it significant.

One row per model and setting (runs and the paper's rows), one column per task's
headline metric (``PaperSpec.headlines``), each number with its 95% interval (``evidence``)
and, on run rows, its Δ vs paper (``versus_paper``). Rows fall in groups:

- **ranked**: full-data runs, with the paper's rows beside them as references;
- **limited**: runs on part of the data (``--limit``/``--samples``, or derived from such a
  run, e.g. an IBE selector fitted on a ``--samples`` run), ranked among themselves;
- **unranked**: rows with no finite headline number (NaN), by name.

Ranks, as LMSYS Chatbot Arena ranks: per column, a row's rank is 1 + the number of rows of
its group whose 95% interval lies wholly above its own, so rows whose intervals overlap share
a rank (1, 1, 3), and every row gets a rank on each column it has a number and an interval
for. The rank of a row is its rank on the paper's main metric (the first headline that is not
a sanity check). The paper's rows are references, not contenders, unless asked for
(``rank_published``); sanity checks (GEESE's hint = gold label) are never ranked on.
Rows are ordered by the main metric (rows without it after, by name); the page re-sorts.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from custom_metrics.common.leaderboard_types import Cell, Family, Headline, PaperSpec, Row, Table
from custom_metrics.leaderboard.evidence import Evidence, Outcomes, paper_evidence, run_evidence
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
    rank: int | None = None  # the rank on the main metric
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

    @property
    def full_runs(self) -> bool:
        """Any full-data run ranked: then limited runs start hidden."""
        return any(r.row.kind == "run" and r.group == RANKED for r in self.rows)

    @property
    def deltas(self) -> list[PaperDelta]:
        return [cell.delta for entry in self.rows for cell in entry.cells if cell.delta is not None]

    @property
    def tests(self) -> int:
        """How many Δ-vs-paper tests the summary shows (the family Holm adjusts over)."""
        return sum(delta.tested for delta in self.deltas)


def build_summary(
    table: Table, spec: PaperSpec, outcomes: Outcomes | None = None, rank_published: bool = False
) -> Summary:
    """The summary of one paper's table; ``outcomes`` are the logged per-document outcomes by samples file."""
    published = [row for row in table.rows if row.kind == "published"]
    headlines, families = spec.headlines, spec.families
    if not headlines:  # tasks of no paper: each task's first charted metric
        headlines = tuple(Headline((key,), key.replace("/", " "), OTHER_FAMILY) for key in table.chart_keys)
        families = {OTHER_FAMILY: Family("Scores", "score as the harness reports it", None, None)}
    present = [
        h
        for h in headlines
        if any(k in row.cells and row.cells[k].value is not None for row in table.rows for k in h.keys)
    ]
    main = next((h for h in present if not h.sanity), None) if not spec.headlines else spec.main
    summary = Summary(tuple(present), main if main in present else None, families, rank_published=rank_published)
    for row in table.rows:
        cells = [_cell(spec, headline, row, published, outcomes or {}) for headline in summary.headlines]
        if any(cell.key for cell in cells):
            summary.rows.append(SummaryRow(row, cells, contender=row.kind == "run" or rank_published))
    _adjust(summary)
    _rank(summary)
    return summary


def _cell(spec: PaperSpec, headline: Headline, row: Row, published: Sequence[Row], outcomes: Outcomes) -> SummaryCell:
    key = next((key for key in headline.keys if key in row.cells and row.cells[key].value is not None), None)
    if key is None:
        return SummaryCell(headline, None, None)
    task = key.split("/", 1)[0]
    cell = row.cells[key]
    if row.kind == "run":
        evidence = run_evidence(spec, row, key, cell, outcomes)
        delta = paper_delta(spec, headline, row, key, published, evidence)
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


def _adjust(summary: Summary) -> None:
    """Holm over every Δ-vs-paper test of the tab: one family."""
    cells = [cell for entry in summary.rows for cell in entry.cells if cell.delta is not None]
    for cell, delta in zip(cells, adjust([cell.delta for cell in cells])):
        cell.delta = delta


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _rank(summary: Summary) -> None:
    main_index = summary.headlines.index(summary.main) if summary.main else None
    for entry in summary.rows:
        main = entry.cells[main_index] if main_index is not None else None
        has_value = any(_finite(cell.value) for cell in entry.cells)
        limited = main.limited if main is not None and main.key else any(cell.limited for cell in entry.cells)
        entry.group = LIMITED if limited else RANKED if has_value else UNRANKED
    for group in (RANKED, LIMITED):
        members = [e for e in summary.rows if e.group == group]
        for index, headline in enumerate(summary.headlines):
            if not headline.sanity:
                _rank_column([e.cells[index] for e in members if e.contender])
    for entry in summary.rows:
        entry.rank = entry.cells[main_index].rank if main_index is not None else None

    def main_value(entry: SummaryRow) -> float:
        value = entry.cells[main_index].value if main_index is not None else None
        return value if _finite(value) else -math.inf

    order = {RANKED: 0, LIMITED: 1, UNRANKED: 2}
    summary.rows.sort(
        key=lambda e: (order[e.group], -main_value(e), e.row.kind != "run", e.row.model.lower(), e.row.setting)
    )


def _rank_column(cells: list[SummaryCell]) -> None:
    """Arena ranks on one column: 1 + the cells whose interval lies wholly above this one's."""
    ranked = [cell for cell in cells if _finite(cell.value) and cell.interval is not None]
    lows = sorted(cell.interval.low for cell in ranked)
    for cell in ranked:
        above = len(lows) - bisect_right(lows, cell.interval.high)  # lows above this high
        cell.rank = 1 + above
    counts: dict[int, int] = {}
    for cell in ranked:
        counts[cell.rank] = counts.get(cell.rank, 0) + 1
    for cell in ranked:
        cell.tied = counts[cell.rank] - 1
