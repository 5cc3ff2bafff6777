"""The summary view of a paper: who is best, how far from the paper, is it significant.

One row per model and setting (runs and the paper's rows), one column per task's
headline metric (``PaperSpec.headlines``), ranked by the paper's main metric (the first
headline that is not a sanity check):

- **ranked**: full runs and published rows with a main-metric value, best first; equal
  values share a rank (1, 2, 2, 4);
- **limited**: runs whose main metric (or, without one, any headline) comes from a run cut
  short by ``--limit``/``--samples``, or derived from one (an IBE selector fitted on a
  ``--samples`` run): ranked among themselves, after the full rows, never mixed with them;
- **unranked**: rows without a main-metric value (NaN included), by name.
Sanity checks (GEESE's hint = gold label) are shown, never ranked on.
Each run cell carries its Δ vs paper (``versus_paper``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from custom_metrics.common.leaderboard_types import Cell, Family, Headline, PaperSpec, Row, Table
from custom_metrics.leaderboard.versus_paper import PaperDelta, paper_delta

RANKED, LIMITED, UNRANKED = "ranked", "limited", "unranked"
OTHER_FAMILY = "score"


@dataclass(frozen=True)
class SummaryCell:
    headline: Headline
    key: str | None  # the table column that held the number (None: the row has none)
    cell: Cell | None
    limited: str | None = None  # how the run behind it was cut short
    delta: PaperDelta | None = None
    samples: Path | None = None  # the logged samples behind it
    config: str = ""  # how the run's task config differs from the suite's

    @property
    def task(self) -> str | None:
        return self.key.split("/", 1)[0] if self.key else None

    @property
    def value(self) -> float | None:
        return self.cell.value if self.cell is not None else None


@dataclass
class SummaryRow:
    row: Row
    cells: list[SummaryCell]
    group: str = UNRANKED
    rank: int | None = None

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

    @property
    def full_runs(self) -> bool:
        """Any full-data run ranked: then limited runs start hidden."""
        return any(r.row.kind == "run" and r.group == RANKED for r in self.rows)


def build_summary(
    table: Table, spec: PaperSpec, outcomes: Mapping[Path, Mapping[str, Mapping[str, float]]] | None = None
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
    summary = Summary(tuple(present), main if main in present else None, families)
    for row in table.rows:
        cells = [_cell(spec, headline, row, published, outcomes or {}) for headline in summary.headlines]
        if any(cell.key for cell in cells):
            summary.rows.append(SummaryRow(row, cells))
    _rank(summary)
    return summary


def _cell(
    spec: PaperSpec,
    headline: Headline,
    row: Row,
    published: Sequence[Row],
    outcomes: Mapping[Path, Mapping[str, Mapping[str, float]]],
) -> SummaryCell:
    key = next((key for key in headline.keys if key in row.cells and row.cells[key].value is not None), None)
    if key is None:
        return SummaryCell(headline, None, None)
    task = key.split("/", 1)[0]
    delta = paper_delta(spec, headline, row, key, published, outcomes) if row.kind == "run" else None
    return SummaryCell(
        headline,
        key,
        row.cells[key],
        limited=row.subsets.get(task),
        delta=delta,
        samples=row.samples.get(task),
        config=row.config_differences.get(task, ""),
    )


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _rank(summary: Summary) -> None:
    main_index = summary.headlines.index(summary.main) if summary.main else None
    for entry in summary.rows:
        main = entry.cells[main_index] if main_index is not None else None
        if main is not None and _finite(main.value):
            entry.group = LIMITED if main.limited else RANKED
        elif any(cell.limited for cell in entry.cells):
            entry.group = LIMITED
    order = {RANKED: 0, LIMITED: 1, UNRANKED: 2}

    def main_value(entry: SummaryRow) -> float:
        value = entry.cells[main_index].value if main_index is not None else None
        return value if _finite(value) else -math.inf

    summary.rows.sort(
        key=lambda e: (order[e.group], -main_value(e), e.row.kind != "run", e.row.model.lower(), e.row.setting)
    )
    for group in (RANKED, LIMITED):
        members = [e for e in summary.rows if e.group == group and main_value(e) > -math.inf]
        for position, entry in enumerate(members, start=1):
            previous = members[position - 2] if position > 1 else None
            tied = previous is not None and main_value(previous) == main_value(entry)
            entry.rank = previous.rank if tied and previous.rank else position
