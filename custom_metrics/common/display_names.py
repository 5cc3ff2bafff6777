"""Judge and scorer specs as people read them: no machine's absolute path in them.

A spec such as ``lm:/root/.cache/explain-eval/gemma-3-270m-hf?mode=loglik`` names a local
checkpoint by where it lies on the machine that ran it; pages show it as
``lm:gemma-3-270m (embedded)?mode=loglik`` (``results.friendly_model_name`` of the path).
"""

from __future__ import annotations

import re

from custom_metrics.common.results import friendly_model_name

# An absolute path (POSIX, home-relative or Windows) inside a longer text, up to a character no path
# holds here: whitespace, quotes, ?, (, ), ;, "," and "@" (where an ``openai:`` judge's server URL
# begins); never a URL's "//host" nor the rest of a path already shortened to "runs/…/results.json".
_PATH_IN_TEXT = re.compile(r"(?<![\w./…-])(?:~/|[A-Za-z]:\\|/(?!/))[^\s\"'?();,<>@]*[^\s\"'?();,<>.@]")


def friendly_spec(text: str) -> str:
    """``text`` with every absolute path in it replaced by the friendly name of what it points at."""
    return _PATH_IN_TEXT.sub(lambda match: friendly_model_name(match.group(0)), text)
