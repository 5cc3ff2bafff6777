"""Thin hooks for the GEESE task YAMLs; the logic lives in ``custom_metrics.geese``."""

from __future__ import annotations

from typing import Any

import datasets

from custom_metrics import geese
from custom_metrics.data import DataError, to_dataset

# Re-exported for `!function utils.<name>` in the YAMLs.
from custom_metrics.geese import (  # noqa: F401
    AnonymizeFilter,
    acc_no,
    acc_unknown,
    acc_yes,
    f1_macro,
    process_generation,
    process_prediction,
)


def load_test(**_: Any) -> dict[str, datasets.Dataset]:
    return {"test": to_dataset(geese.load_docs())}


def load_selfexp(explanations: str | None = None, **_: Any) -> dict[str, datasets.Dataset]:
    """GEESE test docs carrying the explanations of an earlier M1 run, matched by id."""
    if not explanations:
        raise DataError(
            "geese_selfexp needs the samples file of an M1 run: "
            "--metadata '{\"explanations\": \"PATH/samples_geese_generate_whyexp_<ts>.jsonl\"}'."
        )
    return {"test": to_dataset(geese.attach_explanations(geese.load_docs(), explanations))}


def prompt_noexp(doc: dict) -> str:
    return geese.m2_prompt(doc, geese.HINTS["noexp"](doc))


def prompt_dummy(doc: dict) -> str:
    return geese.m2_prompt(doc, geese.HINTS["dummy"](doc))


def prompt_human(doc: dict) -> str:
    return geese.m2_prompt(doc, geese.HINTS["human"](doc))


def prompt_llama3(doc: dict) -> str:
    return geese.m2_prompt(doc, geese.HINTS["llama3"](doc))


def prompt_selfexp(doc: dict) -> str:
    return geese.m2_prompt(doc, geese.HINTS["selfexp"](doc))


def prompt_whyexp(doc: dict) -> str:
    return geese.m1_prompt(doc, "whyexp")


def prompt_whynot(doc: dict) -> str:
    return geese.m1_prompt(doc, "whynot")


def prompt_implicit(doc: dict) -> str:
    return geese.m1_prompt(doc, "implicit")
