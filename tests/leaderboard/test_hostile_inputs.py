"""Hostile and careless leaderboard inputs (issue 17): one bad file never stops the others,
names stay text everywhere, and every reader survives any JSON (hypothesis)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import custom_metrics.leaderboard.build as leaderboard
from custom_metrics.common.results import ResultsFileError, TaskRun, read_results_file
from custom_metrics.geese.leaderboard import SPEC as GEESE
from custom_metrics.ibe.selection import selection_runs
from custom_metrics.leaderboard.samples import read_logged_task
from ibe_postprocess import report_file
from tests.helpers import LEADERBOARD_FIXTURES
from tests.leaderboard.test_leaderboard import modern_results, read_csv

HOSTILE = "<script>alert('x')</script> $USER$ & <b>bold</b> | ../../etc"


def read_ibe_report(path: Path, check_features: bool = True) -> list[TaskRun]:
    return selection_runs(report_file.read(path, check_features=check_features))


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_one_bad_file_never_stops_the_others(tmp_path: Path, capsys) -> None:
    runs = tmp_path / "runs"
    write(runs / "good" / "results_1.json", modern_results("org/good", {"geese_noexp": 0.5}, 1.0))
    dollar = modern_results("/scratch/$USER/ckpt_$SLURM_JOB_ID", {"geese_noexp": 0.25}, 1.0)
    write(runs / "dollar" / "results_1.json", dollar)  # matplotlib read this as mathtext
    write(runs / "hostile" / "results_1.json", modern_results(HOSTILE, {"geese_noexp": 0.75}, 1.0))
    nan_count = modern_results("org/nan", {"geese_noexp": 0.5}, 1.0)
    nan_count["n-samples"]["geese_noexp"]["effective"] = float("nan")
    write(runs / "nan" / "results_1.json", json.dumps(nan_count))  # bare NaN, as Python writes it
    typed = modern_results("org/typed", {"geese_noexp": 0.5}, 1.0)
    typed["n-samples"] = ["not", "an", "object"]
    write(runs / "typed" / "results_1.json", typed)
    write(runs / "bytes" / "results_1.json", "")
    (runs / "bytes" / "results_1.json").write_bytes(b'{"results": {"\xff": 1}}')
    ibe = runs / "ibe"
    shutil.copytree(LEADERBOARD_FIXTURES / "ibe-report", ibe)
    report = ibe / "gemma-fp32" / "ibe_copa" / "ibe" / "report.json"
    report.write_text(report.read_text().replace('"test_questions": 8', '"test_questions": "eight"'))

    out = tmp_path / "board"
    assert leaderboard.main([str(runs), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert 'nan/results_1.json: n-samples["geese_noexp"].effective is nan, not a finite number' in err
    assert 'typed/results_1.json: field "n-samples" is a list, not an object' in err
    assert "bytes/results_1.json: not UTF-8 text" in err
    assert """report.json: datasets["copa"].test_questions is 'eight', not a number of questions""" in err
    rows = read_csv(out / "geese.csv")
    assert {"org/good", "ckpt_$SLURM_JOB_ID", HOSTILE} <= set(rows)
    assert "org/nan" not in rows and "org/typed" not in rows
    # Markdown keeps no raw HTML (backslash escapes): a renderer that passes HTML through shows it as text.
    markdown = (out / "geese.md").read_text()
    assert "<script>" not in markdown and "\\<script\\>alert('x')\\</script\\> \\$USER\\$ & \\<b\\>" in markdown
    assert "\\| ../../etc" in markdown
    page = (out / "index.html").read_text()
    assert "<script>alert" not in page and "<b>bold" not in page


def test_report_nan_and_null_read_as_missing_numbers(tmp_path: Path) -> None:
    """``ibe_postprocess report`` writes bare NaN; the page must still load (tested in the browser)."""
    folder = tmp_path / "pair"
    shutil.copytree(LEADERBOARD_FIXTURES / "ibe-report" / "gemma-fp32" / "ibe_copa", folder)
    report = folder / "ibe" / "report.json"
    report.write_text(report.read_text().replace('"accuracy": 0.375', '"accuracy": null'))
    (selection,) = read_ibe_report(report)
    assert math.isnan(selection.scores[("uncertainty", None)].value)
    for bad, message in (
        ('"accuracy": 0.5625', "table1[3].accuracy is 7, not an accuracy between 0 and 1"),
        ('"row": "Coherence"', "table1[3].row is ['Coherence'], not a row name"),
    ):
        text = report.read_text()
        broken = text.replace(bad, bad.replace("0.5625", "7").replace('"Coherence"', '["Coherence"]'))
        report.write_text(broken)
        with pytest.raises(report_file.ReportError, match=message.replace("[", r"\[").replace("]", r"\]")):
            read_ibe_report(report)
        report.write_text(text)


def test_a_broken_samples_line_is_a_flagged_row(tmp_path: Path) -> None:
    samples = tmp_path / "samples_geese_noexp_2026-01-01T00-00-00.jsonl"
    good = {"doc_id": 0, "doc": {"id": "7", "label": "NO"}, "acc": 1.0, "filtered_resps": [["-1", "False"]]}
    samples.write_text(
        json.dumps(good) + "\n" + '{"doc_id": 1, "doc": {"id": \n' + json.dumps({"doc": "not a dict"}) + "\n",
        encoding="utf-8",
    )
    run = TaskRun("m", "geese_noexp", {}, 3, None, tmp_path / "results_2026-01-01T00-00-00.json", 0.0, None)
    logged = read_logged_task(run, GEESE, samples)
    assert len(logged.rows) == 3 and logged.problems == 2
    assert logged.rows[0]["correct"] == "yes" and "problem" not in logged.rows[0]
    assert "line 2: not valid JSON" in logged.rows[1]["problem"]
    assert "line 3: not a logged sample" in logged.rows[2]["problem"]
    assert logged.outcomes == {"acc": {"7": 1.0}}


JSON = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=25,
)
# Results-shaped documents, so the fuzzer reaches past the first "no results object" check.
RESULTS = st.fixed_dictionaries(
    {"results": st.dictionaries(st.sampled_from(["geese_noexp", "rule", "x"]), JSON, max_size=3)},
    optional={
        "n-samples": JSON,
        "config": st.fixed_dictionaries({}, optional={"limit": JSON, "model_args": JSON, "model": JSON}),
        "model_name": JSON,
        "date": JSON,
        "n-shot": JSON,
        "chat_template": JSON,
        "groups": JSON,
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(JSON, RESULTS))
def test_results_reader_gives_runs_or_a_named_error(tmp_path: Path, data: object) -> None:
    path = tmp_path / "results_2026-01-01T00-00-00.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    try:
        runs = read_results_file(path)
    except ResultsFileError as error:
        assert str(error)
        return
    for run in runs:
        assert isinstance(run.model, str) and run.model
        assert run.n_samples is None or (isinstance(run.n_samples, int) and run.n_samples >= 0)
        assert run.limit is None or math.isfinite(run.limit)


DATASET_ENTRIES = st.fixed_dictionaries(
    {"table1": st.lists(st.fixed_dictionaries({"row": JSON, "accuracy": JSON}), min_size=1, max_size=3)},
    optional={"test_questions": JSON, "judge": JSON | st.fixed_dictionaries({"model": JSON, "accuracy": JSON})},
)
HEADER = {"version": "0", "features": {"rows": 1, "rows_sha256": "0", "inputs_sha256": "0"}}
REPORTS = st.fixed_dictionaries(
    {
        "ibe_report": st.just(HEADER) | JSON,
        "datasets": st.dictionaries(
            st.sampled_from(["copa", "ecare", "x"]) | st.text(max_size=4), DATASET_ENTRIES | JSON
        ),
    },
    optional={"model": JSON},
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(JSON, REPORTS))
def test_ibe_report_reader_gives_runs_or_a_named_error(tmp_path: Path, data: object) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    try:
        runs = read_ibe_report(path, check_features=False)
    except report_file.ReportError as error:
        assert error.reason
        return
    assert all(isinstance(run.model, str) and run.task.startswith("ibe_") for run in runs)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(JSON, st.text(max_size=30)), min_size=1, max_size=5))
@example(lines=["0\r0"])  # a bare carriage return is no line break in JSONL
def test_samples_reader_shows_every_line(tmp_path: Path, lines: list) -> None:
    samples = tmp_path / "samples_geese_noexp_2026-01-01T00-00-00.jsonl"
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    samples.write_text(text + "\n", encoding="utf-8")
    run = TaskRun("m", "geese_noexp", {}, None, None, tmp_path / "results_2026-01-01T00-00-00.json", 0.0, None)
    logged = read_logged_task(run, GEESE, samples)
    assert len(logged.rows) == sum(1 for line in text.split("\n") if line.strip())
    for row in logged.rows:
        json.dumps(row, allow_nan=True)  # every cell is a plain value


SHARE, LENGTH = "not a share between 0 and 1", "negative, for a mean length"
# (task, metric, a value outside its range, why): the newest metrics, once exported unchecked.
OUTSIDE = [
    ("rule_cot_faithfulness", "same_at_50", 1.5, SHARE),
    ("rule_cot_faithfulness", "early_aoc", -0.25, SHARE),
    ("rule_cot_faithfulness", "filler_same", 2, SHARE),
    ("rule_cot_faithfulness_edits", "mistake_same", 9, SHARE),
    ("reg_cot_faithfulness", "not_compared", 1.4, SHARE),
    ("ibe_judge_copa_position", "first_slot", 1.8, SHARE),
    ("reg_chaos", "cut_off", 1.5, SHARE),
    ("reg_chaos", "no_explanation", -1, SHARE),
    ("reg_chaos", "effectiveness", -0.25, SHARE),  # REG's: a share of N
    ("reg_chaos", "output_tokens", -500, LENGTH),
    ("reg_chaos", "thinking_tokens", -3, LENGTH),
    ("reg_chaos", "n", 12.5, "not a whole, non-negative count"),
    ("reg_judge_humans", "jsd", -0.5, "not a Jensen-Shannon distance, between 0 and sqrt(ln 2)"),
    ("reg_judge_humans", "jsd", 0.9, "not a Jensen-Shannon distance, between 0 and sqrt(ln 2)"),
    ("reg_judge_humans", "kl", -2, "negative, for a divergence"),
]
# (task, metric, a value inside its range)
INSIDE = [
    ("rule_cot_faithfulness", "filler_acc", 0.5),
    ("reg_judge_humans", "kl", 7.5),  # a divergence has no upper bound
    ("geese_human", "effectiveness", -0.25),  # GEESE's: a difference of two accuracies
    ("ibe_judge_copa_position", "acc", 0.5),
]


def test_each_metric_is_read_against_its_papers_range(tmp_path: Path) -> None:
    """Every metric of the suite has a range (each paper's METRIC_RANGES): a value outside it is
    left out and named, one inside kept; a metric two papers report takes its task's paper's."""
    data = modern_results("org/m", {}, 1.0)
    data["results"] = {task: {f"{metric},none": value} for task, metric, value in INSIDE}
    runs = read_results_file(write(tmp_path / "inside/results_1.json", data))
    assert [run.left_out for run in runs] == [()] * len(INSIDE)
    assert [(run.task, *run.scores) for run in runs] == [(task, (metric, "none")) for task, metric, _ in INSIDE]
    assert [score.value for run in runs for score in run.scores.values()] == [value for _, _, value in INSIDE]
    for index, (task, metric, value, why) in enumerate(OUTSIDE):
        data["results"] = {task: {f"{metric},none": value}}
        (run,) = read_results_file(write(tmp_path / f"{index}/results_1.json", data))
        assert run.left_out == (
            f'results["{task}"]["{metric},none"] is {value!r}, {why}; left out (the file\'s other numbers are read)',
        )


def test_values_outside_their_range_are_left_out_and_named(tmp_path: Path, capsys) -> None:
    runs = tmp_path / "runs"
    write(runs / "good" / "results_1.json", modern_results("org/good", {"geese_noexp": 0.5}, 1.0))
    bad = {"huge": ("acc,none", 1e308), "above": ("acc,none", 1.5), "infinite": ("acc,none", math.inf)}
    bad["negative"] = ("acc_stderr,none", -0.1)
    for name, (field, value) in bad.items():
        data = modern_results(f"org/{name}", {"geese_noexp": 0.25}, 1.0)
        data["results"]["geese_noexp"][field] = value
        write(runs / name / "results_1.json", json.dumps(data))  # bare Infinity, as Python writes it
    out = tmp_path / "board"
    assert leaderboard.main([str(runs), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    for name, (field, value) in bad.items():
        says = f'{name}/results_1.json: results["geese_noexp"]["{field}"] is {value!r}, '
        assert says in err and "left out (the file's other numbers are read)" in err, err
    rows = read_csv(out / "geese.csv")
    value, pm = "geese_noexp acc", "geese_noexp acc ±"
    assert (rows["org/good"][value], rows["org/good"][pm]) == ("0.5", "0.01")  # the others' numbers unchanged
    assert (rows["org/negative"][value], rows["org/negative"][pm]) == ("0.25", "")
    assert all(rows[f"org/{name}"][value] == rows[f"org/{name}"][pm] == "" for name in ("huge", "above", "infinite"))
    shown = [line for line in (out / "geese.md").read_text().splitlines() if "left out" not in line]
    shown += [line for line in (out / "index.html").read_text().splitlines() if "left out" not in line]
    assert not [line for line in shown if any(text in line for text in ("1.5000", "∞", "-0.1000", "1e+308", " inf"))]


@pytest.mark.parametrize(("data", "kind"), [([], "a list"), (None, "null"), ("x", "a string"), (7, "a number")])
def test_a_results_file_that_is_not_an_object_says_what_it_is(tmp_path: Path, data: object, kind: str) -> None:
    path = tmp_path / "results_2026-01-01T00-00-00.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ResultsFileError) as error:
        read_results_file(path)
    assert f"{kind} in JSON, where the lm-eval results file must be an object" in str(error.value)
