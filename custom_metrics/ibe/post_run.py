"""What a sweep does for IBE beyond ``lm_eval``: score the explanations of a generation pair
and write its report, and run each judge task after the generation task it judges.

The sweep knows no paper: it calls these hooks through IBE's ``PaperSpec``. The commands
are the user's own (``explain-eval ibe score/report``), run in the pair's process
environment, so a failure is reported for that pair with its log and the sweep goes on.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from custom_metrics.common.paper_spec import PostRun, SamplesInput
from ibe_postprocess.folder import PAIR_SUBFOLDER, FeaturesFolder

GENERATION_TASKS = ("ibe_copa", "ibe_ecare")
_JUDGE = re.compile(r"^ibe_judge_(?P<dataset>copa|ecare)(?:_chat|_position)?$")


def commands(samples: Path, pair: Path) -> list[list[str]]:
    """``explain-eval ibe score`` on the pair's samples file, then ``ibe report``."""
    out = pair / PAIR_SUBFOLDER
    cli = [sys.executable, "-m", "custom_metrics.cli", "ibe"]
    return [[*cli, "score", str(samples), "--out", str(out)], [*cli, "report", str(out)]]


def outputs(pair: Path) -> list[Path]:
    return [FeaturesFolder(pair / PAIR_SUBFOLDER).report]


def judged_task(task: str) -> str | None:
    """``ibe_X`` for ``ibe_judge_X``, ``ibe_judge_X_chat`` and ``ibe_judge_X_position`` (the generation
    task whose explanations they judge), else None."""
    match = _JUDGE.match(task)
    return f"ibe_{match['dataset']}" if match else None


POST_RUN = PostRun("ibe_postprocess (score + report)", GENERATION_TASKS, commands, outputs)
# The judge docs are built from the explanations' samples file, named by --metadata explanations.
SAMPLES_INPUT = SamplesInput(judged_task, "explanations")
