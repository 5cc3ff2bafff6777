"""One table of every benchmark's headline figures against its target, from bench/results.json.

Each section of ``results.json`` lists its ``figures`` (see ``bench.common.figure``); this
prints them in one table (benchmark, figure, target, measured, verdict, the peer's figure
where one exists, and the command behind it) and, with ``--readme``, writes the table
into ``bench/README.md`` between its ``figures`` markers. A section without figures gets a
row saying so, so a benchmark that stopped listing them does not vanish silently.

    python -m bench.summary [--readme]
"""

from __future__ import annotations

import argparse
import json

from bench.common import REPO, RESULTS, table, verdict

README = REPO / "bench" / "README.md"
START, END = "<!-- figures:start -->", "<!-- figures:end -->"
ORDER = (
    "suite_overhead",
    "judge_sharing",
    "prefix_lm",
    "prefix_memory",
    "ibe_throughput",
    "ibe_scaling",
    "task_cost",
    "leaderboard_scale",
)


def rows(results: dict) -> list[list[str]]:
    names = [n for n in ORDER if n in results] + sorted(n for n in results if n not in ORDER)
    found = []
    for name in names:
        section = results[name]
        stamp = f"{section.get('measured_at', '?')}, {section.get('machine', {}).get('commit', '?')}"
        figures = section.get("figures")
        if not figures:
            found.append([name, "(no figures listed by this benchmark)", "", "", "", "", section.get("command", "")])
            continue
        for f in figures:
            found.append(
                [name, f["figure"], f["target"], f["measured"], verdict(f["pass"]), f["peer"], f"`{f['command']}`"]
            )
        found[-len(figures)][0] = f"{name} ({stamp})"
    return found


def render(results: dict) -> str:
    header = ["benchmark (measured at, commit)", "figure", "target", "measured", "", "peer", "command"]
    return table(rows(results), header)


def write_readme(text: str) -> None:
    readme = README.read_text(encoding="utf-8")
    if START not in readme or END not in readme:
        raise SystemExit(f"{README}: markers {START} / {END} not found")
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    README.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--readme", action="store_true", help="also write the table into bench/README.md")
    args = parser.parse_args()
    text = render(json.loads(RESULTS.read_text(encoding="utf-8")))
    print(text)
    if args.readme:
        write_readme(text)


if __name__ == "__main__":
    main()
