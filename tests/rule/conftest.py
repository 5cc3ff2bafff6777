"""RULE's shared run: one real ``lm_eval`` run with lm-eval's offline ``dummy`` model over every
RULE task but the Table 2 ones (every fixture doc), whose split runs can be laid out as
``explain-eval rule-protocol`` lays out its runs.

It is each task's real-CLI run (the embedded model runs one task of each kind in
``test_e2e.py``: its long few-shot prompts cost seconds per doc on a CPU). The protocol runs
each split as its own ``lm_eval`` process; what it does with a finished split (skip it, read
it, summarize it) does not depend on which process wrote the split's files, so the protocol
tests share these, and only the runner test starts the protocol's own ``lm_eval`` for the one
split it must run again.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from custom_metrics.rule.data import DEMOS, SHOTS, SPLITS
from custom_metrics.rule.protocol import task_name
from tests.helpers import MIRROR, run_lm_eval

ENV = {"EXPLAIN_EVAL_DATA": str(MIRROR)}
DUMMY = ["--model", "dummy"]
# The tasks that ask every question under five prompts (Tables 5, 7, 9 as the paper ran them).
FIVE_PROMPT_TASKS = (
    *(f"rule_5shot_rationale_{s}" for s in ("none", "selective", "eliminative", "both")),
    "rule_5shot_alignment",
    "rule_5shot_alignment_noinstr",
    "rule_5shot_noctx",
)


@dataclass(frozen=True)
class DummyRuns:
    """The dummy run's output folder; ``layout`` copies it into a protocol folder."""

    out: Path
    results: dict
    samples: dict[str, list[dict]]

    def layout(self, folder: Path, shots: int, demos: str = "reclor") -> Path:
        """``folder`` as the protocol leaves it: per split ``split<k>/<model>/`` (``zeroshot/``
        for zero-shot) holding the results file and that split's samples file."""
        results = next(self.out.glob("*/results_*.json"))
        stamp = results.name[len("results_") : -len(".json")]
        for key in SPLITS if shots else (0,):
            task = task_name(shots, key, demos)
            target = folder / (f"split{key}" if shots else "zeroshot") / results.parent.name
            target.mkdir(parents=True)
            shutil.copy2(results, target / results.name)
            shutil.copy2(results.with_name(f"samples_{task}_{stamp}.jsonl"), target)
        return folder


@pytest.fixture(scope="session")
def dummy_runs(tmp_path_factory: pytest.TempPathFactory) -> DummyRuns:
    """Every fixture doc of every RULE task but ``rule_main``, ``rule_sub`` and the zero-shot
    ablations the embedded run does not need, in one real ``lm_eval`` CLI run (no --limit)."""
    tasks = {task_name(shots, k, demos) for shots in SHOTS for demos in DEMOS for k in SPLITS}
    tasks |= {"rule", *FIVE_PROMPT_TASKS, "rule_alignment_noinstr"}
    out = tmp_path_factory.mktemp("rule-dummy") / "out"
    results, samples = run_lm_eval(DUMMY, ",".join(sorted(tasks)), out, limit=None, env=ENV)
    return DummyRuns(out, results, samples)
