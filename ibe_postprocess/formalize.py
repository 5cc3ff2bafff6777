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
from collections.abc import Sequence
from dataclasses import dataclass

from custom_metrics.ibe.parsing import ParsedExplanation
from ibe_postprocess.nlp import parse_many

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


def _name(doc) -> str:
    content = [
        "not" if token.lower_ in NEGATIONS else token.lemma_.lower()
        for token in doc
        if token.lower_ in NEGATIONS or (token.pos_ in CONTENT_POS and token.lemma_.lower() not in CONNECTIVES)
    ]
    if not content:  # "it happens": keep every word rather than an empty name
        content = [token.lower_ for token in doc if token.is_alpha]
    name = "_".join(re.sub(r"[^a-z0-9]+", "", word) for word in content)
    return re.sub(r"_+", "_", name).strip("_") or "empty"


def predicate_names(texts: Sequence[str]) -> list[str]:
    """Predicate names for clause texts, one spaCy batch for all of them."""
    unique = list(dict.fromkeys(texts))
    names = dict(zip(unique, (_name(doc) for doc in parse_many(unique))))
    return [names[text] for text in texts]


def formalize_many(items: Sequence[tuple[str, str, ParsedExplanation]]) -> list[Program]:
    """Programs for (premise, conclusion, parsed explanation) triples, batched through spaCy."""
    texts: list[str] = []
    for premise, conclusion, parsed in items:
        texts += [premise, conclusion]
        for step in parsed.steps:
            texts += [step.condition, step.consequence]
    names = iter(predicate_names(texts))
    programs = []
    for _premise, _conclusion, parsed in items:
        fact = Atom(next(names), (CONSTANT,))
        query = Atom(next(names), (CONSTANT,))
        rules = []
        for _step in parsed.steps:
            body = Atom(next(names), (VARIABLE,))
            head = Atom(next(names), (VARIABLE,))
            rules.append(Rule(head, (body,)))
        programs.append(Program((fact,), tuple(rules), query))
    return programs
