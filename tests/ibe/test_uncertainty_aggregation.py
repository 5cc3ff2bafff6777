"""IBE uncertainty: the aggregation that reproduces the paper's Figure 1 is the default.

Figure 1 scores E1 (2 assumptions) 2.0 and E2 (3 assumptions) 3.0. With the same
uncertainty for every assumption, §4's sum gives 2u + UC(S) and 3u + UC(S): the figure's
values with u = 1 (certainty 5 of 6) and a summary of certainty 6. Algorithm 4's mean
gives u + UC(S) for both, equal whatever u: it cannot show the figure's gap. The lexicon
estimate and the features file carry the choice through (``--uncertainty-aggregation``).
"""

from __future__ import annotations

import json

import pytest

from ibe_postprocess.cli import build_parser
from ibe_postprocess.features import ScoreSettings
from ibe_postprocess.parsing import parse_explanation
from ibe_postprocess.uncertainty import (
    DEFAULT_AGGREGATION,
    UncertaintyScorer,
    lexicon_uncertainty,
    overall_uncertainty,
)
from tests.helpers import BALLOON

FIGURE_1 = (2.0, 3.0)  # E1, E2


def _balloon():
    return [parse_explanation(json.loads(line)["explanation"]) for line in BALLOON.read_text().splitlines()]


class _FigureScores(UncertaintyScorer):
    """Sentence uncertainties as Figure 1 implies them: 1.0 per assumption, 0.0 for the summary."""

    def sentence_uncertainty(self, sentences):
        return [0.0 if text.startswith("Therefore") else 1.0 for text in sentences]


def test_default_aggregation_reproduces_figure_1() -> None:
    parsed = _balloon()
    assert [len(p.assumptions) for p in parsed] == [2, 3] and all(p.summary for p in parsed)
    default = [result.uncertainty for result in _FigureScores("lexicon").score_many(parsed)]
    assert DEFAULT_AGGREGATION == "sum" and default == list(FIGURE_1)
    # Algorithm 4's mean gives both explanations the same value from the same sentence scores.
    assert [r.uncertainty for r in _FigureScores("lexicon", "mean").score_many(parsed)] == [1.0, 1.0]


@pytest.mark.parametrize("u", [0.5, 1.0, 1.7])
def test_mean_cannot_separate_explanations_of_equally_uncertain_sentences(u: float) -> None:
    summary = 0.0
    assert overall_uncertainty([u, u], summary, "mean") == overall_uncertainty([u, u, u], summary, "mean")
    gap = overall_uncertainty([u, u, u], summary, "sum") - overall_uncertainty([u, u], summary, "sum")
    assert gap == pytest.approx(u)


def test_aggregations_on_the_lexicon_estimate() -> None:
    e1, e2 = _balloon()
    # E2's third assumption and its summary hedge with "may" (1 epistemic cue each); E1 has no cue.
    assert [lexicon_uncertainty(text) for text in e2.assumptions] == [0.0, 0.0, 1.0]
    by = {
        agg: [r.uncertainty for r in UncertaintyScorer("lexicon", agg).score_many([e1, e2])] for agg in ("sum", "mean")
    }
    assert by == {"sum": [0.0, 2.0], "mean": [0.0, pytest.approx(1 + 1 / 3)]}
    assert overall_uncertainty([], None) is None and overall_uncertainty([], 2.0) == 2.0


def test_aggregation_is_a_recorded_setting_and_a_cli_flag() -> None:
    parser = build_parser()
    assert parser.parse_args(["score", "x.jsonl", "--out", "o"]).uncertainty_aggregation == "sum"
    assert (
        parser.parse_args(
            ["score", "x.jsonl", "--out", "o", "--uncertainty-aggregation", "mean"]
        ).uncertainty_aggregation
        == "mean"
    )
    with pytest.raises(SystemExit):
        parser.parse_args(["score", "x.jsonl", "--out", "o", "--uncertainty-aggregation", "median"])
    assert ScoreSettings(uncertainty_aggregation="mean").recorded()["uncertainty_aggregation"] == "mean"
    with pytest.raises(ValueError, match="uncertainty aggregation must be one of sum, mean, got 'median'"):
        UncertaintyScorer("lexicon", "median")
