"""Δ vs paper: how far a run's number is from the paper's, and whether the gap is significant.

Which published row a run compares with: the same model's (names compared loosely:
``meta-llama/Meta-Llama-3-8B`` is the paper's ``Llama-3-8B``, ``meta-llama/Llama-2-13b-hf``
its ``LLaMA2 13B``) in the paper setting that matches the run's (RULE's five-shot runs
against the five-shot rows), else the paper's reference model for that column, named on
the page.

Only the same model's row gives a Δ: a different model's number is a reference line, shown
with no Δ and no test (a difference, or a test, would ask whether two models differ, which no
row here can answer). The paper's number is an estimate too, from the items the paper states
(``evidence.paper_evidence``): a share is tested against the paper's k of n, or against its
number taken as fixed where it states no n, with the reproduction verdict (``procedures``). A
difference of two tasks (GEESE's effectiveness) gets no test: the paper's is a difference of
two of its numbers with no count of the documents that changed, so no exact test compares the
run's with it. Anything else (no count of items, a mean over split runs): "no test", saying
why. The stars are Holm-adjusted within the run row's own tests against the paper (``adjust``),
so another run on the page never moves them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from custom_metrics.common.leaderboard_types import Headline, Row
from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.leaderboard import procedures
from custom_metrics.leaderboard.evidence import Evidence, paper_evidence
from custom_metrics.leaderboard.numbers import finite
from custom_metrics.leaderboard.procedures import ALPHA

REFERENCE = "no Δ, no test: another model's number, a reference line"
COMPARISON = (
    "no test: the paper's number is a difference of two of its numbers, with no count of the documents "
    "that changed; the run's is tested against 0 ({test}, its interval)"
)


@dataclass(frozen=True)
class PaperDelta:
    paper: Row  # the published row compared with
    key: str  # its column
    same_model: bool  # False: the paper's reference model (the run's model is not in the paper)
    difference: float | None  # run - paper (None against another model's row: a reference line, no Δ)
    test: str  # the procedure (procedures.FISHER, EXACT_SHARE, BOOTSTRAP), or "no test: why"
    p_value: float | None
    low: float | None = None  # 95% interval of ``interval_of``, from the same procedure
    high: float | None = None
    items: int | None = None  # the run's items the test rests on
    p_adjusted: float | None = None  # Holm within the run row's family (``adjust``)
    family: int = 0  # how many tests that adjustment was over
    family_name: str = ""  # which family, in words
    interval_of: str = "Δ"  # "Δ", or "odds ratio" (Fisher's interval)
    paper_items: int | None = None  # the paper's n the test took its number from (None: taken as fixed)
    equivalence: procedures.Equivalence | None = None  # the reproduction verdict (TOST within ±δ)

    @property
    def tested(self) -> bool:
        return self.p_value is not None

    @property
    def significant(self) -> bool:
        p = self.p_adjusted if self.p_adjusted is not None else self.p_value
        return p is not None and p < ALPHA


def model_key(name: str) -> str:
    """A model name compared loosely: the part after the organisation, letters and digits
    only, lower case, without a leading "meta" or a trailing "hf" or version."""
    text = name.strip().rstrip("/").rsplit("/", 1)[-1].lower()
    text = re.sub(r"[^a-z0-9]+", "", text)
    text = re.sub(r"^meta(?=llama)", "", text)
    return re.sub(r"(hf|v\d+)+$", "", text)


def paper_row(spec: PaperSpec, headline: Headline, run: Row, published: Sequence[Row]) -> tuple[Row, str, bool] | None:
    """The published row (with its key) a run's ``headline`` number compares with, and whether
    it is the same model."""
    wanted = spec.board.paper_setting(run.setting)
    key = headline.keys[0]  # the published rows' key
    candidates = [row for row in published if key in row.cells and finite(row.cells[key].value)]

    def pick(model_matches) -> Row | None:
        matching = [row for row in candidates if model_matches(row)]
        in_setting = [row for row in matching if wanted is None or row.setting == wanted]
        return (in_setting or matching or [None])[0]

    mine = model_key(run.model_id or run.model)
    same = pick(lambda row: model_key(row.model) == mine)
    if same is not None:
        return same, key, True
    reference = headline.reference or spec.board.reference_model
    found = pick(lambda row: row.model == reference)
    return (found, key, False) if found is not None else None


def paper_delta(
    spec: PaperSpec,
    headline: Headline,
    run: Row,
    key: str,
    published: Sequence[Row],
    evidence: Evidence,
    margin: float = procedures.EQUIVALENCE_MARGIN,
) -> PaperDelta | None:
    """Δ of the run's ``key`` cell against its paper row; tested only against the same model."""
    cell = run.cells.get(key)
    if cell is None or not finite(cell.value):
        return None
    found = paper_row(spec, headline, run, published)
    if found is None:
        return None
    paper, paper_key, same_model = found
    if not same_model:
        return PaperDelta(paper, paper_key, False, None, REFERENCE, None)
    theirs = paper.cells[paper_key].value
    base = PaperDelta(paper, paper_key, True, cell.value - theirs, "", None)
    if evidence.k is not None and evidence.n is not None:
        if not 0 <= theirs <= 1:
            return replace(base, test="no test: the paper's number is not a share")
        k, n = evidence.k, evidence.n
        base = replace(base, items=n)
        stated = paper_evidence(spec, paper, paper_key, paper.cells[paper_key])
        two_sample = stated.k is not None and stated.n is not None
        if two_sample:  # against the paper's k of n: Fisher's test and the TOST verdict
            equivalence = procedures.equivalence(k, n, stated.k, stated.n, margin)
            base = replace(base, paper_items=stated.n, equivalence=equivalence)
            smallest = float(procedures.fisher_p([0, n], n, stated.k, stated.n).min())  # all wrong or all right
            against = f"{theirs:g} on the paper's {stated.n}"
        else:
            smallest, against = procedures.smallest_p(n, theirs), f"{theirs:g}"
        if smallest >= ALPHA:
            return replace(
                base,
                test=f"no test: {n} item(s) are too few to test against {against} "
                f"(the smallest p any outcome could reach is {smallest:.2g})",
            )
        if two_sample:  # the odds ratio's interval
            test, outcome, shift = procedures.FISHER, procedures.fisher_test(k, n, stated.k, stated.n), 0.0
        else:  # against the paper's number taken as fixed: the share's own interval, shifted to Δ, so
            # the test rejects exactly when the paper's number is outside it
            outcome = procedures.Outcome(float(procedures.central_p(k, n, theirs)), procedures.share_interval(k, n))
            test, shift = procedures.EXACT_SHARE, theirs
        return replace(
            base,
            test=test,
            p_value=outcome.p_value,
            low=outcome.interval.low - shift,
            high=outcome.interval.high - shift,
            interval_of="odds ratio" if two_sample else "Δ",
        )
    if evidence.paired is not None:
        return replace(base, test=COMPARISON.format(test=evidence.paired.test), items=evidence.paired.n)
    return replace(base, test=f"no test: {evidence.reason}")


def adjust(deltas: Sequence[PaperDelta], family_name: str) -> list[PaperDelta]:
    """One family's deltas (a run row's tests against the paper) with their Holm-adjusted p
    over its tested ones (untested ones unchanged)."""
    tested = [i for i, delta in enumerate(deltas) if delta.tested]
    adjusted = procedures.holm_groups([deltas[i].p_value for i in tested], [0] * len(tested))
    found = list(deltas)
    for i, p in zip(tested, adjusted):
        found[i] = replace(deltas[i], p_adjusted=float(p), family=len(tested), family_name=family_name)
    return found
