"""Run every model x task pair through ``lm_eval``, resumably, then build the leaderboard.

``explain-eval sweep --models "M1 M2" --tasks "t1,t2" --out runs/sweep``

Each pair gets its own folder ``OUT/<model>/<task>/`` holding the harness output
(``--log_samples``), the log, ``sweep_pair.json`` (the model setting's name, which the
leaderboard shows) and ``lm_eval.done``, written only after ``lm_eval`` exited 0 and left
a results file. A pair with a valid ``lm_eval.done`` is skipped, so an interrupted sweep
picks up where it stopped and a finished pair never runs twice. IBE generation pairs
(``ibe_copa``, ``ibe_ecare``) then run ``explain-eval ibe score`` and ``ibe report``
on their samples into ``OUT/<model>/<task>/ibe/`` (marker ``ibe.done``); a failure there
is reported for that pair and the sweep goes on.

A model is given as ``NAME::MODEL_ARGS`` (``gemma-fp32::pretrained=/ckpt,dtype=float32``),
as ``MODEL_ARGS`` or as a bare checkpoint (``meta-llama/Llama-3.1-8B``), which becomes
``pretrained=<it>``; ``pretrained=embedded`` (or just ``embedded``) is the suite's
embedded gemma-3-270m checkpoint. ``--model-args`` is added to every model's arguments
(the model's own value wins on a clash).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from custom_metrics.common.results import PAIR_FILE, parse_model_args

DONE_FILE = "lm_eval.done"
IBE_DONE_FILE = "ibe.done"
IBE_TASKS = ("ibe_copa", "ibe_ecare")
DEFAULT_INCLUDE = Path(__file__).resolve().parents[2] / "lm_eval_tasks"
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
    status: str  # skipped | done | failed
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
    """Tasks in the given order, except that ``ibe_judge_X`` runs after ``ibe_X``, whose
    explanations it judges."""
    tasks = list(dict.fromkeys(task for task in re.split(r"[,\s]+", text) if task))
    if not tasks:
        raise ValueError("no task given")

    def rank(index_task: tuple[int, str]) -> float:
        index, task = index_task
        source = _judged_task(task)
        return tasks.index(source) + 0.5 if source in tasks[index:] else index

    return [task for _, task in sorted(enumerate(tasks), key=rank)]


def _judged_task(task: str) -> str | None:
    return f"ibe_{task[len('ibe_judge_') :]}" if task.startswith("ibe_judge_") else None


def folder_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "model"


def pair_folder(out: Path, setting: ModelSetting, task: str) -> Path:
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
    """``options.extra`` for one task: ``ibe_judge_X`` judges the explanations that the same
    model setting generated in its ``ibe_X`` pair, added to any ``--metadata`` JSON the user
    gave (e.g. a REG judge), unless that already names the explanations."""
    extra = list(options.extra)
    source = _judged_task(task)
    if source is None:
        return extra
    at = extra.index("--metadata") + 1 if "--metadata" in extra else None
    try:
        metadata = json.loads(extra[at]) if at is not None and at < len(extra) else {}
    except ValueError:
        return extra  # key=value metadata: the user's to complete
    if not isinstance(metadata, dict) or "explanations" in metadata:
        return extra
    samples = newest_samples(pair_folder(options.out, setting, source), source)
    if samples is None:
        raise FileNotFoundError(
            f"{task} judges the explanations of this model's {source} run, and there is none: "
            f"add {source} to --tasks, or give the file with --lm-eval-args "
            f'"--metadata \'{{\\"explanations\\": \\"PATH\\"}}\'"'
        )
    value = json.dumps({**metadata, "explanations": str(samples)})
    if at is None:
        return [*extra, "--metadata", value]
    extra[at] = value
    return extra


def lm_eval_command(options: SweepOptions, setting: ModelSetting, task: str, folder: Path) -> list[str]:
    """The harness command line of one pair (also shown to the user, so it can be rerun)."""
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
    return command + task_arguments(options, setting, task)


def ibe_commands(task: str, folder: Path) -> list[list[str]]:
    """``explain-eval ibe score/report`` on the newest samples of an IBE generation pair."""
    samples = newest_samples(folder, task)
    if samples is None:
        raise FileNotFoundError(f"no samples_{task}_*.jsonl under {folder}")
    out = folder / "ibe"
    cli = [sys.executable, "-m", "custom_metrics.cli", "ibe"]
    return [
        [*cli, "score", str(samples), "--out", str(out)],
        [*cli, "report", str(out)],
    ]


def is_complete(folder: Path, marker: str = DONE_FILE) -> bool:
    """True when the pair's marker exists and every results file it names is still there."""
    path = folder / marker
    try:
        done = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return all((folder / name).is_file() for name in done.get("results", []))


def _write_json_atomic(path: Path, data: dict) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.replace(temporary, path)


def _run_logged(command: list[str], log: Path) -> int:
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"\n### {time.strftime('%Y-%m-%d %H:%M:%S')} $ {shlex.join(command)}\n")
        handle.flush()
        return subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT).returncode


def _tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def run_pair(options: SweepOptions, setting: ModelSetting, task: str) -> PairOutcome:
    folder = pair_folder(options.out, setting, task)
    folder.mkdir(parents=True, exist_ok=True)
    if is_complete(folder):
        outcome = PairOutcome(setting.name, task, folder, "skipped", _skip_detail(options, setting, task, folder))
    else:
        outcome = _run_lm_eval(options, setting, task, folder)
        if outcome.status == "failed":
            return outcome
    if task in IBE_TASKS and not is_complete(folder, IBE_DONE_FILE):
        return _run_ibe(task, folder, outcome)
    return outcome


def _run_lm_eval(options: SweepOptions, setting: ModelSetting, task: str, folder: Path) -> PairOutcome:
    (folder / IBE_DONE_FILE).unlink(missing_ok=True)  # new samples need a new IBE report
    _write_json_atomic(
        folder / PAIR_FILE,
        {"model": setting.name, "model_args": setting.model_args, "task": task, "backend": options.backend},
    )
    try:
        command = lm_eval_command(options, setting, task, folder)
    except FileNotFoundError as error:
        return PairOutcome(setting.name, task, folder, "failed", str(error))
    log = folder / "lm_eval.log"
    before = set(folder.rglob("results*.json"))
    started = time.time()
    code = _run_logged(command, log)
    new = sorted(set(folder.rglob("results*.json")) - before)
    if code != 0 or not new:
        reason = f"lm_eval exited {code}" if code else "lm_eval wrote no results file"
        return PairOutcome(setting.name, task, folder, "failed", f"{reason}; log {log}:\n{_tail(log)}")
    _write_json_atomic(
        folder / DONE_FILE,
        {
            "command": command,
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "seconds": round(time.time() - started, 1),
            "results": [str(path.relative_to(folder)) for path in new],
        },
    )
    return PairOutcome(setting.name, task, folder, "done", f"{time.time() - started:.0f} s")


def _skip_detail(options: SweepOptions, setting: ModelSetting, task: str, folder: Path) -> str:
    """Says so when a finished pair was made with other arguments than this sweep's."""
    try:
        done = json.loads((folder / DONE_FILE).read_text(encoding="utf-8"))
        current = lm_eval_command(options, setting, task, folder)
    except (OSError, ValueError):
        return "already complete"
    if done.get("command", [])[1:] == current[1:]:  # the interpreter path may differ
        return "already complete"
    return (
        f"already complete, but made with other arguments ({shlex.join(done.get('command', []))}); "
        "delete the folder to rerun it"
    )


def _run_ibe(task: str, folder: Path, outcome: PairOutcome) -> PairOutcome:
    log = folder / "ibe_postprocess.log"
    try:
        commands = ibe_commands(task, folder)
    except FileNotFoundError as error:
        return PairOutcome(outcome.model, task, folder, "failed", f"ibe_postprocess: {error}")
    for command in commands:
        code = _run_logged(command, log)
        if code != 0:
            return PairOutcome(
                outcome.model,
                task,
                folder,
                "failed",
                f"ibe_postprocess failed: `{shlex.join(command)}` exited {code}; log {log}:\n{_tail(log)}",
            )
    report = folder / "ibe" / "report.json"
    if not report.is_file():
        return PairOutcome(outcome.model, task, folder, "failed", f"ibe_postprocess wrote no {report}")
    _write_json_atomic(folder / IBE_DONE_FILE, {"commands": commands, "results": [str(report.relative_to(folder))]})
    return PairOutcome(outcome.model, task, folder, outcome.status, f"{outcome.detail}; ibe_postprocess done")


def run_sweep(options: SweepOptions) -> list[PairOutcome]:
    pairs = [(setting, task) for setting in options.models for task in options.tasks]
    outcomes = []
    for index, (setting, task) in enumerate(pairs, start=1):
        print(f"[{index}/{len(pairs)}] {setting.name} x {task} ...", flush=True)
        outcome = run_pair(options, setting, task)
        print(f"[{index}/{len(pairs)}] {setting.name} x {task}: {outcome.status} ({outcome.detail})", flush=True)
        outcomes.append(outcome)
    return outcomes


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="explain-eval sweep",
        description="Run every model x task pair through lm_eval (resumable), then the leaderboard.",
    )
    parser.add_argument(
        "--models", required=True, help='space-separated: "NAME::MODEL_ARGS", "MODEL_ARGS" or a checkpoint id/path'
    )
    parser.add_argument("--tasks", required=True, help="comma- or space-separated task names")
    parser.add_argument("--out", type=Path, required=True, help="sweep folder (one subfolder per pair)")
    parser.add_argument("--limit", help="lm_eval --limit (docs per task, or a fraction)")
    parser.add_argument("--model-args", default="", help="added to every model's args, e.g. dtype=bfloat16")
    parser.add_argument("--backend", choices=("hf", "vllm"), default="hf")
    parser.add_argument(
        "--launcher",
        choices=("plain", "accelerate"),
        default="plain",
        help="accelerate: data parallel, one model copy per GPU",
    )
    parser.add_argument("--num-processes", type=int, help="accelerate --num_processes (default: its config)")
    parser.add_argument("--batch-size", default="8")
    parser.add_argument("--device", help="hf device (default: cuda when available, else cpu)")
    parser.add_argument("--include-path", type=Path, default=DEFAULT_INCLUDE)
    parser.add_argument("--lm-eval-args", default="", help="more lm_eval arguments, e.g. '--num_fewshot 5'")
    parser.add_argument("--leaderboard-out", type=Path, help="default: OUT/leaderboard")
    parser.add_argument("--no-leaderboard", action="store_true")
    parser.add_argument("--dry-run", action="store_true", help="print each pending command, run nothing")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        options = SweepOptions(
            models=parse_models(args.models, args.model_args),
            tasks=parse_tasks(args.tasks),
            out=args.out.resolve(),
            limit=args.limit,
            backend=args.backend,
            launcher=args.launcher,
            num_processes=args.num_processes,
            batch_size=args.batch_size,
            device=args.device,
            include_path=args.include_path.resolve(),
            extra=shlex.split(args.lm_eval_args),
        )
        if args.dry_run:
            for setting in options.models:
                for task in options.tasks:
                    folder = pair_folder(options.out, setting, task)
                    state = "complete, skipped" if is_complete(folder) else "pending"
                    print(f"# {setting.name} x {task}: {state}")
                    if state == "pending":
                        try:
                            print(shlex.join(lm_eval_command(options, setting, task, folder)))
                        except FileNotFoundError as error:
                            print(f"# (runs after its source pair) {error}")
            return 0
    except ValueError as error:
        parser.error(str(error))
    options.out.mkdir(parents=True, exist_ok=True)
    outcomes = run_sweep(options)
    failed = [o for o in outcomes if o.status == "failed"]
    if not args.no_leaderboard:
        from custom_metrics.leaderboard.build import main as leaderboard_main

        board = args.leaderboard_out or options.out / "leaderboard"
        leaderboard_main([str(options.out), "--out", str(board)])
    done = sum(o.status == "done" for o in outcomes)
    skipped = sum(o.status == "skipped" for o in outcomes)
    print(f"sweep: {done} run, {skipped} skipped (already complete), {len(failed)} failed")
    for outcome in failed:
        print(f"FAILED {outcome.model} x {outcome.task}: {outcome.detail}", file=sys.stderr)
    return 1 if failed else 0
