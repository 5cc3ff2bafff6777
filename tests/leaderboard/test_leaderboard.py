"""The leaderboard: reading results of any harness layout, tables, derived columns, outputs."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
from pathlib import Path

import pytest

import custom_metrics.geese.leaderboard as geese_board
import custom_metrics.leaderboard.build as leaderboard
from custom_metrics.common.results import load_runs, read_results_file
from custom_metrics.ibe.published import method_key
from custom_metrics.ibe.selection import load_ibe_tables
from custom_metrics.leaderboard.tables import build_tables
from ibe_postprocess import features_file, report_file
from ibe_postprocess.folder import FeaturesFolder
from tests.geese.authors import AUTHORS_TASKS as AUTHORS_PROMPTS
from tests.helpers import LEADERBOARD_FIXTURES as LB_FIXTURES
from tests.helpers import PAPER_KEYS, REPO, paper_tests

OLD_03 = LB_FIXTURES / "harness-0.3"
OLD_040 = LB_FIXTURES / "harness-0.4.0"


def read_csv(path: Path) -> dict[str, dict[str, str]]:
    """CSV rows by model, and by "model (setting)" where the row has a setting."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    found = {row["model"]: row for row in rows}
    found.update({f"{row['model']} ({row['setting']})": row for row in rows if row["setting"]})
    return found


def same(text: str, value: float) -> bool:
    """A CSV cell holds exactly the JSON float (NaN included)."""
    number = float(text)
    return (math.isnan(number) and math.isnan(value)) or number == value


def modern_results(model: str, acc: dict[str, float], date: float, limit: float | None = None) -> dict:
    """A results file in the 0.4.13 layout, as the harness writes it."""
    return {
        "results": {task: {"alias": task, "acc,none": value, "acc_stderr,none": 0.01} for task, value in acc.items()},
        "n-samples": {task: {"original": 800, "effective": 800} for task in acc},
        "config": {"model": "hf", "model_args": {"pretrained": model}, "limit": limit},
        "model_name": model,
        "date": date,
        "lm_eval_version": "0.4.13",
    }


def test_old_03_layout_is_read() -> None:
    runs = {run.task: run for run in read_results_file(OLD_03 / "results.json")}
    assert runs["geese_noexp"].model == "EleutherAI/pythia-160m"  # from the model_args string
    score = runs["geese_noexp"].scores[("acc", None)]
    assert (score.value, score.stderr) == (0.55125, 0.017589)
    assert runs["hellaswag"].scores[("acc_norm", None)].value == 0.3125
    assert runs["geese_noexp"].n_samples is None and runs["geese_noexp"].limit is None


def test_early_04_layout_with_groups_and_na_stderr() -> None:
    runs = {run.task: run for run in read_results_file(next(OLD_040.glob("results_*.json")))}
    assert runs["rule"].model == "mistralai/Mistral-7B-v0.1"
    assert runs["rule"].scores[("mainq_acc", "none")].value == 0.4125
    assert runs["rule"].scores[("mainq_acc", "none")].stderr is None  # "N/A"
    assert ("alias", "none") not in runs["rule"].scores
    assert runs["reg_chaos"].scores[("coherence", "none")].value == 0.7  # from "groups"
    assert runs["rule"].timestamp > 0  # from the file name: the layout has no "date"


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> tuple[list, Path]:
    """The leaderboard of each paper's fixture runs (tests/<key>/paper.py: old layouts, an IBE
    report, ...), built once."""
    out = tmp_path_factory.mktemp("board")
    inputs = dict.fromkeys(run for key in PAPER_KEYS for run in paper_tests(key).LEADERBOARD_RUNS)
    board = leaderboard.build_leaderboard(list(inputs), out)
    assert board.problems == []
    return board.tables, out


def test_tables_old_layout_derived_and_published(board) -> None:
    tables, tmp_path = board
    geese = read_csv(tmp_path / "geese.csv")
    pythia = geese["EleutherAI/pythia-160m"]
    assert pythia["row"] == "run"
    assert same(pythia["geese_noexp acc"], 0.55125) and same(pythia["geese_noexp acc ±"], 0.017589)
    assert same(pythia["geese_human effectiveness (acc − geese_noexp acc)"], 0.74 - 0.55125)
    paper = geese["Llama-3-8B (zero-shot, M2)"]  # Table 2; the authors' repository run is a row of its own
    assert paper["row"] == "published" and "GEESE" in paper["sources"] and "Table 2" in paper["sources"]
    assert (paper["geese_noexp acc"], paper["geese_noexp acc ±"]) == ("0.5437", "0.0176")
    assert paper["geese_human effectiveness (acc − geese_noexp acc)"] == "0.2138"  # 0.7575 - 0.5437
    assert paper["geese_llama3 effectiveness (acc − geese_noexp acc)"] == "0.2375"

    rule = read_csv(tmp_path / "rule.csv")
    assert same(rule["mistralai/Mistral-7B-v0.1 (zero-shot)"]["rule mainq_acc"], 0.4125)
    assert rule["InstructGPT (zero-shot)"]["rule mainq_acc"] == "0.641"
    assert rule["LLaMA2 70B (five-shot on ReClor)"]["rule subq_acc ±"] == "0.026"
    fine_tuned = rule["DeBERTa-v3-Large (fully finetuned on ReClor)"]  # the paper ran it once: no ±
    assert fine_tuned["rule mainq_acc"] == "0.660" and fine_tuned["rule mainq_acc ±"] == ""
    reg = read_csv(tmp_path / "reg.csv")
    assert same(reg["mistralai/Mistral-7B-v0.1"]["reg_chaos coherence"], 0.7)
    assert reg["Gemma-4-31B-it (thinking)"]["reg_chaos success"] == "0.4718"
    assert reg["Gemma-4-31B-it (non-thinking)"]["reg_judge_select answer_acc"] == "0.9446"
    ibe = read_csv(tmp_path / "ibe.csv")
    assert ibe["GPT 3.5"]["ibe_copa_selection cum_uncertainty (+ Linguistic Uncertainty = IBE-Eval)"] == "0.77"
    assert ibe["LLaMA 2 7B"]["ibe_ecare_selection cum_uncertainty (+ Linguistic Uncertainty = IBE-Eval)"] == "0.73"
    assert ibe["GPT 3.5 judging LLaMA 2 13B's explanations"]["ibe_judge_ecare acc"] == "0.61"
    assert ibe["LLaMA 2 13B"]["ibe_judge_ecare acc"] == ""  # LLaMA 2 13B never judged in the paper

    other = read_csv(tmp_path / "other.csv")  # unknown tasks are kept, not dropped
    assert same(other["EleutherAI/pythia-160m"]["hellaswag acc_norm"], 0.3125)
    assert same(other["mistralai/Mistral-7B-v0.1"]["arc_easy acc"], 0.43)
    without = set(PAPER_KEYS) - {t.key for t in tables}
    assert not without, f"no table for {sorted(without)}: list a fixture run in tests/<key>/paper.py"
    assert {t.key for t in tables} == {*PAPER_KEYS, "other"}


def test_a_tab_only_for_papers_with_a_run_or_asked_for(tmp_path: Path) -> None:
    """A board of REG runs shows REG alone, not every registered paper's published rows."""
    path = tmp_path / "results_1.json"
    results = modern_results("org/model", {"reg_judge_select": 0.6}, 1.0)
    path.write_text(json.dumps(results))
    runs, _ = load_runs([tmp_path])
    assert [table.key for table in build_tables(runs)] == ["reg"]
    assert [table.key for table in build_tables(runs, papers=["geese"])] == ["geese", "reg"]
    assert [table.key for table in build_tables([], papers=["rule"])] == ["rule"]
    assert build_tables([]) == []


def test_newest_run_is_used_and_named(tmp_path: Path) -> None:
    older, newer = tmp_path / "a" / "results_1.json", tmp_path / "b" / "results_2.json"
    for path, acc, date in ((older, 0.25, 1_700_000_000.0), (newer, 0.5, 1_800_000_000.0)):
        path.parent.mkdir()
        path.write_text(json.dumps(modern_results("org/model", {"geese_noexp": acc}, date)))
    geese = next(t for t in build_tables(load_runs([tmp_path / "b", tmp_path / "a"])[0]) if t.key == "geese")
    (row,) = [row for row in geese.rows if row.kind == "run"]
    assert row.cells["geese_noexp/acc"].value == 0.5 and row.setting == ""
    assert any("2 runs of geese_noexp" in note and str(older) in note for note in geese.notes)


def test_rule_five_shot_splits_become_one_row_with_mean_and_std(tmp_path: Path) -> None:
    for split, (main, sub) in enumerate([(0.5, 0.25), (0.75, 0.5)], start=1):
        data = modern_results("org/model", {}, float(split))
        data["results"] = {f"rule_5shot_split{split}": {"mainq_acc,none": main, "subq_acc,none": sub}}
        data["n-samples"] = {f"rule_5shot_split{split}": {"original": 1500, "effective": 1500}}
        (tmp_path / f"results_{split}.json").write_text(json.dumps(data))
    rule = next(t for t in build_tables(load_runs([tmp_path])[0]) if t.key == "rule")
    row = next(row for row in rule.rows if row.kind == "run")
    assert (row.model, row.setting) == ("org/model", "five-shot on ReClor (2 of 5 splits)")
    assert (row.cells["rule/mainq_acc"].value, row.cells["rule/mainq_acc"].pm) == (0.625, 0.125)
    assert (row.cells["rule/subq_acc"].value, row.cells["rule/subq_acc"].pm) == (0.375, 0.125)
    assert row.cells["rule/#samples"].value == 3000
    assert any("population std over rule_5shot_split1" in note for note in rule.notes)
    # what the mean rests on, on the row itself; its ± is a spread, so no test uses it as a stderr
    assert row.cells["rule/mainq_acc"].basis == (
        "mean ± population std over 2 split runs: rule_5shot_split1 (1500 docs), rule_5shot_split2 (1500 docs)"
    )
    assert row.cells["rule/mainq_acc"].se is None


def test_rule_demonstration_splits_are_the_five_shot_on_rule_setting(tmp_path: Path) -> None:
    """Splits of both five-shot settings by one model: one row each, beside the paper's rows."""
    for split, (reclor, rule) in enumerate([(0.5, 0.25), (0.75, 0.75)], start=1):
        data = modern_results("org/model", {}, float(split))
        tasks = {f"rule_5shot_split{split}": reclor, f"rule_5shot_rule_split{split}": rule}
        data["results"] = {task: {"subq_acc,none": value} for task, value in tasks.items()}
        data["n-samples"] = {task: {"original": 1500, "effective": 1500} for task in tasks}
        (tmp_path / f"results_{split}.json").write_text(json.dumps(data))
    rule = next(t for t in build_tables(load_runs([tmp_path])[0]) if t.key == "rule")
    rows = {(row.model, row.setting): row for row in rule.rows}
    on_rule = rows["org/model", "five-shot on RULE (2 of 5 splits)"].cells["rule/subq_acc"]
    assert (on_rule.value, on_rule.pm) == (0.5, 0.25)
    assert rows["org/model", "five-shot on ReClor (2 of 5 splits)"].cells["rule/subq_acc"].value == 0.625
    assert rows["InstructGPT", "five-shot on RULE, for reference"].cells["rule/subq_acc"].text == "0.701"
    assert any("--demos rule --summarize-only" in note for note in rule.notes)


def test_authors_geese_task_names_land_in_our_columns(tmp_path: Path) -> None:
    """A results file of the authors' own tasks beside a run of ours, same model: two rows, same columns."""
    authors = {
        "geese_prediction_noexp": 0.54375,
        "geese_prediction_dummy": 0.585,
        "geese_prediction_human": 0.7575,
        "geese_prediction_whyexp": 0.78125,
        "geese_prediction_whynot": 0.625,
        "geese_prediction_implicit": 0.5,
        "geese_prediction_obvious": 1.0,
    }
    (tmp_path / "results_authors.json").write_text(json.dumps(modern_results("org/llama", authors, 1.0)))
    ours = {"geese_noexp": 0.5, "geese_llama3": 0.75}
    (tmp_path / "results_ours.json").write_text(json.dumps(modern_results("org/llama", ours, 2.0)))
    geese = next(t for t in build_tables(load_runs([tmp_path])[0]) if t.key == "geese")
    rows = {row.model: row for row in geese.rows if row.kind == "run"}
    assert set(rows) == {"org/llama", "org/llama (authors' GEESE tasks)"}
    theirs = rows["org/llama (authors' GEESE tasks)"].cells
    for task, ours_name in geese_board.AUTHORS_TASKS.items():
        assert theirs[f"{ours_name}/acc"].value == authors[task]
    assert theirs["geese_llama3/effectiveness"].value == pytest.approx(0.78125 - 0.54375)
    assert theirs["geese_prediction_obvious/acc"].value == 1.0  # no task of ours: keeps its name, same row
    assert rows["org/llama"].cells["geese_llama3/acc"].value == 0.75
    keys = {column.key for column in geese.columns}
    assert not any(key.startswith(tuple(geese_board.AUTHORS_TASKS)) for key in keys)
    assert "geese_prediction_obvious/acc" not in rows["org/llama"].cells
    mapped = "geese_llama3 <- geese_prediction_whyexp"
    assert any("authors' task names" in note and mapped in note for note in geese.notes)


def test_authors_geese_mapping_pairs_the_same_hints() -> None:
    """Each authors' task maps to our task whose prompt equals theirs (tests/geese checks the prompts)."""
    from_prompts = {name: f"geese_{setting}" for setting, (name, _) in AUTHORS_PROMPTS.items()}
    assert from_prompts == geese_board.AUTHORS_TASKS


def test_limited_runs_and_mismatched_sizes_are_flagged(tmp_path: Path) -> None:
    data = modern_results("org/model", {"geese_noexp": 0.5, "geese_human": 0.75}, 1.0, limit=4)
    data["n-samples"]["geese_noexp"]["effective"] = 3
    (tmp_path / "results_x.json").write_text(json.dumps(data))
    geese = next(t for t in build_tables(load_runs([tmp_path])[0]) if t.key == "geese")
    notes = " ".join(geese.notes)
    assert "ran on part of the data" in notes and "different size" in notes
    (row,) = [row for row in geese.rows if row.kind == "run"]
    assert row.subsets == {"geese_noexp": "--limit 4, 3 docs", "geese_human": "--limit 4, 800 docs"}


def test_runs_cut_by_samples_are_flagged_too(tmp_path: Path) -> None:
    """``--samples`` leaves no limit in the config; fewer effective than original docs shows it."""
    data = modern_results("org/model", {"geese_noexp": 0.5}, 1.0)
    data["n-samples"]["geese_noexp"]["effective"] = 6
    (tmp_path / "results_x.json").write_text(json.dumps(data))
    (run,) = load_runs([tmp_path])[0]
    assert run.subset == "6 of 800 docs" and run.setting == ""


def test_truncated_and_foreign_files_are_reported_and_skipped(tmp_path: Path, capsys) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(OLD_03, runs / "old")
    text = (OLD_03 / "results.json").read_text()
    (runs / "results_truncated.json").write_text(text[: len(text) // 2])
    (runs / "results_list.json").write_text("[1, 2]")
    code = leaderboard.main([str(runs), "--out", str(tmp_path / "board")])
    assert code == 0
    err = capsys.readouterr().err
    assert "results_truncated.json: not valid JSON" in err and "results_list.json" in err
    index = (tmp_path / "board" / "index.md").read_text()
    assert "runs/results_truncated.json" in index and "Skipped files" in index
    assert str(tmp_path) not in index  # named below its input folder, as the page names it
    assert same(read_csv(tmp_path / "board" / "geese.csv")["EleutherAI/pythia-160m"]["geese_noexp acc"], 0.55125)
    assert leaderboard.main([str(runs), "--out", str(tmp_path / "strict"), "--strict"]) == 1


def test_a_missing_or_empty_input_is_one_line_and_a_failing_exit(tmp_path: Path, capsys) -> None:
    """A missing folder: exit 2 before anything is read or written; a folder with no readable
    results: exit 1 naming what was skipped and what to pass (the page would be empty)."""
    missing = tmp_path / "no-such-runs"
    assert leaderboard.main([str(missing), "--out", str(tmp_path / "board")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"explain-eval leaderboard: {missing}: no such file or folder "
        "(give the folders lm_eval --output_path wrote, or their results files)"
    ]
    assert not (tmp_path / "board").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "results_list.json").write_text("[1, 2]")
    assert leaderboard.main([str(empty), "--out", str(tmp_path / "board")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith(f"skipped {empty / 'results_list.json'}: ")
    assert err[-1].startswith(f"explain-eval leaderboard: no readable results under {empty}") and "--paper" in err[-1]
    assert len(err) == 2 and not (tmp_path / "board").exists()
    assert leaderboard.main([str(empty), "--out", str(tmp_path / "board"), "--paper", "reg"]) == 0  # asked for


def test_outputs_are_one_self_contained_folder(board) -> None:
    _, tmp_path = board
    page = (tmp_path / "index.html").read_text()
    # Everything the page loads sits in the folder: relative assets, deferred (the first paint
    # waits for none), no URL with a host but the model links of Hub ids.
    assert re.findall(r'<script defer src="([^"]+)"', page) == ["assets/datatables.js", "assets/leaderboard.js"]
    # plotly.js is named, and added by leaderboard.js after the load event, when charts are drawn
    assert re.findall(r'<meta name="explain-eval-plotly" content="([^"]+)"', page) == ["assets/plotly-basic.min.js"]
    assert re.findall(r"<script src=", page) == []
    assert not re.search(r'src="(https?:)?//', page)
    assert set(re.findall(r'href="(https?://[^/"]+)', page)) <= {"https://huggingface.co"}
    for asset in ("leaderboard.js", "leaderboard.css", "datatables.js", "plotly-basic.min.js"):
        assert (tmp_path / "assets" / asset).stat().st_size > 1000
    markdown = (tmp_path / "geese.md").read_text()
    assert "| EleutherAI/pythia-160m |  | run | full data | 0.5513 ± 0.0176 |" in markdown
    assert "GEESE (Zaninello & Magnini, CLiC-it 2024) Table 2" in markdown
    for key in (*PAPER_KEYS, "other", "index"):
        assert (tmp_path / f"{key}.md").is_file()
    assert (tmp_path / "samples" / "index.html").is_file()


def test_ibe_report_joins_the_ibe_table(board) -> None:
    runs, problems = load_ibe_tables([LB_FIXTURES / "ibe-report"])
    assert problems == []
    by_task = {run.task: run for run in runs}
    assert set(by_task) == {"ibe_copa_selection", "ibe_judge_copa"}
    assert (by_task["ibe_copa_selection"].model, by_task["ibe_copa_selection"].n_samples) == ("gemma-fp32", 8)
    assert by_task["ibe_copa_selection"].scores[("cum_uncertainty", None)].value == 0.75
    assert math.isnan(by_task["ibe_copa_selection"].scores[("uncertainty", None)].value)
    row = read_csv(board[1] / "ibe.csv")["gemma-fp32"]
    assert same(row["ibe_copa_selection consistency (Consistency)"], 0.625) and same(
        row["ibe_copa_selection random (Random)"], 0.5
    )
    assert same(row["ibe_judge_copa acc"], 0.375)
    # The harness run of the same pair keeps its own columns beside the selector's.
    assert same(row["ibe_copa well_formed"], 0.875) and same(row["ibe_copa #samples"], 16)
    assert same(row["ibe_copa_selection #samples"], 8)
    # Which models scored the explanations travels from report.json into the table's notes.
    notes = next(t for t in board[0] if t.key == "ibe").notes
    assert (
        "gemma-fp32 ibe_copa_selection: coherence judge lm:/models/gemma-3-270m-hf "
        "(seqcls:ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli unavailable: OSError); uncertainty lexicon "
        "(certainty model pedropei/sentence-level-certainty unavailable: OSError)." in notes
    )
    assert "coherence judge lm:gemma-3-270m (embedded)" in (board[1] / "ibe.md").read_text()  # no machine path


def test_ibe_report_problems_are_named(tmp_path: Path) -> None:
    shutil.copytree(LB_FIXTURES / "ibe-report", tmp_path / "ok")
    report = tmp_path / "ok" / "gemma-fp32" / "ibe_copa" / "ibe" / "report.json"
    (tmp_path / "ok" / "gemma-fp32" / "ibe_copa" / "sweep_pair.json").unlink()
    data = json.loads(report.read_text().replace("NaN", "null"))
    report.write_text(json.dumps({key: value for key, value in data.items() if key != "model"}))
    runs, problems = load_ibe_tables([tmp_path / "ok"])
    assert runs == [] and problems[0].path == report and "sweep_pair.json" in problems[0].reason
    old = {"table1": data["datasets"]["copa"]["table1"], "model": "m", "task": "ibe_copa"}
    report.write_text(json.dumps(old))  # the layout before per-dataset reports
    assert "rerun `explain-eval ibe report " in load_ibe_tables([tmp_path / "ok"])[1][0].reason
    report.write_text('{"datasets": {"copa": {"table1": [{"row": "Random"')
    assert "not readable JSON" in load_ibe_tables([tmp_path / "ok"])[1][0].reason


def test_ibe_report_judge_rows_name_the_judge(tmp_path: Path) -> None:
    """A9 report of both datasets: selection columns in the writer's row, judge accuracy in the judge's
    (the fixture's report has a model judging its own explanations: one row)."""
    table = (report_file.TableRow("Composed Model", "+ Linguistic Uncertainty", 0.75),)
    folder = FeaturesFolder(tmp_path)
    features_file.write(folder, features_file.Origin(("in.jsonl",), "0"), [{"qid": "copa-1"}], [])
    header = features_file.read_header(folder.features)
    report = report_file.Report(
        report_file.FeaturesRef(1, header.rows_sha256, "0"),
        {
            "copa": report_file.DatasetReport(table, 500, report_file.JudgeScore("org/judge", 0.5, None)),
            "ecare": report_file.DatasetReport(table, 500, report_file.JudgeScore(None, 0.25, None)),
        },
        model="org/writer",
    )
    report_file.write(folder, report)
    runs, problems = load_ibe_tables([tmp_path])
    assert problems == []
    found = {(run.model, run.task): run.scores for run in runs}
    assert set(found) == {
        ("org/writer", "ibe_copa_selection"),
        ("org/writer", "ibe_ecare_selection"),
        ("org/judge", "ibe_judge_copa"),
        ("unknown judge of org/writer", "ibe_judge_ecare"),  # never the writer's row by default
    }
    assert found[("org/judge", "ibe_judge_copa")][("acc", None)].value == 0.5


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("+ Linguistic Uncertainty", "cum_uncertainty"),
        ("Depth (Parsimony)", "depth"),
        ("GPT3.5 Judge", "judge"),
        ("+ Drift", "cum_drift"),
        ("Random", "random"),
    ],
)
def test_ibe_method_names(name: str, key: str) -> None:
    assert method_key(name) == key


def test_sweep_pair_file_names_the_model(tmp_path: Path) -> None:
    pair = tmp_path / "sweep" / "my-setting" / "geese_noexp"
    (pair / "org__model").mkdir(parents=True)
    (pair / "sweep_pair.json").write_text(json.dumps({"model": "my-setting", "task": "geese_noexp"}))
    (pair / "org__model" / "results_1.json").write_text(
        json.dumps(modern_results("org/model", {"geese_noexp": 0.5}, 1.0))
    )
    runs, _ = load_runs([tmp_path / "sweep"])
    assert [run.model for run in runs] == ["my-setting"]


@pytest.mark.e2e
def test_leaderboard_of_a_real_run_plus_old_layout(geese_run, tmp_path: Path) -> None:
    results, out = geese_run
    real_file = next(out.glob("*/results_*.json"))
    truncated = tmp_path / "elsewhere" / "results_2026-01-01T00-00-00.json"
    truncated.parent.mkdir()
    truncated.write_text(real_file.read_text()[:700])
    board = tmp_path / "board"
    assert leaderboard.main([str(out), str(OLD_03), str(truncated.parent), "--out", str(board)]) == 0

    rows = read_csv(board / "geese.csv")
    ours = rows["gemma-3-270m (embedded) (zero-shot)"]  # the embedded checkpoint, by its name
    for task in ("geese_noexp", "geese_human"):
        scores = results["results"][task]
        for metric in ("acc", "f1_macro", "acc_yes", "acc_no", "acc_unknown"):
            assert same(ours[f"{task} {metric}"], scores[f"{metric},none"]), (task, metric)
        assert same(ours[f"{task} acc ±"], scores["acc_stderr,none"]) if scores["acc_stderr,none"] != "N/A" else True
        assert same(ours[f"{task} #samples"], results["n-samples"][task]["effective"])
    effectiveness = results["results"]["geese_human"]["acc,none"] - results["results"]["geese_noexp"]["acc,none"]
    assert same(ours["geese_human effectiveness (acc − geese_noexp acc)"], effectiveness)
    old = rows["EleutherAI/pythia-160m"]
    assert same(old["geese_human effectiveness (acc − geese_noexp acc)"], 0.74 - 0.55125)
    assert rows["Llama-3-8B (zero-shot, M2)"]["geese_human acc"] == "0.7575"
    index = (board / "index.md").read_text()
    assert "elsewhere/results_2026-01-01T00-00-00.json" in index and "not valid JSON" in index
    assert str(tmp_path) not in index
    assert "ran on part of the data" in (board / "geese.md").read_text()


def test_reg_row_says_why_its_scores_are_missing(tmp_path: Path, capsys) -> None:
    """No bare NaN: |N| = 0 is explained, by the judge check when the run reports one."""
    for name, extra in (("plain", {}), ("checked", {"judge_degenerate,judged": 1.0, "judge_check_acc,judged": 0.33})):
        data = modern_results(f"org/{name}", {}, 1.0)
        scores = {"n,judged": 0, "coherence,judged": float("nan"), "success,judged": float("nan"), **extra}
        data["results"] = {"reg_chaos": {"alias": "reg_chaos", **scores}}
        data["n-samples"] = {"reg_chaos": {"original": 275, "effective": 4}}
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / "results_1.json").write_text(json.dumps(data))
    assert leaderboard.main([str(tmp_path / "runs"), "--out", str(tmp_path / "board")]) == 0
    lines = {line.split("|")[0].strip(): line for line in capsys.readouterr().out.splitlines() if "reg_chaos" in line}
    plain, checked = lines["REG    org/plain · non-thinking"], lines["REG    org/checked · non-thinking"]
    assert "coherence undefined" in plain and "NaN" not in plain
    assert "|N| = 0" in plain and "usually a weak judge" in plain and "Choosing the judge" in plain
    assert "judge is degenerate" in checked and "0.33 on its sanity check" in checked
    # REG's only filter ("judged") names no column: the run lines up with the paper's rows.
    reg = read_csv(tmp_path / "board" / "reg.csv")
    assert reg["org/plain"]["reg_chaos coherence"] == "nan" and reg["Gemma-4-31B-it (thinking)"]["reg_chaos success"]


def _make_variable(name: str) -> str:
    """A one-line ``NAME := value`` of the Makefile."""
    (line,) = [line for line in (REPO / "Makefile").read_text().splitlines() if line.startswith(f"{name} :=")]
    return line.split(":=", 1)[1].strip()


@pytest.fixture(scope="module")
def demo_board(tmp_path_factory: pytest.TempPathFactory) -> leaderboard.Leaderboard:
    """The leaderboard of the demo's real generation step (IBE scored: its proof steps too)."""
    return leaderboard.build_leaderboard([LB_FIXTURES / "demo-generation"], tmp_path_factory.mktemp("demo-board"))


def test_the_demos_summary_has_a_line_for_every_generated_task(demo_board: leaderboard.Leaderboard) -> None:
    """``make demo``'s last stage prints one line per task: GEESE M1 and IBE's generation task
    too, whose metrics are charted nowhere (their lines were missing)."""
    lines = leaderboard.summary(demo_board)
    for task in _make_variable("DEMO_GENERATED_TASKS").split(","):
        (line,) = [line for line in lines if f"| {task}: " in line]
        assert "(⚠ " in line, line  # each says it ran on a few docs
    (m1,) = [line for line in lines if "| geese_generate_whyexp: " in line]
    assert "words 128.3" in m1 and "masked label words 1.0000" in m1


def test_ibe_proof_steps_stand_beside_the_explanation_in_the_sample_viewer(demo_board: leaderboard.Leaderboard) -> None:
    """The viewer's IBE page: each explanation's proof steps and per-step coherence in the columns
    right after it (they came after every feature column, off-screen to the right)."""
    (page,) = [path for path in demo_board.written[1].parent.glob("ibe-*-ibe_copa.html")]
    head = page.read_text(encoding="utf-8").split("<thead>", 1)[1].split("</thead>", 1)[0]
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", head)
    at = headers.index("explanation")
    assert headers[at : at + 3] == ["explanation", "proof steps", "coherence per step"], headers
    assert headers.index("proof steps") < headers.index("IBE flag")  # before the feature columns


def test_a_nan_na_or_missing_stderr_is_none_and_never_shown(tmp_path: Path, capsys) -> None:
    """lm-eval 0.5 bootstraps every custom aggregation: a resample without a selective subquestion
    gives a NaN stderr. Read as none, like "N/A" and no stderr at all: no "± NaN", no interval on it."""
    data = modern_results("org/next", {}, 1.0)
    data["results"] = {
        "rule_sub": {
            "alias": "rule_sub",
            "subq_acc,none": 0.5,
            "subq_acc_stderr,none": 0.25,
            "selective_acc,none": 0.5,
            "selective_acc_stderr,none": float("nan"),
            "eliminative_acc,none": 0.5,
            "eliminative_acc_stderr,none": "N/A",
            "none_acc,none": 0.5,
        }
    }
    data["n-samples"] = {"rule_sub": {"original": 3003, "effective": 4}}
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "results_2026-01-01T00-00-00.json").write_text(json.dumps(data))  # NaN as the harness writes it
    (run,) = read_results_file(runs / "results_2026-01-01T00-00-00.json")
    stderrs = {metric: score.stderr for (metric, _), score in run.scores.items()}
    assert stderrs == {"subq_acc": 0.25, "selective_acc": None, "eliminative_acc": None, "none_acc": None}
    assert leaderboard.main([str(runs), "--out", str(tmp_path / "board")]) == 0
    row = read_csv(tmp_path / "board" / "rule.csv")["org/next"]
    assert row["rule_sub subq_acc ±"] == "0.25"
    assert [row.get(f"rule_sub {metric} ±", "") for metric in ("selective_acc", "eliminative_acc", "none_acc")] == [
        ""
    ] * 3
    for shown in (capsys.readouterr().out, (tmp_path / "board" / "rule.md").read_text()):
        assert "0.5000 ± 0.2500" in shown and "± NaN" not in shown and "± nan" not in shown
