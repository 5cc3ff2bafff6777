"""A verified Arrow copy of each RULE task's docs, so a run does not rebuild them from 6 MB of JSON.

Building a variant's docs (about 0.13 s, paid before ``--limit`` applies: 2% of a ``--limit 8``
run) is skipped when the suite's cache folder holds an Arrow copy under a key covering all they
depend on: the sha256 of every input file, the source of the modules that shape them
(``SHAPING_MODULES``), the variant's settings and the datasets and pyarrow versions. A manifest
(key, rows, the file's sha256) is checked before every use, so a cut or altered copy is rebuilt;
entries are renamed into place, so concurrent runs never see half a copy. Where the folder cannot
be written, the docs are built as before and a warning says why.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import re
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa

from custom_metrics.common.download import sha256_of
from custom_metrics.common.errors import DataError
from custom_metrics.common.files import replaced_folder
from custom_metrics.common.settings import cache_root
from custom_metrics.common.sources import fetch_file, to_dataset
from custom_metrics.rule import data

log = logging.getLogger(__name__)

FORMAT = 1  # of the folder layout below
_KEY = re.compile(r"[0-9a-f]{32}")
ARROW_FILE = "docs.arrow"
MANIFEST_FILE = "manifest.json"
# Modules whose code decides what the docs hold.
SHAPING_MODULES = (
    "custom_metrics.common.sources",
    "custom_metrics.rule.bias",
    "custom_metrics.rule.data",
    "custom_metrics.rule.metrics",
    "custom_metrics.rule.prompts",
    "custom_metrics.rule.variants",
)


def cache_key(variant: str, split: int | None, demos: str = "reclor", shots: int = 5) -> str:
    inputs = [data.MAIN_SOURCE, *data.SUB_SOURCES.values()]  # the data files a variant reads
    if variant.startswith("fewshot"):  # and the published prompts
        inputs.append(data.PROMPTS_SOURCE)
    code = [Path(importlib.import_module(name).__file__).read_bytes() for name in SHAPING_MODULES]
    parts = {
        "format": FORMAT,
        "variant": variant,
        "split": split,
        "demos": demos,
        "shots": shots,
        "inputs": {source.mirror_path: sha256_of(fetch_file(source)) for source in inputs},
        "code": hashlib.sha256(b"\0".join(code)).hexdigest(),
        "versions": [datasets.__version__, pa.__version__],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _read(folder: Path, key: str) -> datasets.Dataset | None:
    """The cached docs in ``folder`` if its manifest matches ``key`` and the Arrow bytes are intact."""
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
        arrow = folder / ARROW_FILE
        if manifest.get("key") != key or manifest.get("sha256") != sha256_of(arrow):
            log.warning("RULE docs cache %s does not match its manifest; building the docs again.", folder)
            return None
        docs = datasets.Dataset.from_file(str(arrow))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, pa.ArrowException) as err:
        log.warning("RULE docs cache %s is unreadable (%s); building the docs again.", folder, err)
        return None
    return docs if len(docs) == manifest.get("rows") else None


def _write(folder: Path, key: str, docs: datasets.Dataset, stale: Iterable[Path]) -> None:
    # Swapped in whole when written (an invalid copy there is replaced), so no run sees half an entry.
    with replaced_folder(folder, lambda _: True, "RULE docs cache entry") as partial:
        table = docs.data.table
        with pa.OSFile(str(partial / ARROW_FILE), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        manifest = {"key": key, "rows": len(docs), "sha256": sha256_of(partial / ARROW_FILE)}
        (partial / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    for old in stale:  # earlier keys of the same variant (older data or code)
        shutil.rmtree(old, ignore_errors=True)


def cached_docs(
    variant: str,
    split: int | None,
    build: Callable[[], list[dict[str, Any]]],
    demos: str = "reclor",
    shots: int = 5,
) -> datasets.Dataset:
    """The docs of ``variant`` from the cache when a verified copy exists, else ``build()`` and stored."""
    root = cache_root() / "rule-docs"
    key = cache_key(variant, split, demos, shots)
    prefix = f"{variant}{split or ''}{'' if demos == 'reclor' else '-' + demos}{'' if shots == 5 else f'-{shots}shot'}-"
    folder = root / f"{prefix}{key[:32]}"
    cached = _read(folder, key)
    if cached is not None:
        return cached
    data.forget_loaded()  # the docs stored under this key come from the files it was computed on
    docs = to_dataset(build())
    # Earlier keys of the same entry: the prefix then a key (not another entry whose prefix
    # starts the same, e.g. "fewshot1-" and "fewshot1-rule-").
    stale = [p for p in root.glob(f"{prefix}*") if p != folder and _KEY.fullmatch(p.name[len(prefix) :])]
    try:
        _write(folder, key, docs, stale)
    except (OSError, DataError) as err:
        log.warning("RULE docs cache %s cannot be written (%s); the docs are built on every run.", root, err)
    return docs
