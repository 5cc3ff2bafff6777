"""How much two raters agree: on the same items (two judges, or a judge and the gold labels), and
on how they rank the same runs.

REG's Appendix H reports raw agreement, Cohen's kappa and the Matthews correlation coefficient
(scikit-learn's numbers). Intervals: raw agreement, a share, gets the exact Clopper-Pearson 95%
interval (right for the handful of items of a ``--limit`` run); kappa and MCC a 95% percentile
bootstrap over items (``RESAMPLES``, seed ``SEED``), recomputed from each resample's confusion
matrix (``kappa_of``, ``mcc_of``; tested against scikit-learn).

A statistic is undefined, never a number, where its formula divides by zero (kappa: both raters
gave one and the same label to every item; MCC: either did, where scikit-learn's 0.0 would read
as "no better than chance"). Resamples where it is undefined are left out and counted
(``kappa_undefined``, ``mcc_undefined``). An interval of zero width (a handful of items giving
one value on every resample) would read as certainty: it is None, and ``undefined`` says why.

Rankings (``rankings``): judges can disagree on many items and still order the models the same
way, which is what a leaderboard reports (Verga et al. 2024): Kendall's tau-b of two raters'
scores of the runs (each run's headline metric). Its bootstrap resamples items within runs, the
same draw for both raters (they judged the same outputs). Items, not runs: the runs are the fixed
models compared, and a ranking is uncertain through the items each metric rests on. Tau-b is
undefined with fewer than 3 runs or where a rater gives every run one value. No p-value: the
interval is the inference.
"""

from __future__ import annotations

import json
import os
import warnings
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from custom_metrics.common.files import atomic_write_bytes
from custom_metrics.common.rejudging import GOLD, RejudgedTask

RESAMPLES = 2000
SEED = 0
LEVEL = 0.95


@dataclass(frozen=True)
class Agreement:
    """Two raters on the items both decided. Intervals are (low, high) or None."""

    n: int
    labels: tuple[str, ...]
    matrix: tuple[tuple[int, ...], ...]  # rows: rater A's label, columns: rater B's, in ``labels`` order
    raw: float | None
    raw_interval: tuple[float, float] | None
    kappa: float | None
    kappa_interval: tuple[float, float] | None
    mcc: float | None
    mcc_interval: tuple[float, float] | None
    undefined: str = ""  # why kappa or MCC, or its interval, is missing ("" when all are there)
    kappa_undefined: int = 0  # bootstrap resamples on which kappa was undefined
    mcc_undefined: int = 0

    def as_dict(self) -> dict:
        return {
            "n": self.n,
            "labels": list(self.labels),
            "confusion_matrix": [list(row) for row in self.matrix],
            "raw_agreement": self.raw,
            "raw_agreement_interval": list(self.raw_interval) if self.raw_interval else None,
            "kappa": self.kappa,
            "kappa_interval": list(self.kappa_interval) if self.kappa_interval else None,
            "mcc": self.mcc,
            "mcc_interval": list(self.mcc_interval) if self.mcc_interval else None,
            "undefined": self.undefined,
            "bootstrap": {
                "resamples": RESAMPLES,
                "seed": SEED,
                "kappa_undefined": self.kappa_undefined,
                "mcc_undefined": self.mcc_undefined,
            },
        }


def exact_interval(successes: int, trials: int) -> tuple[float, float] | None:
    """The exact (Clopper-Pearson) 95% interval of a share; None for no trials."""
    if trials <= 0:
        return None
    from scipy.stats import binomtest

    interval = binomtest(successes, trials).proportion_ci(confidence_level=LEVEL, method="exact")
    return float(interval.low), float(interval.high)


def agreement(a: Mapping[str, str], b: Mapping[str, str], order: Sequence[str] = ()) -> Agreement:
    """Agreement of rater ``a`` and rater ``b`` (item -> label) on the items both decided.

    ``order`` lists the labels in the order the matrix shows them; labels it lacks follow, sorted.
    """
    from sklearn.metrics import cohen_kappa_score, matthews_corrcoef

    items = sorted(set(a) & set(b))
    seen = {a[item] for item in items} | {b[item] for item in items}
    labels = tuple([label for label in order if label in seen] + sorted(seen - set(order)))
    n = len(items)
    if n == 0:
        return Agreement(0, labels, (), None, None, None, None, None, None, "no item was decided by both")
    first, second = [a[item] for item in items], [b[item] for item in items]
    index = {label: i for i, label in enumerate(labels)}
    codes_a, codes_b = np.array([index[label] for label in first]), np.array([index[label] for label in second])
    matrix = confusion_matrices(codes_a[None], codes_b[None], len(labels))[0]
    agreed = int(np.trace(matrix))
    constant_a, constant_b = len(set(first)) == 1, len(set(second)) == 1
    reasons = []
    kappa = None
    if constant_a and constant_b and first[0] == second[0]:
        reasons.append(f"kappa: both gave every item the label {first[0]!r} (chance agreement 1)")
    else:
        kappa = float(cohen_kappa_score(first, second, labels=list(labels)))
    mcc = None
    if constant_a or constant_b:
        which = "both" if constant_a and constant_b else "A" if constant_a else "B"
        reasons.append(f"MCC: {which} gave every item one label (no variance)")
    else:
        mcc = float(matthews_corrcoef(first, second))
    # one draw of ``RESAMPLES`` resamples of the items for both statistics
    draws = np.random.default_rng(SEED).integers(0, n, size=(RESAMPLES, n))
    matrices = confusion_matrices(codes_a[draws], codes_b[draws], len(labels))
    bootstrapped = []
    for name, value, statistic in (("kappa", kappa, kappa_of), ("MCC", mcc, mcc_of)):
        interval, undefined = percentile_interval(statistic(matrices)) if value is not None else (None, 0)
        if interval is not None and interval[0] == interval[1]:  # no width: no interval
            interval = None
        if value is not None and interval is None:
            reasons.append(f"{name}: no interval: its bootstrap over {n} item(s) has no spread (too few or too alike)")
        bootstrapped.append((interval, undefined))
    (kappa_interval, kappa_undefined), (mcc_interval, mcc_undefined) = bootstrapped
    return Agreement(
        n,
        labels,
        tuple(tuple(int(count) for count in row) for row in matrix),
        agreed / n,
        exact_interval(agreed, n),
        kappa,
        kappa_interval,
        mcc,
        mcc_interval,
        "; ".join(reasons),
        kappa_undefined,
        mcc_undefined,
    )


def confusion_matrices(codes_a, codes_b, size: int):
    """One confusion matrix per row of the label-code arrays ``codes_a``/``codes_b`` (resamples x items)."""
    resamples = codes_a.shape[0]
    flat = codes_a * size + codes_b + (np.arange(resamples) * size * size)[:, None]
    return np.bincount(flat.ravel(), minlength=resamples * size * size).reshape(resamples, size, size)


def kappa_of(matrices):
    """Cohen's kappa of each confusion matrix (NaN where chance agreement is 1), as scikit-learn computes it."""
    total = matrices.sum(axis=(1, 2)).astype(float)
    observed = np.trace(matrices, axis1=1, axis2=2) / total
    chance = (matrices.sum(axis=2) * matrices.sum(axis=1)).sum(axis=1) / total**2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(chance < 1, (observed - chance) / (1 - chance), np.nan)


def mcc_of(matrices):
    """The multiclass Matthews correlation (Gorodkin's R_K) of each matrix, NaN where a rater is constant."""
    total = matrices.sum(axis=(1, 2)).astype(float)
    correct = np.trace(matrices, axis1=1, axis2=2).astype(float)
    true, predicted = matrices.sum(axis=2).astype(float), matrices.sum(axis=1).astype(float)
    covariance = correct * total - (true * predicted).sum(axis=1)
    denominator = (total**2 - (true**2).sum(axis=1)) * (total**2 - (predicted**2).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, covariance / np.sqrt(denominator), np.nan)


def percentile_interval(values) -> tuple[tuple[float, float] | None, int]:
    """The percentile interval of a statistic's bootstrap values, and how many were undefined (NaN, left out)."""
    defined = values[~np.isnan(values)]
    if not defined.size:
        return None, int(values.size)
    low, high = np.percentile(defined, [(1 - LEVEL) / 2 * 100, (1 + LEVEL) / 2 * 100])
    return (float(low), float(high)), int(values.size - defined.size)


MIN_RUNS = 3
INTERVAL = (
    f"Kendall's tau-b over the runs both raters score (scipy.stats.kendalltau); 95% percentile bootstrap over items "
    f"resampled within each run ({RESAMPLES:,} resamples, seed {SEED}, one draw for both raters); resamples on which "
    f"tau-b is undefined are left out and counted. Undefined with fewer than {MIN_RUNS} runs."
)


@dataclass(frozen=True)
class RankAgreement:
    """Two raters' rankings of the same runs."""

    a: str
    b: str
    runs: int  # the runs both score
    tau: float | None
    interval: tuple[float, float] | None
    undefined: str = ""  # why tau-b is undefined ("" when it is a number)
    resamples_undefined: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "runs": self.runs,
            "kendall_tau_b": self.tau,
            "interval": list(self.interval) if self.interval else None,
            "undefined": self.undefined,
            "bootstrap": {"resamples": RESAMPLES, "seed": SEED, "undefined": self.resamples_undefined},
        }


Outcomes = Mapping[str, bool]  # item -> the headline metric's outcome for that item


def tau_b(x, y):
    """Kendall's tau-b of each row of ``x`` against the same row of ``y`` (resamples x runs); NaN where
    either row is constant or holds a NaN. The formula ``scipy.stats.kendalltau`` computes, for many rows at once."""
    dx = np.sign(x[:, :, None] - x[:, None, :])
    dy = np.sign(y[:, :, None] - y[:, None, :])
    concordance = (dx * dy).sum(axis=(1, 2))
    denominator = np.sqrt((dx * dx).sum(axis=(1, 2)) * (dy * dy).sum(axis=(1, 2)))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, concordance / denominator, np.nan)


def _share(outcomes: Outcomes) -> float | None:
    return sum(outcomes.values()) / len(outcomes) if outcomes else None


def compare(a: str, b: str, runs_a: Sequence[Outcomes], runs_b: Sequence[Outcomes]) -> RankAgreement:
    """Tau-b of rater ``a``'s and rater ``b``'s rankings of the runs (one outcomes map per run, same order)
    over the runs both score, with its bootstrap interval."""
    from scipy.stats import kendalltau

    both = [(x, y) for x, y in zip(runs_a, runs_b) if x and y]
    if len(both) < MIN_RUNS:
        return RankAgreement(a, b, len(both), None, None, f"{len(both)} runs scored by both (tau-b needs {MIN_RUNS})")
    first, second = [_share(x) for x, _ in both], [_share(y) for _, y in both]
    constant = [name for name, values in ((a, first), (b, second)) if len(set(values)) == 1]
    if constant:
        reason = f"{' and '.join(constant)} gave every run the same value (no ranking)"
        return RankAgreement(a, b, len(both), None, None, reason)
    tau = float(kendalltau(first, second, variant="b").statistic)
    rng = np.random.default_rng(SEED)
    means = []
    for x, y in both:
        items = sorted(set(x) | set(y))
        values = np.array([[x.get(i, np.nan), y.get(i, np.nan)] for i in items], dtype=float)
        drawn = values[rng.integers(0, len(items), size=(RESAMPLES, len(items)))]  # resamples x items x 2
        with warnings.catch_warnings():  # a resample holding none of a rater's items: its mean is NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            means.append(np.nanmean(drawn, axis=1))
    stacked = np.stack(means, axis=1)  # resamples x runs x 2
    interval, undefined = percentile_interval(tau_b(stacked[:, :, 0], stacked[:, :, 1]))
    return RankAgreement(a, b, len(both), tau, interval, "", undefined)


@dataclass(frozen=True)
class Ranking:
    """One task's runs as every rater scores them, and every two raters' rank agreement."""

    task: str
    metric: str
    runs: tuple[Path, ...]  # the runs' logged files, in table order
    scores: Mapping[str, tuple[float | None, ...]]  # rater -> its metric per run (None: it does not score it)
    pairs: tuple[RankAgreement, ...]


def rankings(tasks: Sequence[RejudgedTask]) -> list[Ranking]:
    """For every task judged in more than one run, the raters' rankings of those runs compared."""
    by_task: dict[str, list[RejudgedTask]] = defaultdict(list)
    for task in tasks:
        if task.headline:
            by_task[task.task].append(task)
    found = []
    for name, runs in sorted(by_task.items()):
        if len(runs) < 2:
            continue
        metric = runs[0].headline
        raters = list(dict.fromkeys(r.name for run in runs for r in run.raters if r.role != GOLD))
        outcomes = {
            rater: [next((dict(r.scores.get(metric, {})) for r in run.raters if r.name == rater), {}) for run in runs]
            for rater in raters
        }
        pairs = tuple(compare(a, b, outcomes[a], outcomes[b]) for a, b in combinations(raters, 2))
        scores = {rater: tuple(_share(x) for x in outcomes[rater]) for rater in raters}
        found.append(Ranking(name, metric, tuple(run.source for run in runs), scores, pairs))
    return found


def _value(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def markdown(ranking: Ranking, labels: Sequence[str]) -> str:
    """The runs' scores per rater, then tau-b per pair of raters."""
    raters = list(ranking.scores)
    lines = [
        f"## {ranking.task}: the runs ranked by each rater's {ranking.metric}",
        "",
        "| run | " + " | ".join(raters) + " |",
        "|---|" + "---|" * len(raters),
    ]
    for index, label in enumerate(labels):
        lines.append(f"| {label} | " + " | ".join(_value(ranking.scores[r][index]) for r in raters) + " |")
    lines += ["", "| A | B | runs both score | Kendall's tau-b | 95% interval |", "|---|---|---|---|---|"]
    for pair in ranking.pairs:
        tau = "undefined" if pair.tau is None else f"{pair.tau:.3f}"
        interval = f"[{pair.interval[0]:.3f}, {pair.interval[1]:.3f}]" if pair.interval else "–"
        lines.append(f"| {pair.a} | {pair.b} | {pair.runs} | {tau} | {interval} |")
    undefined = [f"{p.a} vs {p.b}: {p.undefined}" for p in ranking.pairs if p.undefined]
    undefined += [
        f"{p.a} vs {p.b}: {p.resamples_undefined} resamples undefined" for p in ranking.pairs if p.resamples_undefined
    ]
    return "\n".join([*lines, "", INTERVAL, *(f"- {note}" for note in undefined), ""])


def write(ranking: Ranking) -> tuple[Path, str]:
    """The ranking's tables, written to ``rejudge/`` in the runs' common folder: (markdown file, markdown)."""
    common = Path(os.path.commonpath([str(run.parent) for run in ranking.runs]))
    labels = [str(run.parent.relative_to(common)) for run in ranking.runs]
    if len(set(labels)) < len(labels):  # runs in one folder: their files tell them apart
        labels = [str(run.relative_to(common)) for run in ranking.runs]
    text = markdown(ranking, labels)
    data = {
        "task": ranking.task,
        "metric": ranking.metric,
        "runs": [str(run) for run in ranking.runs],
        "scores": {rater: list(values) for rater, values in ranking.scores.items()},
        "rank_agreement": [pair.as_dict() for pair in ranking.pairs],
        "intervals": INTERVAL,
    }
    path = common / "rejudge" / f"rank_agreement_{ranking.task}.json"
    atomic_write_bytes(path, json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8"))
    markdown_file = path.with_suffix(".md")
    atomic_write_bytes(markdown_file, text.encode("utf-8"))
    return markdown_file, text
