"""One ``lm_eval`` per model: each model setting is loaded once for all its pending tasks
(``run_sweep``: the sweep on this machine, model after model).

One ``lm_eval`` per pair would load each model once per task (100 models x 30 tasks: 3,000
loads). A model's pending tasks run in one ``lm_eval --tasks t1,t2,...`` into
``OUT/<model>/_batch/`` (no task folder can be named so: ``folder_name`` strips edge
underscores); each task's share of the output is then moved into its usual pair folder
with a marker whose ``command`` is the pair's own equivalent command, so the leaderboard
and a resume see what one ``lm_eval`` per pair leaves.

When the shared run fails, each task without its marker is retried alone, so a broken task
fails only itself. A judge of another task's samples needs its own ``--metadata`` and runs
alone, as does a model's only pending task.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import custom_metrics.sweep.runner as runner
from custom_metrics.common.errors import DataError
from custom_metrics.common.files import (
    RESULTS_MAX_BYTES,
    atomic_write_bytes,
    open_unlinked,
    read_regular_bytes,
    refuse_linked_folders,
)
from custom_metrics.common.harness_outputs import IncompleteRun, check_finished
from custom_metrics.common.results import ResultsFileError, read_results_file
from custom_metrics.sweep.child import (
    clear_record,
    read_record,
    run_child,
    still_running,
    stopped_by_signals,
    wait_until_gone,
)
from custom_metrics.sweep.lock import sweep_lock
from custom_metrics.sweep.runner import ModelSetting, PairOutcome, SweepOptions

BATCH_FOLDER = "_batch"
# results-file fields keyed by task name: each pair keeps its own task's (and subtasks') entries
PER_TASK_FIELDS = ("results", "groups", "group_subtasks", "configs", "versions", "n-shot", "higher_is_better")
PER_TASK_FIELDS += ("n-samples", "task_hashes")

Say = Callable[[str], None]


@dataclass(frozen=True)
class ModelPlan:
    """What a sweep does for one model: one shared ``lm_eval`` for ``shared``, one each for ``alone``."""

    setting: ModelSetting
    shared: list[str]  # pending tasks run together (two or more), else empty
    alone: list[str]  # pending tasks run on their own (judges of another task's samples, a lone task)
    complete: list[str]  # lm_eval done (a post-run step may still be pending)


def batch_folder(out: Path, setting: ModelSetting) -> Path:
    return out / runner.folder_name(setting.name) / BATCH_FOLDER


def plan_model(options: SweepOptions, setting: ModelSetting) -> ModelPlan:
    """Which of the model's tasks share one ``lm_eval``, from the pair markers alone (no process is asked)."""
    complete, together, alone = [], [], []
    for task in options.tasks:
        if runner.is_complete(runner.pair_folder(options.out, setting, task)):
            complete.append(task)
        elif runner.source_task(task) is None:
            together.append(task)
        else:
            alone.append(task)
    if len(together) < 2:
        return ModelPlan(setting, [], [*together, *alone], complete)
    return ModelPlan(setting, together, alone, complete)


def shared_command(options: SweepOptions, setting: ModelSetting, tasks: list[str]) -> list[str]:
    """The one ``lm_eval`` of a model's shared tasks (also shown by ``--dry-run``)."""
    return runner.lm_eval_command(options, setting, ",".join(tasks), batch_folder(options.out, setting))


def run_model(options: SweepOptions, setting: ModelSetting, say: Say) -> dict[str, PairOutcome]:
    """Every pair of one model: a finished shared run adopted, the shared tasks in one
    ``lm_eval``, then each task still without its marker on its own (``runner.run_pair``:
    skipped when done, its post-run step, a retry of a failed shared task)."""
    outcomes = _settle_shared_run(options, setting, say)
    plan = plan_model(options, setting)
    shared = []
    for task in plan.shared:
        if task in outcomes:
            continue
        folder = runner.pair_folder(options.out, setting, task)
        try:
            runner.checked_folder(options.out, folder)
        except DataError as error:
            outcomes[task] = PairOutcome(setting.name, task, folder, "failed", str(error))
            continue
        settled = runner.settle_earlier_run(options, setting, task, folder, say)
        if settled is None:
            shared.append(task)
        else:
            outcomes[task] = settled
    if len(shared) >= 2:
        outcomes.update(_run_shared(options, setting, shared, say))
    for task in options.tasks:
        outcome = outcomes.get(task)
        if outcome is None:
            outcomes[task] = runner.run_pair(options, setting, task, say)
        elif outcome.status != "failed":
            outcomes[task] = runner.finish_pair(task, outcome)
    return {task: outcomes[task] for task in options.tasks}


def _settle_shared_run(options: SweepOptions, setting: ModelSetting, say: Say) -> dict[str, PairOutcome]:
    """What became of the model's last shared run, before anything runs: waited for while it
    lives here, moved into the pair folders when it finished with this sweep's arguments,
    else its files set aside. Returns the outcomes of the pairs it settled."""
    folder = batch_folder(options.out, setting)
    try:
        refuse_linked_folders(options.out, folder, "the sweep")
        record = read_record(folder) if folder.is_dir() else None
    except DataError as error:  # a linked folder, a record edited by hand: each task runs alone
        say(f"{setting.name}: {error}; each task runs alone")
        return {}
    outcomes: dict[str, PairOutcome] = {}
    if record is not None:
        running = still_running(record)
        if running is None and not os.environ.get("SLURM_JOB_ID"):
            detail = (
                f"the shared lm_eval of this model was started on {record.get('host')} (pid {record['pid']}) and has "
                f"not finished; once it is over, delete {folder / runner.RUN_FILE} and run the sweep again"
            )
            return {
                task: PairOutcome(setting.name, task, runner.pair_folder(options.out, setting, task), "failed", detail)
                for task in plan_model(options, setting).shared
            }
        if running:
            wait_until_gone(record, say)
        results = sorted(folder.rglob("results*.json"))
        tasks = _tasks_in(results[0], options.tasks) if len(results) == 1 else []
        same = runner.comparable(record.get("command") or [], options) == runner.comparable(
            shared_command(options, setting, tasks), options
        )
        if len(tasks) >= 2 and same:
            detail = f"adopted the shared run of pid {record['pid']}, which finished after its sweep stopped"
            outcomes = distribute(options, setting, tasks, results[0], record["command"], None, detail)
    moved = runner.set_aside_unfinished(folder)
    if moved:
        say(f"{setting.name}: set aside the files of an unfinished shared run: {', '.join(map(str, moved))}")
    clear_record(folder)
    return outcomes


def _tasks_in(results: Path, tasks: list[str]) -> list[str]:
    """The sweep's tasks (in its order) that a shared run's results file holds."""
    try:
        data = json.loads(read_regular_bytes(results, RESULTS_MAX_BYTES, "results file"))
    except (DataError, ValueError):
        return []
    held = data.get("results") if isinstance(data, dict) else None
    return [task for task in tasks if isinstance(held, dict) and task in held]


def _run_shared(options: SweepOptions, setting: ModelSetting, tasks: list[str], say: Say) -> dict[str, PairOutcome]:
    """The shared ``lm_eval``; the outcomes of the pairs it completed (none when it failed)."""
    folder = batch_folder(options.out, setting)
    command = shared_command(options, setting, tasks)
    log = folder / "lm_eval.log"
    started = time.time()
    try:
        runner.checked_folder(options.out, folder)
        say(f"{setting.name}: {len(tasks)} tasks in one lm_eval (the model loads once; log {log})")
        code = run_child(command, log, record_in=folder)
    except DataError as error:
        say(f"{setting.name}: {error}; each task runs alone")
        return {}
    new = sorted(folder.rglob("results*.json"))
    reason = runner.why_unfinished(code, new)
    if reason or len(new) != 1:
        why = reason or "more than one results file"
        say(f"{setting.name}: the shared lm_eval failed ({why}); each task is retried alone")
        runner.set_aside_unfinished(folder)
        clear_record(folder)
        return {}
    outcomes = distribute(options, setting, tasks, new[0], command, round(time.time() - started, 1))
    clear_record(folder)
    return outcomes


def members(data: dict, task: str) -> list[str]:
    """``task`` and, for a group, every task under it (the results file's ``group_subtasks``)."""
    groups = data.get("group_subtasks") if isinstance(data.get("group_subtasks"), dict) else {}
    found, queue = [], [task]
    while queue:
        name = queue.pop(0)
        if name not in found:
            found.append(name)
            children = groups.get(name)
            queue += [child for child in children if isinstance(child, str)] if isinstance(children, list) else []
    return found


def share_of(data: dict, names: list[str]) -> dict:
    """The results file as ``lm_eval --tasks <names[0]>`` would have written it."""
    part = dict(data)
    for key in PER_TASK_FIELDS:
        if isinstance(data.get(key), dict):
            part[key] = {name: value for name, value in data[key].items() if name in names}
    return part


def distribute(
    options: SweepOptions,
    setting: ModelSetting,
    tasks: list[str],
    results: Path,
    command: list[str],
    seconds: float | None,
    adopted: str = "",
) -> dict[str, PairOutcome]:
    """Each task's share of a finished shared run moved into its pair folder and marked done;
    a task whose share is not whole is left unmarked (it is retried alone). The shared
    results file goes once every share is written (a kill before that: the rerun adopts
    the run again and writes the same files)."""
    try:
        data = json.loads(read_regular_bytes(results, RESULTS_MAX_BYTES, "results file"))
    except (DataError, ValueError):
        return {}
    stamp = results.name[len("results_") : -len(".json")]
    outcomes: dict[str, PairOutcome] = {}
    for task in tasks:
        folder = runner.pair_folder(options.out, setting, task)
        names = members(data, task)
        try:
            runner.checked_folder(options.out, folder)
        except DataError:
            continue  # a linked pair folder: the task is retried alone, which names the link
        if task not in (data.get("results") or {}):
            continue
        target = folder / results.parent.relative_to(results.parent.parent) / results.name
        target.parent.mkdir(parents=True, exist_ok=True)
        runner.start_pair(options, setting, task, folder)
        atomic_write_bytes(target, json.dumps(share_of(data, names), indent=2).encode())
        for name in names:
            samples = results.with_name(f"samples_{name}_{stamp}.jsonl")
            if samples.is_file():
                os.replace(samples, target.with_name(samples.name))
        try:
            check_finished(target)
            read_results_file(target)
        except (IncompleteRun, ResultsFileError):
            continue
        _note_in_log(folder, command, results.parent.parent / "lm_eval.log")
        runner.mark_done(
            folder,
            runner.lm_eval_command(options, setting, task, folder),
            [target],
            batch={"command": command, "tasks": tasks, "log": str(results.parent.parent / "lm_eval.log")},
            seconds=seconds,
            **({"adopted": adopted} if adopted else {}),
        )
        detail = adopted or f"{seconds:.0f} s, one lm_eval with {len(tasks) - 1} other task(s)"
        outcomes[task] = PairOutcome(setting.name, task, folder, "adopted" if adopted else "done", detail)
    results.unlink(missing_ok=True)  # every share now lives in its pair folder
    return outcomes


def _note_in_log(folder: Path, command: list[str], shared_log: Path) -> None:
    """The pair's ``lm_eval.log`` says where its run's output is (one start, as a run alone logs)."""
    try:
        descriptor = open_unlinked(folder / "lm_eval.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, "sweep log")
    except DataError:
        return  # a planted link: nothing written through it (the run itself is whole)
    with os.fdopen(descriptor, "a", encoding="utf-8") as handle:
        handle.write(
            f"\n### {time.strftime('%Y-%m-%d %H:%M:%S')} ran in one lm_eval with the model's other tasks "
            f"(its output: {shared_log}) $ {' '.join(command)}\n"
        )


def run_sweep(options: SweepOptions) -> list[PairOutcome]:
    """Every model here, one after another, each loaded once for all its pending tasks,
    under the folder's lock (a second sweep into it waits)."""
    count = len(options.models) * len(options.tasks)
    outcomes = []
    main_thread = threading.current_thread() is threading.main_thread()  # signal handlers live there only
    with (
        sweep_lock(options.out, _say, doing="running its pairs"),
        stopped_by_signals() if main_thread else nullcontext(),
    ):
        for number, setting in enumerate(options.models):
            print(f"[{setting.name}] ...", flush=True)
            by_task = run_model(options, setting, lambda text, name=setting.name: _say(f"[{name}] {text}"))
            for index, task in enumerate(options.tasks, start=number * len(options.tasks) + 1):
                outcome = by_task[task]
                print(f"[{index}/{count}] {setting.name} x {task}: {outcome.status} ({outcome.detail})", flush=True)
                outcomes.append(outcome)
    return outcomes


_say = functools.partial(print, flush=True)
