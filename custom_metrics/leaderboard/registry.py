"""The papers the leaderboard knows, each described by its own ``leaderboard.py`` spec.

A fifth paper adds its spec here; nothing else in the leaderboard changes.
"""

from __future__ import annotations

import re
from typing import Any

from custom_metrics.common.leaderboard_types import PaperSpec, SampleView
from custom_metrics.geese.leaderboard import SPEC as GEESE
from custom_metrics.ibe.leaderboard import SPEC as IBE
from custom_metrics.reg.leaderboard import SPEC as REG
from custom_metrics.rule.leaderboard import SPEC as RULE

PAPERS: tuple[PaperSpec, ...] = (GEESE, RULE, REG, IBE)
# Per-document 0/1 outcomes any harness task may log, compared between runs of it.
GENERIC_OUTCOMES = ("acc", "acc_norm", "exact_match")


def generic_outcomes(task: str, sample: dict[str, Any]) -> dict[str, float | None]:
    return {
        name: float(sample[name])
        for name in GENERIC_OUTCOMES
        if isinstance(sample.get(name), (int, float)) and not isinstance(sample.get(name), bool)
    }


# Tasks of no paper still get a table, so a run of any harness task is never dropped.
OTHER = PaperSpec(
    "other",
    "Other tasks",
    r".*",
    (),
    ("acc", "acc_norm", "exact_match", "f1", "mcc", "bleu"),
    (),
    "",
    samples=SampleView(lambda task, sample: {}, outcomes=generic_outcomes),
)


def paper_of(task: str) -> PaperSpec:
    return next((spec for spec in PAPERS if re.match(spec.pattern, task)), OTHER)
