"""REG judging (section 4.3): the judge J decides (i) J(p, h): only items called a
contradiction form the evaluated set N; (ii) J(p;e, h): e is *effective* when p and e
together entail h; (iii) J(p, e): e is *coherent* when it does not contradict p.

The judge runs in ``REGJudgeFilter``, which the harness calls once with every response
and doc of the task, so all pairs are judged in batches (and cached, see
``custom_metrics.judge``). Its output per doc is a record (explanation, verdicts,
lengths, flags) that the harness logs as ``filtered_resps``; ``process_results`` and the
section 6 analysis read it from there.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from lm_eval.api.filter import Filter

from custom_metrics.judge.build import build_judge
from custom_metrics.judge.types import NLIJudge, Verdict
from custom_metrics.reg.outputs import Output, combine, split_output


def _verdict_record(verdict: Verdict | None) -> dict[str, Any] | None:
    if verdict is None:
        return None
    return {"label": verdict.label, "probs": verdict.probs, "method": verdict.method}


def judge_outputs(judge: NLIJudge, docs: Sequence[dict[str, Any]], outputs: Sequence[Output]) -> list[dict[str, Any]]:
    """Run the three judgments over a whole task in two batched judge calls.

    Call 1 judges every (p, h); call 2 judges (p;e, h) and (p, e) only for items in N
    with a usable explanation, since only those are scored.
    """
    initial = judge.judge([(doc["premise"], doc["hypothesis"]) for doc in docs])
    scored = [
        i for i, (verdict, out) in enumerate(zip(initial, outputs)) if verdict.label == "contradiction" and not out.flag
    ]
    pairs = []
    for i in scored:
        pairs += [
            (combine(docs[i]["premise"], outputs[i].explanation), docs[i]["hypothesis"]),
            (docs[i]["premise"], outputs[i].explanation),
        ]
    second = judge.judge(pairs)
    effect: dict[int, Verdict] = {i: second[2 * k] for k, i in enumerate(scored)}
    cohere: dict[int, Verdict] = {i: second[2 * k + 1] for k, i in enumerate(scored)}
    records = []
    for i, (verdict, out) in enumerate(zip(initial, outputs)):
        records.append(
            {
                "explanation": out.explanation,
                "flag": out.flag,
                "judge": judge.name,
                "initial": _verdict_record(verdict),
                "effectiveness": _verdict_record(effect.get(i)),
                "coherence": _verdict_record(cohere.get(i)),
                "output_chars": len(out.raw),
                "output_words": len(out.raw.split()),
                "thinking_chars": len(out.thinking),
                "thinking_words": len(out.thinking.split()),
            }
        )
    return records


def run_judge(docs: Sequence[dict[str, Any]]) -> NLIJudge:
    """The judge named by the docs' ``judge``/``judge_cache`` columns (``reg.data.with_judge``)."""
    settings = {(doc["judge"], doc["judge_cache"]) for doc in docs}
    if len(settings) != 1:
        raise ValueError(f"reg_chaos docs name {len(settings)} judge settings; expected one: {sorted(settings)}")
    spec, cache = settings.pop()
    return build_judge(spec, cache_dir=cache)


class REGJudgeFilter(Filter):
    """Judge all of a task's explanations at once.

    Each filtered response is the doc's record as a JSON string: the harness logs
    filtered responses with ``str()``, and JSON keeps the samples file machine-readable
    for ``reg_analysis``.
    """

    def apply(self, resps: Iterable[list[str]], docs: list[dict]) -> list[str]:
        outputs = [split_output(responses[0] if responses else "") for responses in resps]
        return [json.dumps(record) for record in judge_outputs(run_judge(docs), docs, outputs)]


def read_record(filtered: str | dict[str, Any]) -> dict[str, Any]:
    return filtered if isinstance(filtered, dict) else json.loads(filtered)
