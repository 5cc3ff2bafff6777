"""lm-eval's own ``lm_eval run`` parser, raising instead of exiting: what a command line sets.

Below both readers of an ``lm_eval`` command line: ``harness_args`` (the sweep's and
rule-protocol's arguments, checked before anything runs; it asks ``api_sampling`` about an API
model class) and ``api_sampling`` (the ``--model`` of the command line a task was loaded by).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from custom_metrics.common.harness_api import run_command_parser


class Refused(Exception):
    """argparse's complaint about the arguments, caught instead of exiting."""


def run_parser() -> argparse.ArgumentParser:
    """lm-eval's own ``lm_eval run`` parser (what ``python -m lm_eval ARGS`` uses), raising
    instead of printing usage and exiting."""
    parser = run_command_parser()

    def refuse(message: str) -> None:
        raise Refused(message)

    parser.error = refuse  # type: ignore[method-assign]
    return parser


def options_given(argv: Sequence[str]) -> set[str]:
    """The ``lm_eval`` options ``argv`` sets, by their long name (``--tasks``), however spelt:
    ``-t``, an abbreviation such as ``--task``, or ``--tasks=x``."""
    parser = run_parser()
    try:
        given, empty = vars(parser.parse_known_args(list(argv))[0]), vars(parser.parse_known_args([])[0])
    except Refused:
        return set()  # check_harness_args names the problem
    return {f"--{name}" for name, value in given.items() if name not in empty or empty[name] != value}


def option_value(argv: Sequence[str], name: str) -> Any:
    """The value of option ``name`` (its ``dest``: ``model``, ``limit``, ``include_path``) an ``lm_eval``
    command line gives, with or without the ``run`` lm-eval inserts (lm-eval's default where it gives
    none), or None when lm-eval would refuse the line anyway."""
    args = list(argv)
    try:
        return getattr(run_parser().parse_known_args(args[1:] if args[:1] == ["run"] else args)[0], name, None)
    except Refused:
        return None
