"""``explain-eval lm-eval``: lm-eval's own CLI, unchanged, with the suite's model classes registered.

The harness looks a ``--model`` name up in its registry before it loads any task, so a
class defined outside lm-eval must be registered by the process that parses the command
line. Each is registered by name and import path, as lm-eval registers its own: the class's
module (and torch, for ``hf-prefix``) is imported only when a run chooses it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

# --model name -> "module:class"
MODELS = {
    "reasoning-chat-completions": "custom_metrics.reg.api_model:ReasoningChatCompletions",
    "hf-prefix": "custom_metrics.prefix_lm:PrefixHFLM",
}


def register_models() -> None:
    """Register the suite's model classes beside the harness' own (whose names must come first:
    the registry fills itself with them only while it is empty). A class already registered
    by its module (imported, or run as ``__main__``) stays as it is."""
    import lm_eval.models  # noqa: F401
    from lm_eval.api.registry import model_registry

    for name, target in MODELS.items():
        if name not in model_registry:
            model_registry.register(name, target=target)


def main(argv: Sequence[str] | None = None) -> int:
    """lm-eval's own CLI, with the suite's model classes registered first."""
    from lm_eval.__main__ import cli_evaluate

    register_models()
    sys.argv = ["lm_eval", *(sys.argv[1:] if argv is None else argv)]
    cli_evaluate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
