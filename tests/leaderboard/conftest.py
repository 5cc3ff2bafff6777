"""One real run shared by the leaderboard's end-to-end and browser tests (one lm_eval start)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import MIRROR, run_lm_eval

# YES, NO, UNKNOWN, UNKNOWN of the fixture mirror: 4 of its 6 documents, every label, and a
# run cut short by --samples (marked on the page).
GEESE_DOCS = [0, 2, 4, 5]


@pytest.fixture(scope="session")
def geese_run(embedded_model: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    """The embedded model through the ``lm_eval`` CLI on GEESE with and without a hint, and
    with the hint alone (label leakage), samples logged; returns the results JSON and the
    output folder."""
    out = tmp_path_factory.mktemp("geese-run") / "out"
    tasks = ("geese_noexp", "geese_human", "geese_human_only")
    samples = json.dumps(dict.fromkeys(tasks, GEESE_DOCS))
    results, _ = run_lm_eval(
        embedded_model,
        ",".join(tasks),
        out,
        limit=None,
        extra=["--samples", samples],
        env={"EXPLAIN_EVAL_DATA": str(MIRROR)},
    )
    return results, out
