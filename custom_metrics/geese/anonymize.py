"""GEESE's anonymization (the authors' regex): label words and relation stems are masked so
a hint cannot simply state the answer. The published ``anon_*`` fields were produced
with exactly this pattern, so our M1 outputs are comparable with theirs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from lm_eval.api.filter import Filter

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
    """Mask label words and relation stems so a hint cannot simply state the answer."""
    return ANON_PATTERN.sub(ANON_TOKEN, text).strip()


class AnonymizeFilter(Filter):
    """Apply the paper's anonymization to every generated explanation (M1 output).

    Runs as the task's filter, so the logged ``filtered_resps`` *is* the anonymized
    explanation that ``geese_selfexp`` later feeds to M2.
    """

    def apply(self, resps: Iterable[list[str]], docs: list[dict]) -> Iterable[str]:
        return [anonymize(responses[0]) for responses in resps]
