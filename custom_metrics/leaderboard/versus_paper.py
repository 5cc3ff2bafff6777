"""Δ vs paper: how far a run's number is from the paper's, and whether the gap is significant.

Which published row a run compares with: the same model's (names compared loosely:
``meta-llama/Meta-Llama-3-8B`` is the paper's ``Llama-3-8B``, ``meta-llama/Llama-2-13b-hf``
its ``LLaMA2 13B``) in the paper setting that matches the run's (RULE's five-shot runs
against the five-shot rows), else the paper's reference model for that column, named on
the page. The test is a two-sided z-test on the difference with the two standard errors
combined as independent (the run and the paper evaluated different model instances):

- the run's: the harness' stderr; where the harness gives none (custom aggregations:
  RULE, REG), the standard error of the mean of the per-document outcomes in the logged
  samples; none for a spread (RULE's std over five splits) or a number with no documents;
- the paper's: its printed stderr where its ± is one (GEESE Table 2); else the binomial
  standard error sqrt(p(1-p)/n) of a share over the ``n`` documents the paper states (RULE
  943 main questions, REG's |N| = 195, IBE's 500 test questions: ``PaperSpec.published_n``);
  none where the paper gives neither (effectiveness: a difference of two accuracies).

Without both, the Δ is shown and the cell says why there is no test.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from custom_metrics.common.leaderboard_types import Cell, Headline, PaperSpec, Row

ALPHA = 0.05
Z_TEST = "z-test on the two standard errors"


@dataclass(frozen=True)
class PaperDelta:
    paper: Row  # the published row compared with
    key: str  # its column
    same_model: bool  # False: the paper's reference model (the run's model is not in the paper)
    difference: float  # run - paper
    test: str  # Z_TEST, or why there is none
    p_value: float | None
    se_run: float | None
    se_paper: float | None

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < ALPHA


def model_key(name: str) -> str:
    """A model name compared loosely: the part after the organisation, letters and digits
    only, lower case, without a leading "meta" or a trailing "hf" or version."""
    text = name.strip().rstrip("/").rsplit("/", 1)[-1].lower()
    text = re.sub(r"[^a-z0-9]+", "", text)
    text = re.sub(r"^meta(?=llama)", "", text)
    text = re.sub(r"(hf|v\d+)+$", "", text)
    return text


def paper_row(spec: PaperSpec, headline: Headline, run: Row, published: Sequence[Row]) -> tuple[Row, str, bool] | None:
    """The published row (with its key) a run's ``headline`` number compares with, and whether
    it is the same model."""
    wanted = spec.paper_setting(run.setting) if spec.paper_setting else None
    candidates = [(row, key) for row in published for key in headline.keys[:1] if _finite(row.cells.get(key))]
    if not candidates:
        return None

    def pick(model_matches) -> tuple[Row, str] | None:
        matching = [(row, key) for row, key in candidates if model_matches(row)]
        in_setting = [(row, key) for row, key in matching if wanted is None or row.setting == wanted]
        return (in_setting or matching or [None])[0]

    mine = model_key(run.model_id or run.model)
    same = pick(lambda row: model_key(row.model) == mine)
    if same is not None:
        return (*same, True)
    reference = headline.reference or spec.reference_model
    found = pick(lambda row: row.model == reference)
    return (*found, False) if found is not None else None


def paper_delta(
    spec: PaperSpec,
    headline: Headline,
    run: Row,
    key: str,
    published: Sequence[Row],
    outcomes: Mapping[Path, Mapping[str, Mapping[str, float]]],
) -> PaperDelta | None:
    """Δ of the run's ``key`` cell against its paper row, with the test where both errors exist."""
    cell = run.cells.get(key)
    if not _finite(cell):
        return None
    found = paper_row(spec, headline, run, published)
    if found is None:
        return None
    paper, paper_key, same_model = found
    theirs = paper.cells[paper_key]
    difference = cell.value - theirs.value
    se_run = run_se(run, key, cell, outcomes)
    se_paper = paper_se(spec, paper.setting, paper_key, theirs)
    test, p_value = Z_TEST, None
    if se_run is None and se_paper is None:
        test = "no test: neither this run nor the paper gives a standard error"
    elif se_run is None or se_paper is None:
        test = f"no test: {'this run reports' if se_run is None else 'the paper gives'} no standard error"
    elif se_run == se_paper == 0:
        test = "no test: both standard errors are 0"
    else:
        p_value = math.erfc(abs(difference) / math.hypot(se_run, se_paper) / math.sqrt(2))
    return PaperDelta(paper, paper_key, same_model, difference, test, p_value, se_run, se_paper)


def run_se(row: Row, key: str, cell: Cell, outcomes: Mapping[Path, Mapping[str, Mapping[str, float]]]) -> float | None:
    if cell.se is not None and math.isfinite(cell.se):
        return cell.se
    task, metric = key.split("/", 1)
    path = row.samples.get(task)
    values = list(outcomes.get(path, {}).get(metric.split("[", 1)[0], {}).values()) if path else []
    if len(values) < 2:
        return None
    return statistics.stdev(values) / math.sqrt(len(values))


def paper_se(spec: PaperSpec, setting: str, key: str, cell: Cell) -> float | None:
    if cell.se is not None:
        return cell.se
    n = spec.published_n(setting, key) if spec.published_n else None
    if n and cell.value is not None and 0.0 <= cell.value <= 1.0:
        return math.sqrt(cell.value * (1 - cell.value) / n)
    return None


def _finite(cell: Cell | None) -> bool:
    return cell is not None and cell.value is not None and math.isfinite(cell.value)
