"""Split a generated explanation into IF-THEN steps, their assumptions and the summary.

Models follow the requested format loosely (markdown bold, "1." instead of "Step 1:",
lower-case "if/then", blank lines), so the patterns are lenient about decoration but
strict about content: a step counts only when it has both an IF and a THEN clause.
Whatever cannot be read is reported in ``flags`` (never raised), so a malformed
explanation becomes a flagged feature row instead of a crash or a silent zero.

The parser runs on every generated sample inside ``lm_eval``, so a degenerate or hostile
generation must not stall a run: every pattern here matches in time linear in the line
(no two adjacent quantifiers can take the same characters, and the IF ... THEN split is
a search for the first "then", not a lazy group followed by optional separators), and
the text is capped at ``MAX_CHARS`` characters and ``MAX_STEPS`` steps, which bounds
everything downstream (spaCy, the proof's similarity matrix, the judge's requests).

One parser serves both sides: the harness hooks (``custom_metrics.ibe.metrics``) and the
scorer import it from here, so it imports nothing but the standard library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The prompt asks for a few steps; a 512-token generation holds about 2,500 characters
# and 15 steps. Beyond the caps the row is flagged and the part within them is scored.
MAX_CHARS = 20_000
MAX_STEPS = 32
MAX_HEADER_FLAGS = 10  # "step without IF-THEN" flags listed one by one, then counted

_DECORATION = r"[\s*_#>`\-]*"
STEP_HEADER = re.compile(rf"^{_DECORATION}(?:step\s*(\d+)|(\d+)[.)])\s*[:.)\-]?{_DECORATION}(.*)$", re.IGNORECASE)
# "Assumption 2 **:" - the number is optional; whitespace after it belongs to the decoration.
ASSUMPTION = re.compile(rf"^{_DECORATION}assumptions?(?:\s*\d+)?{_DECORATION}:{_DECORATION}(.*)$", re.IGNORECASE)
SUMMARY = re.compile(rf"^{_DECORATION}(therefore\b.*)$", re.IGNORECASE)
_IF = re.compile(r"\W*if\b", re.IGNORECASE)
_THEN = re.compile(r"\bthen\b", re.IGNORECASE)
_SEPARATOR = re.compile(r"\s*(?:,\s*)?")  # whitespace, an optional comma, whitespace


@dataclass(frozen=True)
class Step:
    condition: str  # the IF clause
    consequence: str  # the THEN clause
    assumption: str | None


@dataclass(frozen=True)
class ParsedExplanation:
    steps: list[Step]
    summary: str | None
    flags: list[str] = field(default_factory=list)

    @property
    def assumptions(self) -> list[str]:
        return [step.assumption for step in self.steps if step.assumption]


def _clause(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" \t*_`\"'").rstrip(".;:,").strip()


def _if_then(text: str) -> tuple[str, str] | None:
    """``IF <condition>[,] THEN[,] <consequence>``: the condition ends at the first "then" word.

    Done as linear searches, because the one-pattern form (a lazy group followed by optional
    separators) backtracks cubically on long runs of spaces.
    """
    text = text.strip()
    opening = _IF.match(text)
    if opening is None:
        return None
    start = opening.end()
    while start < len(text) and text[start].isspace():
        start += 1
    then = _THEN.search(text, start + 1)
    if then is None:
        return None
    rest = _SEPARATOR.match(text, then.end()).end()
    if rest == len(text):  # nothing after THEN
        return None
    # The separator before THEN, read backwards, ends the condition (at least one character long).
    end = then.start() - _SEPARATOR.match(text[start + 1 : then.start()][::-1]).end()
    condition, consequence = _clause(text[start:end]), _clause(text[rest:])
    return (condition, consequence) if condition and consequence else None


def capped(text: str) -> tuple[str, list[str]]:
    """``text`` cut to ``MAX_CHARS`` (at the last line break before the cap, if any)."""
    if len(text) <= MAX_CHARS:
        return text, []
    cut = text.rfind("\n", 0, MAX_CHARS + 1)
    kept = text[: cut if cut > 0 else MAX_CHARS]
    flag = f"explanation longer than {MAX_CHARS:,} characters ({len(text):,}): only the first {len(kept):,} read"
    return kept, [flag]


def parse_explanation(text: str) -> ParsedExplanation:
    """Steps, assumptions and summary of ``text``; problems are listed in ``flags``."""
    if not text or not text.strip():
        return ParsedExplanation([], None, ["empty explanation"])
    text, flags = capped(text)
    steps: list[Step] = []
    pending: tuple[str, str] | None = None  # the last step, waiting for its assumption
    summary: str | None = None
    dropped = 0  # IF-THEN steps beyond MAX_STEPS
    bad_headers = 0

    def close_step(assumption: str | None) -> None:
        nonlocal pending
        if pending is not None:
            steps.append(Step(pending[0], pending[1], assumption))
            if assumption is None:
                flags.append(f"step {len(steps)} has no assumption")
        pending = None

    for line in text.splitlines():
        if not line.strip():
            continue
        if (match := SUMMARY.match(line)) is not None:
            close_step(None)
            summary = _clause(match.group(1)) + "."
            break  # anything after the summary is outside the explanation
        if (match := ASSUMPTION.match(line)) is not None:
            if pending is not None:
                close_step(_clause(match.group(1)) or None)
            elif not dropped:  # the assumption of a step beyond the cap is dropped with it
                flags.append("assumption without a step")
            continue
        header = STEP_HEADER.match(line)
        body = header.group(3) if header else line
        clauses = _if_then(body)
        if clauses is not None:
            close_step(None)
            if len(steps) < MAX_STEPS:
                pending = clauses
            else:
                dropped += 1
        elif header:
            close_step(None)
            bad_headers += 1
            if bad_headers <= MAX_HEADER_FLAGS:
                flags.append(f"step without IF-THEN: {_clause(body)[:60]!r}")
    close_step(None)
    if bad_headers > MAX_HEADER_FLAGS:
        flags.append(f"{bad_headers - MAX_HEADER_FLAGS} more steps without IF-THEN")
    if dropped:
        flags.append(f"more than {MAX_STEPS} steps: {dropped} after the first {MAX_STEPS} not read")
    if not steps:
        flags.append("no IF-THEN steps")
    if summary is None:
        flags.append("no 'Therefore' summary")
    return ParsedExplanation(steps, summary, flags)
