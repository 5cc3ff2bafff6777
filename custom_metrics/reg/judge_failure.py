"""A judge that fails part-way through ``explain-eval rejudge``, said in one line.

The user needs the judge, the item it stopped at, the reason and what the verdict cache kept
(the same command resumes there), not a traceback. ``Asked`` remembers the pairs asked, so the
message can count what the cache kept and find the item whose verdicts are missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.judge.cache import CachedJudge, VerdictCacheError
from custom_metrics.judge.types import Pair, Verdict
from custom_metrics.reg.outputs import Output, combine


class Asked:
    """``judge`` as judge_outputs and check_judge call it, keeping every pair asked of it."""

    def __init__(self, judge: CachedJudge) -> None:
        self.cached = judge
        self.name = judge.name
        self.asked: list[Pair] = []
        self.last: list[Pair] = []  # the pairs of the latest call: the one that failed, when one did

    def judge(self, pairs: Sequence[Pair]) -> list[Verdict]:
        self.last = [(str(p), str(h)) for p, h in pairs]
        self.asked += self.last
        return self.cached.judge(pairs)

    def kept(self) -> int:
        """How many of the verdicts asked for are in the verdict cache."""
        unique = list(dict.fromkeys(self.asked))
        return len(self.cached.cache.get_many(self.cached.name, self.cached.prompt_id, unique))

    def missing(self) -> Pair | None:
        """The first pair of the latest call the cache holds no verdict for."""
        found = self.cached.cache.get_many(self.cached.name, self.cached.prompt_id, list(dict.fromkeys(self.last)))
        return next((pair for pair in self.last if pair not in found), None)


def _item(pair: Pair | None, docs: Sequence[dict[str, Any]], outputs: Sequence[Output]) -> int | None:
    """The index of the doc a judged pair belongs to: (p, h), (p;e, h) or (p, e)."""
    for index, (doc, out) in enumerate(zip(docs, outputs)):
        premise, hypothesis = doc["premise"], doc["hypothesis"]
        if pair in ((premise, hypothesis), (combine(premise, out.explanation), hypothesis), (premise, out.explanation)):
            return index
    return None


def stopped(
    error: Exception,
    judge: Asked,
    where: str,
    written: str,
    docs: Sequence[dict[str, Any]] | None = None,
    outputs: Sequence[Output] = (),
    samples: Path | None = None,
) -> DataError:
    """One line for a judge that failed: which judge, where it stopped (the item, given the docs
    and outputs it was judging), why, what the verdict cache kept and what ``written`` says."""
    if isinstance(error, VerdictCacheError):  # the cache's own message names its file and what to do
        return DataError(str(error))
    reason = str(error).removeprefix(f"judge {judge.name}: ") or type(error).__name__
    reason = " ".join(f"{type(error).__name__}: {reason}".split())  # one line, whatever the backend said
    place = where
    try:
        index = _item(judge.missing(), docs, outputs) if docs is not None else None
        kept = f"{judge.kept()} of its verdicts are kept in the verdict cache {judge.cached.cache.path}"
    except VerdictCacheError:
        index, kept = None, "its verdict cache cannot be read to count what it kept"
    if docs is not None and index is not None:
        named = samples.name if samples else "the samples"
        place += f" item {docs[index].get('uid', index)} (line {index + 1} of {named})"
    return DataError(
        f"judge {judge.name} stopped at {place}: {reason}. {kept}; {written}. Rerun the same command when the judge "
        "answers again: it asks only for the verdicts not kept."
    )
