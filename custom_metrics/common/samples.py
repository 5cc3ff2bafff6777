"""Reading lm-eval ``samples_*.jsonl`` files written with ``--log_samples``.

Several hooks consume an earlier run's logged generations; they share one reader so that a
malformed line is reported the same way everywhere: file, line and field. Every line goes
through ``normalised`` first (lm-eval 0.5 logs ``filtered_resps`` one level deeper than 0.4.13).
A task that builds documents from another run's samples reads them through ``read_samples`` with
its own checks (``fields``) and ``key``, so a file edited by hand or pasted twice is refused in
one line, never a traceback inside the harness or a document counted twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from custom_metrics.common import fields
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
    """(line number, ``normalised`` sample) for each line of a samples file."""
    return ((line, normalised(row)) for line, row in numbered_jsonl(path))


# The longest generation a reader builds documents from: IBE's cap on an explanation
# (``ibe_postprocess.parsing.MAX_CHARS``), far above what the suite's token budgets write.
MAX_RESPONSE_CHARS = 20_000
# The longest logged prompt a reader continues: some 50,000 tokens, above any prompt of the suite.
MAX_PROMPT_CHARS = 200_000


def logged_response(sample: dict[str, Any], max_chars: int | None = None) -> str:
    """The (filtered) generated text of one sample; ValueError if there is none, or (with
    ``max_chars``) if it is longer than that.

    Generation tasks log ``filtered_resps: [text]`` and ``resps: [[text]]``; multiple-choice
    tasks log log-likelihood pairs there, which must not pass for text.
    """
    filtered = sample.get("filtered_resps")
    raw = sample.get("resps")
    if isinstance(filtered, str):
        text = filtered
    elif isinstance(filtered, list) and filtered and isinstance(filtered[0], str):
        text = filtered[0]
    elif isinstance(raw, list) and raw and isinstance(raw[0], list) and raw[0] and isinstance(raw[0][0], str):
        text = raw[0][0]
    else:
        raise ValueError("field 'filtered_resps' holds no generated text")
    if max_chars is not None:
        fields.bounded_text(text, "field 'filtered_resps' (the generated text)", max_chars)
    return text


def logged_prompt(sample: dict[str, Any]) -> Any:
    """The first request's context as logged (``arguments.gen_args_0.arg_0``: a prompt, or a served
    run's chat messages); ValueError naming the field when the logged arguments hold none."""
    arguments = sample.get("arguments")
    request = arguments.get("gen_args_0") if isinstance(arguments, dict) else None
    if not isinstance(request, dict) or "arg_0" not in request:
        raise ValueError("field 'arguments.gen_args_0.arg_0' (the prompt) missing; is this a generation task's file?")
    return request["arg_0"]


def read_samples(
    path: str | Path, check: RowCheck | None = None, key: Callable[[dict[str, Any]], str] | None = None
) -> list[dict[str, Any]]:
    """All samples of a generation task's samples file, each checked for doc and text.

    ``check`` adds the caller's own per-sample checks. A doc logged twice for one filter is an error:
    the harness appends to a samples file, so two runs in one file would otherwise count a doc twice.
    ``key`` names what the caller takes a sample for (``doc.doc_id 'q3'``), checked after ``check``;
    without it, the harness' top-level ``doc_id`` is the key, where the file has one.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise DataError(f"samples file {path} does not exist.")

    def check_all(sample: dict[str, Any]) -> None:
        if not isinstance(sample.get("doc"), dict):
            raise ValueError("field 'doc' missing; is this an lm-eval samples file?")
        logged_response(sample)
        if check is not None:
            check(sample)

    def unique(sample: dict[str, Any]) -> str | None:
        if key is None and "doc_id" not in sample:
            return None
        named = f"doc_id {sample['doc_id']!r}" if key is None else key(sample)
        return f"{named} (filter {sample.get('filter', 'none')!r})"

    return read_jsonl(path, check=check_all, unique=unique, shape=normalised)
