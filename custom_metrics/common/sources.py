"""Dataset loading shared by every task: public source by default, local mirror on request.

Real users download from the public source (a Hugging Face dataset or a pinned GitHub
file). Offline machines point ``EXPLAIN_EVAL_DATA`` at a directory laid out like the
project's ``shared/data`` mirror. Paths never depend on the current working directory,
and every failure names the dataset, the variable and the file looked for, because a
silent fallback would make two machines report different numbers for "the same" task.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa

from custom_metrics.common.errors import DataError
from custom_metrics.common.jsonl import RowCheck, check_row, read_jsonl
from custom_metrics.common.settings import DATA_ENV, env_value


@dataclass(frozen=True)
class Source:
    """Where one data file lives: publicly (hub id or URL) and inside the mirror."""

    name: str
    mirror_path: str
    hub_id: str | None = None
    hub_split: str | None = None
    url: str | None = None

    def describe(self) -> str:
        return self.hub_id or self.url or self.mirror_path


def mirror_root() -> Path | None:
    """The mirror directory named by ``EXPLAIN_EVAL_DATA``, resolved absolutely."""
    value = env_value(DATA_ENV)
    if value is None:
        return None
    root = Path(value).expanduser().resolve()
    if not root.is_dir():
        raise DataError(f"{DATA_ENV}={value!r} is not a directory (resolved to {root}).")
    return root


def mirror_file(source: Source) -> Path | None:
    """The mirror file for ``source``, or None when no mirror is configured."""
    root = mirror_root()
    if root is None:
        return None
    path = root / source.mirror_path
    if not path.is_file():
        raise DataError(
            f"{source.name}: {DATA_ENV} is set to {root}, but {path} does not exist. "
            f"Lay the mirror out like shared/data (expected '{source.mirror_path}'), "
            f"or unset {DATA_ENV} to download {source.describe()}."
        )
    return path


def download(source: Source) -> Path:
    """The public file of ``source``, downloaded once into the datasets cache."""
    try:
        return Path(datasets.DownloadManager().download(source.url))
    except Exception as err:  # network, offline mode, 404: all end the same way
        raise DataError(
            f"{source.name}: could not download {source.url} ({type(err).__name__}: {err}). "
            f"Offline? Set {DATA_ENV} to a local mirror holding '{source.mirror_path}'."
        ) from err


def fetch_file(source: Source) -> Path:
    """A local path to ``source``: its mirror file when configured, else the download."""
    return mirror_file(source) or download(source)


def load_rows(source: Source, required: Sequence[str] = (), check: RowCheck | None = None) -> list[dict[str, Any]]:
    """Rows of ``source`` from the mirror when configured, else from the public source."""
    path = mirror_file(source)
    if path is not None:
        return read_jsonl(path, required, check)
    try:
        if source.hub_id:
            dataset = datasets.load_dataset(source.hub_id, split=source.hub_split)
        elif source.url:
            dataset = datasets.load_dataset("json", data_files=source.url, split="train")
        else:  # mirror-only sources
            raise DataError("it has no public source")
    except Exception as err:  # network, auth, missing dataset: all end the same way
        raise DataError(
            f"{source.name}: could not load {source.describe()} ({type(err).__name__}: {err}). "
            f"Offline? Set {DATA_ENV} to a local mirror holding '{source.mirror_path}'."
        ) from err
    rows = [dict(row) for row in dataset]
    for index, row in enumerate(rows):
        check_row(row, required, check, f"{source.describe()} row {index}")
    return rows


def to_dataset(rows: list[dict[str, Any]]) -> datasets.Dataset:
    """Rows as a Dataset; columns are the first row's keys, as with ``Dataset.from_list``.

    Arrow's own conversion is a third faster than ``from_list`` for the same result, and
    it runs once per task and run, before ``--limit`` applies.
    """
    return datasets.Dataset(pa.Table.from_pylist(rows))
