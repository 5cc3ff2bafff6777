"""What a paper tells ``explain-eval rejudge``: where its judge decided something in a logged
run, and each judge's decisions when asked again (``PaperSpec.rejudge``).

The command (``custom_metrics/rejudge.py``) names no paper: it finds the judges, asks each
paper's hook to judge its logged files again, and compares the raters it returns. The paper owns
what its judge decides, how verdicts are read from its samples and where each judge's are written.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RUN_JUDGE, AGAIN, GOLD = "the run's judge", "judged again", "gold"
FOLDER = "rejudge"  # beside a run (or features folder): each judge's files, and the tables


def digest(judge: str) -> str:
    return hashlib.sha256(judge.encode("utf-8")).hexdigest()[:8]


def told_apart(display: str, judge: str) -> str:
    """A judge's display name where another judge's reads the same (two local checkpoints both
    called ``final``): a hash of its canonical name added, so no table row or key is shared."""
    return f"{display} #{digest(judge)}"


def judge_folder_name(judge: str, display: str) -> str:
    """The folder of one judge's verdicts: its display name (readable) and a hash of its canonical
    name (two judges that read alike, e.g. one model at two URLs, stay apart)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", display).strip("_.")[:60] or "judge"
    return f"{readable}-{digest(judge)}"


@dataclass(frozen=True)
class Rater:
    """One rater of a logged task's items: a judge (the run's own, or one asked again) or the gold labels."""

    name: str  # as pages show it: a judge's display name, or what the gold labels are
    role: str  # RUN_JUDGE | AGAIN | GOLD
    # decision (e.g. REG's "J(p, h)", "success") -> item id -> label
    decisions: Mapping[str, Mapping[str, str]]
    # metric -> (count, out of): e.g. REG's success, k of the |N| items scored; "N": |N| of the docs
    metrics: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    path: Path | None = None  # the file holding its verdicts
    # metric -> item id -> the item's outcome as the metric counts it (REG: success True/False for an
    # item in N, a flagged output False); what a vote of judges and the runs' rankings are computed from
    scores: Mapping[str, Mapping[str, bool]] = field(default_factory=dict)


@dataclass(frozen=True)
class RejudgedTask:
    """One logged task judged again: its raters, and what a reader must know."""

    task: str
    source: Path  # the logged file the judges judged (REG: the run's samples file)
    out: Path  # the folder the judges' files went to (beside the run)
    raters: tuple[Rater, ...]
    decisions: tuple[str, ...]  # in the order tables show them
    metrics: tuple[str, ...]
    label_order: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    headline: str = ""  # the metric runs of the task are ranked by (REG: success); "" for none


@dataclass(frozen=True)
class RejudgeRequest:
    """The judges and options of one ``explain-eval rejudge``, checked before any judging."""

    # parsed judge specs (``custom_metrics.judge.spec.JudgeSpec``), each found (folder, Hub cache, server)
    judges: tuple[Any, ...]
    judge_cache: Path | None  # None: each judge's default cache folder
    judge_check: str  # "stop" | "warn": what a judge degenerate on the gold items of its check does
    complete: bool = False  # judge in place the samples whose judge failed after generation
    complete_judge: Any = None  # a spec replacing the run's own judge for that (e.g. a new URL)


@dataclass(frozen=True)
class Rejudging:
    """How ``explain-eval rejudge`` judges a paper's logged runs again: the module that does it, named,
    not imported, so the leaderboard loads no judge. It defines ``find(path) -> list[Path]`` (the files
    with judged tasks under a run folder), ``check(file, request)`` (cheap checks before any judging;
    ``DataError`` naming what is wrong) and ``run(file, request) -> list[RejudgedTask]``.
    """

    what: str  # what the paper's judge decides, in words (for messages)
    module: str  # e.g. "custom_metrics.reg.rejudge"


def cut_notes(cut: str | None) -> tuple[str, ...]:
    """The note a task judged again carries when its run covered part of the data (``--limit``,
    ``--samples``, or outputs read from such a run): ``cut`` says how; () for a whole run."""
    if not cut:
        return ()
    return (f"the run covered part of the data ({cut}): every rater's numbers are of those items only, not "
            "comparable with a full run's",)  # fmt: skip
