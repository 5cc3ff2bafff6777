"""The harness arguments of ``rule-protocol`` and ``sweep``, checked before anything runs.

Why: both start one ``lm_eval`` per split or pair, each loading a model before it fails on an
argument it could have refused at once (``--model hf`` without ``pretrained``, a misspelt option,
``--limit 0``): a model load, and on Slurm a queue wait, per pair. Here the arguments go through
lm-eval's own ``run`` parser and checks, the model's required arguments are read from its class
(nothing is loaded but that Python class), a local model path must exist and a Hub id must be
cached when the Hub is offline. Every problem is one line saying what to pass.

``--include_path`` may hold the suite's task folders once and none of lm-eval's own: lm-eval
indexes every YAML below it, so ``--include_path .`` in a clone with its ``.venv`` inside indexed
the harness' ~14,000 task files again (two minutes of "overrides existing task" lines), and a clone
holding a ``build/lib`` copy gave two tasks of each name. ``check_include_path`` refuses both, for
``explain-eval lm-eval`` and the sweep before the model loads, and under plain ``lm_eval`` in the
first task loader (``task_loading``).
"""

from __future__ import annotations

import difflib
import functools
import inspect
import logging
import math
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from custom_metrics.common.api_sampling import API_CLASS, check_api_sampling
from custom_metrics.common.errors import DataError
from custom_metrics.common.harness_api import Refused, run_command_parser, unknown_task_names
from custom_metrics.common.model_signature import read_constructor
from custom_metrics.common.task_folders import package_folder, paper_folders

# What the harness passes to a model class besides its --model_args (lm_eval.api.model).
_HARNESS_SUPPLIED = {"batch_size", "max_batch_size", "device"}
_BATCH_SIZE = re.compile(r"^(?:auto(?::(?P<tries>\d+))?|(?P<size>\d+))$")
PASS_INSTEAD = 'pass the suite\'s own, --include_path "$(explain-eval tasks-path)"'
SKIPPED = {"__pycache__", ".git"}  # holds no task YAML; .git can be large


def check_group_limit(task: str, group: int, limit: float | str | None) -> None:
    """A DataError when ``--limit`` would cut inside ``task``'s groups of ``group`` documents (one
    logged generation's cuts and filler, one question in both orders: a group cut in two leaves
    its summary undefined, NaN with no word); a count of whole groups passes."""
    if limit is None:
        return
    try:
        value = float(limit)
    except ValueError:
        return  # check_limit names a limit that is no number
    if value >= 1 and value.is_integer() and value % group == 0:
        return
    whole = max(group, int(value) // group * group)
    raise DataError(
        f"--limit {value:g}: {task} builds {group} documents from each generation or question it reads and needs "
        f"all of them; pass a multiple of {group} (--limit {whole} keeps {whole // group} whole), or limit the run "
        "it reads."
    )


def close_names(name: str, known: Iterable[str]) -> str:
    """ " (did you mean 'a', 'b'?)" for the known names closest to ``name``, or ""."""
    matches = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
    return f" (did you mean {', '.join(repr(m) for m in matches)}?)" if matches else ""


def check_harness_args(argv: Sequence[str], who: str, *, here: bool = True) -> Any:
    """lm-eval's configuration (``EvaluatorConfig``) for the ``lm_eval`` arguments ``argv``, or a
    DataError (prefixed with ``who``, the option that carried them) naming what lm-eval would refuse.
    ``here`` False: ``lm_eval`` runs on another machine (a Slurm job), so a model class this one
    cannot import, or a checkpoint it does not see, proves nothing."""
    try:
        namespace = run_command_parser().parse_args(list(argv))
    except Refused as refused:
        raise DataError(f"{who}: lm_eval would refuse these arguments: {refused}.") from None
    from lm_eval.config.evaluate_config import EvaluatorConfig

    quiet = logging.getLogger("lm_eval.config.evaluate_config")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # its --limit warning is lm_eval's to print, once, when it runs
    try:
        config = EvaluatorConfig.from_cli(namespace)
    except (ValueError, TypeError, OSError) as err:
        raise DataError(f"{who}: lm_eval would refuse these arguments: {err}.") from None
    finally:
        quiet.setLevel(level)
    check_limit(config.limit, "--limit")
    check_batch_size(str(config.batch_size), "--batch_size")
    if config.max_batch_size is not None and config.max_batch_size < 1:
        raise DataError(f"--max_batch_size {config.max_batch_size}: pass a whole number of at least 1.")
    if config.num_fewshot is not None and config.num_fewshot < 0:
        raise DataError(f"--num_fewshot {config.num_fewshot}: pass a whole number >= 0.")
    check_model(config.model or "hf", dict(config.model_args or {}), here=here)
    return config


def check_limit(limit: float | str | None, option: str) -> None:
    """lm-eval reads a limit below 1 as a fraction of the docs and any other as a count,
    cutting ``2.5`` to 2 and running ``0`` on nothing; only a fraction in (0, 1) or a whole
    count of at least 1 passes."""
    if limit is None:
        return
    try:
        value = float(limit)
    except ValueError as err:
        message = f"{option} {limit!r}: pass a number of docs (e.g. 2) or a fraction below 1 (e.g. 0.1)."
        raise DataError(message) from err
    if not math.isfinite(value) or value <= 0 or (value >= 1 and not value.is_integer()):
        raise DataError(
            f"{option} {limit}: pass a whole number of docs of at least 1 (e.g. 2) or a fraction between 0 and 1 "
            "(e.g. 0.1)."
        )


def check_batch_size(text: str, option: str) -> None:
    match = _BATCH_SIZE.match(text.strip())
    if match is None or int(match.group("size") or match.group("tries") or 1) < 1:
        raise DataError(f"{option} {text!r}: pass a whole number of at least 1, 'auto' or 'auto:N'.")


def check_model(model: str, model_args: dict[str, Any], *, here: bool = True) -> None:
    """``model`` is in lm-eval's model registry and ``model_args`` give every argument its
    class requires (and, where it takes no others, only arguments it knows); the checkpoint
    it names can be found (see ``check_harness_args`` for ``here``)."""
    import lm_eval.models  # noqa: F401  (registers every model name, importing none)
    from lm_eval.api.registry import model_registry

    known = list(model_registry.keys())
    if model not in known:
        raise DataError(
            f"--model {model}: not a model lm-eval knows{close_names(model, known)}; "
            "e.g. hf (in process), vllm, local-completions or local-chat-completions (an endpoint)."
        )
    parameters = _constructor(model, model_args, here=here)
    if parameters is None:
        return
    named = [p for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    supplied = set(model_args) | _HARNESS_SUPPLIED
    missing = [p.name for p in named if p.default is p.empty and p.name not in supplied]
    given = sorted(model_args)
    if missing:
        hints = "".join(close_names(name, given) for name in missing)
        example = f"{missing[0]}=<HF id or local folder>" if missing[0] == "pretrained" else f"{missing[0]}=..."
        embedded = " ($(explain-eval model-path) is the embedded model)" if missing[0] == "pretrained" else ""
        raise DataError(
            f"--model {model} needs {', '.join(repr(m) for m in missing)} in --model_args{hints}: "
            f"pass --model_args {example}{embedded}."
        )
    if not any(p.kind is p.VAR_KEYWORD for p in parameters):
        names = [p.name for p in named]
        unknown = [key for key in given if key not in names]
        if unknown:
            hints = "".join(close_names(key, names) for key in unknown)
            raise DataError(f"--model {model} takes no argument {', '.join(map(repr, unknown))}{hints}.")
    pretrained = model_args.get("pretrained")
    takes_checkpoint = "pretrained" in [p.name for p in named] and "gguf_file" not in model_args
    if here and takes_checkpoint and isinstance(pretrained, str):
        check_checkpoint(pretrained, "--model_args pretrained", model_args.get("revision"))


def _constructor(model: str, model_args: dict[str, Any], *, here: bool) -> list[inspect.Parameter] | None:
    """The constructor parameters (``self`` dropped) of the class lm-eval registers as ``model``,
    read from its source where it says them (``model_signature``: the ``hf`` class without
    importing torch), else from the imported class; None when it cannot be imported and the run
    is elsewhere (``here`` False). An API class is imported: its request builder is probed
    (``check_api_sampling``)."""
    from lm_eval.api.registry import get_model, model_registry

    placeholder = dict(model_registry.items()).get(model)
    target = placeholder if isinstance(placeholder, str) else getattr(placeholder, "value", None)
    constructor = read_constructor(target.replace(" ", "")) if isinstance(target, str) else None
    if constructor is not None and API_CLASS not in constructor.classes:
        if constructor.missing and here:
            raise DataError(
                f"--model {model}: lm-eval cannot import it here (No module named {constructor.missing[0]!r}); "
                "install what it needs."
            )
        return None if constructor.missing else list(constructor.parameters)
    try:
        model_class = get_model(model)
    except ImportError as err:
        if not here:
            return None  # e.g. vllm, installed where the jobs run only
        raise DataError(f"--model {model}: lm-eval cannot import it here ({err}); install what it needs.") from None
    check_api_sampling(model, model_args)
    return list(inspect.signature(model_class.__init__).parameters.values())[1:]


def check_checkpoint(name: str, what: str, revision: Any = None) -> None:
    """A checkpoint given as a local path exists; one given as a Hub id is in the local Hub
    cache when the Hub is offline (``HF_HUB_OFFLINE``), as loading it will need. A name is
    looked up as a path first, as transformers looks it up: ``models/my-llama`` is a path when
    ``models/`` is a folder here, and offline a name that is neither is named as both."""
    path = Path(name).expanduser()
    if path.exists():
        return
    first = Path(path.parts[0]) if path.parts else path
    if name.startswith(("/", "./", "../", "~")) or name.count("/") > 1 or (len(path.parts) > 1 and first.is_dir()):
        raise DataError(
            f"{what}={name}: no such folder{resolved_against_cwd(name)}; pass an existing model folder or a Hub id "
            "(org/name)."
        )
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() not in ("1", "true", "yes", "on"):
        return
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.errors import HFValidationError

    try:
        cached = try_to_load_from_cache(
            name, "config.json", revision=revision if isinstance(revision, str) and revision != "main" else None
        )
    except HFValidationError:
        raise DataError(f"{what}={name}: neither a folder here nor a Hub id (org/name).") from None
    if not isinstance(cached, str):
        raise DataError(
            f"{what}={name}: no such folder here{resolved_against_cwd(name)}, nor a Hub id in the local Hub cache "
            f"(HF_HUB_OFFLINE is set): pass an existing model folder, or download the Hub id first "
            f"(huggingface-cli download {name})."
        )


def resolved_against_cwd(path: str | Path) -> str:
    """For a relative path, a note naming the absolute path it stands for here ("" for an
    absolute one): the same command typed in another folder finds another path."""
    path = Path(path).expanduser()
    return "" if path.is_absolute() else f" (a relative path is resolved against the current folder: {path.absolute()})"


@functools.cache
def _task_manager(include_path: str, *, defaults: bool) -> Any:
    """lm-eval's task index, built once per process for each folder (the full one takes a run's start)."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=include_path, include_defaults=defaults)


def check_tasks(
    tasks: Sequence[str], include_path: Path, option: str = "--include_path", *, defaults: bool = True
) -> None:
    """Every task name is one the harness finds (its own tasks, unless ``defaults`` is False,
    and those under ``include_path``), as ``lm_eval`` would resolve it; an unknown one is
    named with the closest known names."""
    if not Path(include_path).is_dir():
        raise DataError(
            f"{option} {include_path}: no such folder{resolved_against_cwd(include_path)}; pass the folder of the "
            'task YAMLs (--include_path "$(explain-eval tasks-path)" is the suite\'s).'
        )
    check_include_path(Path(include_path), option)
    # The suite's folder alone indexes in a fraction of a second; lm-eval's own ~14,000 task
    # files take as long as a run's start, so they are read only for a name not found there.
    names = [task for task in tasks if not task.endswith(".yaml")]
    manager = _task_manager(str(include_path), defaults=False)
    unknown = unknown_task_names(manager, names)
    if unknown and defaults:
        manager = _task_manager(str(include_path), defaults=True)
        unknown = unknown_task_names(manager, names)
    if not unknown:
        return
    named = "; ".join(f"{task!r}{close_names(task, manager.all_tasks)}" for task in unknown)
    where = f"under {option} {include_path}"
    where = f"among lm-eval's tasks nor {where}" if defaults else where
    raise DataError(f"unknown task(s) {named}: not {where} (lm-eval ls tasks lists them).")


@functools.cache
def check_include_path(folder: Path, option: str = "--include_path") -> None:
    """Refuse a folder that holds lm-eval's own tasks (the installed harness', or any other
    ``lm_eval/tasks`` below it) or one of the suite's task folders twice."""
    root = Path(folder).expanduser().resolve()
    lm_eval = package_folder("lm_eval")
    harness = (lm_eval / "tasks").resolve() if lm_eval else None  # the installed lm-eval's own tasks
    if harness is not None and harness.is_relative_to(root):
        raise _harness_inside(folder, option, harness)
    markers = {paper.name: min(path.name for path in paper.glob("*.yaml")) for paper in paper_folders()}
    copies: dict[str, list[str]] = {}
    for place, folders, files in os.walk(root):
        folders[:] = [name for name in folders if name not in SKIPPED]
        here = Path(place)
        if here.name == "tasks" and here.parent.name == "lm_eval" and (here.parent / "__init__.py").is_file():
            raise _harness_inside(folder, option, here)
        if markers.get(here.name) in files:
            copies.setdefault(here.name, []).append(place)
    twice = {name: places for name, places in copies.items() if len(places) > 1}
    if twice:
        name = min(twice)
        places = sorted(twice[name])
        raise DataError(
            f"{option} {folder} holds the suite's task folder {name}/ {len(places)} times ({', '.join(places)}): "
            f"lm-eval would keep one task of each name by path order, perhaps a stale copy (a build/ folder); "
            f"{PASS_INSTEAD}."
        )


def _harness_inside(folder: Path, option: str, harness: Path) -> DataError:
    return DataError(
        f"{option} {folder} holds lm-eval's own tasks ({harness}, e.g. in a .venv inside it): lm-eval would index "
        f"its thousands of tasks a second time, minutes before the run starts; {PASS_INSTEAD}."
    )
