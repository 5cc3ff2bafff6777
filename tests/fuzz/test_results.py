"""Leaderboard inputs: lm-eval results files of any version and the IBE ``report.json``.

Any JSON (bare NaN and Infinity included, as Python writes them) is read into task runs
whose counts are whole numbers and whose scores are numbers or missing, or refused with a
ResultsFileError; across a folder
every file yields runs or one problem naming it, so one bad file never hides the others;
a well-formed results file loses no task and no metric.
"""

from __future__ import annotations

import json
import math
import os
import signal
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from custom_metrics.common.results import ResultsFileError, TaskRun, load_runs, read_results_file
from custom_metrics.ibe.selection import load_ibe_tables, selection_runs
from ibe_postprocess import report_file
from tests.fuzz.support import SECONDS, json_values, scratch, within

pytestmark = pytest.mark.fuzz
T = TypeVar("T")

OWNED_BY_BOARD = (
    "owned by board (custom_metrics/common/results.py, ibe_postprocess/report_file.py; validated on "
    "issue14-leaderboard): a NaN sample count crashes the reader (ValueError), wrong-typed fields pass through"
)


def _finite_or_none(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isfinite(value))


def _check_run(run: TaskRun) -> None:
    assert isinstance(run.model, str) and run.model.strip() and isinstance(run.task, str)
    assert run.n_samples is None or (type(run.n_samples) is int and run.n_samples >= 0)
    assert _finite_or_none(run.limit) and math.isfinite(run.timestamp)
    assert run.harness_version is None or isinstance(run.harness_version, str)
    for score in run.scores.values():  # NaN is the harness' own "no value" (an empty category)
        assert all(value is None or type(value) is float for value in (score.value, score.stderr)), score


numbers = st.one_of(
    st.floats(), st.integers(-5, 10**6), st.sampled_from(["N/A", "nan", "0.5", "", "Infinity"]), st.none()
)
task_names = st.sampled_from(["geese_human", "rule", "reg_chaos", "ibe_judge_copa"]) | st.text(max_size=8)
metric_keys = st.sampled_from(["acc,none", "acc_stderr,none", "f1_macro,none", "acc", "alias", "sample_len"])
# Results files the way harness versions and careless hands shape them.
results_like = st.fixed_dictionaries(
    {"results": st.dictionaries(task_names, st.dictionaries(metric_keys, numbers | json_values, max_size=4))},
    optional={
        "n-samples": st.dictionaries(
            task_names, st.fixed_dictionaries({}, optional={"effective": numbers, "original": numbers}) | json_values
        ),
        "config": st.fixed_dictionaries(
            {}, optional={"model_args": json_values | st.just("pretrained=/ckpt/$USER"), "limit": numbers}
        )
        | json_values,
        "model_name": json_values,
        "groups": json_values,
        "date": numbers,
        "lm_eval_version": json_values,
    },
)


@given(st.one_of(results_like, json_values))
@example({"results": {"t": {"acc,none": 0.5}}, "n-samples": {"t": {"effective": math.nan}}})
def test_any_results_file_is_runs_or_a_results_file_error(data: object) -> None:
    with scratch() as base:
        path = base / "results_2026-11-30T10-00-00.json"
        path.write_text(json.dumps(data))
        try:
            runs = within(SECONDS, lambda: read_results_file(path))
        except ResultsFileError as error:
            assert str(error)
            return
        for run in runs:
            _check_run(run)


@given(st.lists(st.one_of(results_like, st.binary(max_size=30)), min_size=1, max_size=5))
@example([{"results": {"t": {"acc,none": 0.5}}}, {"results": {"t": {"acc,none": 0.5, "sample_len": math.nan}}}])
def test_every_file_of_a_folder_is_runs_or_one_problem_naming_it(files: list) -> None:
    with scratch() as base:
        paths = []
        for index, content in enumerate(files):
            path = base / f"run{index}" / "model" / f"results_2026-11-30T10-00-0{index}.json"
            path.parent.mkdir(parents=True)
            path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
            paths.append(path.resolve())
        runs, problems = within(SECONDS, lambda: load_runs([base]))
        # a value outside its range is left out of a run that is read, and named: not a file's problem
        left_out = {(run.path, reason) for run in runs for reason in run.left_out}
        unread = [problem for problem in problems if (problem.path, problem.reason) not in left_out]
        assert {problem.path for problem in unread}.isdisjoint({run.path for run in runs})
        read = {run.path for run in runs} | {problem.path for problem in problems}
        assert read == set(paths), "a file was neither read nor reported"
        assert all(problem.reason for problem in problems)


metric_names = st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True).filter(lambda n: n not in {"alias", "sample_len"})


@given(
    st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True),
        st.dictionaries(metric_names, st.floats(0, 1), min_size=1, max_size=4),
        min_size=1,
        max_size=4,
    )
)
def test_a_well_formed_results_file_loses_no_task_and_no_metric(tasks: dict[str, dict[str, float]]) -> None:
    data = {
        "results": {
            task: {"alias": task, **{f"{m},none": v for m, v in scores.items()}} for task, scores in tasks.items()
        },
        "n-samples": {task: {"original": 10, "effective": 10} for task in tasks},
        "config": {"model_args": "pretrained=/ckpt/model-a,dtype=float32", "limit": None},
    }
    with scratch() as base:
        path = base / "results_2026-11-30T10-00-00.json"
        path.write_text(json.dumps(data))
        runs = read_results_file(path)
    assert {run.task: {key: score.value for key, score in run.scores.items()} for run in runs} == {
        task: {(metric, "none"): value for metric, value in scores.items()} for task, scores in tasks.items()
    }
    assert all(run.n_samples == 10 for run in runs)


table1 = st.lists(st.fixed_dictionaries({"row": json_values, "accuracy": numbers | json_values}), max_size=4)
dataset_entry = st.fixed_dictionaries(
    {"table1": table1 | json_values},
    optional={
        "test_questions": numbers | json_values,
        "judge": st.fixed_dictionaries(
            {}, optional={"model": json_values, "accuracy": numbers, "questions": numbers | json_values}
        )
        | json_values,
    },
)
# report.json as `explain-eval ibe report` writes it, and as careless hands edit it.
HEADER = {"version": "0", "features": {"rows": 1, "rows_sha256": "0", "inputs_sha256": "0"}}
report_like = st.fixed_dictionaries(
    {
        "ibe_report": st.just(HEADER) | json_values,
        "datasets": st.dictionaries(
            st.sampled_from(["copa", "ecare"]) | st.text(max_size=5), dataset_entry | json_values
        ),
    },
    optional={"model": st.just("model-a") | json_values, "selector": json_values},
)


@given(st.one_of(report_like, json_values))
@example(
    {
        "ibe_report": HEADER,
        "model": "m",
        "datasets": {"copa": {"table1": [{"row": "Random", "accuracy": 0.5}], "test_questions": math.nan}},
    }
)
def test_any_ibe_report_is_runs_or_a_report_error(data: object) -> None:
    with scratch() as base:
        path = base / "report.json"
        path.write_text(json.dumps(data))
        try:
            runs = within(SECONDS, lambda: selection_runs(report_file.read(path, check_features=False)))
        except report_file.ReportError as error:
            assert error.reason
            return
        for run in runs:
            _check_run(run)


# --- what else a runs folder holds under the names the leaderboard reads ---------------------

NAMES = ("results_2026-11-30T10-00-00.json", "report.json", "features.jsonl")
KINDS = ("regular", "fifo", "socket", "/dev/zero", "/dev/null", "dangling", "loop", "folder")


def _place(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "regular":  # a results file; a report.json without features beside it (another tool's)
        path.write_text(json.dumps({"results": {"geese_noexp": {"acc,none": 0.5}}}))
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(path))
    elif kind == "dangling":
        path.symlink_to(path.with_name("gone"))
    elif kind == "loop":
        path.symlink_to(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to(kind)


def _no_hang(seconds: int, call: Callable[[], T]) -> T:
    """``call()``, failing if it blocks (a FIFO's ``open`` waits for a writer for ever)."""

    def stop(*_: object) -> None:
        raise TimeoutError(f"blocked for {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        return call()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@given(st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(KINDS)), min_size=1, max_size=6))
@example([("report.json", "fifo"), ("features.jsonl", "fifo")])
@example([("results_2026-11-30T10-00-00.json", "/dev/zero")])
def test_special_files_in_a_runs_folder_are_named_and_never_opened(entries: list[tuple[str, str]]) -> None:
    """FIFOs, sockets, devices, dangling or looping links, folders: each under a name the
    leaderboard reads is a problem naming it, within the bound, and never blocks; every real
    results file still gives its runs."""
    with scratch() as base:
        placed = {}
        for index, (name, kind) in enumerate(entries):
            placed[base / f"run{index}" / name] = kind
            _place(base / f"run{index}" / name, kind)
        runs, problems = _no_hang(5, lambda: within(SECONDS, lambda: load_runs([base])))
        extra_runs, extra_problems = _no_hang(5, lambda: within(SECONDS, lambda: load_ibe_tables([base])))
        named = {problem.path for problem in problems + extra_problems}
        for path, kind in placed.items():
            assert (path in named) == (kind not in ("regular", "folder")), (path, kind, problems + extra_problems)
        results = {path.resolve() for path, kind in placed.items() if kind == "regular" and path.name in NAMES[:1]}
        assert {run.path for run in runs} == results and not extra_runs
