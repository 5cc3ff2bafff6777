"""RULE metrics (the columns of the paper's Table 2) over per-question outcomes.

Consistency and MainQ-wise SubQ accuracy belong to a main question with all its subquestions,
so each doc's ``Outcome`` carries its main question id and group size and the aggregations
regroup them. Incomplete groups (a ``--limit`` cut) would inflate both, so they are left out and
counted in a warning.
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from custom_metrics.common.classification import predicted_index
from custom_metrics.common.resampling import over_groups, warn
from custom_metrics.rule.answers import Reading, problem_kind, read_answer

log = logging.getLogger(__name__)

MAIN, SELECTIVE, ELIMINATIVE = "main", "selective", "eliminative"
SUB_KINDS = (SELECTIVE, ELIMINATIVE)


class Outcome(NamedTuple):
    """One answered question; logged per sample, so it must stay JSON-friendly."""

    doc_id: str
    main_id: str
    kind: str  # main | selective | eliminative
    split: int  # subquestion split 1-5; 0 for main questions
    correct: bool
    none_gold: bool  # gold answer is "None of the above choices"
    group_size: int  # subquestions of this main question in the task's full doc set

    @classmethod
    def parse(cls, value: Sequence) -> Outcome:
        """Rebuild an outcome from a samples file's JSON list, strictly (ValueError naming the element):
        a coercion (``bool("false")``, ``int(1.7)``) would turn a damaged line into a wrong score."""
        if not isinstance(value, list) or len(value) != len(cls._fields):
            raise ValueError(f"expected a list of {len(cls._fields)} ({', '.join(cls._fields)}), got {value!r:.80}")
        outcome = cls(*value)
        for name, kind in (("doc_id", str), ("main_id", str), ("correct", bool), ("none_gold", bool)):
            if not isinstance(getattr(outcome, name), kind):
                raise ValueError(f"{name} must be a {kind.__name__}, got {getattr(outcome, name)!r:.80}")
        if outcome.kind not in (MAIN, *SUB_KINDS):
            raise ValueError(f"kind must be one of {(MAIN, *SUB_KINDS)}, got {outcome.kind!r:.80}")
        for name in ("split", "group_size"):
            number = getattr(outcome, name)
            if isinstance(number, bool) or not isinstance(number, int) or number < 0:
                raise ValueError(f"{name} must be a whole number >= 0, got {number!r:.80}")
        return outcome


def share(hits: Iterable[bool | float]) -> float:
    """The mean of ``hits``: the share of true ones; NaN when there are none."""
    hits = list(hits)
    return sum(hits) / len(hits) if hits else math.nan


def mainq_acc(outcomes: Sequence[Outcome]) -> float:
    return share(o.correct for o in outcomes if o.kind == MAIN)


def subq_acc(outcomes: Sequence[Outcome]) -> float:
    """Micro average over subquestions."""
    return share(o.correct for o in outcomes if o.kind in SUB_KINDS)


def selective_acc(outcomes: Sequence[Outcome]) -> float:
    return share(o.correct for o in outcomes if o.kind == SELECTIVE)


def eliminative_acc(outcomes: Sequence[Outcome]) -> float:
    return share(o.correct for o in outcomes if o.kind == ELIMINATIVE)


def none_acc(outcomes: Sequence[Outcome]) -> float:
    """Accuracy on subquestions whose gold answer is "None of the above choices" (Table 3)."""
    return share(o.correct for o in outcomes if o.kind in SUB_KINDS and o.none_gold)


@dataclass
class Group:
    """A main question with the subquestions of it that a run answered."""

    main: Outcome | None = None
    subs: list[Outcome] = field(default_factory=list)
    size: int = 0

    @property
    def complete(self) -> bool:
        return self.size > 0 and len(self.subs) == self.size

    @property
    def consistent(self) -> bool:
        """The main question answered correctly together with all of its subquestions (complete groups)."""
        return self.main is not None and self.main.correct and all(s.correct for s in self.subs)


def groups(outcomes: Iterable[Outcome]) -> dict[str, Group]:
    found: dict[str, Group] = defaultdict(Group)
    for outcome in outcomes:
        group = found[outcome.main_id]
        group.size = outcome.group_size
        if outcome.kind == MAIN:
            group.main = outcome
        else:
            group.subs.append(outcome)
    return dict(found)


def _complete(metric: str, candidates: Iterable[Group]) -> list[Group]:
    """The complete groups among ``candidates``; those left out (e.g. by --limit) are counted in a warning."""
    candidates = list(candidates)
    complete = [g for g in candidates if g.complete]
    if len(complete) < len(candidates):
        warn(
            log,
            "RULE %s: %d main question(s) left out because the run holds only some of their "
            "subquestions (e.g. --limit); the value covers %d main question(s).",
            metric,
            len(candidates) - len(complete),
            len(complete),
        )
    return complete


@over_groups
def consistency(outcomes: Sequence[Outcome]) -> float:
    """Share of main questions answered correctly together with all of their subquestions."""
    scored = (g for g in groups(outcomes).values() if g.main is not None and g.size > 0)
    return share(g.consistent for g in _complete("consistency", scored))


@over_groups
def mainq_wise_subq_acc(outcomes: Sequence[Outcome]) -> float:
    """Macro average: mean over main questions of the share of their subquestions answered."""
    complete = _complete("mainq_wise_subq_acc", (g for g in groups(outcomes).values() if g.subs))
    return share(share(s.correct for s in g.subs) for g in complete)


def _main_correct(outcomes: Sequence[Outcome]) -> list[Group]:
    """Table 8's groups: the main questions the model answered correctly, with their subquestions."""
    return [g for g in groups(outcomes).values() if g.main is not None and g.main.correct]


@over_groups
def subq_acc_mainq_correct(outcomes: Sequence[Outcome]) -> float:
    """Table 8: SubQ accuracy over the subquestions of correctly answered main questions."""
    return share(s.correct for g in _main_correct(outcomes) for s in g.subs)


@over_groups
def selective_acc_mainq_correct(outcomes: Sequence[Outcome]) -> float:
    return share(s.correct for g in _main_correct(outcomes) for s in g.subs if s.kind == SELECTIVE)


@over_groups
def eliminative_acc_mainq_correct(outcomes: Sequence[Outcome]) -> float:
    return share(s.correct for g in _main_correct(outcomes) for s in g.subs if s.kind == ELIMINATIVE)


@over_groups
def consistency_mainq_correct(outcomes: Sequence[Outcome]) -> float:
    """Table 8: the share of correctly answered main questions whose subquestions are all right."""
    scored = (g for g in _main_correct(outcomes) if g.size > 0)
    return share(g.consistent for g in _complete("consistency_mainq_correct", scored))


@over_groups
def mainq_wise_subq_acc_mainq_correct(outcomes: Sequence[Outcome]) -> float:
    """Table 8: MainQ-wise SubQ accuracy over the correctly answered main questions."""
    with_subs = (g for g in _main_correct(outcomes) if g.subs)
    return share(share(s.correct for s in g.subs) for g in _complete("mainq_wise_subq_acc_mainq_correct", with_subs))


TABLE2_METRICS = {
    "mainq_acc": mainq_acc,
    "subq_acc": subq_acc,
    "selective_acc": selective_acc,
    "eliminative_acc": eliminative_acc,
    "consistency": consistency,
    "mainq_wise_subq_acc": mainq_wise_subq_acc,
    "none_acc": none_acc,
}


def answered(doc: dict[str, Any], correct: bool) -> Outcome:
    """A doc's outcome once its answer is judged (scored, or read from a generation)."""
    return Outcome(
        doc["doc_id"], doc["main_id"], doc["kind"], doc["split"], correct, doc["none_gold"], doc["group_size"]
    )


# Table 8 (Appendix H): Table 2's subquestion columns over the correctly answered main questions.
MAINQ_CORRECT = "_mainq_correct"
TABLE8_METRICS = {
    f"subq_acc{MAINQ_CORRECT}": subq_acc_mainq_correct,
    f"selective_acc{MAINQ_CORRECT}": selective_acc_mainq_correct,
    f"eliminative_acc{MAINQ_CORRECT}": eliminative_acc_mainq_correct,
    f"consistency{MAINQ_CORRECT}": consistency_mainq_correct,
    f"mainq_wise_subq_acc{MAINQ_CORRECT}": mainq_wise_subq_acc_mainq_correct,
}
COMBINED_METRICS = (*TABLE2_METRICS, *TABLE8_METRICS)
SUB_METRICS = ("subq_acc", "selective_acc", "eliminative_acc", "mainq_wise_subq_acc", "none_acc")


def _scorer(metrics: Sequence[str]) -> Callable[[dict[str, Any], Sequence[tuple[float, bool]]], dict[str, Outcome]]:
    # lm-eval averages any returned key its YAML does not list, so each task type returns
    # exactly its own metrics.
    def process(doc: dict[str, Any], results: Sequence[tuple[float, bool]]) -> dict[str, Outcome]:
        value = answered(doc, predicted_index(results, f"RULE doc {doc['doc_id']}") == doc["label"])
        return dict.fromkeys(metrics, value)

    return process


def read_outcome(doc: dict[str, Any], reading: Reading) -> dict[str, Any]:
    """A generated answer's outcome under every metric (one read as none counts as wrong), and
    ``unparsed``: why none was read ("" when an option was)."""
    return {
        **dict.fromkeys(COMBINED_METRICS, answered(doc, reading.option == doc["label"])),
        "unparsed": reading.problem,
    }


def process_cot(doc: dict[str, Any], results: Sequence[str]) -> dict[str, Any]:
    """A chain-of-thought doc, its answer read by ``answers.read_answer``."""
    return read_outcome(doc, read_answer(results[0] if results else ""))


def unparsed(problems: Sequence[str]) -> float:
    """Share of generations whose answer could not be read (each counted wrong), logged by kind."""
    kinds = Counter(problem_kind(problem) for problem in problems if problem)
    if kinds:
        warn(
            log,
            "RULE: %d of %d generations name no readable answer and count as wrong (%s); each doc's "
            "'unparsed' field in the samples file says why.",
            sum(kinds.values()),
            len(problems),
            ", ".join(f"{count} {kind}" for kind, count in kinds.most_common()),
        )
    return share(bool(problem) for problem in problems)


process_combined = _scorer(COMBINED_METRICS)
process_main = _scorer(("mainq_acc",))
process_sub = _scorer(SUB_METRICS)
process_alignment = _scorer(("correct_option_acc", "incorrect_option_acc"))
# Table 9 (context ablation) prints the per-question accuracies only; its five-shot task asks
# every main question under each of the five prompts, so groups are not a run's.
process_ablation = _scorer(("mainq_acc", "subq_acc", "selective_acc", "eliminative_acc"))

# Appendix J reports the alignment accuracy for correct and incorrect main options: the
# docs built from selective and eliminative subquestions respectively.
correct_option_acc = selective_acc
incorrect_option_acc = eliminative_acc
