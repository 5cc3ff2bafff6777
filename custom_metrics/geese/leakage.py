"""Label leakage: leakage-adjusted simulatability (LAS; Hase, Zhang, Xie & Bansal, Findings of
EMNLP 2020), the measure GEESE cites for explanations that "directly suggest the label" (§3.3,
reference 37) and names as its open limitation (§7).

An explanation that states the label helps M2 trivially, so its effect is measured apart on the
documents that *leak* (M2 given the explanation alone, ``geese_<source>_only``, predicts the gold
label). With, per document i, ``x_i`` = M2 right with no hint (``geese_noexp``), ``xe_i`` = M2
right with the pair and the hint (``geese_<source>``) and ``L_i`` = M2 right with the hint alone:

    LAS_k = mean over the documents with L_i = k of (xe_i - x_i)      (k = 0, 1)
    LAS   = (LAS_0 + LAS_1) / 2

exactly as Hase et al.'s ``compute_sim`` (peterbhase/LAS-NL-Explanations,
``sim_experiments/compute_sim.py``); undefined (no LAS, no test) when a bin is empty. The
simulator target is the gold label, which GEESE's M1 explains (their ``--labels_to_use label``).

The test is exact at every n: under the null that the explanation changes nothing (the McNemar
null in each bin: a document right with it and wrong without is as likely as the reverse),
every discordant document's sign is a fair coin, independently; the null distribution of LAS is
that of ``(B1 - m1/2) / n1 + (B0 - m0/2) / n0`` with ``B_k`` ~ Binomial(m_k, 1/2) over the
``m_k`` discordant documents of bin k, enumerated exactly. The two-sided p-value is the null
probability of an |LAS| at least the observed one; with one bin's effect fixed at zero (no
discordant document there) it is McNemar's exact test on the other bin. Hase et al. give a
bootstrap interval instead; the suite gives no interval, since none follows from this test.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from custom_metrics.common.errors import DataError
from custom_metrics.common.jsonl import numbered_jsonl

TEST = "exact sign-flip test (McNemar's null in each leakage bin)"


@dataclass(frozen=True)
class Bin:
    """The documents of one leakage bin: how many, and how many the explanation changed."""

    n: int
    helped: int  # right with the explanation, wrong without
    hurt: int  # wrong with the explanation, right without

    @property
    def effect(self) -> float | None:
        """Mean of (xe - x) over the bin; None for an empty bin."""
        return (self.helped - self.hurt) / self.n if self.n else None


@dataclass(frozen=True)
class Leakage:
    """LAS of one explanation source for one M2, with its exact test."""

    leaking: Bin  # L = 1: the explanation alone gives the gold label
    nonleaking: Bin  # L = 0
    left_out: int = 0  # documents logged by some of the three runs only

    @property
    def n(self) -> int:
        return self.leaking.n + self.nonleaking.n

    @property
    def value(self) -> float | None:
        """LAS = (LAS_0 + LAS_1) / 2; None when a bin is empty (undefined)."""
        if self.leaking.effect is None or self.nonleaking.effect is None:
            return None
        return (self.leaking.effect + self.nonleaking.effect) / 2

    @property
    def p_value(self) -> float | None:
        """Two-sided exact p-value of LAS = 0; None where LAS is undefined."""
        if self.value is None:
            return None
        return sign_flip_p(self.leaking, self.nonleaking)

    def describe(self) -> str:
        """What the number rests on, in words (the leaderboard's basis of the cell)."""

        def part(name: str, group: Bin) -> str:
            effect = "no document" if group.effect is None else f"effect {group.effect:+.4f}"
            return f"{name} {group.n} docs: {effect} ({group.helped} helped, {group.hurt} hurt)"

        text = f"LAS over {self.n} docs; {part('leaking', self.leaking)}; {part('non-leaking', self.nonleaking)}"
        if self.value is None:
            empty = "leaking" if self.leaking.n == 0 else "non-leaking"
            text += f"; undefined: no {empty} document, so no test"
        else:
            text += f"; {TEST}: p = {self.p_value:.3g}"
        if self.left_out:
            text += f"; {self.left_out} docs left out (not logged by all three runs)"
        return text


def sign_flip_p(leaking: Bin, nonleaking: Bin) -> float:
    """The exact two-sided p-value (module docstring); both bins must hold documents.

    In integers: LAS * 2 * n0 * n1 = n0 * (2 * B1 - m1) + n1 * (2 * B0 - m0), compared exactly.
    """
    from scipy import stats  # seconds to import: only a leakage test needs it, never a command's --help

    n1, n0 = leaking.n, nonleaking.n
    m1, m0 = leaking.helped + leaking.hurt, nonleaking.helped + nonleaking.hurt
    observed = abs(n0 * (leaking.helped - leaking.hurt) + n1 * (nonleaking.helped - nonleaking.hurt))
    k1, k0 = np.arange(m1 + 1), np.arange(m0 + 1)
    statistic = np.abs(n0 * (2 * k1[:, None] - m1) + n1 * (2 * k0[None, :] - m0))
    weights = np.outer(stats.binom.pmf(k1, m1, 0.5), stats.binom.pmf(k0, m0, 0.5))
    return float(min(1.0, weights[statistic >= observed].sum()))


def leakage(without: Mapping[str, float], with_hint: Mapping[str, float], hint_alone: Mapping[str, float]) -> Leakage:
    """LAS from the per-document 0/1 outcomes (doc key -> acc) of the three runs, on the
    documents all three logged."""
    keys = set(without) & set(with_hint) & set(hint_alone)
    counts = {1: [0, 0, 0], 0: [0, 0, 0]}  # bin -> n, helped, hurt
    for key in keys:
        group = counts[int(hint_alone[key] == 1.0)]
        group[0] += 1
        change = with_hint[key] - without[key]
        group[1] += change > 0
        group[2] += change < 0
    left_out = len(set(without) | set(with_hint) | set(hint_alone)) - len(keys)
    return Leakage(Bin(*counts[1]), Bin(*counts[0]), left_out)


def doc_outcomes(path: Path) -> dict[str, float]:
    """Doc id -> acc of a GEESE M2 samples file; a bad line, or a doc logged twice, is a
    DataError naming the file and line."""
    outcomes: dict[str, float] = {}
    for line, sample in numbered_jsonl(path):
        where = f"{path}:{line}"
        doc, acc = sample.get("doc"), sample.get("acc")
        if not isinstance(doc, dict) or "id" not in doc:
            raise DataError(f"{where}: field 'doc.id' missing; is this the samples file of a GEESE M2 task?")
        if isinstance(acc, bool) or not isinstance(acc, (int, float)) or acc not in (0, 1):
            raise DataError(
                f"{where}: field 'acc' is {acc!r}, expected 0 or 1 (a GEESE M2 task's per-document accuracy)."
            )
        key = str(doc["id"])
        if key in outcomes:
            raise DataError(f"{where}: doc id {key!r} is logged twice (two runs written into one file?).")
        outcomes[key] = float(acc)
    return outcomes
