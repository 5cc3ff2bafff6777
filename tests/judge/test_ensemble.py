"""The vote of the judges (``custom_metrics.judge.ensemble``) on hand-computed examples: its labels,
its ties (named and counted, never broken), its metrics, and its agreement through rejudge's tables."""

from __future__ import annotations

from pathlib import Path

from custom_metrics.common.rejudging import AGAIN, GOLD, RUN_JUDGE, Rater, RejudgedTask
from custom_metrics.judge.ensemble import VOTE, markdown, plurality, tally, with_vote
from custom_metrics.rejudge import agreements, spreads

# Three judges on five items. Item 1: e e c -> e; item 2: c n c -> c; item 3: n c e -> a three-way
# tie; items 4 and 5: one judge each -> no vote.
A = Rater("A", RUN_JUDGE, {"J": {"1": "e", "2": "c", "3": "n", "4": "e"}}, {"success": (1, 2)}, None,
          {"success": {"1": True, "2": False}})  # fmt: skip
B = Rater("B", AGAIN, {"J": {"1": "e", "2": "n", "3": "c", "5": "c"}}, {"success": (2, 2)}, None,
          {"success": {"1": True, "2": True}})  # fmt: skip
C = Rater("C", AGAIN, {"J": {"1": "c", "2": "c", "3": "e"}}, {"success": (2, 3)}, None,
          {"success": {"1": False, "2": True, "3": True}})  # fmt: skip
G = Rater("gold", GOLD, {"J": {"1": "c", "2": "c", "3": "c"}})


def _task(*raters: Rater) -> RejudgedTask:
    return RejudgedTask("t", Path("s.jsonl"), Path("."), raters, ("J",), ("success",), ("e", "n", "c"))


def test_plurality_is_the_most_given_label_and_a_tie_for_the_most_is_no_verdict() -> None:
    assert plurality(["e", "e", "n", "c"]) == "e"  # the most votes, though not more than half
    assert plurality(["e", "n", "n", "e"]) is None
    assert plurality(["e", "n", "c"]) is None
    assert plurality(["c"]) == "c" and plurality([]) is None


def test_the_vote_of_three_judges_on_hand_computed_items() -> None:
    voted = tally([A.decisions["J"], B.decisions["J"], C.decisions["J"]])
    assert voted.voted == {"1": "e", "2": "c"} and voted.tied == ("3",) and voted.one_voter == 2

    task, vote = with_vote(_task(A, B, C, G))
    assert [r.name for r in task.raters] == ["A", "B", "C", "vote of 3 judges", "gold"]
    rater = task.raters[3]
    assert rater.role == VOTE and rater.decisions == {"J": {"1": "e", "2": "c"}}
    # success: item 1 yes yes no -> yes; item 2 no yes yes -> yes; item 3 only C scored it -> no vote
    assert rater.metrics == {"success": (2, 2)} and rater.scores == {"success": {"1": True, "2": True}}
    assert vote.metrics["success"].one_voter == 1 and vote.metrics["success"].tied == ()
    record = vote.as_dict()
    assert record["decisions"]["J"] == {"voted": 2, "tied": 1, "tied_items": ["3"], "one_voter": 2}
    assert "| J | 2 | 1: 3 | 2 |" in markdown(vote)

    rows = {(a, b): result for _, a, b, result in agreements(task)}
    assert rows["A", "vote of 3 judges"].raw == 1.0 and rows["A", "vote of 3 judges"].n == 2  # items 1, 2
    assert rows["B", "vote of 3 judges"].raw == 0.5  # item 2: n vs c
    assert rows["vote of 3 judges", "gold"].raw == 0.5 and rows["vote of 3 judges", "gold"].n == 2
    assert spreads(task) == {"success": 1.0 - 0.5}  # the judges' spread; the vote is not a judge


def test_two_judges_vote_only_where_they_agree_and_one_judge_has_no_vote() -> None:
    _, vote = with_vote(_task(A, B, G))
    assert vote.decisions["J"].voted == {"1": "e"} and vote.decisions["J"].tied == ("2", "3")
    assert vote.metrics["success"].voted == {"1": "yes"} and vote.metrics["success"].tied == ("2",)
    assert with_vote(_task(A, G)) == (_task(A, G), None)
