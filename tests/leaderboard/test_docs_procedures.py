"""The docs name the statistical procedures the code uses, for the numbers it uses them for.

``procedures.USES`` declares which procedure gives which number (and where, when it is not the
only one). This test reads every user doc (README.md, docs/*.md, each task folder's README.md
and DETAILS.md, and CHANGELOG.md's [Unreleased] section) clause by clause, finds the
procedures each clause names and the numbers it speaks of, and fails where a clause names

- a procedure the code uses for none of the numbers that clause speaks of, or uses for them
  only under a condition the clause does not state (the exact binomial test gives a Δ vs paper
  only where the paper states no count of items), or
- a procedure the code does not use at all (a z-test on a binomial standard error, Wald,
  Bonferroni), unless the clause says it is not used.

It cannot pass by finding nothing: every procedure of ``USES`` must be named somewhere in the
docs, and the sentences the docs held before (CHANGELOG's "Δ vs the paper by the exact binomial
test with its Clopper-Pearson interval") are each caught.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from custom_metrics.leaderboard import procedures as p
from tests.helpers import REPO

# How prose names each procedure the code uses (keys: ``USES``' procedures). McNemar's test is
# a binomial test of the changed documents with a conditional Clopper-Pearson interval: those
# words are McNemar's, not the exact binomial test's nor the share's interval.
NAMED = {
    p.FISHER: r"Fisher's|odds[- ]ratio interval|interval of the odds ratio",
    p.EXACT_SHARE: r"(?:exact )?binomial test(?! of the changed)",
    p.CLOPPER_PEARSON: r"(?<!conditional )Clopper-Pearson",
    p.MCNEMAR: r"McNemar",
    p.BOOTSTRAP: r"bootstrap",
    p.EQUIVALENCE: r"\bTOST\b|Newcombe",
    p.NORMAL: r"normal interval|from the printed standard error",
    p.HOLM: r"\bHolm\b",
}
# Procedures the code does not use anywhere: a doc may name one only to say so.
UNUSED = r"binomial standard errors?|\bz-test|\bWald\b|normal approximation|Bonferroni|Benjamini|Barnard|Boschloo"
# Just before a name: what the suite does not do, or what the paper does ("not the paper's bootstrap").
NEGATED = r"(?:(?:\bnot|\bnever|no longer|instead of|rather than|unlike)(?:\s+\S+){0,3}|the paper's(?: \d+ ?%)?)\s+"

# The numbers a clause may speak of (keys: ``USES``' numbers).
SPOKEN_OF = {
    p.DELTA: r"Δ(?! =)|\bvs (?:the )?paper|against the paper|vs (?:the paper's|a number)|in the paper with",
    p.REPRODUCED: r"reproduc|within ±|equivalen",
    p.SHARE: r"a (?:run's )?share\b|k of n|each number with its|items the paper states",
    p.STATED_SE: r"the paper prints a standard error|printed standard error",
    p.COMPARISON: r"GEESE'?s? effectiveness|[Ee]xplanation effectiveness|\(effectiveness|of two tasks",
    p.PAIRED: r"\bpaired\b|same documents|documents that changed|run-vs-run|between (?:two )?runs|two rows",
    p.RANK: r"\branks?\b|\branked\b",
}
# What a clause must say for a procedure the code uses for a number only somewhere (``Use.where``).
WHERE = {
    (p.DELTA, p.FISHER): r"stat(?:es|ed)|k of n|\bcounts?\b|\bitems\b|documents|two samples|two-sample",
    (p.DELTA, p.EXACT_SHARE): r"no (?:stated )?n\b|states no|no count|taken as fixed|as a constant|is a constant",
    (p.DELTA, p.CLOPPER_PEARSON): r"no (?:stated )?n\b|states no|no count|taken as fixed|as a constant|is a constant",
    (p.COMPARISON, p.BOOTSTRAP): r"other outcomes|outcomes other than|not 0/1",
    (p.PAIRED, p.BOOTSTRAP): r"other outcomes|outcomes other than|not 0/1",
    (p.RANK, p.BOOTSTRAP): r"other outcomes|outcomes other than|not 0/1",
}

# Sentences the docs held while the code used another procedure, each a claim the test must refuse.
STALE = (
    # CHANGELOG [Unreleased]: the Δ is Fisher's exact test wherever the paper states n
    "Leaderboard statistics: Δ vs the paper by the exact binomial test with its Clopper-Pearson "
    "interval (one procedure), against the same model's published row only",
    # GEESE's DETAILS.md: Table 2 states its 800 documents, so Fisher's
    "The summary ranks M2 rows by accuracy with the Llama-3 explanation, with Δ vs Table 2's "
    "Llama-3-8B row and its exact binomial test (`docs/leaderboard.md`).",
    # RULE's and REG's DETAILS.md: a z-test on binomial standard errors, used by no code
    "The leaderboard's summary ranks REG rows by success and tests a run's Δ against the paper "
    "with binomial standard errors over those 195 items (289 for Table 1)",
    # GEESE's README: effectiveness's interval is its paired test's (McNemar's), not a bootstrap
    "the leaderboard tabulates it and, with `--log_samples`, tests it on the paired documents (95% "
    "paired-bootstrap interval, McNemar's exact test; the paper reports no test).",
)


def doc_files() -> list[Path]:
    tasks = sorted((REPO / "lm_eval_tasks").glob("*/README.md")) + sorted((REPO / "lm_eval_tasks").glob("*/DETAILS.md"))
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *tasks]


def unreleased(changelog: str) -> str:
    """CHANGELOG.md's [Unreleased] section: what the code now does (older entries are history)."""
    start = changelog.index("## [Unreleased]")
    return changelog[start : changelog.index("\n## [", start + 1)]


def clauses(text: str) -> Iterator[str]:
    """A markdown text's clauses: each table row whole, each paragraph or list item cut at the end
    of each sentence; code blocks skipped."""
    block: list[str] = []
    fenced = False

    def flush() -> Iterator[str]:
        joined = " ".join(block)
        block.clear()
        yield from (part for part in re.split(r"(?<=[.!?])\s+(?=[^\s`])", joined) if part.strip())

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            yield from flush()
            continue
        if fenced:
            continue
        if not stripped or stripped.startswith(("#", "|", "- ", "* ")) or re.match(r"\d+\. ", stripped):
            yield from flush()
        if stripped.startswith("|"):
            yield stripped
        elif stripped:
            block.append(stripped)
    yield from flush()


def wrong(clause: str) -> list[str]:
    """What a clause claims that the code does not do (empty: nothing)."""
    found = []
    first: dict[str, re.Match] = {}
    for match in re.finditer(UNUSED, clause, re.IGNORECASE):
        first.setdefault(match.group().lower().rstrip("s"), match)
    for name, match in first.items():  # said not to be used where first named ("and not Barnard's or ...")
        if not re.search(NEGATED + "$", clause[: match.start()], re.IGNORECASE):
            found.append(f"names {name!r}, which no code uses")
    numbers = {number for number, pattern in SPOKEN_OF.items() if re.search(pattern, clause)}
    if not numbers:
        return found
    for procedure, pattern in NAMED.items():
        if not any(not re.search(NEGATED + r"$", clause[: m.start()]) for m in re.finditer(pattern, clause)):
            continue  # not named, or named only as what is not done ("not the paper's bootstrap")
        uses = [use for use in p.USES if use.procedure == procedure and use.number in numbers]
        if not uses:
            found.append(f"names {procedure!r} for {sorted(numbers)}: the code uses it for none of them")
        elif all(use.where and not re.search(WHERE[use.number, procedure], clause) for use in uses):
            wheres = "; ".join(f"{use.number}: only where {use.where}" for use in uses)
            found.append(f"names {procedure!r} without saying where ({wheres})")
    return found


def test_the_vocabulary_covers_the_code_registry() -> None:
    """Every procedure and number of ``USES`` has its words here, and every condition its pattern:
    a procedure added to the code without them fails here, not silently in the scan."""
    assert {use.procedure for use in p.USES} == set(NAMED)
    assert {use.number for use in p.USES} == set(SPOKEN_OF)
    assert {(use.number, use.procedure) for use in p.USES if use.where} == set(WHERE)


@pytest.mark.parametrize("sentence", STALE)
def test_each_sentence_the_docs_held_before_is_refused(sentence: str) -> None:
    assert [wrong(clause) for clause in clauses(sentence) if wrong(clause)]


def test_true_sentences_pass() -> None:
    """The checker's other side: the code's own claims, as the docs now word them, pass."""
    for sentence in (
        "Δ vs the paper by Fisher's exact test with the conditional exact interval of its odds ratio "
        "wherever the paper states its items, else by the exact binomial test and its Clopper-Pearson "
        "interval against the paper's number taken as fixed.",
        "Why Fisher's and not Barnard's or Boschloo's exact unconditional test: they are slower.",
        "GEESE's effectiveness gets its paired test's own interval (McNemar's exact test).",
    ):
        assert [wrong(clause) for clause in clauses(sentence)] == [[]] * len(list(clauses(sentence)))


def test_every_doc_names_the_procedure_the_code_uses() -> None:
    texts = {path.relative_to(REPO).as_posix(): path.read_text(encoding="utf-8") for path in doc_files()}
    texts["CHANGELOG.md [Unreleased]"] = unreleased((REPO / "CHANGELOG.md").read_text(encoding="utf-8"))
    problems = [
        f"{name}: {clause[:160]!r}: {problem}"
        for name, text in texts.items()
        for clause in clauses(text)
        for problem in wrong(clause)
    ]
    assert problems == []
    named = {procedure for procedure, pattern in NAMED.items() for text in texts.values() if re.search(pattern, text)}
    assert named == set(NAMED)  # every procedure the code uses is named, and so checked, somewhere
    checked = sum(1 for text in texts.values() for clause in clauses(text) if re.search(SPOKEN_OF[p.DELTA], clause))
    assert checked >= 10  # the Δ claims alone: the scan reads what the docs say
