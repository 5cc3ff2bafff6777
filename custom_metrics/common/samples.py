"""Reading lm-eval ``samples_*.jsonl`` files written with ``--log_samples``.

Several hooks consume an earlier run's logged generations (GEESE M2 on M1's explanations,
REG's analysis, IBE's post-processing); they share one reader so that a malformed line is
reported the same way everywhere: file, line and field.

Every reader of a samples file passes each line through ``normalised`` first: lm-eval 0.5
logs ``filtered_resps`` one level deeper than 0.4.13 (a list of repeats per request), and a
run of either version must read the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.jsonl import RowCheck, numbered_jsonl, read_jsonl


def normalised(sample: Any) -> Any:
    """A logged sample with ``filtered_resps`` in 0.4.13's shape, one entry per request: the
    text (``[text]``) or the log-likelihood pair (``[[ll, greedy], ...]``). lm-eval 0.5 logs
    each request's entry as a list of its repeats (``[[text]]``, ``[[[ll, greedy]], ...]``);
    the suite's tasks ask for one repeat, whose entry is taken. Anything else is left as it is,
    for the reader's own checks to name."""
    if not isinstance(sample, dict):
        return sample
    filtered = sample.get("filtered_resps")
    if not isinstance(filtered, list) or not filtered:
        return sample
    if not all(isinstance(entry, list) and len(entry) == 1 for entry in filtered):
        return sample  # 0.4.13: a text is no list, a log-likelihood pair has two members
    inner = [entry[0] for entry in filtered]
    if not (all(isinstance(value, str) for value in inner) or all(isinstance(value, list) for value in inner)):
        return sample
    return {**sample, "filtered_resps": inner}


def numbered_samples(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, ``normalised`` sample) for each line of a samples file, for readers that
    check each line themselves."""
    for line, row in numbered_jsonl(path):
        yield line, normalised(row)


def logged_response(sample: dict[str, Any]) -> str:
    """The (filtered) generated text of one sample; ValueError if there is none.

    Generation tasks log ``filtered_resps: [text]`` and ``resps: [[text]]``; multiple-choice
    tasks log log-likelihood pairs there, which must not pass for text.
    """
    filtered = sample.get("filtered_resps")
    if isinstance(filtered, str):
        return filtered
    if isinstance(filtered, list) and filtered and isinstance(filtered[0], str):
        return filtered[0]
    raw = sample.get("resps")
    if isinstance(raw, list) and raw and isinstance(raw[0], list) and raw[0] and isinstance(raw[0][0], str):
        return raw[0][0]
    raise ValueError("field 'filtered_resps' holds no generated text")


def _check_sample(sample: dict[str, Any]) -> None:
    if not isinstance(sample.get("doc"), dict):
        raise ValueError("field 'doc' missing; is this an lm-eval samples file?")
    logged_response(sample)


def _sample_key(sample: dict[str, Any]) -> str | None:
    if "doc_id" not in sample:
        return None
    return f"doc_id {sample['doc_id']!r} (filter {sample.get('filter', 'none')!r})"


def read_samples(path: str | Path, check: RowCheck | None = None) -> list[dict[str, Any]]:
    """All samples of a generation task's samples file, each checked for doc and text.

    ``check`` adds the caller's own per-sample checks (e.g. fields its docs must carry).
    A doc logged twice for one filter is an error: the harness appends to a samples file,
    so two runs written into one file (or two files pasted together) would otherwise
    count a doc twice or let the later line win silently.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise DataError(f"samples file {path} does not exist.")

    def check_all(sample: dict[str, Any]) -> None:
        _check_sample(sample)
        if check is not None:
            check(sample)

    return read_jsonl(path, check=check_all, unique=_sample_key, shape=normalised)
