"""A judge for tests that build ``reg_chaos`` tasks without judging anything.

The task's loader loads and checks its judge before any generation; the embedded model
would cost a model load per build. A tiny random classifier loads in a second; it is
degenerate, so these builds pass ``judge_check=warn``.
"""

from __future__ import annotations

from pathlib import Path

from tests.judge.conftest import tiny_seqcls

NLI_ID2LABEL = {0: "entailment", 1: "neutral", 2: "contradiction"}


def tiny_judge_metadata(folder: Path, seed: int = 1) -> dict[str, str]:
    """``--metadata`` entries naming a tiny classifier saved under ``folder`` as the judge (``seed``: its weights)."""
    model = folder / ("tiny-nli" if seed == 1 else f"tiny-nli-{seed}")
    if not (model / "config.json").is_file():
        tiny_seqcls(model, NLI_ID2LABEL, seed)
    return {"judge": f"seqcls:{model}", "judge_check": "warn"}
