"""GEESE data: the 800 e-RTE-3-it test pairs with their explanations, and the hint of each
M2 setting (a ``dataset_kwargs`` entry of the task YAML) as a ``hint`` column, logged with every sample.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from custom_metrics.common import fields
from custom_metrics.common.download import GitHubFile
from custom_metrics.common.errors import DataError
from custom_metrics.common.lineage import with_lineage
from custom_metrics.common.metadata import check_metadata_keys
from custom_metrics.common.results import source_lineage
from custom_metrics.common.samples import MAX_RESPONSE_CHARS, logged_response, read_samples
from custom_metrics.common.settings import env_value
from custom_metrics.common.sources import (
    HubDataset,
    Source,
    data_key,
    load_hub_rows,
    load_rows,
    mirror_root,
    to_dataset,
)
from custom_metrics.common.task_loading import task_loader
from custom_metrics.geese.anonymize import anonymize

if TYPE_CHECKING:
    import datasets

LABELS = ("YES", "NO", "UNKNOWN")
FIELDS = ("id", "text_t", "text_h", "label", "text_label", "anon_human", "anon_whyexp", "anon_whynot", "anon_implicit")

# The authors' save_to_disk copy of the Hub dataset they evaluated on (2024-11-04); the
# mirror's JSONL is its row-by-row conversion.
SOURCE = Source(
    name="GEESE (e-RTE-3-it explained, test)",
    mirror_path="geese/explained-full-llama-3/test.jsonl",
    remote=GitHubFile(
        owner="andreazaninello",
        repo="calamita-geese",
        commit="de12d080de5a44c56c8d54e5335a6eff50e7bf14",
        path="scripts/explained_data/data-00000-of-00001.arrow",
        sha256="3702c9ef18e6b80dfa6e8fdae68dc11972a31395ead027f0b3279dfb84a82401",
        size=3460088,
    ),
    stand_in=lambda: verified_hub_choice(),  # explain-eval download's check of the Hub copy, when chosen
)
# The alternative: the Hub dataset the authors loaded, which may no longer be public. Its
# commit is unknown, so it is pinned by content: `rows_fingerprint` of the 800 rows above.
HUB_ID = "azaninello/explained-full-llama-3"
HUB_SPLIT = "test"
ROWS_FINGERPRINT = "2fbdc4db94a0ea55053d6e4a13276273de3b62431f8ff6799dcbdae3754bda79"
_HUB_SETTING = re.compile(r"^hub(?::(?P<id>[^@\s]+))?(?:@(?P<revision>\S+))?$")
GEESE_SOURCE_ENV = "EXPLAIN_EVAL_GEESE_SOURCE"  # github (default) or hub[:<dataset id>][@<revision>]
SWITCH_BACK = f"unset {GEESE_SOURCE_ENV} and drop the metadata 'geese_source' to use it"

M1_TYPES = ("whyexp", "whynot", "implicit")
NO_HINT = "Not given"
# Hint of each M2 setting, as the authors' tasks fill it: Table 2's four (dummy uses the
# unstripped text_h, as the authors' code), their Llama-3 whynot and implicit explanations
# (run by the authors, not in the paper), and the explanations of your own M1 run.
HINTS: dict[str, Callable[[dict[str, Any]], str]] = {
    "noexp": lambda doc: NO_HINT,
    "dummy": lambda doc: doc["text_h"],
    "human": lambda doc: doc["anon_human"],
    "llama3": lambda doc: doc["anon_whyexp"],
    "llama3_whynot": lambda doc: doc["anon_whynot"],
    "llama3_implicit": lambda doc: doc["anon_implicit"],
    "selfexp": lambda doc: doc["self_explanation"],
}


def _check_label(row: dict[str, Any]) -> None:
    if row["label"] not in LABELS:
        raise ValueError(f"field 'label' is {row['label']!r}, expected one of {LABELS}")


def hub_choice(setting: str | None = None) -> HubDataset | None:
    """The Hub dataset chosen by ``--metadata geese_source=...`` or ``EXPLAIN_EVAL_GEESE_SOURCE``
    (None for ``github``, the pinned file); any id and revision do: the rows are checked by content."""
    value = (setting or env_value(GEESE_SOURCE_ENV) or "github").strip()
    if value == "github":
        return None
    match = _HUB_SETTING.match(value)
    if match is None:
        raise DataError(
            f"GEESE: data source {value!r} (metadata 'geese_source' or {GEESE_SOURCE_ENV}) is not one of "
            "'github', 'hub', 'hub@<revision>', 'hub:<dataset id>[@<revision>]'."
        )
    return HubDataset(match["id"] or HUB_ID, HUB_SPLIT, ROWS_FINGERPRINT, match["revision"])


def verified_hub_choice() -> str:
    """The Hub dataset ``EXPLAIN_EVAL_GEESE_SOURCE`` chooses, loaded and checked against the pinned
    rows (filling the datasets cache for offline nodes); "" when it chooses the GitHub file."""
    hub = hub_choice()
    if hub is None:
        return ""
    rows = load_hub_rows(hub, SOURCE, SWITCH_BACK)
    return f"GEESE via {GEESE_SOURCE_ENV}: Hub dataset {hub.describe()}, {len(rows)} rows"


def load_docs(source: str | None = None) -> list[dict[str, Any]]:
    """The 800 test docs from the mirror, else from the chosen public source (``hub_choice``)."""
    return [dict(doc) for doc in _docs(data_key(), hub_choice(source))]


@lru_cache(maxsize=4)
def _docs(_data: tuple[str | None, ...], hub: HubDataset | None) -> tuple[dict[str, Any], ...]:
    """One read per process: the four M2 tasks of a run share it."""
    if hub is None or mirror_root() is not None:  # the mirror wins over every download
        return tuple(load_rows(SOURCE, required=FIELDS, check=_check_label))
    return tuple(load_hub_rows(hub, SOURCE, SWITCH_BACK, required=FIELDS, check=_check_label))


def _check_doc_id(sample: dict[str, Any]) -> None:
    if "id" not in sample["doc"]:
        raise ValueError("field 'doc.id' missing; is this the samples file of a geese_generate_* run?")
    fields.identifier(sample["doc"]["id"], "field 'doc.id'")
    logged_response(sample, MAX_RESPONSE_CHARS)


def explanations_from_samples(path: str | Path) -> dict[str, str]:
    """Map GEESE doc id -> logged (filtered) explanation of an M1 run's samples file, anonymized
    again (idempotent) so a samples file from the authors' own YAMLs, which log raw text, is safe too."""
    try:
        samples = read_samples(path, check=_check_doc_id, key=lambda sample: f"doc.id {str(sample['doc']['id'])!r}")
    except DataError as err:
        raise DataError(
            f"geese_selfexp: {err} Pass the samples_*.jsonl of an M1 run (geese_generate_*), e.g. "
            '--metadata \'{"explanations": "OUT/<model>/samples_geese_generate_whyexp_<ts>.jsonl"}\'.'
        ) from err
    return {str(sample["doc"]["id"]): anonymize(logged_response(sample)) for sample in samples}


def attach_explanations(docs: list[dict[str, Any]], samples_path: str | Path) -> list[dict[str, Any]]:
    """Docs covered by an M1 run's samples file (a ``--limit`` run covers some), each with its
    explanation as a hint; ids unknown to GEESE are an error, not a silent partial join."""
    explanations = explanations_from_samples(samples_path)
    known = {str(doc["id"]) for doc in docs}
    strangers = sorted(set(explanations) - known)
    if strangers:
        raise DataError(
            f"{samples_path}: {len(strangers)} doc id(s) are not GEESE test ids "
            f"(first: {strangers[:5]}); is this the samples file of a geese_generate_* run?"
        )
    return [{**doc, "self_explanation": explanations[str(doc["id"])]} for doc in docs if str(doc["id"]) in explanations]


@task_loader
def load_m2(
    hint: str | None = None, explanations: str | None = None, geese_source: str | None = None, **run_args: Any
) -> dict[str, datasets.Dataset]:
    """M2 docs with the ``hint`` of the task's setting (``dataset_kwargs: {hint: ...}``); ``selfexp`` needs
    an M1 samples file."""
    check_metadata_keys("GEESE", run_args)
    if hint not in HINTS:
        raise DataError(
            f"GEESE: unknown hint setting {hint!r}; expected one of {sorted(HINTS)} (dataset_kwargs 'hint')."
        )
    docs = load_docs(geese_source)
    if hint == "selfexp":
        if not explanations:
            raise DataError(
                "geese_selfexp and geese_selfexp_only need the samples file of an M1 run: "
                '--metadata \'{"explanations": "PATH/samples_geese_generate_whyexp_<ts>.jsonl"}\'.'
            )
        docs = with_lineage(attach_explanations(docs, explanations), source_lineage(Path(explanations).expanduser()))
    return {"test": to_dataset([{**doc, "hint": HINTS[hint](doc)} for doc in docs])}


@task_loader
def load_m1(explanation_type: str, geese_source: str | None = None, **run_args: Any) -> dict[str, datasets.Dataset]:
    check_metadata_keys("GEESE", run_args)
    if explanation_type not in M1_TYPES:
        raise DataError(
            f"GEESE: unknown explanation type {explanation_type!r}; expected one of {M1_TYPES} "
            "(dataset_kwargs 'explanation_type')."
        )
    return {"test": to_dataset([{**doc, "explanation_type": explanation_type} for doc in load_docs(geese_source)])}
