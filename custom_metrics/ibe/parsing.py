"""Split a generated explanation into IF-THEN steps, their assumptions and the summary.

Models follow the requested format loosely (markdown bold, "1." instead of "Step 1:",
lower-case "if/then", blank lines), so the patterns are lenient about decoration but
strict about content: a step counts only when it has both an IF and a THEN clause.
Whatever cannot be read is reported in ``flags`` (never raised), so a malformed
explanation becomes a flagged feature row instead of a crash or a silent zero.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_DECORATION = r"[\s*_#>`\-]*"
STEP_HEADER = re.compile(rf"^{_DECORATION}(?:step\s*(\d+)|(\d+)[.)])\s*[:.)\-]?{_DECORATION}(.*)$", re.IGNORECASE)
ASSUMPTION = re.compile(rf"^{_DECORATION}assumptions?\s*\d*\s*{_DECORATION}:{_DECORATION}(.*)$", re.IGNORECASE)
IF_THEN = re.compile(r"^\W*if\b\s*(.+?)\s*,?\s*\bthen\b\s*,?\s*(.+)$", re.IGNORECASE | re.DOTALL)
SUMMARY = re.compile(rf"^{_DECORATION}(therefore\b.*)$", re.IGNORECASE)


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
    match = IF_THEN.match(text.strip())
    if not match:
        return None
    condition, consequence = _clause(match.group(1)), _clause(match.group(2))
    return (condition, consequence) if condition and consequence else None


def parse_explanation(text: str) -> ParsedExplanation:
    """Steps, assumptions and summary of ``text``; problems are listed in ``flags``."""
    if not text or not text.strip():
        return ParsedExplanation([], None, ["empty explanation"])
    flags: list[str] = []
    steps: list[Step] = []
    pending: tuple[str, str] | None = None  # the last step, waiting for its assumption
    summary: str | None = None

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
            if pending is None:
                flags.append("assumption without a step")
            else:
                close_step(_clause(match.group(1)) or None)
            continue
        header = STEP_HEADER.match(line)
        body = header.group(3) if header else line
        clauses = _if_then(body)
        if clauses is not None:
            close_step(None)
            pending = clauses
        elif header:
            close_step(None)
            flags.append(f"step without IF-THEN: {_clause(body)[:60]!r}")
    close_step(None)
    if not steps:
        flags.append("no IF-THEN steps")
    if summary is None:
        flags.append("no 'Therefore' summary")
    return ParsedExplanation(steps, summary, flags)
