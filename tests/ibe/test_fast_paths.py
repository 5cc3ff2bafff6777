"""The IBE speed-ups compute what the plain definitions compute: spaCy's components run or
replaced (memoized lemmatizer, drift without parser) and the one-pass hedge cue count."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibe_postprocess import nlp
from ibe_postprocess.uncertainty import HEDGE_CUES, cues_by_pattern, hedge_cues

# Texts that exercise the attribute ruler's rules: dependency-conditioned POS (auxiliaries,
# "there is", "but" as adverb), multi-token lemma rules (gonna, gotta, let's, y'all, ain't),
# pronoun morphology, and nouns in many shapes.
TEXTS = [
    "it can cause the balloon to inflate",
    "there is a decrease in air pressure inside the balloon",
    "the man has been running and the dogs were barking",
    "I am gonna fix the pipes and we gotta leave",
    "let's see whether y'all ain't ready for the storms",
    "it was nothing but luck that the children's toys survived",
    "the mice ate the cheeses; the geese flew over the oxen",
    "Did the woman's husband have the keys? He did.",
    "The U.S. economy grew 3% in 2019, per analysts' data.",
    "IF the pancreas is injured, THEN the production of insulin is reduced.",
]


@pytest.fixture(scope="module")
def full():
    """The pipeline with every component, as spaCy runs it."""
    pipeline = nlp.pipeline()
    return [[(t.lower_, t.pos_, t.lemma_, t.is_alpha) for t in doc] for doc in pipeline.pipe(TEXTS)]


def test_words_equal_the_full_pipeline(full) -> None:
    words = nlp.words_of(TEXTS + TEXTS[:3])  # repeated texts are read once
    assert len(words) == len(TEXTS)
    assert [[tuple(w) for w in words[text]] for text in TEXTS] == full


def test_drift_nouns_without_parser_equal_the_full_pipeline(full) -> None:
    expected = [frozenset(lemma.lower() for _, pos, lemma, _ in doc if pos == "NOUN") for doc in full]
    got = nlp.nouns_of(TEXTS)
    assert [got[text] for text in TEXTS] == expected
    assert all(nlp.nouns(nlp.words_of([text])[text]) == want for text, want in zip(TEXTS, expected))


CUE_WORDS = sorted({cue for cues in HEDGE_CUES.values() for cue in cues})


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(CUE_WORDS),
            st.sampled_from(CUE_WORDS).map(str.upper),
            st.sampled_from([" ", "  ", ",", ".", "-", "_", "'", "s", "in", "case", "\u212a", "\u017f", "\u0130f"]),
            st.text(max_size=8),
        ),
        max_size=25,
    ).map(" ".join)
)
def test_one_pass_hedge_cues_equal_the_per_category_patterns(text: str) -> None:
    assert hedge_cues(text) == cues_by_pattern(text)
