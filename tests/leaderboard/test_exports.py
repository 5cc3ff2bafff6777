"""What the leaderboard writes for people and scripts, through the real command: CSV, markdown
and JSON in rank order with rank, interval, Δ vs paper, its test and p, and the runs on part
of the data flagged on their row; every file named as the page names it (no machine path);
control and bidi characters in names made visible everywhere; one colour per model across
builds; a long samples file paged."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from custom_metrics.cli import main as explain_eval
from custom_metrics.leaderboard.procedures import FISHER
from custom_metrics.leaderboard.sample_pages import ROWS_PER_PAGE
from tests.leaderboard.test_statistics import write_run

BIDI = "model\u202egnp.exe"  # displays as "modelexe.png" when written raw
NUL = "nul\x00name\u200b"


def build(runs: Path, out: Path, *extra: str) -> None:
    assert explain_eval(["leaderboard", str(runs), "--out", str(out), *extra]) == 0


def test_exports_are_leaderboards_in_rank_order_with_relative_paths(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    llama = "meta-llama/Meta-Llama-3-8B"
    write_run(runs / "full", llama, "geese_llama3", [1] * 620 + [0] * 180)
    write_run(runs / "worse", "org/worse", "geese_llama3", [1] * 300 + [0] * 500)
    write_run(runs / "cut", "org/cut", "geese_llama3", [1, 1, 0, 1], limit=4)
    write_run(runs / "other" / "a", "org/pair", "geese_noexp", [1, 0] * 20)
    write_run(runs / "other" / "b", "org/pair2", "geese_noexp", [0, 1] * 20)
    out = tmp_path / "board"
    build(runs, out, "--all-pairs")

    with (out / "geese.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    runs_only = [row for row in rows if row["row"] == "run"]
    # your runs first, as on the page: full runs best first, then the runs on part of the data;
    # the published rows below them all (they sat among the runs by value)
    kinds = [row["row"] for row in rows]
    assert kinds == ["run"] * len(runs_only) + ["published"] * (len(rows) - len(runs_only)) and "published" in kinds
    assert [row["model"] for row in runs_only][:2] == [llama, "org/worse"]
    assert runs_only[-1]["model"] == "org/cut"
    full = runs_only[0]
    assert (full["rank"], full["data"]) == ("1", "full data")
    assert full["geese_llama3/acc rank"] == "1" and float(full["geese_llama3/acc ci_low"]) < 0.775 < float(
        full["geese_llama3/acc ci_high"]
    )
    assert full["geese_llama3/acc test"] == FISHER and full["geese_llama3/acc paper_items"] == "800"
    assert float(full["geese_llama3/acc delta"]) == 0.775 - 0.7812 and full["geese_llama3/acc p"]
    assert full["geese_llama3/acc vs"] == "Llama-3-8B · zero-shot, M2"
    assert full["geese_llama3/acc significant"] == "False" and full["geese_llama3/acc p_holm"]
    assert full["geese_llama3/acc family"] == f"Δ vs paper of {llama}" and full["geese_llama3/acc reproduced"]
    cut = runs_only[-1]
    assert cut["data"] == "⚠ part of the data: --limit 4, 4 docs" and cut["rank"] == "1"
    # the published rows holding the ranked column are references; CALAMITA's (other columns) have no rank
    published = [row for row in rows if row["row"] == "published"]
    calamita = [row for row in published if "CALAMITA harness" in row["setting"]]
    assert {row["rank"] for row in published if row not in calamita} == {"ref"}
    assert len(calamita) == 4 and {row["rank"] for row in calamita} <= {"", "ref"}
    assert full["sources"] == "runs/full/results_2026-01-02T03-04-05.000000.json"

    document = json.loads((out / "geese.json").read_text(encoding="utf-8"))
    assert [row["model"] for row in document["rows"]] == [row["model"] for row in rows]  # the same table
    first = document["rows"][[row["model"] for row in rows].index(llama)]
    assert first["headlines"]["geese_llama3/acc"]["rank"] == "1" and first["data"] == "full data"
    assert first["sources"] == [full["sources"]]

    markdown = (out / "geese.md").read_text(encoding="utf-8")
    summary = markdown.split("### Summary (your runs first, then the published rows; each in rank order)", 1)[1]
    lines = [line for line in summary.split("###", 1)[0].splitlines() if line.startswith("| ") and "---" not in line]
    lines = lines[1:]
    assert [" | run | " in line for line in lines] == [row["row"] == "run" for row in rows]
    assert [line.split(" | ")[1] for line in lines if "| run |" in line][:2] == [llama, "org/worse"]
    cut_line = next(line for line in lines if "org/cut" in line)
    assert "⚠ part of the data: --limit 4, 4 docs" in cut_line  # on the row, not in a footnote
    assert "| 1 |" in cut_line
    assert FISHER in markdown.split("### Δ vs paper", 1)[1]

    with (out / "geese_differences.csv").open(newline="", encoding="utf-8") as handle:
        differences = list(csv.DictReader(handle))
    pair = next(row for row in differences if row["a"] == "org/pair")
    assert pair["samples_a"] == "runs/other/a/samples_geese_noexp_2026-01-02T03-04-05.000000.jsonl"
    assert all(row["samples_a"].startswith("runs/") and row["p_holm"] for row in differences)
    assert all(row["family"] in (f"{row['a']} vs {row['b']}", f"within {row['a']}") for row in differences)
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".csv", ".md", ".json", ".html", ".js"):
            text = path.read_text(encoding="utf-8")
            assert str(tmp_path) not in text, path.name


def _script_value(path: Path) -> tuple[str, object]:
    """The name and value a data script hands to ``explainEval.loaded``."""
    match = re.fullmatch(r"explainEval\.loaded\((\"[^\"]*\"), (.*)\);\n", path.read_text(encoding="utf-8"), re.S)
    assert match is not None, path
    return json.loads(match.group(1)), json.loads(match.group(2))


def test_pairs_of_runs_are_in_files_per_row_and_in_the_csv_on_request(tmp_path: Path) -> None:
    """The tests between two runs grow with the square of the runs: each row's file holds its
    tests against every later row, as printed, and the differences CSV lists them only with
    --all-pairs (by default it holds each run's tests within itself)."""
    from custom_metrics.leaderboard.numbers import format_number, interval_text, p_digits, signed

    runs = tmp_path / "runs"
    for name, outcomes in (("org/a", [1, 0] * 20), ("org/b", [1] * 30 + [0] * 10), ("org/c", [0, 1] * 20)):
        write_run(runs / name.replace("/", "_"), name, "geese_noexp", outcomes)
    write_run(runs / "a_human", "org/a", "geese_human", [1] * 40)
    build(runs, tmp_path / "default")
    with (tmp_path / "default" / "geese_differences.csv").open(newline="", encoding="utf-8") as handle:
        default = list(csv.DictReader(handle))
    assert default and {row["kind"] for row in default} == {"same run"}  # org/a's effectiveness only
    build(runs, tmp_path / "all", "--all-pairs")
    with (tmp_path / "all" / "geese_differences.csv").open(newline="", encoding="utf-8") as handle:
        between = {(r["a"], r["b"]): r for r in csv.DictReader(handle) if r["kind"] == "two runs"}
    assert set(between) == {("org/a", "org/b"), ("org/a", "org/c"), ("org/b", "org/c")}
    folder = tmp_path / "default" / "panels" / "geese.pairs"
    assert sorted(p.name for p in folder.iterdir()) == ["0.js", "1.js", "2.js"]
    shards = [_script_value(folder / f"{i}.js") for i in range(3)]
    assert [name for name, _ in shards] == ["pairs:geese:0", "pairs:geese:1", "pairs:geese:2"]
    rows = ["org/a", "org/b", "org/c"]
    assert shards[2][1]["pairs"] == {}  # the last row's pairs are in the earlier rows' files
    for i, (_, shard) in enumerate(shards):
        for j, tests in shard["pairs"].items():
            (stored,) = tests
            row = between[(rows[i], rows[int(j)])]
            task, metric = shard["outcomes"][stored[0]]
            assert (task, metric) == ("M2 no explanation", "Accuracy") or row["task"] == "geese_noexp"
            assert stored[1:6] == [
                int(row["docs"]),
                format_number(float(row["mean_a"])),
                format_number(float(row["mean_b"])),
                signed(float(row["difference"])),
                interval_text(float(row["ci_low"]), float(row["ci_high"]), signed_values=True),
            ]
            assert shard["tests"][stored[6]] == row["test"]
            assert stored[7:] == [
                p_digits(float(row["p_value"])),
                p_digits(float(row["p_holm"])),
                int(row["family_size"]),
                int(row["significant"] == "True"),
            ]
    long_view = (tmp_path / "default" / "panels" / "geese.long.js").read_text(encoding="utf-8")
    tables, forest = long_view.split("forest-geese", 1)  # the forest chart names its 40 smallest p
    assert 'class=\\"pair-picker\\"' in tables and "org/a − org/b" not in tables and "org/a − org/b" in forest


def test_control_and_bidi_characters_in_names_are_visible_everywhere(tmp_path: Path, capsys) -> None:
    runs = tmp_path / "runs"
    write_run(runs / "bidi", BIDI, "geese_noexp", [1, 0, 1])
    write_run(runs / "nul", NUL, "geese_noexp", [0, 0, 1])
    out = tmp_path / "board"
    build(runs, out)
    printed = capsys.readouterr().out
    outputs = {
        path: path.read_text(encoding="utf-8")
        for path in out.rglob("*")
        if path.suffix in (".html", ".csv", ".md", ".json", ".js")
    }
    for path, text in outputs.items():
        assert "\u202e" not in text and "\x00" not in text and "\u200b" not in text, path.name
    for name in ("index.html", "geese.csv", "geese.md", "geese.json"):
        assert "model\\u202egnp.exe" in outputs[out / name].replace("\\\\", "\\"), name
    assert "nul\\u0000name\\u200b" in outputs[out / "geese.csv"]
    assert any(
        name.startswith("geese-model_u202egnp.exe") for name in (p.name for p in (out / "samples").glob("*.html"))
    )
    assert "model\\u202egnp.exe" in printed and "\u202e" not in printed


def test_a_models_colour_is_the_same_in_two_builds(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write_run(first / "a", "org/alpha", "geese_noexp", [1, 0, 1, 1])
    write_run(second / "z", "org/zeta", "geese_noexp", [1, 1, 1, 0])
    write_run(second / "a", "org/alpha", "geese_noexp", [1, 0, 1, 1])
    colours = []
    for runs in (first, second):
        build(runs, runs / "board")
        text = (runs / "board" / "panels" / "geese.charts.js").read_text(encoding="utf-8")
        figures = json.loads(text[text.index(", ") + 2 : text.rindex(");")])
        traces = {trace["name"]: trace["marker"]["color"] for figure in figures.values() for trace in figure["data"]}
        colours.append(traces)
    shared = [name for name in colours[0] if name in colours[1]]
    assert any(name.startswith("org/alpha") for name in shared)
    assert all(colours[0][name] == colours[1][name] for name in shared)  # whatever else is drawn
    zeta = next(colour for name, colour in colours[1].items() if name.startswith("org/zeta"))
    assert zeta not in colours[0].values()


def test_a_long_samples_file_is_paged(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    count = 2 * ROWS_PER_PAGE + 500
    write_run(runs / "big", "org/big", "geese_noexp", [i % 2 for i in range(count)])
    out = tmp_path / "board"
    build(runs, out)
    pages = sorted((out / "samples").glob("geese-org_big-*.html"))
    assert [page.name.split(".", 1)[1] for page in pages] == ["html", "page2.html", "page3.html"]
    for number, page in enumerate(pages, start=1):
        text = page.read_text(encoding="utf-8")
        data = json.loads(json.loads(re.search(r'"data_json": ("(?:[^"\\]|\\.)*")', text).group(1)))
        assert len(data) == (ROWS_PER_PAGE if number < 3 else 500)
        assert f"of 2,500 (page {number} of 3)" in text
        assert ('rel="next"' in text) == (number < 3) and ('rel="prev"' in text) == (number > 1)
    assert "Rows 2,001–2,500 of 2,500 (page 3 of 3)" in pages[2].read_text(encoding="utf-8")
    index = (out / "samples" / "index.html").read_text(encoding="utf-8")
    assert "<td>2,500</td><td>3</td>" in index
