"""The papers the leaderboard knows, each described by its own ``leaderboard.py`` spec.

A fifth paper adds its spec here; nothing else in the leaderboard changes.
"""

from __future__ import annotations

import re

from custom_metrics.common.leaderboard_types import PaperSpec
from custom_metrics.geese.leaderboard import SPEC as GEESE
from custom_metrics.ibe.leaderboard import SPEC as IBE
from custom_metrics.reg.leaderboard import SPEC as REG
from custom_metrics.rule.leaderboard import SPEC as RULE

PAPERS: tuple[PaperSpec, ...] = (GEESE, RULE, REG, IBE)
# Tasks of no paper still get a table, so a run of any harness task is never dropped.
OTHER = PaperSpec("other", "Other tasks", r".*", (), ("acc", "acc_norm", "exact_match", "f1", "mcc", "bleu"), (), "")


def paper_of(task: str) -> PaperSpec:
    return next((spec for spec in PAPERS if re.match(spec.pattern, task)), OTHER)
