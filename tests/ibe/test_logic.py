"""IBE-Eval logic: the parser, the Prolog guard, the prover (Figure 1) and drift."""

from __future__ import annotations

import json
import math
import time

import pytest

from ibe_postprocess.drift import drift_many, new_concepts_many
from ibe_postprocess.embeddings import PredicateEmbedder
from ibe_postprocess.formalize import Atom, Program, Rule, formalize_many
from ibe_postprocess.parsing import parse_explanation
from ibe_postprocess.prolog_guard import GuardError, guarded_program, parse_clauses
from ibe_postprocess.prover import Prover, system_predicate_check
from tests.helpers import BALLOON

BALLOON = [json.loads(line) for line in BALLOON.read_text().splitlines()]


@pytest.fixture(scope="module")
def prover() -> Prover:
    return Prover(PredicateEmbedder())


def _items(rows):
    return [(row["premise"], row["conclusion"], parse_explanation(row["explanation"])) for row in rows]


# --- parsing ---------------------------------------------------------------------------------


def test_parser_reads_steps_assumptions_and_summary() -> None:
    parsed = parse_explanation(BALLOON[1]["explanation"])
    assert [s.condition for s in parsed.steps] == [
        "a balloon is pricked",
        "a balloon deflates",
        "there is a decrease in air pressure inside the balloon",
    ]
    assert parsed.steps[2].consequence == "the external air pressure will cause the balloon to expand"
    assert len(parsed.assumptions) == 3 and parsed.summary.startswith("Therefore, since the balloon was pricked")
    assert parsed.flags == []


def test_parser_tolerates_decoration_and_stops_after_summary() -> None:
    text = (
        "**Step 1:** if it rains then the street gets wet\n\n"
        "**Assumption:** Rain falls on streets.\n"
        "2. IF the street is wet, THEN it is slippery.\n"
        "Assumption 2: Water reduces friction.\n"
        "Therefore, since it rained, the street is slippery.\nPremise: another example"
    )
    parsed = parse_explanation(text)
    assert [(s.condition, s.consequence) for s in parsed.steps] == [
        ("it rains", "the street gets wet"),
        ("the street is wet", "it is slippery"),
    ]
    assert parsed.assumptions == ["Rain falls on streets", "Water reduces friction"]
    assert parsed.summary == "Therefore, since it rained, the street is slippery." and parsed.flags == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", ["empty explanation"]),
        ("   \n ", ["empty explanation"]),
        ("The balloon expanded because air went in.", ["no IF-THEN steps", "no 'Therefore' summary"]),
        (
            "Step 1: blowing makes it bigger\nAssumption: air.",
            ["step without IF-THEN", "assumption without a step", "no IF-THEN steps"],
        ),
        (
            "Step 1: IF a, THEN b.\nStep 2: IF b, THEN c.\nAssumption: c follows b.",
            ["step 1 has no assumption", "no 'Therefore' summary"],
        ),
        ("Step 1: IF , THEN nothing", ["step without IF-THEN", "no IF-THEN steps"]),
    ],
)
def test_parser_flags_malformed_text(text: str, expected: list[str]) -> None:
    parsed = parse_explanation(text)
    for reason in expected:
        assert any(flag.startswith(reason) for flag in parsed.flags), (reason, parsed.flags)


# --- the paper's Figure 1 ----------------------------------------------------------------------


def test_figure1_balloon_consistency_depth_and_drift(prover: Prover) -> None:
    items = _items(BALLOON)
    e1, e2 = prover.prove_many(formalize_many(items))
    assert e1.consistent and e2.consistent
    assert (e1.depth, e2.depth) == (2, 3)
    assert e1.rules == [1, 2] and e2.rules == [1, 2, 3]
    drift1, drift2 = drift_many(items)
    assert drift2 > drift1
    assert [len(concepts) for concepts in new_concepts_many(items)] == [drift1, drift2]


def test_proof_steps_are_the_unifications_whose_product_is_the_score(prover: Prover) -> None:
    """The steps the sample viewer shows: from the query back to the premise fact, one
    unification per rule used and the fact last; their similarities multiply to the score."""
    programs = formalize_many(_items(BALLOON))
    for program, proof in zip(programs, prover.prove_many(programs)):
        steps = proof.unifications
        assert steps[0].goal == program.query.name and steps[-1].rule is None
        assert steps[-1].matched in {fact.name for fact in program.facts}
        assert sorted(step.rule for step in steps if step.rule) == proof.rules
        assert math.prod(step.similarity for step in steps) == pytest.approx(proof.score)
        for step in steps[:-1]:  # each goal weakly unifies with the head of the rule it uses
            assert step.matched == program.rules[step.rule - 1].head.name


def test_deterministic_formalization_of_e1() -> None:
    (program,) = formalize_many(_items(BALLOON[:1]))
    assert program.text() == (
        "blow_balloon(x).\n"
        "balloon_inflate(X) :- blow_balloon(X).\n"
        "balloon_expand(X) :- balloon_inflate(X).\n"
        "?- balloon_expand(x)."
    )


def test_unrelated_steps_are_inconsistent(prover: Prover) -> None:
    program = Program(
        (Atom("quantum_chromodynamics_lattice", ("x",)),),
        (Rule(Atom("tax_return_deadline", ("X",)), (Atom("medieval_poetry_meter", ("X",)),)),),
        Atom("balloon_expand", ("x",)),
    )
    proof = prover.prove(program)
    assert not proof.consistent and proof.depth == 0 and proof.score == 0.0 and proof.unifications == []


def test_direct_match_without_rules_is_not_a_proof(prover: Prover) -> None:
    """The query must go through the explanation: premise == conclusion proves nothing."""
    program = Program((Atom("balloon_expand", ("x",)),), (), Atom("balloon_expand", ("x",)))
    assert not prover.prove(program).consistent


def test_best_proof_prefers_higher_score_then_fewer_rules(prover: Prover) -> None:
    program = Program(
        (Atom("rain", ("x",)),),
        (
            Rule(Atom("wet_street", ("X",)), (Atom("rain", ("X",)),)),
            Rule(Atom("slippery_street", ("X",)), (Atom("wet_street", ("X",)),)),
            Rule(Atom("slippery_street", ("X",)), (Atom("rain", ("X",)),)),
        ),
        Atom("slippery_street", ("x",)),
    )
    proof = prover.prove(program)
    assert proof.consistent and proof.score == pytest.approx(1.0) and proof.depth == 1 and proof.rules == [3]


def test_a_proof_scoring_exactly_the_threshold_is_rejected(prover: Prover) -> None:
    """Algorithm 1 accepts a proof when its score is strictly greater than the threshold."""
    program = Program(
        (Atom("rain", ("x",)),),
        (Rule(Atom("wet_road", ("X",)), (Atom("rain", ("X",)),)),),
        Atom("wet_street", ("x",)),
    )
    score = prover.prove(program).score  # one weak unification: wet_street ~ wet_road
    assert 0.13 < score < 1.0
    at = Prover(prover.embedder, threshold=score).prove(program)
    assert not at.consistent and at.depth == 0 and at.score == 0.0 and at.rules == []
    below = Prover(prover.embedder, threshold=math.nextafter(score, 0.0)).prove(program)
    assert below.consistent and below.depth == 1 and below.score == score


# --- the Prolog guard ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def is_system():
    return system_predicate_check()


@pytest.mark.parametrize(
    "clauses, reason",
    [
        (":- shell('rm -rf /').\np(a).", "directive"),
        ("?- halt.\np(a).", "directive"),
        ("p(a).\nhalt.", "built-in"),
        ("p(a).\nq(X) :- assert(p(X)).", "built-in"),
        ("p(a).\nq(X) :- p(X), shell(ls).", "built-in"),
        ("p(a).\nq(X) :- \\+ p(X).", "not a plain atom"),
        ("p(a).\nq(X) :- p(X) ; r(X).", "not a plain atom"),
        ("p(a).\nq(X) :- X is 1 + 2.", "not a plain atom"),
        ("p(a).\nq(X) :- call(p(X)).", "built-in"),
        ("p(a).\nq(X) :- atom_length(X, 3).", "built-in"),
        ("p(a).\nq(X) :- format(X).", "built-in"),
        ('p("str").', "not a plain atom"),
        ("p(a)", "does not end"),
        ("p(X).", "fact with a variable"),
        ("s --> [a].", "grammar rule"),
    ],
)
def test_guard_rejects(clauses: str, reason: str, is_system) -> None:
    with pytest.raises(GuardError, match=reason):
        guarded_program(clauses, "p(a)", is_system)


def test_guard_asks_prolog_for_system_predicates(is_system) -> None:
    assert is_system("atom_length", 2) and is_system("nb_getval", 2)
    assert not is_system("balloon_expand", 1)


def test_guard_accepts_plain_horn_clauses(is_system) -> None:
    program = guarded_program(
        "% the premise\ninjured_pancreas(tom).\n/* rules */\n"
        "dysfunctional_pancreas(X) :- injured_pancreas(X).\n"
        "high_blood_sugar(X) :- dysfunctional_pancreas(X), has_body(X, Y).",
        "?- high_blood_sugar(tom).",
        is_system,
    )
    assert program.facts == (Atom("injured_pancreas", ("tom",)),)
    assert program.rules[1].body == (Atom("dysfunctional_pancreas", ("X",)), Atom("has_body", ("X", "Y")))
    assert program.query == Atom("high_blood_sugar", ("tom",))


def test_unbounded_recursion_is_cut_off(prover: Prover) -> None:
    facts, rules = parse_clauses("start(a).\np(X) :- p(X).\np(X) :- q(X).\nq(X) :- p(X).\nq(X) :- r(X).\nr(X) :- q(X).")
    started = time.monotonic()
    proof = prover.prove(Program(tuple(facts), tuple(rules), Atom("p", ("a",))))
    assert time.monotonic() - started < 30  # the bounds, not the test's patience, end the search
    assert proof.status == "complete"  # rules are used once per branch and depth is bounded
    assert proof.depth <= 13


def test_search_stops_at_the_inference_limit() -> None:
    # A dense program (every rule head similar to every body) explodes combinatorially.
    names = [f"step_{i}" for i in range(12)]
    rules = tuple(Rule(Atom(h, ("X",)), (Atom(b, ("X",)),)) for h in names for b in names if h != b)
    program = Program((Atom("nothing_matches", ("a",)),), rules, Atom("step_0", ("a",)))
    limited = Prover(PredicateEmbedder(), max_inferences=20_000)
    proof = limited.prove(program)
    assert proof.status == "inference_limit"


def test_guarded_program_with_multiple_arguments_is_proved(prover: Prover) -> None:
    program = guarded_program(
        "owns(tom, garden).\ndamaged(X, Y) :- owns(X, Y).\nangry(X) :- damaged(X, Y).", "angry(tom)"
    )
    proof = prover.prove(program)
    assert proof.consistent and proof.depth == 2
    wrong_owner = guarded_program(
        "owns(ann, garden).\ndamaged(X, Y) :- owns(X, Y).\nangry(X) :- damaged(X, Y).", "angry(tom)"
    )
    assert not prover.prove(wrong_owner).consistent  # arguments unify strictly


# --- LLM autoformalization output ------------------------------------------------------------


def test_autoformalized_answer_is_parsed_through_the_guard(prover: Prover, is_system) -> None:
    from ibe_postprocess.autoformalize import formalization_prompt, program_from_output

    premise, conclusion, parsed = _items(BALLOON[:1])[0]
    prompt = formalization_prompt(premise, conclusion, parsed)
    assert prompt.endswith("Step 2: IF the balloon inflates, THEN it can cause the balloon to expand.\nGoal:")
    answer = (
        " expanded_balloon(me).\nFacts:\nblew_into_balloon(me).\nRules:\n"
        "inflated_balloon(X) :- blew_into_balloon(X).\nexpanded_balloon(X) :- inflated_balloon(X).\n\nPremise: next"
    )
    program = program_from_output(answer, is_system)
    assert program.query == Atom("expanded_balloon", ("me",)) and len(program.rules) == 2
    assert prover.prove(program).depth == 2
    with pytest.raises(GuardError, match="directive"):
        program_from_output(
            " p(me).\nFacts:\nq(me).\n:- initialization(shell('ls')).\nRules:\np(X) :- q(X).", is_system
        )
    with pytest.raises(GuardError, match="no 'Goal:'"):
        program_from_output("", is_system)
