"""The numbers a researcher quotes, through the real ``explain-eval leaderboard`` command: a
Δ vs paper is tested exactly and only against the same model, a run too small to test says so,
stars are Holm-adjusted over the tab's tests, ranks carry their uncertainty (ties as ties), and
a row says when it is built from results files that differ. Each case is read back from the
JSON export, which holds what the page shows."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from custom_metrics.cli import main as explain_eval
from tests.leaderboard.test_leaderboard import modern_results

STAMP = "2026-01-02T03-04-05.000000"


def write_run(
    folder: Path,
    model: str,
    task: str,
    outcomes: list[int],
    *,
    limit: int | None = None,
    extra: dict | None = None,
    batch_size: object = 8,
    stamp: str = STAMP,
    date: float = 1.0,
) -> None:
    """A run as lm_eval writes it: a results file and, for ``task``, its samples (``acc`` per doc)."""
    folder.mkdir(parents=True, exist_ok=True)
    n = len(outcomes)
    acc = sum(outcomes) / n
    results = modern_results(model, {task: acc}, date, limit=limit)
    results["results"][task]["acc_stderr,none"] = (acc * (1 - acc) / (n - 1)) ** 0.5 if n > 1 else "N/A"
    results["results"][task].update(extra or {})
    results["n-samples"] = {task: {"original": n if limit is None else max(n, 300), "effective": n}}
    results["config"]["batch_size"] = batch_size
    (folder / f"results_{stamp}.json").write_text(json.dumps(results), encoding="utf-8")
    lines = [
        {"doc_id": i, "doc": {"id": str(i), "uid": f"u{i}", "label": "YES"}, "acc": float(right)}
        for i, right in enumerate(outcomes)
    ]
    (folder / f"samples_{task}_{stamp}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def board(tmp_path: Path, *extra: str) -> dict[str, dict]:
    """The real command on ``tmp_path/runs``; its JSON exports by paper."""
    out = tmp_path / "board"
    assert explain_eval(["leaderboard", str(tmp_path / "runs"), "--out", str(out), *extra]) == 0
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in out.glob("*.json")}


def rows_of(export: dict, model: str) -> list[dict]:
    return [row for row in export["rows"] if row["model"] == model]


def test_an_all_right_run_of_8_is_tested_exactly_and_not_significant(tmp_path: Path) -> None:
    """8 of 8 (stderr 0) against the paper's 0.9446: p = 1 by the exact binomial test, which the
    z-test on a zero stderr called p < 0.001 ✱; 1 doc cannot be tested; another model's row and
    the dummy model's 0 of 8 are reference lines, never tested."""
    runs = tmp_path / "runs"
    write_run(runs / "gemma8", "google/gemma-4-31b-it", "reg_judge_select", [1] * 8, limit=8)
    write_run(runs / "gemma1", "org/one-doc", "reg_judge_select", [1], limit=1)
    write_run(runs / "dummy", "dummy", "reg_judge_select", [0] * 8, limit=8)
    one = json.loads((runs / "gemma1" / f"results_{STAMP}.json").read_text())
    one["model_name"] = "google/gemma-4-31b-it"  # the same model, one doc, in a setting of its own
    one["n-shot"] = {"reg_judge_select": 1}
    (runs / "gemma1" / f"results_{STAMP}.json").write_text(json.dumps(one))

    reg = board(tmp_path)["reg"]

    by_setting = {row["setting"]: row for row in rows_of(reg, "google/gemma-4-31b-it")}
    eight, single = by_setting["non-thinking"], by_setting["1-shot, non-thinking"]
    cell = eight["headlines"]["reg_judge_select/acc"]
    assert float(cell["delta"]) == pytest.approx(1 - 0.9446)
    assert cell["test"] == "exact binomial test (Clopper-Pearson interval)" and cell["significant"] is False
    assert float(cell["p"]) == 1.0 == min(1.0, 2 * stats.binomtest(8, 8, 0.9446, alternative="greater").pvalue)
    ci = stats.binomtest(8, 8).proportion_ci(method="exact")
    assert (float(cell["ci_low"]), float(cell["ci_high"])) == pytest.approx((ci.low, ci.high))
    assert cell["items"] == 8 and cell["vs"] == "Gemma-4-31B-it · non-thinking"
    tiny = single["headlines"]["reg_judge_select/acc"]
    assert tiny["test"].startswith("no test: 1 item(s) are too few to test against 0.9446") and tiny["p"] == ""
    dummy = rows_of(reg, "dummy")[0]["headlines"]["reg_judge_select/acc"]
    assert dummy["test"] == "no test: another model's number, a reference line" and dummy["significant"] == ""
    assert dummy["vs"] == "Gemma-4-31B-it · non-thinking (reference)"
    assert reg["tests"]["versus_paper"] == {"count": 1, "correction": "holm", "alpha": 0.05}


def test_a_different_model_is_a_reference_line_and_stars_are_holm_adjusted(tmp_path: Path) -> None:
    """A 6-document gemma-3-270m run against Llama-3-8B (reference): no test, no star. The paper's
    model on 800 docs: three tests on the tab, two raw p below 0.05 (0.039, 0.049), none
    significant after Holm's correction, and the page says how many tests there were."""
    runs = tmp_path / "runs"
    write_run(runs / "small", "gemma-3-270m", "geese_llama3", [1, 0, 0, 0, 0, 1], limit=6)
    llama = "meta-llama/Meta-Llama-3-8B"
    for task, right in (("geese_llama3", 600), ("geese_dummy", 440), ("geese_noexp", 425)):
        write_run(runs / "llama" / task, llama, task, [1] * right + [0] * (800 - right))
    geese = board(tmp_path)["geese"]

    small = rows_of(geese, "gemma-3-270m")[0]["headlines"]["geese_llama3/acc"]
    assert small["test"] == "no test: another model's number, a reference line"
    assert small["vs"].endswith("(reference)") and small["p"] == "" and small["significant"] == ""
    (row,) = rows_of(geese, llama)
    cells = [row["headlines"][f"{task}/acc"] for task in ("geese_llama3", "geese_dummy", "geese_noexp")]
    expected = [(600, 0.7812), (440, 0.585), (425, 0.5437)]
    raw = [float(cell["p"]) for cell in cells]
    assert raw == pytest.approx(
        [min(1, 2 * stats.binomtest(k, 800, p0, alternative="less").pvalue) for k, p0 in expected]
    )
    assert sum(p < 0.05 for p in raw) == 2
    # the tab's family: these three and the effectiveness bootstrap (both tasks logged their samples)
    tested = [cell for cell in row["headlines"].values() if cell["p"] != ""]
    assert row["headlines"]["geese_llama3/effectiveness"]["test"] == "paired bootstrap (percentile interval)"
    holm = multipletests([float(cell["p"]) for cell in tested], method="holm")[1]
    assert [float(cell["p_holm"]) for cell in tested] == pytest.approx(list(holm))
    assert [cell["significant"] for cell in tested] == [False] * len(tested)
    assert geese["tests"]["versus_paper"]["count"] == len(tested) == 4
    markdown = (tmp_path / "board" / "geese.md").read_text(encoding="utf-8")
    assert "4 Δ-vs-paper test(s), Holm-adjusted together" in markdown
    page = (tmp_path / "board" / "index.html").read_text(encoding="utf-8")
    assert "This tab tests 4 Δ vs paper (Holm-adjusted together)" in page and "delta sig" not in page


def test_ranks_carry_their_intervals_and_ties_are_ties(tmp_path: Path) -> None:
    """REG success as shares of |N| = 195: runs one item apart share rank 1; a run whose 95%
    interval lies wholly below theirs is rank 3; the paper's rows are references."""
    runs = tmp_path / "runs"
    for name, right in (("a", 90), ("b", 89), ("c", 40)):
        folder = runs / name
        folder.mkdir(parents=True)
        data = modern_results(f"org/{name}", {}, 1.0)
        data["results"] = {"reg_chaos": {"alias": "reg_chaos", "success,judged": right / 195, "n,judged": 195}}
        data["n-samples"] = {"reg_chaos": {"original": 275, "effective": 275}}
        (folder / f"results_{STAMP}.json").write_text(json.dumps(data))
    reg = board(tmp_path)["reg"]
    ranked = [(row["model"], row["rank"]) for row in reg["rows"] if row["row"] == "run"]
    assert ranked == [("org/a", "1="), ("org/b", "1="), ("org/c", "3")]
    a = rows_of(reg, "org/a")[0]["headlines"]["reg_chaos/success"]
    ci = stats.binomtest(90, 195).proportion_ci(method="exact")
    assert (float(a["ci_low"]), float(a["ci_high"]), a["items"]) == pytest.approx((ci.low, ci.high, 195))
    assert {row["rank"] for row in reg["rows"] if row["row"] == "published"} == {"ref"}
    # asked for, the paper's rows contend: Gemma-4-31B-it's 45.64% (89 of 195) ties with them
    ranked = board(tmp_path, "--rank-published")["reg"]
    assert next(r for r in ranked["rows"] if r["model"] == "Gemma-4-31B-it")["rank"] != "ref"


def test_a_row_of_files_that_differ_says_so(tmp_path: Path) -> None:
    """A batch-size-24 file and a batch-size-1 file of one model make one row: the row says so,
    and names the older file passed over for a task run twice."""
    runs = tmp_path / "runs"
    model = "org/llama"
    write_run(runs / "b24", model, "geese_noexp", [1, 0] * 400, batch_size="24")
    write_run(runs / "b1", model, "geese_llama3", [1, 1, 0] * 266 + [1, 0], batch_size=1)
    old = "2025-01-01T00-00-00.000000"
    write_run(runs / "old", model, "geese_llama3", [0] * 800, batch_size=1, stamp=old, date=0.5)
    (row,) = rows_of(board(tmp_path)["geese"], model)
    assert "⚑ built from results files that differ: batch size 1 (geese_llama3); 24 (geese_noexp)" in row["flags"]
    assert any(flag.startswith("newer run used; passed over: runs/old/results_2025") for flag in row["flags"])
    page = (tmp_path / "board" / "index.html").read_text(encoding="utf-8")
    assert "⚑ mixed files" in page and "batch size 1 (geese_llama3); 24 (geese_noexp)" in page


def test_a_paired_test_and_its_interval_always_agree(tmp_path: Path) -> None:
    """5 of 30 documents right in A only: McNemar's exact p = 0.0625, and its interval holds 0 (the
    bootstrap interval beside it excluded 0 while the line said "not significant")."""
    runs = tmp_path / "runs"
    write_run(runs / "a", "org/a", "geese_noexp", [1] * 5 + [0] * 25)
    write_run(runs / "b", "org/b", "geese_noexp", [0] * 30)
    write_run(runs / "c", "org/c", "geese_noexp", [1] * 12 + [0] * 18)
    board(tmp_path)
    with (tmp_path / "board" / "geese_differences.csv").open(newline="", encoding="utf-8") as handle:
        rows = {(row["a"], row["b"]): row for row in csv.DictReader(handle)}
    five = rows[("org/a", "org/b")]
    assert float(five["p_value"]) == pytest.approx(0.0625) and float(five["ci_low"]) < 0 < float(five["ci_high"])
    assert five["test"] == "McNemar's exact test (conditional Clopper-Pearson interval)"
    for row in rows.values():
        excludes = float(row["ci_low"]) > 0 or float(row["ci_high"]) < 0
        assert excludes == (float(row["p_value"]) < 0.05), row
        assert (row["significant"] == "True") == (float(row["p_holm"]) < 0.05)
    assert rows[("org/b", "org/c")]["significant"] == "True"  # 12 of 12 changed documents one way
