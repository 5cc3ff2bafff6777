"""The leaderboard at a lab's scale: 10 to 200 runs of 4 papers' tasks, with samples.

    python -m bench.leaderboard_scale [--sizes 10,50,100,200] [--limit 40] [--repeats 3]

One real run is made first (cached in ``runs/bench/leaderboard_scale/source``, ``--fresh``
remakes it): the embedded model through the real ``lm_eval`` CLI with ``--log_samples`` on
a task of each paper (``geese_noexp``, ``geese_llama3``, ``rule_main``,
``reg_judge_select_loglik``, ``ibe_judge_copa`` judging the demo's logged COPA explanations),
``--limit`` documents each, on the data mirror. From it, N synthetic runs: the same results
and samples files under N model names, each run's per-document 0/1 outcomes flipped at a
rate of its own (seeded, so every size holds the same runs) and its accuracies recomputed
from them, so rows, intervals, ranks and every paired test differ as real runs do.

For each N, one fresh ``explain-eval leaderboard`` process builds the site (wall time and its
peak resident memory), then the sizes of ``index.html``, of the whole site and of its largest
file are read, and headless Chromium (the
system one, as the browser tests) opens the index from disk ``--repeats`` times: first
contentful paint, load event, the first tab's charts drawn (after the load event) and the
long view opened with a pair of rows picked, medians. Targets, all measured in this one run: the 100-run build <= 12x
the 10-run build (linear: the pairwise tests are one matrix product per task, and their
tables are in files loaded on demand), index.html <= 2 MB at 100 runs, first paint <= 1 s at
100 runs; with 100 and 300 among the sizes, the 300-run site <= 3.6x the 100-run site, no
file over 10 MB, a build peak under 1 GB and the load event under 2 s at 300 runs. Writes the ``leaderboard_scale``
section of bench/results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from bench.common import CHROMIUM, REPO, figure, opened_pages, save_section, scratch, setup_env, table, timed

TASKS = "geese_noexp,geese_llama3,rule_main,reg_judge_select_loglik,ibe_judge_copa"
DEMO = REPO / "tests" / "fixtures" / "leaderboard" / "demo-generation"
STAMP = "2026-12-02T00-00-00.000000"
LOAD = "() => performance.getEntriesByType('navigation')[0].loadEventEnd"
FCP = "() => { const p = performance.getEntriesByName('first-contentful-paint')[0]; return p ? p.startTime : null; }"


def source_run(folder: Path, limit: int, fresh: bool) -> Path:
    """The one real run the synthetic ones are made of (made once, then reused)."""
    done = folder / "done.json"
    if done.is_file() and not fresh:
        return folder / "out"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    from custom_metrics.common.embedded_model import ensure_checkpoint
    from custom_metrics.common.task_folders import TASKS_PATH

    explanations = next(DEMO.glob("*/samples_ibe_copa_*.jsonl"))
    command = [
        str(Path(sys.executable).with_name("lm_eval")),
        "--model", "hf", "--model_args", f"pretrained={ensure_checkpoint()},dtype=float32",
        "--device", "cpu", "--batch_size", "8",
        "--tasks", TASKS, "--include_path", str(TASKS_PATH), "--limit", str(limit),
        "--metadata", json.dumps({"explanations": str(explanations)}),
        "--log_samples", "--output_path", str(folder / "out"),
    ]  # fmt: skip
    with timed() as took:
        subprocess.run(command, check=True, capture_output=True, text=True, cwd=folder)
    done.write_text(json.dumps({"command": command, "seconds": took["s"]}), encoding="utf-8")
    return folder / "out"


def synthesize(source: Path, out: Path, count: int) -> None:
    """``count`` runs made of the source run: its files under new names, outcomes flipped."""
    results_file = next(source.glob("*/results_*.json"))
    results = json.loads(results_file.read_text(encoding="utf-8"))
    stamp = results_file.name[len("results_") : -len(".json")]
    samples = {
        path.name.split("_" + stamp)[0][len("samples_") :]: path for path in results_file.parent.glob("samples_*.jsonl")
    }
    for index in range(count):
        rng = random.Random(index)
        rate = 0.05 + 0.4 * rng.random()
        model = f"synthetic/model-{index:03d}"
        folder = out / f"model-{index:03d}"
        folder.mkdir(parents=True)
        data = json.loads(json.dumps(results))
        data["model_name"] = model
        data["config"]["model_args"] = f"pretrained={model},dtype=float32"
        for task, path in samples.items():
            lines, outcomes = [], []
            for line in path.read_text(encoding="utf-8").splitlines():
                sample = json.loads(line)
                if sample.get("acc") in (0, 1, 0.0, 1.0) and rng.random() < rate:
                    sample["acc"] = 1.0 - float(sample["acc"])
                if isinstance(sample.get("acc"), (int, float)):
                    outcomes.append(float(sample["acc"]))
                lines.append(json.dumps(sample))
            (folder / f"samples_{task}_{STAMP}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
            scores = data["results"].get(task, {})
            if outcomes and "acc,none" in scores:
                mean = sum(outcomes) / len(outcomes)
                scores["acc,none"] = mean
                n = len(outcomes)
                scores["acc_stderr,none"] = (mean * (1 - mean) / (n - 1)) ** 0.5 if n > 1 else "N/A"
        (folder / f"results_{STAMP}.json").write_text(json.dumps(data), encoding="utf-8")


# The command in a fresh process that reports its own peak resident memory at exit.
_PEAK = (
    "import resource, sys\n"
    "from custom_metrics.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print('peak-rss-kb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def build(runs: list[Path], site: Path, source: Path = REPO) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MB) of one fresh ``explain-eval leaderboard`` process
    of the suite in ``source`` (a checkout)."""
    command = [sys.executable, "-c", _PEAK, "leaderboard", *map(str, runs), "--out", str(site)]
    env = {**os.environ, "PYTHONPATH": str(source)}
    with timed() as took:
        done = subprocess.run(command, check=True, capture_output=True, text=True, env=env, cwd=source)
    peak = next(line.split()[1] for line in done.stderr.splitlines() if line.startswith("peak-rss-kb "))
    return took["s"], int(peak) / 1024


def size_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 1e6
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def page_timings(pages: list[Path], repeats: int) -> dict[str, dict[str, float]]:
    """Median first contentful paint, load event, charts drawn (the first tab's, drawn after the
    load event) and long-view opening (ms) of each page opened from disk, alternating pages. The
    long view: "All metrics" of the first tab clicked, until its table and the pair picker's first
    pair of rows are drawn."""
    kinds = ("fcp", "load", "charts", "long")
    found: dict[str, dict[str, list[float]]] = {str(page): {kind: [] for kind in kinds} for page in pages}
    for page_path, page in opened_pages(pages, repeats):
        times = found[str(page_path)]
        times["fcp"].append(page.evaluate(FCP))
        times["load"].append(page.evaluate(LOAD))
        drawn = "() => [...document.querySelectorAll('section.panel .plot')]"
        drawn += ".filter((p) => p.offsetParent !== null).every((p) => p.querySelector('.main-svg'))"
        page.wait_for_function(drawn, timeout=120_000)
        times["charts"].append(page.evaluate("performance.now()"))
        start = page.evaluate("performance.now()")
        page.locator("section.panel:visible .views label").nth(1).click()
        page.wait_for_selector("section.panel:visible .view-long table.dataTable", timeout=120_000)
        if page.locator("section.panel:visible .pair-picker").count():
            drawn = "section.panel:visible .pair-table"
            page.wait_for_selector(f"{drawn} table, {drawn} p")
        times["long"].append(page.evaluate("performance.now()") - start)
    return {name: {key: statistics.median(values) for key, values in times.items()} for name, times in found.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,50,100,200", help="numbers of synthetic runs")
    parser.add_argument("--limit", type=int, default=40, help="documents per task of the source run")
    parser.add_argument("--repeats", type=int, default=3, help="page loads per size for the first paint")
    parser.add_argument("--fresh", action="store_true", help="remake the source run")
    args = parser.parse_args()
    setup_env()
    sizes = [int(size) for size in args.sizes.split(",") if size]
    work = scratch("leaderboard_scale", fresh=False)
    source = source_run(work / "source", args.limit, args.fresh)
    rows, measured = [], {}
    for size in sizes:
        runs, site = work / f"runs-{size}", work / f"site-{size}"
        for folder in (runs, site):
            if folder.exists():
                shutil.rmtree(folder)
        synthesize(source, runs, size)
        seconds, peak = build([runs], site)
        largest = max((p for p in site.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
        measured[size] = {
            "build_s": seconds,
            "build_peak_mb": peak,
            "index_mb": size_mb(site / "index.html"),
            "site_mb": size_mb(site),
            "largest_panel_mb": max(size_mb(p) for p in (site / "panels").glob("*.js")),
            "largest_file_mb": size_mb(largest),
            "largest_file": str(largest.relative_to(site)),
        }
        print(f"{size} runs: built in {seconds:.1f} s, index {measured[size]['index_mb']:.2f} MB", flush=True)
    pages = [work / f"site-{size}" / "index.html" for size in sizes]
    # Without Chromium (make install adds it as root) the page is not opened: its figure says so.
    timings = page_timings(pages, args.repeats) if Path(CHROMIUM).exists() else {}
    for size in sizes:
        opened = timings.get(str(work / f"site-{size}" / "index.html"), {})
        for key in ("fcp", "load", "charts", "long"):
            measured[size][f"{key}_ms"] = opened.get(key)
        m = measured[size]
        sizes_mb = [
            m["build_peak_mb"],
            m["index_mb"],
            m["site_mb"],
            f"{m['largest_file_mb']:.1f} ({m['largest_file']})",
        ]
        browser = ["n/a" if m[f"{key}_ms"] is None else round(m[f"{key}_ms"]) for key in ("load", "charts", "long")]
        paint = "n/a" if m["fcp_ms"] is None else m["fcp_ms"]
        rows.append([size, m["build_s"], m["build_s"] / size, *sizes_mb, paint, *browser])
    print(
        table(
            rows,
            [
                "runs",
                "build (s)",
                "s per run",
                "build peak (MB)",
                "index.html (MB)",
                "site (MB)",
                "largest file (MB)",
                "FCP (ms)",
                "load event (ms)",
                "charts drawn (ms)",
                "long view (ms)",
            ],
        )
    )
    command = f"python -m bench.leaderboard_scale --sizes {args.sizes} --limit {args.limit} --repeats {args.repeats}"
    figures: list[dict] = []

    def add(name: str, target: str, found: str, passed: bool | None) -> None:
        figures.append(figure(name, target, found, passed, command))

    if 10 in measured and 100 in measured:
        ratio = measured[100]["build_s"] / measured[10]["build_s"]
        add(
            "leaderboard build, 100 runs / 10 runs (4 papers, with samples)",
            "<= 12x",
            f"{ratio:.1f}x ({measured[10]['build_s']:.1f} s -> {measured[100]['build_s']:.1f} s)",
            ratio <= 12,
        )
    if 100 in measured:
        m = measured[100]
        add("leaderboard index.html at 100 runs", "<= 2 MB", f"{m['index_mb']:.2f} MB", m["index_mb"] <= 2)
        painted = m["fcp_ms"] is not None
        add(
            "leaderboard first contentful paint at 100 runs (Chromium, from disk)",
            "<= 1 s",
            f"{m['fcp_ms']:.0f} ms" if painted else f"not measured: no Chromium at {CHROMIUM}",
            m["fcp_ms"] <= 1000 if painted else None,
        )
    if 100 in measured and 300 in measured:
        small, large = measured[100], measured[300]
        ratio = large["site_mb"] / small["site_mb"]
        add(
            "leaderboard site, 300 runs / 100 runs",
            "<= 3.6x",
            f"{ratio:.1f}x ({small['site_mb']:.0f} MB -> {large['site_mb']:.0f} MB)",
            ratio <= 3.6,
        )
        add(
            "leaderboard largest file at 300 runs",
            "<= 10 MB",
            f"{large['largest_file_mb']:.1f} MB ({large['largest_file']})",
            large["largest_file_mb"] <= 10,
        )
        opened = large["load_ms"] is not None
        add(
            "leaderboard load event at 300 runs (Chromium, from disk)",
            "< 2 s",
            f"{large['load_ms']:.0f} ms (charts drawn after it: {large['charts_ms']:.0f} ms; long view with a "
            f"pair: {large['long_ms']:.0f} ms)"
            if opened
            else f"not measured: no Chromium at {CHROMIUM}",
            large["load_ms"] < 2000 if opened else None,
        )
        add(
            "leaderboard build peak memory at 300 runs",
            "< 1 GB",
            f"{large['build_peak_mb']:.0f} MB",
            large["build_peak_mb"] < 1024,
        )
    for size in sizes:
        if size not in (10, 100):
            m = measured[size]
            add(
                f"leaderboard at {size} runs: build, index, site, first paint",
                "",
                f"{m['build_s']:.1f} s, {m['index_mb']:.2f} MB, {m['site_mb']:.0f} MB, "
                + ("no paint measured" if m["fcp_ms"] is None else f"{m['fcp_ms']:.0f} ms"),
                None,
            )
    save_section(
        "leaderboard_scale",
        {"command": command, "tasks": TASKS, "limit": args.limit, "sizes": measured, "figures": figures},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
