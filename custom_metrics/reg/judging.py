"""REG judging (section 4.3): the judge J decides (i) J(p, h): only items called a
contradiction form the evaluated set N; (ii) J(p;e, h): e is *effective* when p and e
together entail h; (iii) J(p, e): e is *coherent* when it does not contradict p.

The judge runs in ``REGJudgeFilter``, which the harness calls once with every response
and doc of the task, so all pairs are judged in batches (and cached, see
``custom_metrics.judge``). Before judging, the judge is checked on a handful of gold
items (``check_judge``): a degenerate judge (one label for nearly everything) is reported
loudly instead of ending in an empty N and NaN. Its output per doc is a record
(explanation, verdicts, lengths, flags, the check) that the harness logs as
``filtered_resps``; ``process_results`` and the section 6 analysis read it from there.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from lm_eval.api.filter import Filter

from custom_metrics.judge.build import build_judge
from custom_metrics.judge.types import UNPARSED, NLIJudge, Verdict
from custom_metrics.reg.data import judge_check_docs, load_items
from custom_metrics.reg.generation import split_outputs
from custom_metrics.reg.outputs import Output, combine

log = logging.getLogger(__name__)

# The check calls a judge degenerate when one outcome (a label, or "unparsed") covers at
# least this share of the gold items, which are balanced over the three labels, or when it
# is no better than chance on them (the embedded base model in the generated mode: a
# quarter right, half unparsed).
DEGENERATE_SHARE = 0.8
CHANCE = 1 / 3


def _verdict_record(verdict: Verdict | None) -> dict[str, Any] | None:
    if verdict is None:
        return None
    record = {"label": verdict.label, "probs": verdict.probs, "method": verdict.method}
    if verdict.answer:
        record["answer"] = verdict.answer
    return record


def check_judge(judge: NLIJudge, gold: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The judge on gold (premise, hypothesis, majority label) items: accuracy, answers, degeneracy."""
    verdicts = judge.judge([(doc["premise"], doc["hypothesis"]) for doc in gold]) if gold else []
    outcomes = Counter(verdict.label for verdict in verdicts)
    top, top_count = outcomes.most_common(1)[0] if outcomes else ("", 0)
    correct = sum(verdict.label == doc["majority_label"] for verdict, doc in zip(verdicts, gold))
    check = {
        "items": len(gold),
        "acc": correct / len(gold) if gold else float("nan"),
        "answers": dict(outcomes),
        "degenerate": bool(gold) and (top_count / len(gold) >= DEGENERATE_SHARE or correct / len(gold) <= CHANCE),
    }
    if check["degenerate"]:
        log.warning(
            "\n%s\nREG JUDGE CHECK FAILED: judge %s answered %r for %d of %d gold items (accuracy %.2f, chance "
            "1/3): it is degenerate. reg_chaos's N (items it calls a contradiction) will be nearly empty or "
            "arbitrary, and coherence/effectiveness/success NaN or meaningless. Choose a stronger judge "
            "(--metadata judge=... or EXPLAIN_EVAL_JUDGE; measure candidates with reg_judge_select).\n%s",
            "!" * 100,
            judge.name,
            top,
            top_count,
            len(gold),
            check["acc"],
            "!" * 100,
        )
    else:
        log.info(
            "REG judge check: %s accuracy %.2f on %d gold items, answers %s",
            judge.name,
            check["acc"],
            len(gold),
            dict(outcomes),
        )
    return check


def judge_outputs(
    judge: NLIJudge,
    docs: Sequence[dict[str, Any]],
    outputs: Sequence[Output],
    check: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Run the three judgments over a whole task in two batched judge calls.

    Call 1 judges every (p, h); call 2 judges (p;e, h) and (p, e) only for items in N
    with a usable explanation, since only those are scored. An unparsed (p, h) verdict
    is no contradiction call, so its item is not in N.
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
    unparsed = sum(verdict.label == UNPARSED for verdict in [*initial, *second])
    if unparsed:
        log.warning(
            "judge %s: %d of %d verdicts named no single label (unparsed); reg_chaos reports their share as "
            "'unparsed' and leaves those items out of N or out of the scored items (task README)",
            judge.name,
            unparsed,
            len(initial) + len(second),
        )
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
                **out.length_fields(),
                "judge_check": check,
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
    """Check the judge, then judge all of a task's explanations at once.

    Each filtered response is the doc's record as a JSON string: the harness logs
    filtered responses with ``str()``, and JSON keeps the samples file machine-readable
    for ``reg_analysis``.
    """

    def apply(self, resps: Iterable[list[str]], docs: list[dict]) -> list[str]:
        outputs = split_outputs(resps, docs)
        judge = run_judge(docs)
        check = check_judge(judge, judge_check_docs(load_items()))
        return [json.dumps(record) for record in judge_outputs(judge, docs, outputs, check)]


def read_record(filtered: str | dict[str, Any]) -> dict[str, Any]:
    return filtered if isinstance(filtered, dict) else json.loads(filtered)
