"""Which model wrote the explanations of a features folder, and which model judged them.

The leaderboard places a report's accuracies in the row of the model that wrote the
explanations, and the LLM-as-a-judge accuracy in the row of the model that judged; lm-eval
records the model in the ``results_*.json`` written beside each
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
_SAMPLES_NAME = re.compile(r"^samples_(?P<task>ibe_(?P<judge>judge_)?(?:copa|ecare))_(?P<stamp>.+)\.jsonl$")


def _from_samples(path: Path) -> tuple[str, str, bool] | None:
    """(model, task, is a judge task) of an ibe_* samples file, from the results file beside it."""
    match = _SAMPLES_NAME.match(path.name)
    results = path.with_name(f"results_{match['stamp']}.json") if match else None
    if results is None or not results.is_file():
        return None
    try:
        return model_name(json.loads(results.read_text(encoding="utf-8"))), match["task"], bool(match["judge"])
    except (ValueError, KeyError, TypeError):
        return None


def write_provenance(inputs: Iterable[Path], out: Path) -> None:
    """Record the explanations' model (and the judge's) when the inputs agree on it."""
    found = [info for path in inputs if (info := _from_samples(Path(path)))]
    writers = {model for model, _, judge in found if not judge}
    judges = {model for model, _, judge in found if judge}
    record: dict = {}
    if len(writers) == 1:
        record = {"model": writers.pop(), "tasks": sorted({task for _, task, judge in found if not judge})}
    if len(judges) == 1:
        record["judge_model"] = judges.pop()
    target = out / PROVENANCE_FILE
    if record:
        target.write_text(json.dumps(record, sort_keys=True), encoding="utf-8")
    elif target.exists():
        target.unlink()


def read_provenance(features_dir: Path) -> dict:
    path = features_dir / PROVENANCE_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
