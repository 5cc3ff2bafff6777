"""``explain-eval lm-eval``: lm-eval's own CLI, unchanged, with the suite's model classes registered.

The harness looks a ``--model`` name up in its registry before it loads any task, so a
class defined outside lm-eval must be registered by the process that parses the command
line. The package declares its classes once, as ``lm_eval.models`` entry points
(pyproject.toml), which a harness that reads plugins finds by itself; for the versions that do
not (0.4.13, 0.5.0.dev1) this command registers the same entries by name and import path, as
lm-eval registers its own: the class's module (and torch, for ``hf-prefix``) is imported only
when a run chooses it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from pathlib import Path

ENTRY_POINTS = "lm_eval.models"
DISTRIBUTION = "explain-eval"


def suite_model_classes() -> dict[str, str]:
    """``--model`` name -> ``"module:class"`` of the suite's model classes, as the installed
    package declares them."""
    return {
        point.name: point.value
        for point in entry_points(group=ENTRY_POINTS)
        if point.dist is not None and point.dist.name == DISTRIBUTION
    }


def register_models() -> None:
    """Register the suite's model classes beside the harness' own (whose names must come first:
    the registry fills itself with them only while it is empty). A class already registered
    by its module (imported, or run as ``__main__``) stays as it is."""
    import lm_eval.models  # noqa: F401
    from lm_eval.api.registry import model_registry

    for name, target in suite_model_classes().items():
        if name not in model_registry:
            model_registry.register(name, target=target)


# lm-eval's subcommands other than ``run``; any other first argument is a run (lm-eval inserts ``run``).
_NOT_RUNS = ("ls", "validate")


# The line ``explain-eval lm-eval --help`` adds above lm-eval's own help.
SUITE_MODELS = (
    "explain-eval lm-eval: lm_eval's own CLI (same arguments) with the suite's model classes registered: "
    "--model reasoning-chat-completions (API reasoning models such as OpenAI's: keeps each response's token "
    "usage, sends only what such APIs take; REG's reg_chaos_reasoning_served) and --model hf-prefix (HFLM's "
    "arguments; each distinct log-likelihood context run once, its KV cache reused). Before the model loads, "
    "a run's arguments, model path, --include_path, task names, --metadata keys and REG judge are checked as "
    "explain-eval sweep checks them.\n"
)


def check_run_args(args: Sequence[str]) -> None:
    """What lm-eval would refuse only after loading the model (a misspelled --metadata key, a REG
    judge: tasks are built after the model) or with a traceback, refused first in one line (a
    ``DataError``), as the sweep checks each pair's: lm-eval's parser and configuration, the model and
    its checkpoint, and with ``--include_path`` every task name (without it the tasks are lm-eval's own,
    whose index costs as long as a run's start, and lm-eval names a missing one before its model loads)."""
    from custom_metrics.common.harness_args import check_harness_args, check_tasks
    from custom_metrics.leaderboard import registry

    config = check_harness_args(list(args[1:] if args[0] == "run" else args), "explain-eval lm-eval")
    tasks = [name for task in config.tasks or [] for name in str(task).split(",") if name]  # as lm_eval splits them
    if config.include_path is not None:
        check_tasks(tasks, Path(config.include_path))
    registry.check_run(tasks, config.metadata or {}, limit=config.limit)  # the papers' own checks, as the sweep's
    warning = registry.logits_memory_warning(config, tasks)
    if warning:
        print(f"explain-eval lm-eval: warning: {warning}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    register_models()  # first: the checks look a --model name up in lm-eval's registry
    if "-h" in args or "--help" in args:
        print(SUITE_MODELS)
    elif len(args) > 1 and args[0] not in _NOT_RUNS:
        check_run_args(args)
    from lm_eval.__main__ import cli_evaluate

    saved, sys.argv = sys.argv, ["lm_eval", *args]
    try:  # lm-eval's CLI reads sys.argv; an in-process caller gets its own back
        cli_evaluate()
    finally:
        sys.argv = saved
    return 0


if __name__ == "__main__":
    sys.exit(main())
