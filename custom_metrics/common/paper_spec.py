"""What the suite knows of one paper, in its ``leaderboard.py``: a ``PaperSpec``, split by who reads it.

The leaderboard reads its ``board`` (``leaderboard_types.Board``), the sweep and ``explain-eval
lm-eval`` its ``runs`` (``RunSteps``), ``explain-eval rejudge`` its ``rejudge``, and ``explain-eval
download`` its ``datasets``. The registry (``leaderboard/registry.py``) lists the specs; no shared
module branches on a paper's name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from custom_metrics.common.leaderboard_types import Board
from custom_metrics.common.rejudging import Rejudging

if TYPE_CHECKING:  # the sources module loads datasets and pyarrow; a spec only names its files
    from custom_metrics.common.sources import Source

# (tasks of a run, its merged --metadata and model arguments, whether it runs on this machine)
# -> None, or a DataError naming what its tasks would refuse only once lm-eval has loaded the
# model (REG: its judge).
RunCheckHook = Callable[[Sequence[str], Mapping[str, Any], bool], None]


@dataclass(frozen=True)
class PostRun:
    """A step that a sweep runs in a finished pair's folder after ``lm_eval``, for some of a
    paper's tasks (e.g. scoring the logged explanations), marked done only when the commands
    exit 0 and leave their outputs."""

    name: str  # in the sweep's messages
    tasks: tuple[str, ...]
    # (the pair's newest samples file, the pair folder) -> command lines, run in order
    commands: Callable[[Path, Path], list[list[str]]]
    outputs: Callable[[Path], list[Path]]  # the pair folder -> files the commands must leave


@dataclass(frozen=True)
class SamplesInput:
    """Tasks that read the logged samples of another task of the same model (e.g. a judge of
    its explanations): a sweep runs them after that task and passes its samples file as
    ``--metadata {metadata_key: path}``."""

    source: Callable[[str], str | None]  # task -> the task whose samples it reads, or None
    metadata_key: str


@dataclass(frozen=True)
class RunSteps:
    """What a run of the paper's tasks needs beyond ``lm_eval`` (the sweep itself names no paper)."""

    post_run: PostRun | None = None  # e.g. IBE: score the explanations and write the report
    samples_input: SamplesInput | None = None  # e.g. IBE: a judge task reads its generation task's samples
    # What is checked of a run before any model loads (REG: its judge spec and folder).
    check_run: RunCheckHook | None = None
    # Its log-likelihood tasks' longest request in tokens (context + continuation, gemma-3's tokenizer,
    # the full data: ``python -m bench.request_tokens``), as (task-name regex, tokens), the first full
    # match counting: what ``--model hf``'s logits would hold is checked from it before a run (logits_memory).
    request_tokens: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, kw_only=True)
class PaperSpec:
    """One paper. Only ``key`` and ``title`` are required. ``key`` names the paper's package
    (``custom_metrics/<key>/``) and its task folder (``lm_eval_tasks/<key>/``);
    ``explain-eval check`` ties the two together."""

    key: str
    title: str
    # Regex of the paper's task names; default: the key, then "_" or the end (``reg`` -> reg, reg_chaos).
    pattern: str = ""
    # The pinned public data files, by the dataset name ``explain-eval download NAME`` takes.
    datasets: Mapping[str, tuple[Source, ...]] = field(default_factory=dict)
    board: Board = field(default_factory=Board)
    runs: RunSteps = field(default_factory=RunSteps)
    # What ``explain-eval rejudge`` asks other judges to decide again (REG: its judged explanations).
    rejudge: Rejudging | None = None

    def __post_init__(self) -> None:
        if not self.pattern:
            object.__setattr__(self, "pattern", rf"{re.escape(self.key)}(_|$)")
