"""REG data: ChaosNLI-MNLI items as flat docs, the 275 contradiction-majority items of
``reg_chaos`` and the 289 high-agreement items of ``reg_judge_select``.

Each ``reg_chaos`` doc carries the run's judge spec and verdict cache folder: the filter receives
the docs, so the setting is logged, and two tasks in one run can use two judges.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from custom_metrics.common.download import GitHubFile
from custom_metrics.common.errors import DataError
from custom_metrics.common.sources import Source, fetch_file, load_rows
from custom_metrics.judge.spec import JudgeSpec
from custom_metrics.judge.types import NLI_LABELS

# The authors' release is a Dropbox zip; this plain-file copy of its member (Baan et al.,
# EMNLP 2022) is byte-identical and pinnable.
SOURCE = Source(
    name="ChaosNLI-MNLI",
    mirror_path="chaosnli/chaosNLI_mnli_m.jsonl",
    remote=GitHubFile(
        owner="jsbaan",
        repo="calibration-on-disagreement-data",
        commit="990e81cacadac5d0268160d1c02bad19d4ddb9a3",
        path="data/chaosNLI_v1.0/chaosNLI_mnli_m.jsonl",
        sha256="8eb49b589488e7b1a9ec95fb8a864bd50f0509b4f808eed0aed3f8167617664d",
        size=871731,
    ),
)
FIELDS = ("uid", "majority_label", "label_count", "example")
SHORT_LABELS = {"e": "entailment", "n": "neutral", "c": "contradiction"}  # ChaosNLI's codes
AGREEMENT_THRESHOLD = 0.8  # Table 1: judges are selected on items with >= 80% agreement


def _doc(row: dict[str, Any], where: str) -> dict[str, Any]:
    example = row["example"]
    if not isinstance(example, dict) or not all(isinstance(example.get(k), str) for k in ("premise", "hypothesis")):
        raise DataError(f"{where}: field 'example' must hold string 'premise' and 'hypothesis'.")
    if row["majority_label"] not in SHORT_LABELS:
        raise DataError(f"{where}: field 'majority_label' is {row['majority_label']!r}, expected one of e, n, c.")
    counts = row["label_count"]
    if not (
        isinstance(counts, list)
        and len(counts) == 3
        and all(isinstance(c, int) and c >= 0 for c in counts)
        and sum(counts)
    ):
        raise DataError(f"{where}: field 'label_count' must be 3 non-negative counts [E, N, C], got {counts!r}.")
    total = sum(counts)
    majority = SHORT_LABELS[row["majority_label"]]
    return {
        "uid": str(row["uid"]),
        "premise": example["premise"],
        "hypothesis": example["hypothesis"],
        "majority_label": majority,
        "label_count": counts,
        **{name: count / total for name, count in zip(("w_ent", "w_neu", "w_con"), counts)},
        "agreement": counts[NLI_LABELS.index(majority)] / total,
    }


def load_items() -> list[dict[str, Any]]:
    """All ChaosNLI-MNLI items (1,599 in the release) as flat docs, read once per process and
    file version: a ``reg_chaos`` run needs them twice (its docs, the judge's sanity check)."""
    path = fetch_file(SOURCE)
    stat = path.stat()
    return list(_items(path, stat.st_mtime_ns, stat.st_size))


@lru_cache(maxsize=2)
def _items(path: Path, _mtime_ns: int, _size: int) -> tuple[dict[str, Any], ...]:
    rows = load_rows(SOURCE, required=FIELDS)
    return tuple(_doc(row, f"{SOURCE.describe()} line {index}") for index, row in enumerate(rows, start=1))


def reg_docs(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """ChaosNLI-MNLI-C: the shipped majority label is contradiction (275 items; a recomputed
    argmax gives 269-279, 14 items tying for the top count)."""
    return [doc for doc in items if doc["majority_label"] == "contradiction"]


def judge_select_docs(items: Sequence[dict[str, Any]], threshold: float = AGREEMENT_THRESHOLD) -> list[dict[str, Any]]:
    """Items whose majority label has at least ``threshold`` agreement (289 at 0.8)."""
    return [doc for doc in items if doc["agreement"] >= threshold - 1e-9]


def with_judge(docs: Sequence[dict[str, Any]], judge: JudgeSpec, judge_cache: Path) -> list[dict[str, Any]]:
    """Docs carrying the judge (canonical name, whole spec, display name) and its verdict cache folder."""
    columns = {
        "judge": judge.name,
        "judge_spec": judge.spec,
        "judge_display": judge.display_name,
        "judge_cache": str(judge_cache),
    }
    return [{**doc, **columns} for doc in docs]


def judge_check_docs(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A handful of gold items for the judge's sanity check: the first four items of
    each majority label among the ``reg_judge_select`` items (12 in the full data), so a
    judge that calls everything one label scores at most a third and shows as degenerate."""
    candidates = judge_select_docs(items)
    return [doc for label in NLI_LABELS for doc in [d for d in candidates if d["majority_label"] == label][:4]]
