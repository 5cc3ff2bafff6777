"""Dataset loading shared by every task: pinned public files by default, a local mirror on request.

Each dataset file is downloaded from its pinned public copy (``common.download``); offline
machines point ``EXPLAIN_EVAL_DATA`` at a directory laid out like the ``shared/data`` mirror,
which always wins. Every failure names the dataset, the variable and the file looked for: a
silent fallback would make two machines report different numbers for "the same" task.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from custom_metrics.common.download import PinnedFile, fetch
from custom_metrics.common.errors import DataError
from custom_metrics.common.files import JSON_MAX_BYTES, read_regular_bytes
from custom_metrics.common.jsonl import RowCheck, check_row, read_jsonl
from custom_metrics.common.settings import CACHE_ENV, DATA_ENV, env_value, offline_variable

if TYPE_CHECKING:  # ``datasets`` (seconds to import) loads where rows become a Dataset, not for --help
    import datasets


@dataclass(frozen=True)
class Source:
    """One dataset file: its pinned public copy and its place in the mirror.

    ``member`` names a file inside the public copy when that is an archive (COPA's tarball);
    the mirror holds the member itself at ``mirror_path``. ``stand_in``: where a setting may
    choose another copy of the same rows (a Hub dataset pinned by content), the check
    ``explain-eval download`` runs of the chosen one, saying what it verified ("" for none chosen).
    """

    name: str
    mirror_path: str
    remote: PinnedFile  # a GitHub file or a Hub file at a fixed commit
    member: str | None = None
    stand_in: Callable[[], str] | None = field(default=None, compare=False, repr=False)

    def describe(self) -> str:
        return self.remote.url() + (f"#{self.member}" if self.member else "")


@dataclass(frozen=True)
class HubDataset:
    """A Hugging Face dataset split, pinned by content: its rows must hash to ``fingerprint``."""

    id: str
    split: str
    fingerprint: str
    revision: str | None = None

    def describe(self) -> str:
        return f"{self.id}@{self.revision or 'main'} (split {self.split})"


def data_key() -> tuple[str | None, str | None]:
    """Key for rows kept once per process: the settings that decide which file is read."""
    return env_value(DATA_ENV), env_value(CACHE_ENV)


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
    """The verified public file of ``source`` (for an archive source, the whole archive)."""
    return fetch(source.remote, source.name, source.mirror_path)


def fetch_file(source: Source) -> Path:
    return mirror_file(source) or download(source)


def load_rows(source: Source, required: Sequence[str] = (), check: RowCheck | None = None) -> list[dict[str, Any]]:
    """Rows of ``source``: the mirror's JSONL, else the pinned JSONL or Arrow file."""
    mirrored = mirror_file(source)
    path = mirrored or download(source)
    if mirrored or not source.remote.path.endswith((".parquet", ".arrow")):
        return read_jsonl(path, required, check)
    rows = read_table_rows(path, source.name)
    for index, row in enumerate(rows, start=1):
        check_row(row, required, check, f"{path} row {index}")
    return rows


def read_table_rows(path: Path, dataset: str) -> list[dict[str, Any]]:
    """Rows of a Parquet file (how the Hub stores a dataset's splits) or a ``datasets`` Arrow
    file (a ``save_to_disk`` shard), as plain dicts."""
    kind = "Parquet" if path.suffix == ".parquet" else "Arrow"
    try:
        if kind == "Parquet":
            import pyarrow.parquet as pq

            rows = pq.read_table(path).to_pylist()
        else:
            import datasets

            rows = datasets.Dataset.from_file(str(path)).to_list()
    except (OSError, ValueError, pa.ArrowException) as err:
        raise DataError(
            f"{dataset}: {path} is not a readable {kind} file ({type(err).__name__}: {err}); delete it to download "
            f"it again."
        ) from err
    if not rows:
        raise DataError(f"{dataset}: {path}: the file holds no rows.")
    return rows


def archive_member(source: Source) -> tuple[bytes, str]:
    """The bytes of ``source``'s mirror file, else of its member in the pinned archive; and where from."""
    path = mirror_file(source)
    if path is not None:
        return read_regular_bytes(path, JSON_MAX_BYTES, "mirror file"), str(path)
    archive = download(source)
    where = f"{archive}#{source.member}"
    advice = f"delete {archive} to download it again, or set {DATA_ENV} to a mirror holding '{source.mirror_path}'"
    try:
        with tarfile.open(archive, "r:*") as tar:
            handle = tar.extractfile(str(source.member))
            if handle is None:
                raise DataError(f"{source.name}: {where} is not a regular file in the archive; {advice}.")
            return handle.read(), where
    except KeyError as err:
        raise DataError(f"{source.name}: {archive} has no member {source.member!r}; {advice}.") from err
    except (tarfile.TarError, EOFError, OSError, zlib.error) as err:
        raise DataError(
            f"{source.name}: {archive} is not a readable tar archive ({type(err).__name__}: {err}); {advice}."
        ) from err


def rows_fingerprint(rows: Sequence[dict[str, Any]]) -> str:
    """sha256 of the rows in order, each as key-sorted JSON: equal exactly when the content is."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps(row, ensure_ascii=False, sort_keys=True).encode("utf-8") + b"\n")
    return digest.hexdigest()


def load_hub_rows(
    hub: HubDataset,
    source: Source,
    switch_back: str,
    required: Sequence[str] = (),
    check: RowCheck | None = None,
) -> list[dict[str, Any]]:
    """Rows of a Hub dataset that stands in for ``source``, refused unless they equal its content.

    A Hub dataset can be re-uploaded under the same id; the fingerprint makes the Hub an
    alternative transport for the pinned rows, never a different dataset. ``switch_back``
    tells the user how to choose the pinned default again.
    """
    import datasets

    try:
        dataset = datasets.load_dataset(hub.id, split=hub.split, revision=hub.revision)
    except Exception as err:  # network, auth, removed dataset, offline mode: all end the same way
        offline = offline_variable()
        reason = f"{offline}=1 is set and the datasets cache does not hold it" if offline else "the Hub is unreachable"
        raise DataError(
            f"{source.name}: could not load the Hub dataset {hub.describe()} ({type(err).__name__}: {err}). Either "
            f"{reason}, or the dataset is no longer public. The pinned default is the GitHub file "
            f"{source.describe()}: {switch_back}."
        ) from err
    rows = [dict(row) for row in dataset]
    got = rows_fingerprint(rows)
    if got != hub.fingerprint:
        raise DataError(
            f"{source.name}: the Hub dataset {hub.describe()} is not the pinned content: its {len(rows)} rows have "
            f"fingerprint {got}, expected {hub.fingerprint} (the rows of {source.describe()}). Results would not "
            f"be comparable; {switch_back}."
        )
    for index, row in enumerate(rows, start=1):
        check_row(row, required, check, f"{hub.describe()} row {index}")
    return rows


def to_dataset(rows: list[dict[str, Any]]) -> datasets.Dataset:
    """Rows as a Dataset; columns are the first row's keys, as with ``Dataset.from_list``.

    Arrow's own conversion is a third faster than ``from_list`` for the same result, and
    it runs once per task and run, before ``--limit`` applies.
    """
    import datasets

    return datasets.Dataset(pa.Table.from_pylist(rows))
