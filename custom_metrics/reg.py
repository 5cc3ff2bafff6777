"""REG (Chan, Zhao & Gaizauskas 2026): reconciliatory explanations of ChaosNLI contradictions.

A model writes an explanation e for a premise p and hypothesis h that the judge J calls
a contradiction. The judge then decides (i) J(p, h): only items called a contradiction
form the evaluated set N; (ii) J(p;e, h): e is *effective* when p and e together entail
h; (iii) J(p, e): e is *coherent* when it does not contradict p. Success = both.

The judge runs in ``REGJudgeFilter``, which the harness calls once with every response
of the task, so all pairs are judged in batches (and cached, see ``nli_judge``). Its
output per doc is a record (explanation, verdicts, lengths, flags) that the harness logs
as ``filtered_resps``; ``process_results`` and the section 6 analysis read it from there.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from lm_eval.api.filter import Filter

from custom_metrics.data import DataError, Source, load_rows
from custom_metrics.nli_judge import LABEL_WORDS, NLI_LABELS, NLIJudge, Verdict, build_judge, judge_spec_from_env, nli_prompt

SOURCE = Source(
    name="ChaosNLI-MNLI",
    mirror_path="chaosnli/chaosNLI_mnli_m.jsonl",
    url=(
        "https://raw.githubusercontent.com/jsbaan/calibration-on-disagreement-data/"
        "990e81cacadac5d0268160d1c02bad19d4ddb9a3/data/chaosNLI_v1.0/chaosNLI_mnli_m.jsonl"
    ),
)
FIELDS = ("uid", "majority_label", "label_count", "example")
SHORT_LABELS = {"e": "entailment", "n": "neutral", "c": "contradiction"}  # ChaosNLI's codes
AGREEMENT_THRESHOLD = 0.8  # Table 1: judges are selected on items with >= 80% agreement

# Appendix C.1, printed flattened in the paper; we put the two fields on their own lines
# and use ASCII quotes (task README).
GENERATION_PROMPT = (
    "Given a premise and a hypothesis, your task is to generate a plausible explanation that "
    "reconciles the apparent contradiction between the premise and the hypothesis. "
    "Specifically, when the explanation is combined with the premise, the hypothesis should "
    "follow from this combined context. The explanation should be succinct and no more than a "
    "single sentence long. It should not trivially repeat the premise or the hypothesis and "
    "must not itself contradict the premise. The explanation should also read naturally in the "
    "context as a continuation of the premise, without explicitly using the term 'premise' or "
    "'hypothesis' to refer to the premise or hypothesis. Your final output should be a single "
    "sentence without any preamble.\n"
    "\n"
    "Premise: {premise}\n"
    "Hypothesis: {hypothesis}"
)


# --- data -----------------------------------------------------------------------------


def _doc(row: dict[str, Any], where: str) -> dict[str, Any]:
    """Flatten one ChaosNLI row into a doc, checking the fields REG relies on."""
    example = row["example"]
    if not isinstance(example, dict) or not all(isinstance(example.get(k), str) for k in ("premise", "hypothesis")):
        raise DataError(f"{where}: field 'example' must hold string 'premise' and 'hypothesis'.")
    if row["majority_label"] not in SHORT_LABELS:
        raise DataError(f"{where}: field 'majority_label' is {row['majority_label']!r}, expected one of e, n, c.")
    counts = row["label_count"]
    if not (isinstance(counts, list) and len(counts) == 3 and all(isinstance(c, int) and c >= 0 for c in counts) and sum(counts)):
        raise DataError(f"{where}: field 'label_count' must be 3 non-negative counts [E, N, C], got {counts!r}.")
    total = sum(counts)
    majority = SHORT_LABELS[row["majority_label"]]
    return {
        "uid": str(row["uid"]),
        "premise": example["premise"],
        "hypothesis": example["hypothesis"],
        "majority_label": majority,
        "label_count": counts,
        "w_ent": counts[0] / total,
        "w_neu": counts[1] / total,
        "w_con": counts[2] / total,
        "agreement": counts[NLI_LABELS.index(majority)] / total,
    }


def load_items() -> list[dict[str, Any]]:
    """All ChaosNLI-MNLI items (1,599 in the release) as flat docs."""
    rows = load_rows(SOURCE, required=FIELDS)
    return [_doc(row, f"{SOURCE.describe()} line {index}") for index, row in enumerate(rows, start=1)]


def reg_docs(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """ChaosNLI-MNLI-C: the shipped majority label is contradiction (275 items).

    The shipped field, not a recomputed argmax: 14 items tie for the top count, and the
    argmax variants give 269-279 instead of the paper's 275.
    """
    return [doc for doc in items if doc["majority_label"] == "contradiction"]


def judge_select_docs(items: Sequence[dict[str, Any]], threshold: float = AGREEMENT_THRESHOLD) -> list[dict[str, Any]]:
    """Items whose majority label has at least ``threshold`` agreement (289 at 0.8)."""
    return [doc for doc in items if doc["agreement"] >= threshold - 1e-9]


def generation_prompt(doc: dict[str, Any]) -> str:
    return GENERATION_PROMPT.format(premise=doc["premise"].strip(), hypothesis=doc["hypothesis"].strip())


def judge_prompt(doc: dict[str, Any]) -> str:
    return nli_prompt(doc["premise"], doc["hypothesis"])


def judge_choices(doc: dict[str, Any]) -> list[str]:
    return list(LABEL_WORDS)


def judge_target(doc: dict[str, Any]) -> int:
    return NLI_LABELS.index(doc["majority_label"])


# --- model output -----------------------------------------------------------------------


@dataclass(frozen=True)
class Output:
    """A generation split into its thinking trace and its answer (the explanation)."""

    raw: str
    explanation: str
    thinking: str
    flag: str  # "" (usable), "empty" or "unclosed_thinking" (the trace never ended)


_THINK_BLOCK = re.compile(r"<think>(.*?)</think>", flags=re.DOTALL)


def split_output(raw: str) -> Output:
    """Strip thinking traces, as produced in thinking mode, before the explanation is judged.

    Handles ``<think>...</think>`` blocks, a trace whose opening tag sat in the prompt
    (Qwen-style templates: only ``</think>`` appears) and a trace cut off by the token
    limit (``<think>`` never closed: no explanation, flagged).
    """
    raw = raw if isinstance(raw, str) else ""
    thinking = [match.group(1) for match in _THINK_BLOCK.finditer(raw)]
    rest = _THINK_BLOCK.sub("", raw)
    if "</think>" in rest:  # opening tag was part of the prompt
        before, _, rest = rest.rpartition("</think>")
        thinking.insert(0, before)
    flag = ""
    if "<think>" in rest:
        rest, _, unclosed = rest.partition("<think>")
        thinking.append(unclosed)
        flag = "unclosed_thinking"
    explanation = " ".join(rest.split())
    if not explanation and not flag:
        flag = "empty"
    return Output(raw=raw, explanation=explanation if not flag else "", thinking="\n".join(t.strip() for t in thinking), flag=flag)


def combine(premise: str, explanation: str) -> str:
    """p;e of the paper: the explanation appended to the premise as its continuation."""
    return f"{premise.rstrip()} {explanation.strip()}"


# --- judging ----------------------------------------------------------------------------

_settings: dict[str, str | None] = {"judge": None, "judge_cache": None}
_judges: dict[tuple[str | None, str | None], NLIJudge] = {}


def configure(judge: str | None = None, judge_cache: str | None = None) -> None:
    """Remember the run's judge (from --metadata; filters never see metadata)."""
    _settings.update(judge=judge or None, judge_cache=judge_cache or None)


def current_judge() -> NLIJudge:
    """The judge for this run: --metadata judge, else $EXPLAIN_EVAL_JUDGE, else the embedded model."""
    key = (judge_spec_from_env(_settings["judge"]), _settings["judge_cache"])
    if key not in _judges:
        _judges[key] = build_judge(*key)
    return _judges[key]


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
    scored = [i for i, (verdict, out) in enumerate(zip(initial, outputs)) if verdict.label == "contradiction" and not out.flag]
    pairs = []
    for i in scored:
        pairs += [(combine(docs[i]["premise"], outputs[i].explanation), docs[i]["hypothesis"]), (docs[i]["premise"], outputs[i].explanation)]
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


class REGJudgeFilter(Filter):
    """Judge all of a task's explanations at once.

    Each filtered response is the doc's record as a JSON string: the harness logs
    filtered responses with ``str()``, and JSON keeps the samples file machine-readable
    for ``reg_analysis``.
    """

    def apply(self, resps: Iterable[list[str]], docs: list[dict]) -> list[str]:
        outputs = [split_output(responses[0] if responses else "") for responses in resps]
        return [json.dumps(record) for record in judge_outputs(current_judge(), docs, outputs)]


def read_record(filtered: str | dict[str, Any]) -> dict[str, Any]:
    return filtered if isinstance(filtered, dict) else json.loads(filtered)


# --- metrics ----------------------------------------------------------------------------

Scored = tuple[bool, float | None]  # (item in N, value when in N)


def record_scores(record: dict[str, Any]) -> dict[str, float | None]:
    """Per-item verdict logic of section 4.3; None outside N.

    An item in N whose output holds no explanation (empty, or thinking never closed)
    fails all three criteria rather than leaving N: the judge, not the generator,
    decides N, and a missing explanation reconciles nothing.
    """
    in_n = record["initial"]["label"] == "contradiction"
    if not in_n:
        return {"coherence": None, "effectiveness": None, "success": None, "malformed": None}
    if record["flag"]:
        return {"coherence": 0.0, "effectiveness": 0.0, "success": 0.0, "malformed": 1.0}
    coherent = record["coherence"]["label"] != "contradiction"
    effective = record["effectiveness"]["label"] == "entailment"
    return {
        "coherence": float(coherent),
        "effectiveness": float(effective),
        "success": float(coherent and effective),
        "malformed": 0.0,
    }


def process_results(doc: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    record = read_record(results[0])
    scores = record_scores(record)
    in_n = scores["success"] is not None
    metrics: dict[str, Any] = {name: (in_n, value) for name, value in scores.items()}
    metrics["n"] = float(in_n)
    metrics["thinking_words"] = float(record["thinking_words"])
    return metrics


def mean_over_n(items: Sequence[Scored]) -> float:
    """Mean over the items in N (NaN when the judge called no item a contradiction)."""
    values = [value for in_n, value in items if in_n]
    return sum(values) / len(values) if values else float("nan")


def size_of_n(items: Sequence[float]) -> int:
    """|N|: how many items the judge called a contradiction (the paper's 195 for Gemma-4-31B-it)."""
    return int(sum(items))
