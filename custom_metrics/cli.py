"""``explain-eval``: the suite's one command, a subcommand per tool.

Each subcommand is the ``main(argv)`` of the module that owns it, imported only when
chosen, so ``explain-eval leaderboard`` never loads torch and a GEESE-only install can
run every command it needs.
"""

from __future__ import annotations

import errno
import functools
import importlib
import sys
from collections.abc import Callable, Sequence

from custom_metrics import __version__
from custom_metrics.common.errors import DataError
from custom_metrics.common.settings import CACHE_ENV
from custom_metrics.common.task_folders import paper_packages

# subcommand -> (module with main(argv), or "module:function", one-line help[, what chooses where it
# writes, for a command with no --out of its own]); each paper adds its own (``COMMANDS`` in its
# package's ``__init__.py``, the same shape): ``commands()``.
COMMANDS: dict[str, tuple[str, ...]] = {
    "sweep": (
        "custom_metrics.sweep.command",
        "every model x task pair through lm_eval (here or as Slurm jobs), resumable, then the leaderboard",
    ),
    "leaderboard": ("custom_metrics.leaderboard.build", "per-paper tables of lm_eval runs beside the published rows"),
    "rejudge": (
        "custom_metrics.rejudge",
        "judge a logged run again with other judges (no generation): their metrics side by side, kappa, MCC",
        "copy the run's folder there and pass the copy; the verdict cache: --judge-cache",  # it writes beside the run
    ),
    "lm-eval": (
        "custom_metrics.lm_eval_cli",
        "lm_eval's own CLI with the suite's model classes registered (API reasoning models, hf-prefix)",
    ),
    "judge-humans": (
        "custom_metrics.reg.judge_humans",
        "any NLI judge against ChaosNLI's 100 human labels per item: JSD, KL, accuracy, beside ChaosNLI's rows",
    ),
    "download": (
        "custom_metrics.pinned",
        "download and verify the pinned data files into the cache (login node, then offline runs)",
        f"set {CACHE_ENV} to one",
    ),
    "check": (
        "custom_metrics.leaderboard.spec_checks",
        "check each paper's spec against its package and task folder (adding a paper: docs/development.md)",
    ),
    "model-path": (
        "custom_metrics.common.embedded_model",
        "print the embedded model's checkpoint folder (creates it once)",
        f"set {CACHE_ENV} to one",
    ),
    "tasks-path": (
        "custom_metrics.common.task_folders",
        "print the folder of the task YAMLs, for lm_eval --include_path",
    ),
}


@functools.cache
def commands() -> dict[str, tuple[str, ...]]:
    """The suite's commands, then each paper's own: found through the paper packages (their
    ``__init__.py`` alone, so ``--help`` imports no paper module), never named here."""
    found = dict(COMMANDS)
    for package in paper_packages():
        for name, command in getattr(package, "COMMANDS", {}).items():
            if name in found:
                raise DataError(f"{package.__name__}: command {name!r} is the suite's or another paper's: rename it")
            found[name] = command
    return found


def _usage() -> str:
    width = max(map(len, commands()))
    lines = [
        "usage: explain-eval COMMAND [ARGS...]   (explain-eval COMMAND --help for its arguments)",
        "       explain-eval --version",
        "",
        "commands:",
    ]
    lines += [f"  {name:<{width}}  {command[1]}" for name, command in commands().items()]
    return "\n".join(lines)


# What to do about the failures a disk or a folder gives, by errno ("{out}": the setting that
# chooses where the command writes).
_ADVICE = {
    errno.EROFS: "the file system is read-only: choose a folder on a writable disk ({out})",
    errno.EACCES: "permission denied: choose a folder you may write ({out}) or fix its permissions",
    errno.EPERM: "not permitted: choose a folder you may write ({out}) or fix its permissions",
    errno.ENOSPC: "the disk is full: free space there or choose a folder on another disk ({out})",
    errno.EDQUOT: "the disk quota is used up: free space or choose a folder on another disk ({out})",
    errno.EFBIG: "the file grew past the size this system allows: choose another disk ({out})",
    errno.ENOENT: "no such file or folder: check the path",
    errno.ENOTDIR: "a part of the path is a file, not a folder: check the path",
    errno.EISDIR: "a folder stands where a file is expected: check the path",
    errno.EIO: "the disk reported an input/output error: check it, or use another disk",
}


def os_error_line(err: OSError, args: Sequence[str] = (), out: str = "--out") -> str:
    """One line for a failing disk or folder: the path, what happened, what to do (``out``: what
    chooses the folder). Some failures (a full disk on ``write``) carry no path; the command's
    ``--out`` is named then."""
    paths = [str(name) for name in (err.filename, err.filename2) if name is not None]
    if not paths:
        given = [a.split("=", 1)[1] for a in args if a.startswith("--out=")]
        given += [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--out"]
        paths = [f"writing under --out {given[-1]}"] if given else []
    advice = _ADVICE.get(err.errno)
    reason = err.strerror or str(err) or type(err).__name__
    todo = f"; {advice.format(out=out)}" if advice else ""
    return (f"{' -> '.join(paths)}: " if paths else "") + reason + todo + "."


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        known = commands()
    except DataError as err:  # a paper's command named as another: one line, for its contributor
        print(f"explain-eval: {err}", file=sys.stderr)
        return 2
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    if args[0] in ("-V", "--version"):
        print(f"explain-eval {__version__}")
        return 0
    name, rest = args[0], args[1:]
    if name not in known:
        print(f"explain-eval: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    target, _, *writes_to = known[name]
    module, _, function = target.partition(":")
    try:  # a module may refuse to load (the registry checks the papers' specs): one message too
        command: Callable[[list[str]], int | None] = getattr(importlib.import_module(module), function or "main")
        return command(rest) or 0
    except DataError as err:  # bad input: the message names file, line and field; no traceback
        print(f"explain-eval {name}: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # a read-only, full or vanished disk: where, and what to do
        out = next(iter(writes_to), "--out")
        print(f"explain-eval {name}: {os_error_line(err, rest, out)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
