"""Argument types for the command lines: a count that makes no sense is a usage error
naming the option, not a traceback (or a silent empty loop) deep inside the run."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    return _at_least(text, 1, "a positive whole number")


def non_negative_int(text: str) -> int:
    return _at_least(text, 0, "a whole number >= 0")


def _at_least(text: str, low: int, words: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"{text!r} is not {words}")
    return value


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, the last a user sees, and exit status 2:
    argparse's own ends with the whole usage first (twenty lines for the sweep's options)."""

    def error(self, message: str):  # type: ignore[override]  (argparse's signature; it never returns)
        self.exit(2, f"{self.prog}: error: {message} (`{self.prog} --help` lists the options)\n")
