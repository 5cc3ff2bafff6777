"""Deterministic formalization of a parsed explanation into a Horn-clause program.

Following the paper (Section 4, Appendix A.3) the premise becomes a fact, each IF-THEN
step a rule ``then(X) :- if(X).`` and the conclusion the query; atoms have the
one-variable shape of Logic-Explainer's autoformalizer (``expanded_balloon(me)``). A
clause's predicate name is built from its content lemmas (nouns, verbs, adjectives,
adverbs, numbers, negation), dropping auxiliaries and the causal connective itself ("it
can cause the balloon to inflate" -> ``balloon_inflate``), so that the step's wording, not
its hedging, decides how well two predicates weakly unify.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from ibe_postprocess.nlp import Word, words_of
from ibe_postprocess.parsing import ParsedExplanation

CONTENT_POS = {"NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM"}
NEGATIONS = {"not", "no", "never", "n't", "nothing", "nobody"}
# Light verbs and causal connectives: they link clauses, they are not what a clause is about.
CONNECTIVES = {"be", "have", "do", "cause", "lead", "result", "make", "get", "become", "happen"}
CONSTANT = "x"  # the single individual all atoms talk about
VARIABLE = "X"


@dataclass(frozen=True)
class Atom:
    name: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.name}({', '.join(self.args)})"


@dataclass(frozen=True)
class Rule:
    head: Atom
    body: tuple[Atom, ...]

    def __str__(self) -> str:
        return f"{self.head} :- {', '.join(map(str, self.body))}."


@dataclass(frozen=True)
class Program:
    facts: tuple[Atom, ...]
    rules: tuple[Rule, ...]
    query: Atom

    def predicates(self) -> set[str]:
        names = {atom.name for atom in self.facts} | {self.query.name}
        for rule in self.rules:
            names |= {rule.head.name, *(atom.name for atom in rule.body)}
        return names

    def text(self) -> str:
        """The program in Prolog syntax, for the features file and for reading proofs."""
        lines = [f"{fact}." for fact in self.facts] + [str(rule) for rule in self.rules]
        return "\n".join([*lines, f"?- {self.query}."])


def _name(words: Sequence[Word]) -> str:
    content = [
        "not" if word.lower in NEGATIONS else word.lemma.lower()
        for word in words
        if word.lower in NEGATIONS or (word.pos in CONTENT_POS and word.lemma.lower() not in CONNECTIVES)
    ]
    if not content:  # "it happens": keep every word rather than an empty name
        content = [word.lower for word in words if word.is_alpha]
    name = "_".join(re.sub(r"[^a-z0-9]+", "", word) for word in content)
    return re.sub(r"_+", "_", name).strip("_") or "empty"


def clause_texts(items: Sequence[tuple[str, str, ParsedExplanation]]) -> Iterator[str]:
    """Every text formalization names: premise, conclusion, then each step's IF and THEN clause."""
    for premise, conclusion, parsed in items:
        yield premise
        yield conclusion
        for step in parsed.steps:
            yield step.condition
            yield step.consequence


def formalize_many(
    items: Sequence[tuple[str, str, ParsedExplanation]], words: Mapping[str, Sequence[Word]] | None = None
) -> list[Program]:
    """Programs for (premise, conclusion, parsed explanation) triples.

    ``words`` maps every clause text to its words (``nlp.words_of(clause_texts(items))``,
    shared with drift); without it the texts are read here.
    """
    if words is None:
        words = words_of(clause_texts(items))
    names = {text: _name(text_words) for text, text_words in words.items()}
    programs = []
    for premise, conclusion, parsed in items:
        rules = tuple(
            Rule(Atom(names[step.consequence], (VARIABLE,)), (Atom(names[step.condition], (VARIABLE,)),))
            for step in parsed.steps
        )
        programs.append(Program((Atom(names[premise], (CONSTANT,)),), rules, Atom(names[conclusion], (CONSTANT,))))
    return programs
