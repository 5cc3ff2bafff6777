"""First paint of the leaderboard page, before and after a change, on the same machine in one run.

    python -m bench.leaderboard_paint --runs runs/demo [--before-commit b09921c] [--repeats 7]
    python -m bench.leaderboard_paint --pages BEFORE/index.html AFTER/index.html

Builds the page of ``--runs`` twice, with this checkout and with the suite at
``--before-commit`` (a temporary ``git worktree``; the same Python environment), or takes
two built pages. Then opens each from disk in headless Chromium (the system one, as the
browser tests), alternating before and after ``--repeats`` times so both see the same
machine load, and reads the browser's own timings: first contentful paint (``paint``
entry), DOMContentLoaded, the load event, and when the first DataTable is drawn. Prints
the medians and their ratio and writes the ``leaderboard_paint`` section of
bench/results.json. Scripts are counted by what the page loads (bytes from disk).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlparse

from bench.common import REPO, figure, opened_pages, save_section, table
from bench.leaderboard_scale import build as build_site

BEFORE_COMMIT = "b09921c"  # the leaderboard before its summary view, deferred scripts and the basic plotly bundle
TIMINGS = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  return {fcp: paint ? paint.startTime : null, dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd};
}"""


def build(commit: str, runs: list[Path], out: Path) -> Path:
    """The page of ``runs`` as the suite at ``commit`` writes it (a temporary worktree)."""
    worktree = Path(tempfile.mkdtemp(prefix="lb-before-"))
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(worktree), commit], cwd=REPO, check=True, capture_output=True
    )
    try:
        build_site(runs, out, worktree)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=REPO, capture_output=True)
    return out / "index.html"


def measure(pages: dict[str, Path], repeats: int) -> dict[str, dict[str, list[float]]]:
    name_of = {path: name for name, path in pages.items()}
    found: dict[str, dict[str, list[float]]] = {name: {} for name in pages}
    for path, page in opened_pages(list(pages.values()), repeats):
        page.wait_for_selector("table.dataTable", state="attached")  # drawn, maybe in a hidden view
        tables = page.evaluate("performance.now()")
        timings = page.evaluate(TIMINGS)
        sources = page.evaluate("Array.from(document.scripts).map(s => s.src).filter(Boolean)")
        script_mb = sum(Path(unquote(urlparse(src).path)).stat().st_size for src in sources) / 1e6
        for key, value in {**timings, "tables": tables, "script_mb": script_mb}.items():
            found[name_of[path]].setdefault(key, []).append(value)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", nargs="+", type=Path, help="runs to build both pages from")
    parser.add_argument("--before-commit", default=BEFORE_COMMIT)
    parser.add_argument("--pages", nargs=2, type=Path, metavar=("BEFORE", "AFTER"), help="two built index.html")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    if args.pages:
        before, after = args.pages
        source = f"--pages {before} {after}"
    elif args.runs:
        work = Path(tempfile.mkdtemp(prefix="lb-paint-"))
        before = build(args.before_commit, args.runs, work / "before")
        build_site(args.runs, work / "after")
        after = work / "after" / "index.html"
        source = f"--runs {' '.join(map(str, args.runs))} --before-commit {args.before_commit}"
    else:
        parser.error("give --runs or --pages")
    found = measure({"before": before.resolve(), "after": after.resolve()}, args.repeats)
    medians = {name: {key: statistics.median(values) for key, values in keys.items()} for name, keys in found.items()}
    rows = []
    for key, label in (
        ("fcp", "first contentful paint (ms)"),
        ("dcl", "DOMContentLoaded (ms)"),
        ("load", "load event (ms)"),
        ("tables", "first DataTable drawn (ms)"),
        ("script_mb", "scripts loaded (MB)"),
    ):
        b, a = medians["before"][key], medians["after"][key]
        rows.append([label, b, a, f"{a / b:.2f}" if b else "n/a"])
    print(table(rows, ["median of " + str(args.repeats), "before", "after", "after / before"]))
    command = f"python -m bench.leaderboard_paint {source} --repeats {args.repeats}"
    ratio = medians["after"]["fcp"] / medians["before"]["fcp"]
    save_section(
        "leaderboard_paint",
        {
            "command": command,
            "medians": medians,
            "samples": found,
            "figures": [
                figure(
                    "leaderboard first contentful paint, after / before",
                    "< 1",
                    f"{ratio:.2f} ({medians['before']['fcp']:.0f} -> {medians['after']['fcp']:.0f} ms)",
                    ratio < 1,
                    command,
                )
            ],
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
