"""The numbers a researcher quotes, through the real ``explain-eval leaderboard`` command: a
Δ vs paper is tested exactly (the paper's number an estimate from its items) and only against
the same model, a run too small to test says so, stars are Holm-adjusted within each run's own
family and never move when unrelated runs join, ranks come from the tests shown (ties as ties),
and a row says when it is built from results files that differ. Each case is read back from
the JSON export, which holds what the page shows."""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from scipy import stats
from scipy.stats.contingency import odds_ratio
from statsmodels.stats.multitest import multipletests

from custom_metrics.cli import main as explain_eval
from custom_metrics.leaderboard.procedures import MCNEMAR, USES
from custom_metrics.leaderboard.versus_paper import REFERENCE
from tests.helpers import LEADERBOARD_FIXTURES
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
    """The real command on ``tmp_path/runs`` (every pair's tests in the differences CSV); its JSON
    exports by paper."""
    out = tmp_path / "board"
    assert explain_eval(["leaderboard", str(tmp_path / "runs"), "--out", str(out), "--all-pairs", *extra]) == 0
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in out.glob("*.json")}


def rows_of(export: dict, model: str) -> list[dict]:
    return [row for row in export["rows"] if row["model"] == model]


def central_fisher(k1: int, n1: int, k2: int, n2: int) -> float:
    """scipy's Fisher test, two-sided as twice the smaller one-sided p."""
    table = [[k1, n1 - k1], [k2, n2 - k2]]
    tails = (stats.fisher_exact(table, alternative=side).pvalue for side in ("less", "greater"))
    return min(1.0, 2 * min(tails))


def test_an_all_right_run_of_8_is_tested_exactly_and_not_significant(tmp_path: Path) -> None:
    """8 of 8 (stderr 0) against the paper's 0.9446 of 289: p = 1 by Fisher's exact test, which the
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
    cell = eight["headlines"]["reg_judge_select/answer_acc"]
    assert float(cell["delta"]) == pytest.approx(1 - 0.9446)
    assert cell["test"] == "Fisher's exact test, central (conditional exact interval of the odds ratio)"
    assert cell["significant"] is False and cell["paper_items"] == 289  # the paper's 273 of 289 judge items
    assert float(cell["p"]) == 1.0 == central_fisher(8, 8, 273, 289)
    ci = stats.binomtest(8, 8).proportion_ci(method="exact")
    assert (float(cell["ci_low"]), float(cell["ci_high"])) == pytest.approx((ci.low, ci.high))
    assert cell["items"] == 8 and cell["vs"] == "Gemma-4-31B-it · non-thinking"
    tiny = single["headlines"]["reg_judge_select/answer_acc"]
    assert tiny["test"].startswith("no test: 1 item(s) are too few to test against 0.9446") and tiny["p"] == ""
    dummy = rows_of(reg, "dummy")[0]["headlines"]["reg_judge_select/answer_acc"]
    assert dummy["test"] == REFERENCE and dummy["significant"] == "" and dummy["delta"] == ""
    assert dummy["vs"] == "Gemma-4-31B-it · non-thinking (reference)"
    tests = reg["tests"]["versus_paper"]
    assert (tests["count"], tests["correction"], tests["alpha"]) == (1, "holm", 0.05)
    assert tests["family"] == "each run row: its own tests against the paper"
    # which procedure gives which number, from the code's one registry
    assert reg["tests"]["procedures"] == [dataclasses.asdict(use) for use in USES]
    assert {"number": "Δ vs paper", "procedure": cell["test"], "where": USES[0].where} in reg["tests"]["procedures"]


def test_a_different_model_is_a_reference_line_and_stars_are_holm_adjusted(tmp_path: Path) -> None:
    """A 6-document gemma-3-270m run against Llama-3-8B (reference): no test, no star. The paper's
    model on 800 docs, against the paper's own 800: Fisher's exact test of the two counts (the
    binomial test against the paper's number as a constant called two of them p < 0.05), Holm
    within the run's own four tests, none significant; the page names the family."""
    runs = tmp_path / "runs"
    write_run(runs / "small", "gemma-3-270m", "geese_llama3", [1, 0, 0, 0, 0, 1], limit=6)
    llama = "meta-llama/Meta-Llama-3-8B"
    for task, right in (("geese_llama3", 600), ("geese_dummy", 440), ("geese_noexp", 425)):
        write_run(runs / "llama" / task, llama, task, [1] * right + [0] * (800 - right))
    geese = board(tmp_path)["geese"]

    small = rows_of(geese, "gemma-3-270m")[0]["headlines"]["geese_llama3/acc"]
    assert small["test"] == REFERENCE and small["delta"] == ""  # was Δ -0.4479 against another model
    assert small["vs"].endswith("(reference)") and small["p"] == "" and small["significant"] == ""
    (row,) = rows_of(geese, llama)
    cells = [row["headlines"][f"{task}/acc"] for task in ("geese_llama3", "geese_dummy", "geese_noexp")]
    paper = [(600, 625), (440, 468), (425, 435)]  # Table 2's 0.7812, 0.585, 0.5437 of 800
    raw = [float(cell["p"]) for cell in cells]
    assert raw == pytest.approx([central_fisher(k, 800, theirs, 800) for k, theirs in paper])
    as_constant = [stats.binomtest(k, 800, theirs / 800).pvalue for k, theirs in paper]
    assert sum(p < 0.05 for p in as_constant) == 2 and min(raw) > 0.05
    for cell, (k, theirs) in zip(cells, paper):  # the interval Fisher's test inverts: of the odds ratio
        found = odds_ratio([[k, 800 - k], [theirs, 800 - theirs]], kind="conditional").confidence_interval()
        assert (float(cell["test_low"]), float(cell["test_high"])) == pytest.approx((found.low, found.high))
        assert cell["interval_of"] == "odds ratio" and cell["paper_items"] == 800
    # the run's family: these three; effectiveness (both tasks logged) has its paired test's
    # interval, McNemar's, and no test against the paper's difference
    tested = [cell for cell in row["headlines"].values() if cell["p"] != ""]
    effectiveness = row["headlines"]["geese_llama3/effectiveness"]
    assert effectiveness["interval"] == MCNEMAR and effectiveness["test"].startswith("no test: the paper's number")
    holm = multipletests([float(cell["p"]) for cell in tested], method="holm")[1]
    assert [float(cell["p_holm"]) for cell in tested] == pytest.approx(list(holm))
    assert [cell["significant"] for cell in tested] == [False] * len(tested)
    assert {cell["family"] for cell in tested} == {f"Δ vs paper of {llama}"}
    assert geese["tests"]["versus_paper"]["count"] == len(tested) == 3
    markdown = (tmp_path / "board" / "geese.md").read_text(encoding="utf-8")
    assert "3 Δ-vs-paper test(s), Holm-adjusted within each run row's own family" in markdown
    page = (tmp_path / "board" / "index.html").read_text(encoding="utf-8")
    assert "This tab tests 3 Δ vs paper (Holm-adjusted within each run row's own tests)" in page
    assert "delta sig" not in page and "Chatbot Arena" not in page
    assert "Δ -0.4479" not in page and "reference: Llama-3-8B 0.7812" in page


def test_the_papers_number_is_an_estimate_and_a_rerun_gets_a_reproduction_verdict(tmp_path: Path) -> None:
    """599 of 800 against the paper's 0.7812 of 800: p = 0.032 if the paper's number were a
    constant, 0.14 by Fisher's exact test of the two counts (Boschloo's exact test: 0.126). The
    reproduction verdict is TOST by the 90% interval of Δ (Newcombe's, as statsmodels computes
    it): 599 is not within ±0.05 of the paper, 620 is; ±0.03 cannot be shown on 800 items."""
    from statsmodels.stats.proportion import confint_proportions_2indep

    runs = tmp_path / "runs"
    llama = "meta-llama/Meta-Llama-3-8B"
    write_run(runs / "far", llama, "geese_llama3", [1] * 599 + [0] * 201)
    write_run(runs / "near", "org/Llama-3-8B", "geese_llama3", [1] * 620 + [0] * 180)
    geese = board(tmp_path)["geese"]
    far = rows_of(geese, llama)[0]["headlines"]["geese_llama3/acc"]
    assert float(far["p"]) == pytest.approx(central_fisher(599, 800, 625, 800)) == pytest.approx(0.1404, abs=1e-4)
    assert stats.binomtest(599, 800, 0.7812).pvalue < 0.05  # the paper's number as a constant
    low, high = confint_proportions_2indep(599, 800, 625, 800, method="newcomb", alpha=0.1)
    assert (float(far["tost_low"]), float(far["tost_high"])) == pytest.approx((low, high))
    assert far["reproduced"] is False and far["margin"] == 0.05 and low < -0.05
    near = rows_of(geese, "org/Llama-3-8B")[0]["headlines"]["geese_llama3/acc"]
    low, high = confint_proportions_2indep(620, 800, 625, 800, method="newcomb", alpha=0.1)
    assert near["reproduced"] is True and -0.05 < low < high < 0.05
    page = (tmp_path / "board" / "index.html").read_text(encoding="utf-8")
    assert "✓ within ±0.05" in page and "not shown within ±0.05" in page
    strict = board(tmp_path, "--equivalence-margin", "0.03")["geese"]
    assert rows_of(strict, "org/Llama-3-8B")[0]["headlines"]["geese_llama3/acc"]["reproduced"] is False


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
    assert {row["rank"] for row in reg["rows"] if row["row"] == "published" and row["origin"] == "paper"} == {"ref"}
    chaosnli = [row for row in reg["rows"] if row["origin"] == "ChaosNLI (Nie et al., 2020)"]
    assert len(chaosnli) == 9 and {row["rank"] for row in chaosnli} == {""}  # other columns: no rank
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


def verdicts(export: dict) -> dict[tuple[str, str, str], tuple]:
    """Every run row's p, adjusted p, star and rank, per headline (the rank without its tie mark:
    a newcomer no test separates from a row shares its rank, which the row then shows as "1=")."""
    fields = ("p", "p_holm", "family", "significant")
    return {
        (row["model"], row["setting"], key): (*(cell[name] for name in fields), cell["rank"].rstrip("="))
        for row in export["rows"]
        if row["row"] == "run"
        for key, cell in row["headlines"].items()
    }


def paired_rows(folder: Path) -> dict[tuple[str, str, str], tuple[str, str, str]]:
    with (folder / "geese_differences.csv").open(newline="", encoding="utf-8") as handle:
        return {
            (row["a"], row["b"], row["task"]): (row["p_value"], row["p_holm"], row["significant"])
            for row in csv.DictReader(handle)
        }


def test_unrelated_folders_leave_every_other_runs_verdicts_unchanged(tmp_path: Path) -> None:
    """Two runs, then the same two beside the GEESE authors' folder (their own runs, tested
    against their own numbers) and a third model's run: every p, adjusted p, family, star and
    rank of the first two, and every paired test between them, stays as it was (Holm over the
    whole tab moved an unrelated run's adjusted p from 0.221 to 0.411)."""
    runs = tmp_path / "runs"
    mine, other = "local/Meta-Llama-3-8B", "org/b"
    write_run(runs / "mine" / "llama3", mine, "geese_llama3", [1] * 610 + [0] * 190)
    write_run(runs / "mine" / "noexp", mine, "geese_noexp", [1] * 415 + [0] * 385)
    write_run(runs / "other", other, "geese_llama3", [1] * 600 + [0] * 200)
    before = board(tmp_path)["geese"]
    shutil.move(tmp_path / "board", tmp_path / "before")

    shutil.copytree(LEADERBOARD_FIXTURES / "geese-authors", runs / "geese-authors")
    write_run(runs / "third", "org/c", "geese_llama3", [0] * 500 + [1] * 300)
    after = board(tmp_path)["geese"]

    assert any(row["model"].endswith("(authors' GEESE tasks)") for row in after["rows"])
    old, new = verdicts(before), verdicts(after)
    assert set(old) <= set(new) and len(new) > len(old)
    assert {key: new[key] for key in old} == old
    assert sum(value[0] != "" for value in old.values()) >= 2  # tested numbers, not blanks
    assert old[(mine, "", "geese_llama3/acc")][-1] == "1"  # 610 vs 600 on the same docs: McNemar
    assert old[(other, "", "geese_llama3/acc")][-1] == "2"
    paired_before, paired_after = paired_rows(tmp_path / "before"), paired_rows(tmp_path / "board")
    assert paired_before and {key: paired_after[key] for key in paired_before} == paired_before


def test_ranks_follow_the_paired_tests_shown(tmp_path: Path) -> None:
    """20 and 12 of the same 30 documents, the 12 among the 20: their 95% intervals overlap (the
    interval rule tied them), McNemar's exact test on the 8 changed documents separates them
    (p = 0.0078, Holm within the pair): ranks 1 and 2. A run sharing no documents with them and
    no count of its items is not ranked, and says why."""
    runs = tmp_path / "runs"
    write_run(runs / "a", "org/a", "geese_noexp", [1] * 20 + [0] * 10)
    write_run(runs / "b", "org/b", "geese_noexp", [1] * 12 + [0] * 18)
    geese = board(tmp_path)["geese"]
    a, b = (rows_of(geese, name)[0]["headlines"]["geese_noexp/acc"] for name in ("org/a", "org/b"))
    assert float(a["ci_low"]) < float(b["ci_high"])  # the intervals overlap
    assert (a["rank"], b["rank"]) == ("1", "2")
    (pair,) = paired_rows(tmp_path / "board").values()
    assert float(pair[0]) == pytest.approx(2 * 0.5**8) and pair[2] == "True"
    page = (tmp_path / "board" / "index.html").read_text(encoding="utf-8")
    assert "1 row(s) of this group significantly better on this column, of 1 a test compared it with" in page


def test_each_procedure_against_scipy_and_statsmodels() -> None:
    """Fisher's central p against scipy's one-sided tests, and p < 0.05 exactly when the
    conditional odds-ratio interval excludes 1; Newcombe's 90% interval against statsmodels,
    0 of n and n of n included; Holm within families against ``multipletests`` per family."""
    import numpy as np
    from statsmodels.stats.proportion import confint_proportions_2indep

    from custom_metrics.leaderboard import procedures

    rng = np.random.default_rng(3)
    tables = []
    for _ in range(40):
        n1, n2 = int(rng.integers(1, 60)), int(rng.integers(1, 900))
        k1, k2 = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n2 + 1))
        outcome = procedures.fisher_test(k1, n1, k2, n2)
        assert outcome.p_value == pytest.approx(central_fisher(k1, n1, k2, n2))
        assert (outcome.p_value < 0.05) == (not outcome.interval.contains(1.0)), (k1, n1, k2, n2)
        tables.append((k1, n1, k2, n2))
    every = procedures.fisher_p(*np.array(tables + tables[:5]).T)  # many tables at once, margins shared
    assert list(every) == pytest.approx([central_fisher(*table) for table in tables + tables[:5]])
    for k1, n1, k2, n2 in ((599, 800, 625, 800), (0, 8, 0, 289), (8, 8, 273, 289), (3, 30, 29, 30)):
        found = procedures.equivalence(k1, n1, k2, n2, 0.05)
        low, high = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", alpha=0.1)
        assert (found.low, found.high) == pytest.approx((low, high))
        assert found.equivalent == (low > -0.05 and high < 0.05)
    p = rng.random(60) ** 2
    families = [int(x) for x in rng.integers(0, 7, 60)]
    adjusted = procedures.holm_groups(p, families)
    for family in set(families):
        mine = [i for i, f in enumerate(families) if f == family]
        assert adjusted[mine] == pytest.approx(multipletests(p[mine], method="holm")[1])


def test_runs_of_one_model_made_differently_stay_separate_rows(tmp_path: Path) -> None:
    """Our 800-document run of Llama-3-8B beside the GEESE authors' early 24-document files of the
    same model name (another template, no harness version): two rows, each named by how it was
    made, each with its own documents behind every number (one row used to show "--limit 24"
    while its headline numbers rested on 800 documents, effectiveness across the two)."""
    runs = tmp_path / "runs"
    llama = "meta-llama/Meta-Llama-3-8B"
    write_run(runs / "ours" / "llama3", llama, "geese_llama3", [1] * 610 + [0] * 190)
    write_run(runs / "ours" / "noexp", llama, "geese_noexp", [1] * 430 + [0] * 370)
    shutil.copytree(LEADERBOARD_FIXTURES / "geese-authors" / "output", runs / "authors-early")
    geese = board(tmp_path)["geese"]
    mine = {row["model"]: row for row in geese["rows"] if row["row"] == "run" and row["model"].startswith(llama)}
    assert len(mine) == 2, list(mine)
    (full,) = (row for name, row in mine.items() if "full data" in name)
    (early,) = (row for name, row in mine.items() if "--limit 24" in name)
    assert early["model"] == f"{llama} [--limit 24; harness version not recorded]"
    assert full["model"] == f"{llama} [full data; harness 0.4.13]"
    assert any("not this suite's task config" in flag for flag in early["flags"])  # the template, on its tasks
    assert full["data"] == "full data" and early["data"].startswith("⚠ part of the data: --limit 24")
    assert full["headlines"]["geese_llama3/acc"]["items"] == 800 == full["headlines"]["geese_noexp/acc"]["items"]
    assert early["headlines"]["geese_llama3/acc"]["items"] == 24
    assert full["headlines"]["geese_llama3/acc"]["vs"] == "Llama-3-8B · zero-shot, M2"  # still its model's row
    assert full["headlines"]["geese_llama3/effectiveness"]["items"] == 800  # from its own two runs only
    assert not any("passed over" in flag for row in mine.values() for flag in row["flags"])


def test_reg_rows_without_success_are_ranked_on_what_they_have(tmp_path: Path) -> None:
    """Two REG runs of the judge task alone (no success): ranked on it, the column named, not
    left blank below every paper row."""
    runs = tmp_path / "runs"
    write_run(runs / "a", "org/a", "reg_judge_select", [1] * 280 + [0] * 9)
    write_run(runs / "b", "org/b", "reg_judge_select", [1] * 200 + [0] * 89)
    reg = board(tmp_path)["reg"]
    ranks = {row["model"]: row["rank"] for row in reg["rows"] if row["row"] == "run"}
    assert ranks == {"org/a": "1 (as NLI judge)", "org/b": "2 (as NLI judge)"}
