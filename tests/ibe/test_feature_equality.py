"""The non-model IBE features of the benchmark set stay what they were before the speed-ups.

``bench/explanations.py`` builds 5,000 explanations from the full COPA data (the set the
``ibe_scaling`` benchmark times). Their features (parse, formalization, proof on the
MiniLM similarities, drift, lexicon uncertainty, hedge cues, flags) were computed with the
code of commit 5a4d8a5, before the spaCy, embedding and parser changes, and stored in
``tests/fixtures/ibe/bench_features_5000.jsonl.gz``; this test recomputes them through
``score`` and compares every field. Coherence is left out: it is the judge's number, and
the test's judge is a random stand-in.

Regenerate the file only for a deliberate change of the features (and say so in the IBE
task README's changelog)::

    PYTHONPATH=. python -m tests.ibe.test_feature_equality --write
"""

from __future__ import annotations

import gzip
import json
import math
import sys
import tempfile
from pathlib import Path

import pytest

from tests.helpers import FIXTURES

EXPECTED = FIXTURES / "ibe" / "bench_features_5000.jsonl.gz"
SIZE = 5000
# Everything in a feature row except the judge's columns and the inputs' texts.
SKIPPED = {"coherence", "coherence_judge", "premise", "conclusion", "explanation", "step_coherence"}
# The steps behind the numbers (features schema 2, after the pin): checked against the pinned numbers.
STEPS = ("proof_steps", "drift_concepts", "hedge_cues")
# Embedding batches differ in composition between versions; cosine products may move in the last float bits.
SCORE_TOLERANCE = 1e-6


def feature_rows(work: Path, judge: Path) -> list[dict]:
    """The benchmark set's feature rows, on a fresh cache under ``work``, coherence by the stand-in
    classifier ``judge`` (left out of the comparison). Two processes: the bytes are those of one
    (``test_determinism``)."""
    from bench.explanations import build
    from ibe_postprocess.features import ScoreSettings, score

    # The pinned uncertainty is Algorithm 4's mean over assumptions (the default then).
    settings = ScoreSettings(
        nli_judge=f"seqcls:{judge}", certainty_model="lexicon", uncertainty_aggregation="mean", processes=2
    )
    rows = score(build(SIZE), work / "features", settings)
    # The source is recorded as (file, line) since the pinned rows were computed; compare it as text.
    rows = [{**row, "source": "{file}:{line}".format(**row["source"])} for row in rows]
    return [{k: v for k, v in row.items() if k not in SKIPPED} for row in rows]


def _steps_differences(got: dict, want: dict) -> list[str]:
    """The steps must make the pinned numbers: the proof's rules and score, drift, hedge counts."""
    steps, concepts, cues = (got[key] for key in STEPS)
    found = []
    if sorted({step["rule"] for step in steps if step["rule"]}) != want["proof_rules"]:
        found.append(f"proof_steps' rules {steps!r} != {want['proof_rules']!r}")
    if steps and abs(math.prod(step["similarity"] for step in steps) - want["proof_score"]) > SCORE_TOLERANCE:
        found.append(f"proof_steps' similarities {steps!r} do not multiply to {want['proof_score']!r}")
    if (None if concepts is None else len(concepts)) != want["drift"]:
        found.append(f"drift_concepts {concepts!r} != drift {want['drift']!r}")
    for category in ("epistemic", "doxastic", "conditional"):
        if sum(cue["category"] == category for cue in cues) != want[f"hedge_{category}"]:
            found.append(f"hedge_cues {cues!r} != hedge_{category} {want[f'hedge_{category}']!r}")
    return found


def _differences(got: dict, want: dict) -> list[str]:
    found = _steps_differences(got, want)
    for key in sorted((set(got) | set(want)) - set(STEPS)):
        a, b = got.get(key), want.get(key)
        if key == "proof_score" and isinstance(a, float) and isinstance(b, float):
            if abs(a - b) > SCORE_TOLERANCE:
                found.append(f"{key}: {a!r} != {b!r}")
        elif a != b:
            found.append(f"{key}: {a!r} != {b!r}")
    return found


@pytest.mark.fulldata
def test_benchmark_features_equal_the_pinned_ones(full_data: Path, tmp_path: Path, monkeypatch, tiny_nli) -> None:
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(full_data))
    with gzip.open(EXPECTED, "rt", encoding="utf-8") as handle:
        expected = [json.loads(line) for line in handle]
    got = feature_rows(tmp_path, tiny_nli)
    assert len(got) == len(expected) == SIZE
    mismatches = [(i, d) for i, (g, w) in enumerate(zip(got, expected)) if (d := _differences(g, w))]
    assert not mismatches, f"{len(mismatches)} rows differ; first: {mismatches[:3]}"


def main() -> None:
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    from bench.common import setup_env
    from bench.tiny_judge import tiny_nli_model

    setup_env()
    with tempfile.TemporaryDirectory() as work:
        rows = feature_rows(Path(work), tiny_nli_model(Path(work) / "tiny-nli"))
    with gzip.open(EXPECTED, "wt", encoding="utf-8", compresslevel=9) as handle:
        handle.writelines(json.dumps(row, sort_keys=True) + "\n" for row in rows)
    print(f"{len(rows)} rows -> {EXPECTED}")


if __name__ == "__main__":
    main()
