"""A run that read another run's samples, shown by what it read (``common/lineage.py``).

Its own results file counts only the documents it built ("2 of 2" over a ``--limit 2`` run)
and the setting of its own prompt (zero-shot, whatever the shots of the chain of thought it
asked again). So before any row is made its run takes, from the lineage it recorded:

- the cut of the run it read (``TaskRun.cut``): a reading run over part of the data is marked
  and ranked apart from full runs, as a ``--limit`` run is;
- the setting of that run, as its paper shows it (RULE's "one-shot on ReClor, CoT (1 of 5
  splits)", REG's thinking mode): a faithfulness run sits in the row of the chain of thought it
  asked again;
- what it read, in words, among what its numbers rest on; a run that read another model's
  outputs is flagged on its row (``tables.mixed_files``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from custom_metrics.common.lineage import Lineage
from custom_metrics.common.results import TaskRun, friendly_model_name
from custom_metrics.leaderboard.registry import paper_of


def inherit(runs: Sequence[TaskRun]) -> list[TaskRun]:
    """The runs, each one that read another run with that run's cut and setting."""
    return [run if run.lineage is None else _inherited(run, run.lineage) for run in runs]


def _inherited(run: TaskRun, lineage: Lineage) -> TaskRun:
    cut = "; ".join(part for part in (run.cut, f"read {lineage.cut}" if lineage.cut else "") if part)
    return replace(run, cut=cut, setting=_setting(run, lineage) if lineage.recorded else run.setting)


def _setting(run: TaskRun, lineage: Lineage) -> str:
    """The setting the run read was shown in (its paper's ``adjust_runs`` of it), and what the
    reading run's own prompt added beyond its shots (a judge's chat template)."""
    source = TaskRun(
        run.model,
        lineage.task,
        {},
        lineage.docs,
        lineage.limit,
        run.path,
        run.timestamp,
        run.harness_version,
        setting=lineage.setting,
        n_original=lineage.of_docs,
        model_id=lineage.model,
    )
    shown = paper_of(lineage.task).board.adjust_runs([source], [])[:1]
    parts = (shown[0].setting if shown else lineage.setting).split(", ")
    parts += [part for part in run.setting.split(", ") if part not in parts and not part.endswith("-shot")]
    return ", ".join(part for part in parts if part)


def read_words(lineage: Lineage) -> str:
    """What a run read, in words, among what its numbers rest on (models by their shown names)."""
    if not lineage.recorded:
        return f"read {lineage.file} (no results file beside it: its cut, setting and model are unknown)"
    of = f" of {lineage.of_docs:,}" if lineage.of_docs else ""
    docs = "" if lineage.docs is None else f", {lineage.docs:,}{of} docs"
    model = f" of {friendly_model_name(lineage.model)}" if lineage.model else ""
    cut = f"; cut: {lineage.cut}" if lineage.cut else ""
    return f"read the {lineage.task} run{model} ({lineage.file}{docs}{cut})"


def other_model(run: TaskRun) -> str:
    """ "" or, for a run that read another model's outputs, that model (a flag on its row)."""
    lineage = run.lineage
    if lineage is None or not lineage.model or not run.model_id:
        return ""
    read = friendly_model_name(lineage.model)
    return read if read != friendly_model_name(run.model_id) else ""
