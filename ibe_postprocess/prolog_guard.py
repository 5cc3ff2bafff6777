"""Check LLM-written Prolog before any of it gets near SWI-Prolog.

An autoformalizer is a language model: its output may hold directives (``:- shell(...)``),
``halt``, database updates (``assert``), control constructs or arbitrary built-ins. We
never consult such text. It is parsed here, in Python, against a grammar that only
admits facts and Horn rules over plain predicates with constant or variable arguments;
anything else rejects the whole program with the reason. The accepted clauses reach
Prolog as *data* for the meta-interpreter in ``prover.pl``, which never calls them, and
recursion (``p(X) :- p(X).``) is cut off there by the depth and time bounds.

The guard also bounds what a program can cost before the proof's own limits apply: the
prover compares every pair of predicate names (similarities computed in Python, asserted
in Prolog), so a program of a few kilobytes with thousands of distinct names once cost 37 s
and 3 GB. Text length, clauses, goals per rule and distinct names are capped; the caps sit
far above what the autoformalizer writes (256 new tokens, about 1,000 characters) and above
any deterministic formalization (at most 32 steps, so 66 names).
"""

from __future__ import annotations

import re

from ibe_postprocess.formalize import Atom, Program, Rule

MAX_CHARS = 16_384  # the program's text, comments included
MAX_CLAUSES = 64
MAX_GOALS = 16  # body goals of one rule
MAX_NAMES = 128  # distinct predicate names (facts, rules and query): at most 8,128 similarity pairs
MAX_ARITY = 4
MAX_NAME = 120

NAME = r"[a-z][A-Za-z0-9_]*"
# ASCII digits only: Python's \d also matches other scripts' digits (p(١٢)), which Prolog reads otherwise.
TERM = r"(?:[a-z][A-Za-z0-9_]*|[A-Z_][A-Za-z0-9_]*|[0-9]+)"
ATOM = re.compile(rf"^({NAME})\s*(?:\(\s*({TERM}(?:\s*,\s*{TERM})*)\s*\))?$")

# Control constructs, database and system predicates. SWI-Prolog's own list of system
# predicates is consulted as well (``is_system_predicate``), so this set only has to
# name what a model is likely to write and what lives outside ``system``.
FORBIDDEN = {
    "shell",
    "halt",
    "assert",
    "asserta",
    "assertz",
    "retract",
    "retractall",
    "abolish",
    "consult",
    "ensure_loaded",
    "use_module",
    "include",
    "initialization",
    "load_files",
    "call",
    "apply",
    "not",
    "findall",
    "bagof",
    "setof",
    "forall",
    "aggregate_all",
    "catch",
    "throw",
    "system",
    "process_create",
    "open",
    "close",
    "see",
    "tell",
    "write",
    "print",
    "format",
    "read",
    "read_term",
    "nb_setval",
    "b_setval",
    "setenv",
    "getenv",
    "delete_file",
    "tab",
    "nl",
    "true",
    "fail",
    "false",
    "repeat",
    "is",
    "op",
    "dynamic",
    "discontiguous",
    "multifile",
    "module",
    "set_prolog_flag",
    "garbage_collect",
    "thread_create",
}


class GuardError(ValueError):
    """The program is not plain facts and Horn rules; the message says why."""


def _strip_comments(text: str) -> str:
    r"""Block comments by one forward scan: the regex ``/\*.*?\*/`` rescans to the end for
    every unclosed ``/*``, quadratic on model output. An unclosed ``/*`` stays as text (and
    fails the guard), as it did with the regex."""
    kept, position = [], 0
    while (start := text.find("/*", position)) >= 0 and (end := text.find("*/", start + 2)) >= 0:
        kept += [text[position:start], " "]
        position = end + 2
    kept.append(text[position:])
    return re.sub(r"%[^\n]*", " ", "".join(kept))


def _split_top_level(text: str, separator: str) -> list[str]:
    """Split on ``separator`` outside parentheses (argument lists contain commas)."""
    parts, depth, current = [], 0, []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise GuardError(f"unbalanced parentheses in {text.strip()!r}")
        if char == separator and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise GuardError(f"unbalanced parentheses in {text.strip()!r}")
    parts.append("".join(current))
    return parts


def parse_atom(text: str, is_system_predicate=None) -> Atom:
    text = text.strip()
    leading = re.match(r"^([a-z][A-Za-z0-9_]*)", text)
    if leading and leading.group(1) in FORBIDDEN:  # name the danger, not just the syntax
        raise GuardError(f"built-in or control predicate {leading.group(1)!r} is not allowed")
    match = ATOM.match(text)
    if not match:
        raise GuardError(f"not a plain atom: {text!r} (only name(arg, ...) with constants or variables)")
    name = match.group(1)
    args = tuple(arg.strip() for arg in match.group(2).split(",")) if match.group(2) else ()
    if len(name) > MAX_NAME:
        raise GuardError(f"predicate name longer than {MAX_NAME} characters: {name[:40]!r}...")
    if len(args) > MAX_ARITY:
        raise GuardError(f"{name}/{len(args)}: more than {MAX_ARITY} arguments")
    if name in FORBIDDEN or (is_system_predicate is not None and is_system_predicate(name, len(args))):
        raise GuardError(f"built-in or control predicate {name}/{len(args)} is not allowed")
    return Atom(name, args)


def parse_clauses(text: str, is_system_predicate=None) -> tuple[list[Atom], list[Rule]]:
    """Facts and rules of ``text``; raises GuardError on anything else, or on a program over
    the size bounds."""
    if len(text) > MAX_CHARS:
        raise GuardError(f"program of {len(text):,} characters, more than the {MAX_CHARS:,} allowed")
    body = _strip_comments(text).strip()
    if not body:
        return [], []
    if not body.endswith("."):
        raise GuardError("the last clause does not end with '.'")
    clauses = [clause.strip() for clause in re.split(r"\.(?=\s|$)", body) if clause.strip()]
    if len(clauses) > MAX_CLAUSES:
        raise GuardError(f"{len(clauses)} clauses, more than the {MAX_CLAUSES} allowed")
    facts: list[Atom] = []
    rules: list[Rule] = []
    for clause in clauses:
        if clause.startswith((":-", "?-")):
            raise GuardError(f"directive not allowed: {clause[:80]!r}")
        if "-->" in clause:
            raise GuardError(f"grammar rule not allowed: {clause[:80]!r}")
        head, sep, tail = clause.partition(":-")
        head_atom = parse_atom(head, is_system_predicate)
        if not sep:
            if any(arg[0].isupper() or arg[0] == "_" for arg in head_atom.args):
                raise GuardError(f"fact with a variable: {clause!r}")
            facts.append(head_atom)
            continue
        goals = _split_top_level(tail, ",")
        if any(not goal.strip() for goal in goals):
            raise GuardError(f"empty goal in rule: {clause[:80]!r}")
        if len(goals) > MAX_GOALS:
            raise GuardError(f"rule with {len(goals)} goals, more than the {MAX_GOALS} allowed: {clause[:80]!r}")
        rules.append(Rule(head_atom, tuple(parse_atom(goal, is_system_predicate) for goal in goals)))
    _check_names([*facts, *(atom for rule in rules for atom in (rule.head, *rule.body))])
    return facts, rules


def _check_names(atoms: list[Atom]) -> None:
    names = {atom.name for atom in atoms}
    if len(names) > MAX_NAMES:
        raise GuardError(f"{len(names)} distinct predicate names, more than the {MAX_NAMES} allowed")


def guarded_program(facts_and_rules: str, query: str, is_system_predicate=None) -> Program:
    """A Program from LLM-written clauses and query, or GuardError naming the problem."""
    facts, rules = parse_clauses(facts_and_rules, is_system_predicate)
    goal = query.strip().removeprefix("?-").strip().rstrip(".").strip()
    if len(goal) > MAX_CHARS:
        raise GuardError(f"query of {len(goal):,} characters, more than the {MAX_CHARS:,} allowed")
    query_atom = parse_atom(goal, is_system_predicate)
    _check_names([*facts, *(atom for rule in rules for atom in (rule.head, *rule.body)), query_atom])
    if not facts:
        raise GuardError("no facts: the premise was not formalized")
    return Program(tuple(facts), tuple(rules), query_atom)
