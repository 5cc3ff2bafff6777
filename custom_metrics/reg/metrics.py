"""REG metrics (section 4.3): coherence, effectiveness and success over N, the items the
judge called a contradiction; the share of unparsed judge verdicts; the judge check.

Unparsed verdicts are never read as a label: an unparsed J(p, h) puts the item outside N; an
item in N with an unparsed J(p;e, h) or J(p, e) stays in N (``n``) but is left out of coherence,
effectiveness and success alike (one scored set). ``unparsed`` reports their share.

What the generator produced is reported over all docs (``cut_off``, ``no_explanation``, mean
lengths in the generator's tokens; Table 3's successful/unsuccessful means are over N); a row
whose API usage cannot be (``generation.usage_problem``) is left out of the length means.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from custom_metrics.common.classification import NO_PREDICTION, choice_accuracy, predicted_index
from custom_metrics.judge.answer import parse_label
from custom_metrics.judge.human_agreement import item_agreement
from custom_metrics.judge.types import NLI_LABELS, UNPARSED, verdict_from_scores
from custom_metrics.reg.judging import read_record
from custom_metrics.reg.outputs import FLAGS
from custom_metrics.reg.prompts import judge_target

Scored = tuple[bool, float | None]  # (item in N, value when in N and scored)


def record_scores(record: dict[str, Any]) -> dict[str, float | None]:
    """Per-item verdict logic of section 4.3; None outside N or when a verdict is unparsed. An item
    in N with no explanation fails all three (the judge decides N; no explanation reconciles nothing)."""
    in_n = record["initial"]["label"] == "contradiction"
    if not in_n:
        return {"coherence": None, "effectiveness": None, "success": None, "malformed": None}
    if record["flag"]:
        return {"coherence": 0.0, "effectiveness": 0.0, "success": 0.0, "malformed": 1.0}
    if UNPARSED in (record["coherence"]["label"], record["effectiveness"]["label"]):
        return {"coherence": None, "effectiveness": None, "success": None, "malformed": 0.0}
    coherent = record["coherence"]["label"] != "contradiction"
    effective = record["effectiveness"]["label"] == "entailment"
    return {
        "coherence": float(coherent),
        "effectiveness": float(effective),
        "success": float(coherent and effective),
        "malformed": 0.0,
    }


def unparsed_count(record: dict[str, Any]) -> tuple[int, int]:
    verdicts = [record[stage] for stage in ("initial", "effectiveness", "coherence") if record.get(stage)]
    return sum(verdict["label"] == UNPARSED for verdict in verdicts), len(verdicts)


def process_results(doc: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    record = read_record(results[0])
    if record.get("judge_error"):  # the judge failed after generation: NaN until ``reg-rejudge``
        metrics: dict[str, Any] = dict.fromkeys(("coherence", "effectiveness", "success", "malformed"), (False, None))
        metrics["n"] = math.nan
    else:
        in_n = record["initial"]["label"] == "contradiction"
        metrics = {name: (in_n, value) for name, value in record_scores(record).items()}
        metrics["n"] = float(in_n)
    metrics |= {flag: float(record["flag"] == flag) for flag in FLAGS}  # cut_off, no_explanation
    metrics["output_tokens"] = _length(record.get("output_tokens"))
    for name in ("output_tokens_successful", "output_tokens_unsuccessful"):  # Table 3, over the scored items in N
        metrics[name] = (metrics["success"][1], metrics["output_tokens"])
    metrics["thinking_tokens"] = _length(record.get("thinking_tokens"))
    if record.get("usage_problem"):  # counts an API reported that cannot be: out of the means, not NaN in them
        del metrics["output_tokens"], metrics["thinking_tokens"]
    metrics["thinking_words"] = float(record["thinking_words"])
    metrics["unparsed"] = unparsed_count(record)
    check = record.get("judge_check") or {}
    metrics["judge_check_acc"] = float(check.get("acc", math.nan))
    metrics["judge_degenerate"] = float(check["degenerate"]) if "degenerate" in check else math.nan
    return metrics


def _length(value: Any) -> float:
    """A token count, NaN where the record has none (outputs split outside a harness run)."""
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else math.nan


def _mean_tokens(items: Sequence[tuple[float | None, float]], successful: bool) -> float:
    values = [t for success, t in items if success is not None and bool(success) == successful and math.isfinite(t)]
    return sum(values) / len(values) if values else float("nan")


def mean_tokens_successful(items: Sequence[tuple[float | None, float]]) -> float:
    """Table 3: mean output tokens (trace included) of the successful explanations in N."""
    return _mean_tokens(items, True)


def mean_tokens_unsuccessful(items: Sequence[tuple[float | None, float]]) -> float:
    """Table 3: mean output tokens of the unsuccessful ones (an output without an explanation
    fails, as in ``success``); NaN where no count was recorded."""
    return _mean_tokens(items, False)


def mean_over_n(items: Sequence[Scored]) -> float:
    """Mean over the scored items in N (NaN when there are none, e.g. the judge called no item a contradiction)."""
    return mean_comparable([value for in_n, value in items if in_n])


def size_of_n(items: Sequence[float]) -> int | float:
    """|N|: how many items the judge called a contradiction (the paper's 195 for Gemma-4-31B-it);
    NaN when the judge failed on some item."""
    total = sum(items)
    return int(total) if math.isfinite(total) else math.nan


def unparsed_share(items: Sequence[tuple[int, int]]) -> float:
    total = sum(count for _, count in items)
    return sum(unparsed for unparsed, _ in items) / total if total else float("nan")


def judge_select_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """Table 1 protocol: the generated answer parsed (``answer.parse_label``); unparsed is wrong and counted."""
    label = parse_label(results[0] if results else "")
    return {"answer_acc": float(label == doc["majority_label"]), "unparsed": float(label is None)}


def judge_select_loglik_results(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, float]:
    """The log-likelihood judge's accuracy: the harness' own, but a NaN log-likelihood is no choice."""
    return choice_accuracy(results, judge_target(doc), f"reg_judge_select_loglik item {doc.get('uid')}")


def judge_humans_results(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, Any]:
    """The log-likelihood judge against ChaosNLI's 100 human labels: the softmax over its label
    words is its distribution. A doc whose log-likelihoods are not comparable (NaN, +inf) has no
    distribution: it is counted in ``not_comparable`` and left out of JSD and KL (None), and its
    accuracy is 0, as in ``choice_accuracy``."""
    index = predicted_index(results, f"reg_judge_humans item {doc.get('uid')}")
    if index == NO_PREDICTION:
        return {"jsd": None, "kl": None, "acc": 0.0, "not_comparable": 1.0}
    probs = verdict_from_scores([loglik for loglik, _ in results]).probs
    item = item_agreement(doc["label_count"], doc["majority_label"], probs, NLI_LABELS[index])
    return {"jsd": item.jsd, "kl": item.kl, "acc": float(item.correct), "not_comparable": 0.0}


def mean_comparable(items: Sequence[float | None]) -> float:
    values = [value for value in items if value is not None]
    return sum(values) / len(values) if values else float("nan")
