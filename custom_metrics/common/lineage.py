"""What a run read when its documents were built from another run's logged samples.

A task that reads another run's samples file counts only the documents it built: a run over a
``--limit 2`` run records "2 of 2" and would pass for a full run, in its own prompt's setting. So
the reading task's loader records the run it read (``results.source_lineage``) in a doc column,
``source_run``: the docs logged in the samples file are the one channel from a loader to what
reads a run afterwards. The leaderboard derives the reading run's cut, setting and model from it.
Which tasks read which run is each paper's ``READS_SAMPLES`` (task -> ``--metadata`` key).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from custom_metrics.common import fields
from custom_metrics.common.errors import DataError
from custom_metrics.common.jsonl import numbered_jsonl
from custom_metrics.common.task_folders import paper_packages

COLUMN = "source_run"


@dataclass(frozen=True)
class Lineage:
    """The run a reading run read: its samples file (by name), its task, the documents it
    evaluated of its task's full count, its ``--limit``, setting and model as its results file
    records them, and how what it read in turn was cut (``upstream``). ``recorded`` is False
    when no results file lay beside the samples file: then its cut, setting and model are unknown."""

    file: str
    task: str
    docs: int | None
    of_docs: int | None
    limit: float | None
    setting: str
    model: str
    upstream: str = ""
    recorded: bool = True

    @property
    def cut(self) -> str:
        """How the documents read were cut short, in words ("" for a whole task, or not known)."""
        own = []
        if self.limit is not None:
            own.append(f"--limit {self.limit:g}")
        if self.docs is not None and self.of_docs is not None and self.docs < self.of_docs:
            own.append(f"{self.docs:,} of {self.of_docs:,} docs")
        words = f"{self.task}: {', '.join(own)}" if own else ""
        return "; ".join(part for part in (words, self.upstream) if part)

    def column(self) -> dict[str, Any]:
        return asdict(self)

    def and_read(self, other: Lineage) -> Lineage:
        """This lineage with the cut of a second file read beside it (an editor's run over the same
        chain of thought), said once."""
        parts = dict.fromkeys(part for text in (self.upstream, other.cut) for part in text.split("; ") if part)
        return replace(self, upstream="; ".join(parts))


def with_lineage(docs: list[dict[str, Any]], lineage: Lineage) -> list[dict[str, Any]]:
    """The docs, each with the lineage column (one value for every doc: the run they were read from)."""
    column = lineage.column()
    return [{**doc, COLUMN: column} for doc in docs]


def lineage_of(value: Any, where: str) -> Lineage:
    """A logged lineage column read back, every field checked (a DataError naming ``where``)."""
    if not isinstance(value, dict):
        raise DataError(f"{where}: field 'doc.{COLUMN}' is {value!r}, not an object.")
    try:
        text = {name: fields.text(value.get(name), f"field 'doc.{COLUMN}.{name}'") or "" for name in _TEXTS}
        recorded = value.get("recorded", True)
        if not isinstance(recorded, bool):
            raise fields.FieldError(f"field 'doc.{COLUMN}.recorded' is {recorded!r}, not true or false")
        return Lineage(
            **text,
            docs=fields.count(value.get("docs"), f"field 'doc.{COLUMN}.docs'"),
            of_docs=fields.count(value.get("of_docs"), f"field 'doc.{COLUMN}.of_docs'"),
            limit=fields.finite(value.get("limit"), f"field 'doc.{COLUMN}.limit'"),
            recorded=recorded,
        )
    except fields.FieldError as err:
        raise DataError(f"{where}: {err}.") from err


_TEXTS = ("file", "task", "setting", "model", "upstream")


def logged_lineage(samples: Path) -> Lineage | None:
    """The lineage a samples file's first doc records (the same on every doc), or None when its
    docs record none (a task that reads no other run, or a run made before lineage was recorded)."""
    for line, row in numbered_jsonl(samples):
        doc = row.get("doc")
        if not isinstance(doc, dict) or COLUMN not in doc:
            return None
        return lineage_of(doc[COLUMN], f"{samples}:{line}")
    return None


@functools.cache
def readers() -> Mapping[str, str]:
    """Every task that reads another run's samples file -> the ``--metadata`` key naming it
    (each paper's ``READS_SAMPLES``)."""
    return {task: key for package in paper_packages() for task, key in getattr(package, "READS_SAMPLES", {}).items()}
