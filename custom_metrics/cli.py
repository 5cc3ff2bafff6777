"""``explain-eval``: the suite's one command, a subcommand per tool.

Each subcommand is the ``main(argv)`` of the module that owns it, imported only when
chosen, so ``explain-eval leaderboard`` never loads torch and a GEESE-only install can
run every command it needs.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence

from custom_metrics import __version__
from custom_metrics.common.errors import DataError

# subcommand -> (module with main(argv), one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "sweep": (
        "custom_metrics.sweep.command",
        "every model x task pair through lm_eval (here or as Slurm jobs), resumable, then the leaderboard",
    ),
    "leaderboard": ("custom_metrics.leaderboard.build", "per-paper tables of lm_eval runs beside the published rows"),
    "rule-protocol": (
        "custom_metrics.rule.protocol",
        "RULE's five-shot protocol: five split runs, mean ± std, Table 3",
    ),
    "reg-analysis": (
        "custom_metrics.reg.analysis",
        "REG section 6: GLM of success on output length (needs [analysis])",
    ),
    "ibe": ("ibe_postprocess.cli", "IBE-Eval: `score` logged explanations, `report` the selector (needs [ibe])"),
    "download": (
        "custom_metrics.pinned",
        "download and verify the pinned data files into the cache (login node, then offline runs)",
    ),
    "model-path": (
        "custom_metrics.common.embedded_model",
        "print the embedded model's checkpoint folder (creates it once)",
    ),
    "tasks-path": ("lm_eval_tasks", "print the folder of the task YAMLs, for lm_eval --include_path"),
}


def _usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [
        "usage: explain-eval COMMAND [ARGS...]   (explain-eval COMMAND --help for its arguments)",
        "       explain-eval --version",
        "",
        "commands:",
    ]
    lines += [f"  {name:<{width}}  {help_text}" for name, (_, help_text) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    if args[0] in ("-V", "--version"):
        print(f"explain-eval {__version__}")
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"explain-eval: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    command: Callable[[list[str]], int | None] = importlib.import_module(COMMANDS[name][0]).main
    try:
        return command(rest) or 0
    except DataError as err:  # bad input: the message names file, line and field; no traceback
        print(f"explain-eval {name}: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
