"""Stand-ins for the samples file of an in-process REG thinking run (``reg_chaos_thinking`` with
``--log_samples``), shaped as the harness logs one: the doc with its judge and generation
columns, the logged prompt (the chat template's assistant turn opened with ``<think>``), the
raw output in ``resps`` and the judged record in ``filtered_resps``. The embedded models do not
think, so the tests that read such a run write one with a hand-written closed trace."""

from __future__ import annotations

import json
from typing import Any

from custom_metrics.reg.outputs import split_output
from tests.reg.thinking_model import THINKING_PREFILL

PROMPT = "<bos><start_of_turn>user\nReconcile the premise and the hypothesis.<end_of_turn>\n" + THINKING_PREFILL
THINKING_KWARGS = {"until": ["<end_of_turn>"], "do_sample": True, "temperature": 1.0, "max_gen_toks": 32768}


def verdict(label: str) -> dict[str, Any]:
    probs = {name: 0.8 if name == label else 0.1 for name in ("entailment", "neutral", "contradiction")}
    return {"label": label, "probs": probs, "method": "scores"}


def judged_record(
    raw: str, judge: str, initial: str = "contradiction", success: bool = True, thinking: bool = True
) -> dict[str, Any]:
    """The record REG's filter logs for ``raw``: the output split in its mode (thinking unless
    told), and the verdicts (in N unless ``initial`` says otherwise; successful or not) where it
    was judged."""
    out = split_output(raw, thinking_mode=thinking)
    judged = initial == "contradiction" and not out.flag
    return {
        "explanation": out.explanation,
        "flag": out.flag,
        "judge": judge,
        "initial": verdict(initial),
        "effectiveness": verdict("entailment" if success else "neutral") if judged else None,
        "coherence": verdict("neutral") if judged else None,
        **out.length_fields(),
        "judge_check": {"items": 5, "acc": 0.4, "answers": {"entailment": 5}, "degenerate": True},
    }


def thinking_sample(
    doc_id: int, item: dict[str, Any], raw: str, judge: str, prompt: str = PROMPT, **verdicts: Any
) -> dict[str, Any]:
    """One logged line of the run for a ChaosNLI item (``uid``, ``premise``, ``hypothesis``)."""
    doc = {
        **item,
        "judge": judge,
        "judge_spec": judge,
        "judge_display": judge,
        "judge_cache": "/nowhere/nli-verdicts",
        "mode": "thinking",
        "backend": "in-process",
        "length_tokenizer": "",
        "sampling_seed": 1234,
        "judge_checked": True,
    }
    return {
        "doc_id": doc_id,
        "doc": doc,
        "target": "",
        "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": THINKING_KWARGS}},
        "resps": [[raw]],
        "filtered_resps": [json.dumps(judged_record(raw, judge, **verdicts))],
        "filter": "judged",
    }
