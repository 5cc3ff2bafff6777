"""The Prolog guard bounds what a program costs, not just its syntax, and the prover loads a
program under the same limits as its proof (the growing-size property is in
``tests/fuzz/test_prolog_cost.py``)."""

from __future__ import annotations

import time

import pytest

from ibe_postprocess.prolog_guard import (
    MAX_CHARS,
    MAX_GOALS,
    MAX_NAMES,
    GuardError,
    guarded_program,
    parse_clauses,
)
from ibe_postprocess.prover import janus


def _goals(rule: int, count: int) -> str:
    return ", ".join(f"g{rule}_{k}(X)" for k in range(count))


def test_one_rule_with_2500_distinct_goals_is_refused_at_once() -> None:
    """The probe's program: 52 KB, 2,500 distinct body goals; it passed the guard and then cost
    37 s and 3.1 GB in the prover."""
    body = ", ".join(f"g{k}(X)" for k in range(2500))
    text = f"p(a).\nq(X) :- {body}."
    start = time.process_time()
    with pytest.raises(GuardError, match=f"more than the {MAX_CHARS:,} allowed"):
        guarded_program(text, "q(a)")
    assert time.process_time() - start < 0.1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"p(a).\nq(X) :- {_goals(0, MAX_GOALS + 1)}.", f"{MAX_GOALS + 1} goals"),
        (
            "p(a).\n"
            + "\n".join(f"h{r}(X) :- " + ", ".join(f"g{r}_{k}(X)" for k in range(12)) + "." for r in range(11)),
            f"more than the {MAX_NAMES} allowed",
        ),
        ("p(\u0661\u0662).", "not a plain atom"),  # Arabic-Indic digits are not a number
        ("p(\uff11).", "not a plain atom"),  # nor is a full-width one
    ],
    ids=["goals per rule", "distinct names", "arabic-indic digits", "full-width digit"],
)
def test_programs_over_a_bound_name_it(text: str, message: str) -> None:
    with pytest.raises(GuardError, match=message):
        parse_clauses(text)


def test_programs_within_the_bounds_pass() -> None:
    body = ", ".join(f"g{k}(X)" for k in range(MAX_GOALS))
    facts, rules = parse_clauses(f"p(12).\nq(X) :- {body}.")
    assert facts[0].args == ("12",) and len(rules[0].body) == MAX_GOALS


def _prove(sims: list[list], max_inferences: int) -> list:
    prolog = janus()
    result = prolog.query_once(
        "ibe_prover:ibe_prove(Facts, Rules, Query, Sims, T, D, I, S, R)",
        {
            "Facts": [["p", ["x"]]],
            "Rules": [[1, ["q", ["X"]], [["p", ["X"]]]]],
            "Query": ["q", ["x"]],
            "Sims": sims,
            "T": 0.13,
            "D": 13,
            "I": max_inferences,
            "S": 10.0,
        },
    )
    return result["R"]


def test_loading_the_knowledge_base_counts_against_the_inference_limit() -> None:
    """Loading used to run outside the limits: 20,000 similarity pairs were asserted whatever the
    limit, and the search then reported a complete proof."""
    sims = [[f"a{k}", f"b{k}", 0.5] for k in range(20_000)]
    # [score, rules, status, the proof's unifications: goal, matched, similarity, rule (0: a fact)]
    assert _prove(sims[:10], 5_000) == [1.0, [1], "complete", [["q", "q", 1.0, 1], ["p", "p", 1.0, 0]]]
    score, rules, status, steps = _prove(sims, 5_000)
    assert (score, rules, status, steps) == (0.0, [], "inference_limit", [])
    assert _prove(sims, 5_000_000)[2] == "complete"
