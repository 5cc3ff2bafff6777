"""The paired tests between runs, in one small file per row, for the pair picker.

Why: the tests between runs are one per pair of rows, task and outcome, so their number
grows with the square of the runs (45,000 pairs at 300 runs). Written as one table in
the long view they made a 68.5 MB script that took 20 s to open; nobody reads 45,000
lines, they ask "is A better than B". So the long view holds a picker of two rows, and
each row ``i`` has a file ``panels/<paper>.pairs/<i>.js`` with its tests against every
later row (in the picker's order), loaded when that row is picked: a file grows with the
runs, the page does not. Each test is stored as the page prints it (``numbers``), once,
as A − B with A the earlier row; the page swaps the sides when B is picked first.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.leaderboard.differences import Difference
from custom_metrics.leaderboard.numbers import format_number, interval_text, p_digits, signed
from custom_metrics.leaderboard.script_data import write_script_data

FOLDER = "{key}.pairs"  # under the site's panels folder
# One stored test: indices into the file's outcome and test lists, then the printed numbers.
FIELDS = ("outcome", "docs", "mean A", "mean B", "A − B", "95% CI", "test", "p", "p (Holm)", "family", "significant")


def pair_rows(differences: Sequence[Difference]) -> list[str]:
    """The rows the picker offers: every row in a test between two runs, in label order."""
    return sorted({side for d in differences if d.kind == "two runs" for side in (d.a, d.b)})


def write_pair_shards(key: str, spec: PaperSpec, differences: Sequence[Difference], panels: Path) -> list[str]:
    """One file per picker row (see the module docstring); returns the picker's rows."""
    rows = pair_rows(differences)
    index = {label: i for i, label in enumerate(rows)}
    shards: list[dict[str, list]] = [{} for _ in rows]
    outcomes: dict[tuple[str, str], int] = {}
    tests: dict[str, int] = {}
    for d in differences:
        if d.kind != "two runs":
            continue
        first, second = sorted((index[d.a], index[d.b]))
        flipped = index[d.a] != first  # stored as the earlier row − the later one
        r = d.result
        outcome = outcomes.setdefault((spec.board.task_label(d.task), spec.board.metric_label(d.metric)), len(outcomes))
        test = tests.setdefault(r.test, len(tests))
        mean_a, mean_b = (r.mean_b, r.mean_a) if flipped else (r.mean_a, r.mean_b)
        low, high = (-r.high, -r.low) if flipped and r.low is not None else (r.low, r.high)
        shards[first].setdefault(str(second), []).append(
            [
                outcome,
                r.n,
                format_number(mean_a),
                format_number(mean_b),
                signed(-r.difference if flipped else r.difference),
                interval_text(low, high, signed_values=True) or f"none: {r.no_interval}",
                test,
                p_digits(r.p_value),
                p_digits(r.p_adjusted),
                r.family,
                int(r.significant),
            ]
        )
    folder = panels / FOLDER.format(key=key)
    labels = [list(pair) for pair in outcomes]
    for i, pairs in enumerate(shards):
        value = {"fields": FIELDS, "outcomes": labels, "tests": list(tests), "pairs": pairs}
        write_script_data(folder / f"{i}.js", f"pairs:{key}:{i}", value)
    return rows
