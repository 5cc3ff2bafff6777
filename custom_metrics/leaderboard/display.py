"""How the pages name files, judges and models: no machine's absolute path on any page.

A leaderboard folder is zipped and sent, or published; the paths it was built from
(``/home/me/scratch/...``, a checkpoint under ``~/.cache``) mean nothing to its reader and say
more than they should (docs/leaderboard.md, "Names"). A name's control and format characters
are written as visible escapes in every output (``visible``): ``model\\u202egnp.exe`` never
displays as "modelexe.png".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from custom_metrics.common.results import friendly_spec

# A Hub id: "org/name", each part letters, digits, "-", "_", "." (not starting with "." or "-").
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_HF_CACHE = re.compile(r"models--(?P<org>[^/\\]+?)--(?P<name>[^/\\]+)[/\\]snapshots[/\\]")


# Control (Cc), format (Cf: bidi overrides and isolates, zero-width joiners, the BOM) and
# line/paragraph separators: characters that change how the text around them reads.
_INVISIBLE = ("Cc", "Cf", "Zl", "Zp")


def visible(text: str) -> str:
    """``text`` with every control or format character written as its escape (``\\u202e``)."""
    if text.isprintable():
        return text
    return "".join(
        (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}") if unicodedata.category(c) in _INVISIBLE else c
        for c in text
    )


class Paths:
    """Input-relative names for every file a page mentions."""

    def __init__(self, roots: Sequence[Path]) -> None:
        # Longest first: a root inside another is the more specific name.
        self.roots = sorted((Path(root).resolve() for root in roots), key=lambda p: len(str(p)), reverse=True)
        self._shown: dict[str, str] = {}  # every paired difference names its two samples files again

    def show(self, path: str | Path | None) -> str:
        text = "" if path is None else str(path)
        if text and text not in self._shown:
            self._shown[text] = visible(self._show(text))
        return self._shown.get(text, "")

    def _show(self, text: str) -> str:
        if not Path(text).is_absolute():
            return friendly_spec(text)
        resolved = Path(text)
        for root in self.roots:
            if resolved == root or root in resolved.parents:
                parts = [root.name or "input", *resolved.relative_to(root).parts]
                return "/".join("…" if part.startswith("__") else part for part in parts)
        return resolved.name  # outside every input (a pair file one level up): its name only

    def text(self, text: str) -> str:
        """A note or message with every input path in it shown as ``show`` shows it."""
        for root in self.roots:
            pattern = re.compile(re.escape(str(root)) + r"(?:[/\\][^\s,;:()'\"]*[^\s,;:()'\".])?")
            text = pattern.sub(lambda match: self._show(match.group(0)), text)
        return visible(friendly_spec(text))


def hub_id(model_id: str) -> str | None:
    """The Hugging Face Hub id a run's recorded model is, if it is one (a local path is not)."""
    text = model_id.strip()
    cached = _HF_CACHE.search(text)
    if cached:
        return f"{cached['org']}/{cached['name']}"
    return text if _HUB_ID.match(text) and ".." not in text else None


def hub_url(model_id: str) -> str | None:
    found = hub_id(model_id)
    return f"https://huggingface.co/{found}" if found else None
