"""The Prolog guard on LLM-written programs: any text is a plain Horn program or a GuardError
naming the problem, within a time bound; plain programs pass whole. System predicates are
those of the real SWI-Prolog (through janus), as in ``ibe score``."""

from __future__ import annotations

import contextlib
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ibe_postprocess.formalize import Atom, Rule
from ibe_postprocess.prolog_guard import FORBIDDEN, MAX_ARITY, MAX_CLAUSES, GuardError, guarded_program, parse_clauses
from ibe_postprocess.prover import system_predicate_check
from tests.fuzz.support import SECONDS, within

pytestmark = pytest.mark.fuzz

NAME = re.compile(r"[a-z][A-Za-z0-9_]*")
TERM = re.compile(r"[a-z][A-Za-z0-9_]*|[A-Z_][A-Za-z0-9_]*|[0-9]+")
HOSTILE = [
    ":- ", "?- ", "shell('rm -rf ~')", "halt", "assert(p(x))", "call(X)", "\\+ ", " -> ", "; ", "!", "=..", "0'a",
    "'quoted atom'", '"string"', "[H|T]", "{x}", "p(X) :- p(X)", "% comment", "/*", "*/", ".", ". ", "\n", "(", ")",
    ", ", "X", "_", "_G1", "42", "p", "q(x)", "r(X, Y)", "write(x)", "true", "is", " :- ", "-->", "format('~w')",
]  # fmt: skip
program_text = st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12)), max_size=30).map("".join)


@pytest.fixture(scope="module")
def is_system():
    """SWI-Prolog's own answer to "is this a system predicate?" (janus loads once, outside any bound)."""
    check = system_predicate_check()
    assert check("write", 1) and not check("balloon_inflate", 1)
    return check


def _atoms(facts: list[Atom], rules: list[Rule]) -> list[Atom]:
    return [*facts, *(atom for rule in rules for atom in (rule.head, *rule.body))]


@given(text=program_text)
def test_any_text_is_a_plain_program_or_a_guard_error(is_system, text: str) -> None:
    try:
        facts, rules = parse_clauses(text, is_system)
    except GuardError as error:
        assert str(error)
        return
    assert len(facts) + len(rules) <= MAX_CLAUSES
    for atom in _atoms(facts, rules):
        assert NAME.fullmatch(atom.name) and atom.name not in FORBIDDEN and not is_system(atom.name, len(atom.args))
        assert len(atom.args) <= MAX_ARITY and all(TERM.fullmatch(arg) for arg in atom.args)
    assert all(arg[0].islower() or arg[0].isdigit() for fact in facts for arg in fact.args)  # facts are ground


@given(program_text)
@example("/* " * 8_000 + "p(x).")
def test_any_text_is_judged_within_the_bound(text: str) -> None:
    with contextlib.suppress(GuardError):
        within(SECONDS, lambda: parse_clauses(text))


names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(lambda name: name not in FORBIDDEN)
constants = st.from_regex(r"[a-z][a-z0-9_]{0,6}|[0-9]{1,3}", fullmatch=True)
variables = st.from_regex(r"[A-Z][A-Za-z0-9_]{0,4}", fullmatch=True)


@st.composite
def plain_program(draw) -> tuple[list[Atom], list[Rule], str]:
    def atom(args: st.SearchStrategy[str]) -> Atom:
        return Atom(draw(names), tuple(draw(st.lists(args, min_size=1, max_size=MAX_ARITY))))

    facts = [atom(constants) for _ in range(draw(st.integers(1, 6)))]
    rules = [
        Rule(atom(variables), tuple(atom(variables) for _ in range(draw(st.integers(1, 3)))))
        for _ in range(draw(st.integers(0, 6)))
    ]
    spacing = draw(st.sampled_from(["\n", " ", "\n\n", "\n% a comment\n", " /* note */ "]))
    text = spacing.join([*(f"{fact}." for fact in facts), *(str(rule) for rule in rules)])
    return facts, rules, text


@given(plain_program())
def test_a_plain_program_passes_whole(case) -> None:
    facts, rules, text = case
    assert parse_clauses(text) == (facts, rules)
    program = guarded_program(text, f"?- {facts[0]}.")
    assert program.facts == tuple(facts) and program.rules == tuple(rules) and program.query == facts[0]
