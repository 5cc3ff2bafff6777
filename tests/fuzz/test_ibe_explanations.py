"""IBE explanations as a model writes them: the step parser and the deterministic formalizer.

Any text parses into steps or flags (never an exception, never silently nothing) within a
time bound; a well-formed explanation, however decorated, loses none of its steps; and
every parsed explanation formalizes into one program with one rule per step.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ibe_postprocess.formalize import formalize_many
from ibe_postprocess.parsing import ParsedExplanation, Step, parse_explanation
from tests.fuzz.support import SECONDS, within

pytestmark = pytest.mark.fuzz

KEYWORDS = ("if", "then", "therefore", "step", "assumption", "assumptions")
word = st.from_regex(r"[a-z]{1,8}", fullmatch=True).filter(lambda w: w not in KEYWORDS)
clause = st.lists(word, min_size=1, max_size=6).map(" ".join)


def model_text(longest_blank_run: int) -> st.SearchStrategy[str]:
    """Text in the shapes a model (or a hostile prompt) produces: the format's keywords,
    markdown, numbering, and runs of blanks (the shapes that made regexes backtrack)."""
    fragment = st.one_of(
        st.text(max_size=30),
        st.sampled_from(["IF ", "If ", "THEN ", " then, ", "Step 1: ", "2. ", "3) ", "**", "`", "- ", "> ", "# "]),
        st.sampled_from(["Assumption:", "Assumptions 2:", "Therefore, ", "\n", "\n\n", ",", "\t", "\u00a0"]),
        st.integers(min_value=1, max_value=longest_blank_run).map(lambda n: " " * n),
    )
    return st.lists(fragment, max_size=40).map("".join)


def _check_parsed(parsed: ParsedExplanation) -> None:
    assert isinstance(parsed, ParsedExplanation)
    assert parsed.steps or parsed.flags, "nothing was read and nothing was flagged"
    assert all(isinstance(flag, str) and flag for flag in parsed.flags)
    for step in parsed.steps:
        assert step.condition.strip() and step.consequence.strip()
        assert "\n" not in step.condition + step.consequence


@given(model_text(longest_blank_run=2_000))
@example("IF a" + " " * 300 + "b")
@example("Assumption" + " " * 800 + "x")
def test_any_text_parses_within_the_bound(text: str) -> None:
    _check_parsed(within(SECONDS, lambda: parse_explanation(text)))


@given(model_text(longest_blank_run=40))
def test_any_text_becomes_steps_or_flags(text: str) -> None:
    # Short blank runs only, so that this property also runs (and guards everything but
    # speed) while the parser above is still slow on long ones.
    _check_parsed(parse_explanation(text))


header = st.sampled_from(["Step {k}:", "Step {k}.", "{k}.", "{k})", "**Step {k}:**", "- Step {k}:", "### Step {k}"])
if_word = st.sampled_from(["IF", "If", "if", "**IF**"])
then_word = st.sampled_from([", THEN", ", then", " THEN", " Then,", ", **THEN**"])
assumption_word = st.sampled_from(["Assumption:", "assumption:", "**Assumption:**", "  Assumption 1:"])
gap = st.sampled_from(["\n", "\n\n", "  \n"])


@st.composite
def well_formed(draw) -> tuple[str, list[Step], str]:
    steps = draw(st.lists(st.tuples(clause, clause, clause), min_size=1, max_size=8))
    lines = []
    for k, (condition, consequence, assumption) in enumerate(steps, 1):
        lines.append(
            f"{draw(header).format(k=k)} {draw(if_word)} {condition}{draw(then_word)} {consequence}.{draw(gap)}"
            f"{draw(assumption_word)} {assumption}.{draw(gap)}"
        )
    summary = draw(clause)
    text = "".join(lines) + f"Therefore, {summary}."
    return text, [Step(c, q, a) for c, q, a in steps], f"Therefore, {summary}."


@given(well_formed())
def test_a_well_formed_explanation_loses_no_step(case) -> None:
    text, steps, summary = case
    parsed = parse_explanation(text)
    assert parsed.steps == steps and parsed.summary == summary and parsed.flags == []


NAME = re.compile(r"[a-z0-9_]+")


@pytest.fixture(scope="module")
def spacy_loaded() -> None:
    """Load the spaCy pipeline once, outside the time bound."""
    formalize_many([("a balloon", "it rises", parse_explanation("IF air heats, THEN it rises."))])


@given(items=st.lists(st.tuples(clause, clause, model_text(longest_blank_run=40)), min_size=1, max_size=4))
def test_every_parsed_explanation_formalizes_into_one_rule_per_step(spacy_loaded, items) -> None:
    parsed = [(premise, conclusion, parse_explanation(text)) for premise, conclusion, text in items]
    programs = within(10 * SECONDS, lambda: formalize_many(parsed))  # spaCy over every clause
    assert len(programs) == len(parsed)
    for program, (_, _, explanation) in zip(programs, parsed):
        assert len(program.rules) == len(explanation.steps) and len(program.facts) == 1
        assert all(NAME.fullmatch(name) for name in program.predicates()), program.text()
