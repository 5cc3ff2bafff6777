"""``--model hf``'s log-likelihood logits, estimated before the model loads (common/logits_memory.py):
a CPU run whose batch of its longest requests would not fit is warned of, naming ``hf-prefix``
and a batch that fits; the estimate is a floor of what the harness really holds; every
log-likelihood task of the suite has its longest request stated."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from custom_metrics.common import logits_memory
from custom_metrics.leaderboard import registry
from custom_metrics.lm_eval_cli import check_run_args, register_models
from tests.helpers import TASKS_DIR

GB = 10**9


def _warned(
    model: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str = "hf",
    batch: str = "8",
    device: str = "cpu",
    tasks: str = "rule_cot_faithfulness",
) -> list[str]:
    """What ``explain-eval lm-eval``'s checks print of ``tasks`` on ``model``."""
    register_models()
    run = ["--model", kind, "--model_args", f"pretrained={model},dtype=float32", "--device", device]
    check_run_args([*run, "--batch_size", batch, "--tasks", tasks, "--include_path", str(TASKS_DIR)])
    return capsys.readouterr().err.splitlines()


def test_a_batch_of_long_contexts_that_would_not_fit_is_warned_of_naming_hf_prefix(
    embedded_model: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """rule_cot_faithfulness at batch 8 on gemma-3-270m peaked at 20.3 GB on a 24 GB machine, unannounced."""
    monkeypatch.setattr(logits_memory, "free_memory", lambda: 16 * GB)
    (tokens,) = registry.request_tokens(["rule_cot_faithfulness"]).values()
    vocab = json.loads((embedded_model / "config.json").read_text())["vocab_size"]
    per_request = 2 * tokens * vocab * 4
    (line,) = _warned(embedded_model, capsys)
    assert line.startswith("explain-eval lm-eval: warning: --model hf --batch_size 8: a batch of rule_cot_faithfulness")
    assert f"about {8 * per_request / GB:.1f} GB, more than the 16.0 GB free here" in line
    assert "Pass --model hf-prefix (the same arguments" in line
    assert f"or --batch_size {16 * GB // (2 * per_request)} " in line
    # what fits, what never projects the context onto the vocabulary, and a GPU's auto batch: no word
    assert _warned(embedded_model, capsys, batch="1") == []
    assert _warned(embedded_model, capsys, kind="hf-prefix") == []
    assert _warned(embedded_model, capsys, device="cuda:0") == []


def test_a_group_counts_its_tasks_and_a_generation_task_none(
    embedded_model: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--tasks geese`` is its log-likelihood tasks (GEESE states one bound, 405 tokens, for those
    with a premise); a five-shot chain of thought generates, and holds its last position's logits only."""
    monkeypatch.setattr(logits_memory, "free_memory", lambda: 2 * GB)
    (line,) = _warned(embedded_model, capsys, tasks="geese")
    assert "--batch_size 8: a batch of geese_" in line and "longest requests (about 405 tokens)" in line
    assert _warned(embedded_model, capsys, tasks="rule_5shot_cot_split1") == []
    assert registry.request_tokens(["rule_5shot_cot_split1", "rule_zeroshot_cot_reasoning"]) == {}


@pytest.mark.slow
def test_the_estimate_is_a_floor_of_what_the_harness_holds(embedded_model: Path) -> None:
    """The harness' own ``hf`` on a batch of two 300-token requests, in a fresh process: its peak
    memory grows by more than the two copies of the logits the warning counts (gemma-3: ~2.5)."""
    script = (
        "import re\n"
        "from custom_metrics.common.harness_api import new_instance\n"
        "from lm_eval.models.huggingface import HFLM\n"
        "def kb(key):\n"
        "    return int(re.search(rf'^{key}:\\s+(\\d+) kB', open('/proc/self/status').read(), re.M).group(1))\n"
        f"lm = HFLM(pretrained={str(embedded_model)!r}, dtype='float32', device='cpu', batch_size=2)\n"
        "text = lambda i: lm.tok_decode(lm.tok_encode(' '.join(f'word{i}{j}' for j in range(400)))[:299])\n"
        "requests = [new_instance('loglikelihood', (text(i), ' yes'), i) for i in range(2)]\n"
        # the peak so far (the model's load can exceed what scoring adds) reset: Linux's clear_refs 5
        "open('/proc/self/clear_refs', 'w').write('5')\n"
        "before = kb('VmRSS')\n"
        "lm.loglikelihood(requests, disable_tqdm=True)\n"
        "print((kb('VmHWM') - before) * 1024)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, check=True)
    grown = int(done.stdout.split()[-1])
    config = json.loads((embedded_model / "config.json").read_text())
    vocab, width = logits_memory.logits_shape(config, "float32")
    assert grown >= 2 * 300 * vocab * width * logits_memory.COPIES


def test_every_log_likelihood_task_states_its_longest_request(suite_tasks: dict) -> None:
    """A task added without its bound would never be checked (``RunSteps.request_tokens``)."""
    loglik = [
        name for name, task in suite_tasks.items() if task.config.output_type in ("multiple_choice", "loglikelihood")
    ]
    assert len(loglik) > 50
    stated = registry.request_tokens(loglik)
    assert [name for name in loglik if name not in stated] == []
    assert all(0 < tokens <= 4000 for tokens in stated.values()), stated
