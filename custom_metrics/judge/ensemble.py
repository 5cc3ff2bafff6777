"""The judges of a rejudged task as a panel: the plurality vote of their verdicts, one more rater.

Verga et al. 2024 pool several judges by voting and find the panel agrees with people better
than any one judge; the vote here is compared like any judge.

The rule (``RULE``) is one for every decision; items one judge decided occur in REG (call 2 only
for items in that judge's N). The metrics are voted from each judge's per-item outcomes
(``Rater.scores``), so they count what the task counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from custom_metrics.common.rejudging import GOLD, Rater, RejudgedTask

VOTE = "vote of the judges"  # the vote's role, beside RUN_JUDGE, AGAIN and GOLD
NAME = "vote"
RULE = (
    "Vote of the judges: on each item, the label most of the judges that decided it gave (at least two judges); "
    "a tie for the most votes is no verdict (named and counted, never broken); an item one judge decided has no "
    "vote. Its metrics are voted from the judges' per-item outcomes. Its agreement with a judge includes that "
    "judge's own vote."
)
NAMED = 10  # tied items the markdown names; the JSON names all


def plurality(labels: Sequence[str]) -> str | None:
    """The label given most often in ``labels``; None on a tie for the most (or no labels)."""
    ranked = Counter(labels).most_common()
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


@dataclass(frozen=True)
class Tally:
    """One decision (or metric) voted: the items given a verdict, those tied, those with one voter."""

    voted: Mapping[str, str]  # item -> the vote's label
    tied: tuple[str, ...]  # items, sorted
    one_voter: int


def tally(judges: Sequence[Mapping[str, str]]) -> Tally:
    """The vote on every item at least two of ``judges`` (item -> label) decided."""
    items = sorted({item for judge in judges for item in judge})
    voted, tied, alone = {}, [], 0
    for item in items:
        labels = [judge[item] for judge in judges if item in judge]
        if len(labels) < 2:
            alone += 1
            continue
        label = plurality(labels)
        if label is None:
            tied.append(item)
        else:
            voted[item] = label
    return Tally(voted, tuple(tied), alone)


@dataclass(frozen=True)
class Vote:
    """The panel's vote on one task: the rater it adds, and what each decision's vote left undecided."""

    rater: Rater
    voters: tuple[str, ...]
    decisions: Mapping[str, Tally]
    metrics: Mapping[str, Tally]

    def as_dict(self) -> dict[str, Any]:
        def counted(tallies: Mapping[str, Tally]) -> dict[str, Any]:
            return {
                key: {"voted": len(t.voted), "tied": len(t.tied), "tied_items": list(t.tied), "one_voter": t.one_voter}
                for key, t in tallies.items()
            }

        return {
            "name": self.rater.name,
            "voters": list(self.voters),
            "rule": RULE,
            "decisions": counted(self.decisions),
            "metrics": counted(self.metrics),
        }


def _yes_no(outcomes: Mapping[str, bool]) -> dict[str, str]:
    return {item: "yes" if value else "no" for item, value in outcomes.items()}


def vote(task: RejudgedTask) -> Vote | None:
    """The vote of the task's judges (every rater but the gold labels); None with fewer than two."""
    judges = [rater for rater in task.raters if rater.role not in (GOLD, VOTE)]
    if len(judges) < 2:
        return None
    decisions = {
        decision: tally([judge.decisions[decision] for judge in judges if decision in judge.decisions])
        for decision in task.decisions
        if any(decision in judge.decisions for judge in judges)
    }
    metrics = {
        metric: tally([_yes_no(judge.scores[metric]) for judge in judges if metric in judge.scores])
        for metric in task.metrics
        if any(metric in judge.scores for judge in judges)
    }
    rater = Rater(
        f"{NAME} of {len(judges)} judges",
        VOTE,
        {decision: t.voted for decision, t in decisions.items() if t.voted},
        {
            metric: (sum(label == "yes" for label in t.voted.values()), len(t.voted))
            for metric, t in metrics.items()
            if t.voted
        },
        None,
        {metric: {item: label == "yes" for item, label in t.voted.items()} for metric, t in metrics.items()},
    )
    return Vote(rater, tuple(judge.name for judge in judges), decisions, metrics)


def with_vote(task: RejudgedTask) -> tuple[RejudgedTask, Vote | None]:
    """The task with its judges' vote as one more rater (before the gold labels), and the vote."""
    found = vote(task)
    if found is None:
        return task, None
    judges = [rater for rater in task.raters if rater.role != GOLD]
    gold = [rater for rater in task.raters if rater.role == GOLD]
    return replace(task, raters=(*judges, found.rater, *gold)), found


def markdown(found: Vote | None) -> str:
    """What the vote left undecided, per decision and metric (its numbers are in the tables above)."""
    if found is None:
        return ""
    lines = [
        "",
        f"### {found.rater.name}: {', '.join(found.voters)}",
        "",
        "| decision or metric | items voted | tied (no verdict) | decided by one judge (no vote) |",
        "|---|---|---|---|",
    ]
    for kind, tallies in (("", found.decisions), ("metric ", found.metrics)):
        for key, t in tallies.items():
            named = ", ".join(t.tied[:NAMED]) + (f", … ({len(t.tied) - NAMED} more)" if len(t.tied) > NAMED else "")
            tied = f"{len(t.tied)}" + (f": {named}" if t.tied else "")
            lines.append(f"| {kind}{key} | {len(t.voted)} | {tied} | {t.one_voter} |")
    return "\n".join([*lines, "", RULE, ""])
