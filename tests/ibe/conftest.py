"""IBE's shared stand-in: one tiny random-weight NLI classifier per session (read-only), so the
modules that score explanations build none of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ibe.test_pipeline import tiny_classifier


@pytest.fixture(scope="session")
def tiny_nli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 3-label stand-in for the paper's NLI model (``--nli-judge seqcls:<it>``)."""
    return tiny_classifier(tmp_path_factory.mktemp("tiny-nli") / "nli", 3)
