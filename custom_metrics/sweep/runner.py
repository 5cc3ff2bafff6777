"""One model x task pair through ``lm_eval``, resumably (the sweep's loop is ``batch.run_sweep``).

Each pair gets its own folder ``OUT/<model>/<task>/`` holding the harness output, its log,
``sweep_pair.json`` (the model setting's name, which the leaderboard shows) and
``lm_eval.done``, written atomically only once ``lm_eval`` exited 0 and left a complete
results file; a pair with that marker is skipped, so an interrupted sweep resumes.

A pair runs exactly once whatever is killed when: a pair not done but with a run record
(``child.py``) is settled first (``settle_earlier_run``: wait, adopt, or set aside), and no
folder under OUT may be a symbolic link (``checked_folder``). The sweep names no paper: a
paper's ``PaperSpec`` supplies its ``post_run`` step and its ``samples_input`` tasks.

A model is given as ``NAME::MODEL_ARGS``, as ``MODEL_ARGS`` or as a bare checkpoint (which
becomes ``pretrained=<it>``); ``pretrained=embedded`` is the suite's embedded checkpoint.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import atomic_write_bytes, refuse_linked_folders
from custom_metrics.common.harness_outputs import IncompleteRun, check_finished, set_aside
from custom_metrics.common.paper_spec import PaperSpec, PostRun, SamplesInput
from custom_metrics.common.results import PAIR_FILE, ResultsFileError, parse_model_args, read_results_file
from custom_metrics.common.task_folders import TASKS_PATH
from custom_metrics.sweep.child import (
    RUN_FILE,
    clear_record,
    group_alive,
    read_record,
    run_child,
    still_running,
    verifiable,
    wait_until_gone,
)

DONE_FILE = "lm_eval.done"
POST_RUN_DONE = "post_run.done"
POST_RUN_LOG = "post_run.log"
DEFAULT_INCLUDE = TASKS_PATH  # the installed task folders (explain-eval tasks-path)
EMBEDDED = "embedded"  # pretrained=embedded: the suite's embedded gemma-3-270m checkpoint


@dataclass(frozen=True)
class ModelSetting:
    name: str
    model_args: str


@dataclass
class SweepOptions:
    models: list[ModelSetting]
    tasks: list[str]
    out: Path
    limit: str | None = None
    backend: str = "hf"
    launcher: str = "plain"
    num_processes: int | None = None
    batch_size: str = "8"
    device: str | None = None
    include_path: Path = DEFAULT_INCLUDE
    extra: list[str] = field(default_factory=list)


@dataclass
class PairOutcome:
    model: str
    task: str
    folder: Path
    status: str  # skipped | done | adopted | failed (and pending, for cluster jobs)
    detail: str = ""


def parse_models(text: str, common_args: str = "") -> list[ModelSetting]:
    """Model settings from the ``--models`` string; names must be unique."""
    common = parse_model_args(common_args) if common_args else {}
    settings = []
    for item in text.split():
        name, sep, args = item.partition("::")
        if not sep:
            name, args = "", item
        if "=" not in args:
            args = f"pretrained={args}"
        merged = {**common, **parse_model_args(args)}
        name = name or merged.get("pretrained") or merged.get("model") or args
        if merged.get("pretrained") == EMBEDDED:
            from custom_metrics.common.embedded_model import ensure_checkpoint

            merged["pretrained"] = str(ensure_checkpoint())
        settings.append(ModelSetting(name, ",".join(f"{k}={v}" for k, v in merged.items())))
    names = [folder_name(setting.name) for setting in settings]
    duplicates = sorted({s.name for s in settings if names.count(folder_name(s.name)) > 1})
    if duplicates:
        raise ValueError(
            f"model settings need distinct names (and folders), clashing: {duplicates}; name them with NAME::MODEL_ARGS"
        )
    if not settings:
        raise ValueError("no model given")
    return settings


def parse_tasks(text: str) -> list[str]:
    """Tasks in the given order, except that a task reading another task's samples (its
    paper's ``samples_input``) runs after that task."""
    tasks = list(dict.fromkeys(task for task in re.split(r"[,\s]+", text) if task))
    if not tasks:
        raise ValueError("no task given")

    def rank(index_task: tuple[int, str]) -> float:
        index, task = index_task
        source = source_task(task)
        return tasks.index(source) + 0.5 if source in tasks[index:] else index

    return [task for _, task in sorted(enumerate(tasks), key=rank)]


def _paper(task: str) -> PaperSpec:
    from custom_metrics.leaderboard.registry import paper_of  # the papers' specs load their data modules

    return paper_of(task)


def samples_input(task: str) -> SamplesInput | None:
    return _paper(task).runs.samples_input


def source_task(task: str) -> str | None:
    """The task whose logged samples ``task`` reads (run first, same model), else None."""
    reads = samples_input(task)
    return reads.source(task) if reads else None


def post_run_of(task: str) -> PostRun | None:
    """The step the task's paper runs after ``lm_eval`` on its pairs, if any."""
    step = _paper(task).runs.post_run
    return step if step is not None and task in step.tasks else None


def folder_name(text: str) -> str:
    """A single path component for a model or task name: never ``.``/``..``, never a separator."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "model"
    return name.replace(".", "_") if not name.strip(".") else name


def pair_folder(out: Path, setting: ModelSetting, task: str) -> Path:
    """``OUT/<model>/<task>``: inside ``out`` whatever the names (see ``folder_name``)."""
    return out / folder_name(setting.name) / folder_name(task)


def default_device() -> str:
    try:
        import torch
    except ImportError:
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"


def newest_samples(folder: Path, task: str) -> Path | None:
    found = sorted(folder.rglob(f"samples_{task}_*.jsonl"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def task_arguments(options: SweepOptions, setting: ModelSetting, task: str) -> list[str]:
    """``options.extra`` for one task: a task with a ``samples_input`` reads the samples that
    the same model setting logged in its source task's pair, added to any ``--metadata`` JSON
    the user gave (e.g. a REG judge), unless that already names them."""
    extra = list(options.extra)
    reads = samples_input(task)
    source = reads.source(task) if reads else None
    if reads is None or source is None:
        return extra
    at = extra.index("--metadata") + 1 if "--metadata" in extra else None
    try:
        metadata = json.loads(extra[at]) if at is not None and at < len(extra) else {}
    except ValueError:
        return extra  # key=value metadata: the user's to complete
    if not isinstance(metadata, dict) or reads.metadata_key in metadata:
        return extra
    source_folder = pair_folder(options.out, setting, source)
    refuse_linked_folders(options.out, source_folder, "the sweep")
    samples = newest_samples(source_folder, source)
    if samples is None:
        raise FileNotFoundError(
            f"{task} reads the samples of this model's {source} run, and there is none: "
            f"add {source} to --tasks, or give the file with --lm-eval-args "
            f'"--metadata \'{{\\"{reads.metadata_key}\\": \\"PATH\\"}}\'"'
        )
    value = json.dumps({**metadata, reads.metadata_key: str(samples)})
    if at is None:
        return [*extra, "--metadata", value]
    extra[at] = value
    return extra


def lm_eval_command(options: SweepOptions, setting: ModelSetting, task: str, folder: Path) -> list[str]:
    """The harness command line of one pair, or of a model's comma-joined tasks (also shown
    to the user, so it can be rerun)."""
    if options.launcher == "accelerate" and options.backend == "vllm":
        raise ValueError(
            "vLLM parallelises itself (tensor_parallel_size / data_parallel_size "
            "in --model-args); use --launcher plain with --backend vllm"
        )
    command = [sys.executable, "-m"]
    if options.launcher == "accelerate":
        command += ["accelerate.commands.launch"]
        if options.num_processes:
            command += ["--num_processes", str(options.num_processes)]
        command += ["-m"]
    command += [
        "lm_eval",
        "--model",
        options.backend,
        "--model_args",
        setting.model_args,
        "--tasks",
        task,
        "--batch_size",
        options.batch_size,
        "--include_path",
        str(options.include_path),
        "--log_samples",
        "--output_path",
        str(folder),
    ]
    # accelerate places each process on its own GPU; vLLM picks its devices itself.
    if options.launcher == "plain" and options.backend == "hf":
        command += ["--device", options.device or default_device()]
    if options.limit is not None:
        command += ["--limit", str(options.limit)]
    # several comma-joined tasks (batch.py) never include one that reads another's samples
    return command + (list(options.extra) if "," in task else task_arguments(options, setting, task))


def pair_complete(folder: Path, task: str) -> bool:
    """The pair needs nothing more: lm_eval finished, and the paper's post-run step too if it has one."""
    return is_complete(folder) and (post_run_of(task) is None or is_complete(folder, POST_RUN_DONE))


def is_complete(folder: Path, marker: str = DONE_FILE) -> bool:
    """True when the pair's marker exists and every results file it names is still there."""
    path = folder / marker
    try:
        done = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return all((folder / name).is_file() for name in done.get("results", []))


def write_json_atomic(path: Path, data: dict) -> None:
    """Readers see the old file or the whole new one, even across a crash or two writers at once;
    a failed write (a full disk) leaves no temporary file (``files.atomic_write_bytes``)."""
    atomic_write_bytes(path, json.dumps(data, indent=2).encode("utf-8"))


def mark_done(folder: Path, command: list[str], results: list[Path], **details: Any) -> None:
    """The pair's ``lm_eval.done``: the command that made it, when, and the results files it left."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    named = [str(path.relative_to(folder)) for path in results]
    write_json_atomic(folder / DONE_FILE, {"command": command, "finished": stamp, **details, "results": named})


def checked_folder(out: Path, folder: Path) -> Path:
    """``folder`` under ``out``, made if missing, once no folder on the way to it or under it is a
    symbolic link (else a DataError naming the link): the sweep renames and writes only inside ``out``."""
    refuse_linked_folders(out, folder, "the sweep")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _tail(log: Path) -> str:
    try:
        return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:])
    except OSError:
        return ""


def run_pair(
    options: SweepOptions, setting: ModelSetting, task: str, say: Callable[[str], None] = print
) -> PairOutcome:
    folder = pair_folder(options.out, setting, task)
    try:
        checked_folder(options.out, folder)
    except DataError as error:
        return PairOutcome(setting.name, task, folder, "failed", str(error))
    if is_complete(folder):
        outcome = PairOutcome(setting.name, task, folder, "skipped", skip_detail(options, setting, task, folder))
    else:
        outcome = settle_earlier_run(options, setting, task, folder, say) or _run_lm_eval(
            options, setting, task, folder
        )
        if outcome.status == "failed":
            return outcome
    return finish_pair(task, outcome)


def finish_pair(task: str, outcome: PairOutcome) -> PairOutcome:
    """The paper's post-run step of a pair whose ``lm_eval`` is done, unless that is done too."""
    step = post_run_of(task)
    if step is not None and not is_complete(outcome.folder, POST_RUN_DONE):
        return _run_post(step, task, outcome.folder, outcome)
    return outcome


def settle_earlier_run(
    options: SweepOptions, setting: ModelSetting, task: str, folder: Path, say: Callable[[str], None] = print
) -> PairOutcome | None:
    """What became of an earlier attempt at a pair that is not done, before it runs again: a
    recorded ``lm_eval`` still running here is waited for, one that finished with this sweep's
    command and left whole outputs is adopted (its outcome returned), any other run's files are set
    aside. A record from another host fails the pair, except inside a cluster job (the cluster sweep
    submits a pair only once its earlier job has ended).
    """
    try:
        record = read_record(folder)
    except DataError as error:
        return PairOutcome(setting.name, task, folder, "failed", str(error))
    if record is not None:
        running = still_running(record)
        if running is None and not os.environ.get("SLURM_JOB_ID"):
            return PairOutcome(
                setting.name,
                task,
                folder,
                "failed",
                f"lm_eval was started for this pair on {record.get('host')} (pid {record['pid']}, "
                f"{record.get('started', '?')}) and has not finished; this machine cannot see that process. "
                f"Once it is over, delete {folder / RUN_FILE} and run the sweep again.",
            )
        if running is False and not verifiable(record) and group_alive(record["process_group"]):
            say(
                f"{folder / RUN_FILE} names the live pid {record['pid']} without its start time (start_ticks), "
                "so it cannot be told from an unrelated process: treated as ended"
            )
        if running:
            wait_until_gone(record, say)
        adopted = _adopt(options, setting, task, folder, record)
        if adopted is not None:
            return adopted
    moved = set_aside_unfinished(folder)
    if moved:
        say(f"set aside the files of an unfinished earlier run: {', '.join(str(p.relative_to(folder)) for p in moved)}")
    clear_record(folder)
    return None


def set_aside_unfinished(folder: Path) -> list[Path]:
    """Set aside the harness outputs in a folder that no marker names (its run is not done)."""
    patterns = ("results*.json", "samples_*.jsonl")
    return set_aside(sorted(path for pattern in patterns for path in folder.rglob(pattern) if path.is_file()))


def _adopt(options: SweepOptions, setting: ModelSetting, task: str, folder: Path, record: dict) -> PairOutcome | None:
    """The marker for a recorded run that finished after its sweep stopped, if it did finish."""
    try:
        command = lm_eval_command(options, setting, task, folder)
    except (FileNotFoundError, DataError):
        return None
    if comparable(record.get("command") or [], options) != comparable(command, options):
        return None
    results = sorted(folder.rglob("results*.json"))
    try:
        if not results:
            return None
        for path in results:
            check_finished(path)
            read_results_file(path)
    except (IncompleteRun, ResultsFileError):
        return None
    sweep = record.get("sweep_pid", "?")
    detail = f"adopted the run of pid {record['pid']}, which finished after its sweep (pid {sweep}) stopped"
    mark_done(folder, record["command"], results, adopted=detail)
    clear_record(folder)
    return PairOutcome(setting.name, task, folder, "adopted", detail)


def start_pair(options: SweepOptions, setting: ModelSetting, task: str, folder: Path) -> None:
    """The pair file of a run about to fill ``folder``; new samples need a new post-run step."""
    (folder / POST_RUN_DONE).unlink(missing_ok=True)
    write_json_atomic(
        folder / PAIR_FILE,
        {"model": setting.name, "model_args": setting.model_args, "task": task, "backend": options.backend},
    )


def _run_lm_eval(options: SweepOptions, setting: ModelSetting, task: str, folder: Path) -> PairOutcome:
    start_pair(options, setting, task, folder)
    try:
        command = lm_eval_command(options, setting, task, folder)
    except (FileNotFoundError, DataError) as error:  # no source samples, or a linked source folder
        return PairOutcome(setting.name, task, folder, "failed", str(error))
    log = folder / "lm_eval.log"
    before = set(folder.rglob("results*.json"))
    started = time.time()
    try:
        code = run_child(command, log, record_in=folder)
    except DataError as error:  # the log is a link or no regular file: refused, never written through
        return PairOutcome(setting.name, task, folder, "failed", str(error))
    new = sorted(set(folder.rglob("results*.json")) - before)
    reason = why_unfinished(code, new)
    if reason:
        clear_record(folder)
        return PairOutcome(setting.name, task, folder, "failed", f"{reason}; log {log}:\n{_tail(log)}")
    mark_done(folder, command, new, seconds=round(time.time() - started, 1))
    clear_record(folder)
    return PairOutcome(setting.name, task, folder, "done", f"{time.time() - started:.0f} s")


def why_unfinished(code: int, new_results: list[Path]) -> str:
    """Empty when lm_eval exited 0 and every results file it wrote reads as a whole results file."""
    if code:
        return f"lm_eval exited {code}"
    if not new_results:
        return "lm_eval wrote no results file"
    for path in new_results:
        try:
            read_results_file(path)
        except ResultsFileError as error:
            return f"the results file {path} is incomplete ({error})"
    return ""


def skip_detail(options: SweepOptions, setting: ModelSetting, task: str, folder: Path) -> str:
    """Says so when a finished pair was made with other arguments than this sweep's."""
    try:
        done = json.loads((folder / DONE_FILE).read_text(encoding="utf-8"))
        current = lm_eval_command(options, setting, task, folder)
    except (OSError, ValueError, DataError):
        return "already complete"
    if comparable(done.get("command", []), options) == comparable(current, options):
        return "already complete"
    return (
        f"already complete, but made with other arguments ({shlex.join(done.get('command', []))}); "
        "delete the folder to rerun it"
    )


def comparable(command: list[str], options: SweepOptions) -> list[str]:
    """A command without what legitimately differs between machines: the interpreter path and,
    unless the user chose one, the device picked where it ran (a cluster job's GPU, a login node's CPU)."""
    rest = list(command[1:])
    if options.device is None and "--device" in rest[:-1]:
        at = rest.index("--device")
        del rest[at : at + 2]
    return rest


def _run_post(step: PostRun, task: str, folder: Path, outcome: PairOutcome) -> PairOutcome:
    """The paper's post-run commands on the pair's newest samples; done when they exit 0 and
    leave their outputs."""
    log = folder / POST_RUN_LOG

    def failed(detail: str) -> PairOutcome:
        return PairOutcome(outcome.model, task, folder, "failed", f"{step.name}: {detail}")

    samples = newest_samples(folder, task)
    if samples is None:
        return failed(f"no samples_{task}_*.jsonl under {folder}")
    commands = step.commands(samples, folder)
    for command in commands:
        try:
            code = run_child(command, log)
        except DataError as error:
            return failed(str(error))
        if code != 0:
            return failed(f"`{shlex.join(command)}` exited {code}; log {log}:\n{_tail(log)}")
    missing = [path for path in step.outputs(folder) if not path.is_file()]
    if missing:
        return failed(f"wrote no {missing[0]}; log {log}")
    results = [str(path.relative_to(folder)) for path in step.outputs(folder)]
    write_json_atomic(folder / POST_RUN_DONE, {"commands": commands, "results": results})
    return PairOutcome(outcome.model, task, folder, outcome.status, f"{outcome.detail}; {step.name} done")
