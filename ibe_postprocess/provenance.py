"""Which model wrote the explanations of a features folder, which model judged them, and how
much of each task the runs covered.

The leaderboard places a report's accuracies in the row of the model that wrote the
explanations, and the LLM-as-a-judge accuracy in the row of the model that judged; lm-eval
records the model, the ``--limit`` and the documents evaluated in the ``results_*.json``
written beside each ``samples_<task>_<timestamp>.jsonl``. ``score`` reads them into the
features file's header and ``report`` carries them into ``report.json``, so a selection
computed on a ``--limit`` or ``--samples`` run is known as such. Plain JSONL inputs have no
such record.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from custom_metrics.common.results import samples_run
from ibe_postprocess.folder import SAMPLES_NAME
from ibe_postprocess.report_file import GenerationRun  # the record report.json reads back


def provenance_of(inputs: Iterable[Path]) -> dict[str, Any]:
    """The explanations' model and tasks (when the inputs agree on the model), the judge's
    model, and each generation run's coverage (``runs``)."""
    # Each ibe_* samples file's harness run (from the results file beside it), and whether it is a judge task.
    matched = [(Path(path), SAMPLES_NAME.match(Path(path).name)) for path in inputs]
    found = [(path, (run, bool(match["judge"]))) for path, match in matched if match and (run := samples_run(path))]
    writers = {run.model for _, (run, judge) in found if not judge}
    judges = {run.model for _, (run, judge) in found if judge}
    record: dict[str, Any] = {}
    if len(writers) == 1:
        record["model"] = writers.pop()
        record["tasks"] = sorted({run.task for _, (run, judge) in found if not judge})
        record["runs"] = [
            vars(GenerationRun(run.task, path.name, run.limit, run.n_samples, run.n_original))
            for path, (run, judge) in found
            if not judge
        ]
    if len(judges) == 1:
        record["judge_model"] = judges.pop()
    return record
