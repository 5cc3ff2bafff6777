"""IBE's steps in the sample viewer: what ``ibe score`` kept of each explanation (features
schema 2), one line per step beside the logged sample it scored."""

from __future__ import annotations

from pathlib import Path

from custom_metrics.ibe.samples import feature_rows
from ibe_postprocess import features_file
from ibe_postprocess.folder import FeaturesFolder

SAMPLES = "samples_ibe_copa_2026-11-30T00-00-00.000000.jsonl"
ROW = {
    "qid": "balloon",
    "option": 1,
    "flag": "",
    "consistent": 1,
    "depth": 2,
    "drift": 1,
    "coherence": 0.5,
    "source": {"file": f"runs/{SAMPLES}", "line": 3},
    "program": "blow_balloon(x).\nballoon_inflate(X) :- blow_balloon(X).\n?- balloon_expand(x).",
    "proof_steps": [
        {
            "goal": "balloon_expand",
            "matched": "balloon_inflate",
            "similarity": 0.8123,
            "rule": 1,
            "clause": "balloon_inflate(X) :- blow_balloon(X).",
        },
        {
            "goal": "blow_balloon",
            "matched": "blow_balloon",
            "similarity": 1.0,
            "rule": None,
            "clause": "blow_balloon(x).",
        },
    ],
    "step_coherence": [
        {
            "if": "someone blows",
            "then": "it inflates",
            "entailment": 0.7,
            "contradiction": 0.2,
            "coherence": 0.5,
            "unparsed": False,
        },
    ],
    "drift_concepts": ["air"],
    "hedge_cues": [{"cue": "can", "category": "epistemic"}, {"cue": "if", "category": "conditional"}],
}


def test_each_number_is_shown_with_the_steps_it_is_made_of(tmp_path: Path) -> None:
    folder = FeaturesFolder(tmp_path / "ibe")
    features_file.write(folder, features_file.Origin((f"runs/{SAMPLES}",), "0" * 64), [ROW], [])
    shown = feature_rows([tmp_path])[(SAMPLES, 3)]
    assert shown["proof steps"] == (
        "1. balloon_expand ~ balloon_inflate (similarity 0.812) by rule 1: balloon_inflate(X) :- blow_balloon(X).\n"
        "2. blow_balloon ~ blow_balloon (similarity 1.000) by fact: blow_balloon(x)."
    )
    assert shown["coherence per step"] == (
        "1. IF someone blows THEN it inflates: P(entailment) 0.700, P(contradiction) 0.200, coherence +0.500"
    )
    assert shown["formalized (premise, rules, query)"] == ROW["program"]
    assert (shown["drift concepts"], shown["hedge cues"]) == ("air", "can (epistemic), if (conditional)")
    assert (shown["depth"], shown["drift"], shown["flagged"]) == (2, 1, "no")


def test_an_unprovable_explanation_and_one_without_steps_say_so(tmp_path: Path) -> None:
    rows = [
        {**ROW, "consistent": 0, "depth": 0, "proof_steps": [], "hedge_cues": []},
        {**ROW, "source": {"file": SAMPLES, "line": 4}, "drift_concepts": None, "step_coherence": []},
    ]
    features_file.write(FeaturesFolder(tmp_path / "ibe"), features_file.Origin((SAMPLES,), "0" * 64), rows, [])
    shown = feature_rows([tmp_path])
    assert shown[(SAMPLES, 3)]["proof steps"] == "no proof scores above the threshold (inconsistent, depth 0)"
    assert shown[(SAMPLES, 3)]["hedge cues"] == "none"
    assert shown[(SAMPLES, 4)]["drift concepts"] == "no steps"
    broken = {**ROW, "proof_steps": [{"goal": "a"}]}  # a row of another shape: named, never a crash
    features_file.write(FeaturesFolder(tmp_path / "ibe"), features_file.Origin((SAMPLES,), "0" * 64), [broken], [])
    assert "holds steps of another shape" in feature_rows([tmp_path])[(SAMPLES, 3)]["proof steps"]
