"""GEESE's anonymization (the authors' regex): label words and relation stems are masked so
a hint cannot simply state the answer. The published ``anon_*`` fields were produced
with exactly this pattern, so our M1 outputs are comparable with theirs. (The M1 task's
filter is in ``geese.metrics``: this module imports no harness, so the leaderboard and
``explain-eval download``, which read GEESE's data, start without lm-eval.)
"""

from __future__ import annotations

import re

# Whole label words, then any word *starting* with these stems (the paper's list: entail,
# contradict, neutr, impl, contradd); case-insensitive like the authors' code, so "no",
# "imply" and "implicit" are masked too. This reproduces every published anon_* field.
ANON_PATTERN = re.compile(
    r"(\bYES\b|\bNO\b|\bUNKNOWN\b|\bentail\w*\b|\bcontradict\w*\b|\bneutr\w*\b"
    r"|\bimpl\w*\b|\bcontradd\w*\b)",
    flags=re.IGNORECASE,
)
ANON_TOKEN = "XXX"


def anonymize(text: str) -> str:
    return ANON_PATTERN.sub(ANON_TOKEN, text).strip()
