"""Data a page loads when it is asked for, as small script files.

A page opened from disk (``file://``) may fetch nothing, but it may add a ``<script>``: each
file calls ``explainEval.loaded(name, value)`` (``assets/leaderboard.js``), which hands the
value to whatever asked for ``name``. The index keeps its first paint small this way (the
long view and the charts of a tab load when shown), and the document view reads its
documents the same way.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any


def write_script_data(path: Path, name: str, value: Any) -> None:
    """``value`` (JSON, a non-finite number as its text) as a script that hands it to ``name``."""
    text = json.dumps(_finite(value), ensure_ascii=False, allow_nan=False, default=str)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"explainEval.loaded({json.dumps(name)}, {text});\n", encoding="utf-8")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("∞" if value > 0 else "-∞")
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value
