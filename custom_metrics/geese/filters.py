"""The GEESE M1 task's lm-eval filter: the paper's anonymization (``geese.anonymize``) of every
generated explanation."""

from __future__ import annotations

from collections.abc import Iterable

from lm_eval.api.filter import Filter

from custom_metrics.common.harness_api import filter_output
from custom_metrics.geese.anonymize import anonymize


class AnonymizeFilter(Filter):
    """Apply the paper's anonymization to every M1 explanation, so the logged ``filtered_resps`` *is*
    the anonymized explanation that ``geese_selfexp`` feeds to M2."""

    def apply(self, resps: Iterable[list[str]], docs: list[dict]) -> list:
        return filter_output(anonymize(responses[0]) for responses in resps)
