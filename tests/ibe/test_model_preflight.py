"""``ibe score`` loads the models a user names before the spaCy and Prolog stages: a wrong
``--nli-judge``, ``--certainty-model`` or ``--formalizer`` costs seconds, not a scored run.

Before, the judge was first loaded at the coherence stage, after formalization (spaCy) and
the proofs (Prolog); a named certainty model that could not load was silently replaced by
the lexicon estimate. Here the spaCy stage is replaced by a failure, so reaching it shows.
"""

from __future__ import annotations

import pytest

import ibe_postprocess.features as features
from ibe_postprocess.cli import main as ibe
from tests.helpers import BALLOON


@pytest.fixture
def no_slow_stage(monkeypatch) -> None:
    def reached(*args, **kwargs):
        raise AssertionError("spaCy was loaded before the named models")

    monkeypatch.setattr(features, "pipeline", reached)


@pytest.mark.parametrize(
    ("option", "says"),
    [
        ("--nli-judge", "the NLI judge cannot be loaded"),
        ("--certainty-model", "cannot be loaded"),
        ("--formalizer", "the formalizing LM cannot be loaded"),
    ],
)
def test_a_named_model_that_cannot_load_stops_the_run_before_spacy_and_prolog(
    tmp_path, capsys, no_slow_stage, option: str, says: str
) -> None:
    missing = tmp_path / "no-such-model"
    value = {"--nli-judge": f"seqcls:{missing}", "--formalizer": f"lm:{missing}"}.get(option, str(missing))
    others = {
        "--nli-judge": ["--certainty-model", "lexicon"],
        "--certainty-model": ["--nli-judge", "embedded"],
        "--formalizer": ["--nli-judge", "embedded", "--certainty-model", "lexicon"],
    }[option]
    code = ibe(["score", str(BALLOON), "--out", str(tmp_path / "out"), option, value, *others])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{option} {value}: {says}" in err and "leave" in err and "out for" in err  # what to pass instead
