"""``features.jsonl``: the feature rows of one ``ibe score``, and what they were computed from.

The first line is a header, the rest one row per explanation::

    {"ibe_features": {"schema": 2, "version": "<explain-eval version>", "complete": true,
                      "rows": 300, "rows_sha256": "<of the row lines>",
                      "inputs": ["runs/.../samples_ibe_copa_<ts>.jsonl"], "inputs_sha256": "<of every record read>",
                      "settings": {"nli_judge": ..., "certainty_model": ..., "uncertainty_aggregation": ...,
                                   "formalizer": ..., "encoder": ...},
                      "judge": {"decisions": 150, "sha256": "<of judge.jsonl>"} | null,
                      "provenance": {"model": ..., "tasks": [...], "judge_model": ..., "runs": [...]}}}

Why: ``ibe report`` and the leaderboard must never trust a half-written or stale file. Every
file is written to a temporary file and renamed (``common.files``); the row count and the
rows' digest catch a file cut at a line end (a full disk, a copy interrupted); an ``ibe
score`` first replaces the file with a header marked ``"complete": false`` naming its
inputs, so a run killed before the end leaves a file that says so instead of the previous
inputs' rows. ``read`` refuses all of these, naming the file and the command that rebuilds
it. The batch size is not recorded: it must not change a byte of the file.

``schema`` is the rows' layout: 2 adds the steps behind each explanation's numbers, which the
sample viewer shows. ``read`` refuses a file of another schema (none: 1), naming the command
that rebuilds it; the header alone, all a report's freshness check needs, still reads.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import shlex
from collections.abc import Generator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from custom_metrics import __version__
from custom_metrics.common.errors import DataError
from custom_metrics.common.files import JSONL_MAX_BYTES, iter_regular_lines
from custom_metrics.common.jsonl import loads_strict
from ibe_postprocess.folder import FeaturesFolder, write_file
from ibe_postprocess.inputs import JudgeRecord

if TYPE_CHECKING:
    import pandas as pd

HEADER_KEY = "ibe_features"
SCHEMA = 2
# The five IBE features, the columns the selector is fitted on.
FEATURES = ("consistent", "depth", "drift", "coherence", "uncertainty")
# features.csv: the columns a spreadsheet needs (the JSONL adds the texts, program and proof).
CSV_COLUMNS = (
    "qid",
    "option",
    "split",
    "correct",
    *FEATURES,
    "flag",
    "n_steps",
    "proof_score",
    "proof_status",
    "formalization",
    "coherence_judge",
    "uncertainty_source",
    "hedge_epistemic",
    "hedge_doxastic",
    "hedge_conditional",
    "hedge_ratio",
    "source",
)


class FeaturesError(DataError):
    """A features file that must not be used; the message names it and how to rebuild it."""

    def __init__(self, path: Path, reason: str):
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}")


@dataclass(frozen=True)
class Origin:
    """What the rows are computed from: the inputs (as given, and their contents' digest),
    the scoring settings, where the explanations come from, and the suite's version."""

    inputs: tuple[str, ...]
    inputs_sha256: str
    settings: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    version: str = __version__

    def command(self, folder: Path) -> str:
        """The ``explain-eval ibe score`` command that computes these rows into ``folder``."""
        options = [
            f"--{name.replace('_', '-')} {shlex.quote(str(value))}"
            for name, value in self.settings.items()
            if value is not None
        ]
        words = ["explain-eval ibe score", *map(shlex.quote, self.inputs), "--out", shlex.quote(str(folder))]
        return " ".join(words + options)


@dataclass(frozen=True)
class Header:
    origin: Origin
    complete: bool
    rows: int | None = None
    rows_sha256: str | None = None
    judge: dict[str, Any] | None = None  # {"decisions": how many, "sha256": of judge.jsonl}; None: no judge file
    schema: int = SCHEMA


@dataclass(frozen=True)
class Features:
    """A features folder's rows and judge decisions, checked against its header."""

    folder: FeaturesFolder
    header: Header
    rows: list[dict[str, Any]]
    judged: list[dict[str, Any]]

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        frame = pd.DataFrame.from_records(self.rows)
        return frame.astype({"qid": str}) if "qid" in frame else frame


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _header_line(header: Header) -> bytes:
    fields = {key: value for key, value in asdict(header).items() if key != "origin"}
    payload = {**asdict(header.origin), **fields}
    return (json.dumps({HEADER_KEY: payload}, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def begin(folder: FeaturesFolder, origin: Origin) -> None:
    """Mark the folder as being scored for ``origin``: until ``write`` finishes, a reader is
    told which run did not finish instead of reading an earlier run's rows."""
    write_file(folder.features, _header_line(Header(origin, complete=False)))
    folder.features_csv.unlink(missing_ok=True)


def _csv_value(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"file", "line"}:
        return f"{value['file']}:{value['line']}"
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else value


def write(
    folder: FeaturesFolder, origin: Origin, rows: Sequence[dict[str, Any]], judged: Sequence[JudgeRecord]
) -> None:
    """``judge.jsonl`` (removed when there are no decisions: an older one is not this run's),
    ``features.csv``, then ``features.jsonl``, whose header records the other two, each
    through a temporary file and a rename."""
    judge_bytes = "".join(json.dumps(asdict(j)) + "\n" for j in judged).encode("utf-8")
    if judged:
        write_file(folder.judge, judge_bytes)
    else:
        folder.judge.unlink(missing_ok=True)
    csv_text = io.StringIO(newline="")
    writer = csv.DictWriter(csv_text, fieldnames=CSV_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows({k: _csv_value(v) for k, v in row.items()} for row in rows)
    write_file(folder.features_csv, csv_text.getvalue())
    body = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")
    header = Header(
        origin,
        complete=True,
        rows=len(rows),
        rows_sha256=_sha256(body),
        judge={"decisions": len(judged), "sha256": _sha256(judge_bytes)} if judged else None,
    )
    write_file(folder.features, _header_line(header) + body)


def _rebuild(folder: Path, header: Header | None) -> str:
    command = header.origin.command(folder) if header else f"explain-eval ibe score INPUTS --out {folder}"
    return f"rebuild it with `{command}`"


def _parse_header(path: Path, line: bytes) -> Header:
    folder = path.parent
    try:
        data = loads_strict(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise FeaturesError(path, f"line 1 is not a features header ({err}); {_rebuild(folder, None)}.") from err
    payload = data.get(HEADER_KEY) if isinstance(data, dict) else None
    if not isinstance(payload, dict):
        raise FeaturesError(
            path,
            f'no "{HEADER_KEY}" header on line 1 (written by an older explain-eval, or not a features file); '
            f"{_rebuild(folder, None)}.",
        )
    try:
        judge = payload.get("judge") or {}
        decisions = int(judge.get("decisions", 0))
        origin = Origin(
            tuple(str(item) for item in payload["inputs"]),
            str(payload["inputs_sha256"]),
            dict(payload.get("settings") or {}),
            dict(payload.get("provenance") or {}),
            str(payload["version"]),
        )
        header = Header(
            origin,
            payload["complete"] is True,
            payload.get("rows"),
            payload.get("rows_sha256"),
            {"decisions": decisions, "sha256": judge["sha256"]} if judge.get("sha256") is not None else None,
            payload.get("schema", 1),
        )
        if isinstance(header.schema, bool) or not isinstance(header.schema, int):
            raise ValueError(f"schema {header.schema!r} is not a whole number")
        return header
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise FeaturesError(path, f"damaged header ({err!r}); {_rebuild(folder, None)}.") from err


def _lines(path: Path, what: str) -> Generator[bytes]:
    """The lines of a regular file within the bound for JSONL files; a FeaturesError (naming
    the path) for anything else: a FIFO or device is never opened."""
    try:
        yield from iter_regular_lines(path, JSONL_MAX_BYTES, what)
    except DataError as err:
        raise FeaturesError(path, str(err).removeprefix(f"{path}: ")) from err


def _open(path: Path, missing: str) -> tuple[Header, Generator[bytes]]:
    """The header of a features file and an iterator over its other lines."""
    if not path.exists() and not path.is_symlink():
        raise FeaturesError(path, missing)
    lines = _lines(path, "features file")
    return _parse_header(path, next(lines, b"")), lines


def read_header(path: Path) -> Header:
    """The header of a features file, reading its first line only (the leaderboard checks a
    report against it without reading every row)."""
    header, lines = _open(path, "not found.")
    lines.close()
    return header


def check_complete(path: Path, header: Header) -> None:
    """A FeaturesError when ``header`` belongs to an ``ibe score`` that did not finish."""
    if not header.complete:
        raise FeaturesError(
            path,
            "an `ibe score` into this folder started and did not finish (killed, or a disk full?); "
            f"the rows it was replacing are gone, so nothing here is reported: {_rebuild(path.parent, header)}.",
        )


def read(folder: FeaturesFolder) -> Features:
    """The rows and judge decisions of ``folder``, refused (FeaturesError) when the file is
    missing, not a regular file, unfinished, cut short, altered, or its judge file does not
    match."""
    path = folder.features
    header, lines = _open(path, f"not found: run `explain-eval ibe score INPUTS --out {folder.root}` first.")
    check_complete(path, header)
    if header.schema != SCHEMA:
        written = "an older" if header.schema < SCHEMA else "a newer"
        raise FeaturesError(
            path,
            f"written by {written} explain-eval (features schema {header.schema}; this one reads schema {SCHEMA}, "
            f"which keeps each explanation's proof steps); {_rebuild(folder.root, header)}.",
        )
    rows = list(lines)
    if header.rows is None or len(rows) != header.rows or (rows and not rows[-1].endswith(b"\n")):
        raise FeaturesError(
            path,
            f"holds {len(rows):,} of the {header.rows} rows its header announces (cut short, e.g. by a full "
            f"disk, or edited); {_rebuild(folder.root, header)}.",
        )
    if _sha256(b"".join(rows)) != header.rows_sha256:
        raise FeaturesError(path, f"its rows differ from those it was written with; {_rebuild(folder.root, header)}.")
    return Features(folder, header, [json.loads(line) for line in rows], _read_judged(folder, header))


def _read_judged(folder: FeaturesFolder, header: Header) -> list[dict[str, Any]]:
    if header.judge is None:
        return []
    path = folder.judge
    if not path.exists() and not path.is_symlink():
        raise FeaturesError(path, f"missing; {_rebuild(folder.root, header)}.")
    lines = list(_lines(path, "judge file"))
    if _sha256(b"".join(lines)) != header.judge["sha256"]:
        raise FeaturesError(
            path, f"is not the judge file written with {folder.features.name}; {_rebuild(folder.root, header)}."
        )
    return [json.loads(line) for line in lines if line.strip()]
