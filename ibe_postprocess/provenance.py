"""Which model and task produced the explanations of a features folder.

The leaderboard places a report's accuracies in the row of the model that wrote the
explanations; lm-eval records that model in the ``results_*.json`` written beside each
``samples_<task>_<timestamp>.jsonl``, so ``score`` copies it next to the features and
``report`` carries it into ``report.json``. Plain JSONL inputs have no such record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from custom_metrics.common.results import model_name

PROVENANCE_FILE = "provenance.json"
_SAMPLES_NAME = re.compile(r"^samples_(?P<task>ibe_(?:copa|ecare))_(?P<stamp>.+)\.jsonl$")


def _from_samples(path: Path) -> dict[str, str] | None:
    match = _SAMPLES_NAME.match(path.name)
    results = path.with_name(f"results_{match['stamp']}.json") if match else None
    if results is None or not results.is_file():
        return None
    try:
        return {"model": model_name(json.loads(results.read_text(encoding="utf-8"))), "task": match["task"]}
    except (ValueError, KeyError, TypeError):
        return None


def write_provenance(inputs: Iterable[Path], out: Path) -> None:
    """Record model and task when every generation input agrees on them (else nothing)."""
    found = {json.dumps(info, sort_keys=True) for path in inputs if (info := _from_samples(Path(path)))}
    target = out / PROVENANCE_FILE
    if len(found) == 1:
        target.write_text(found.pop(), encoding="utf-8")
    elif target.exists():
        target.unlink()


def read_provenance(features_dir: Path) -> dict[str, str]:
    path = features_dir / PROVENANCE_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
