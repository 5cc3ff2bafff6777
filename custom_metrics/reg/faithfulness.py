"""REG's chain-of-thought faithfulness task (``reg_cot_faithfulness``): a logged in-process REG
thinking run (``reg_chaos_thinking`` with ``--log_samples``) asked again for its explanations
with each thinking trace cut short or replaced by filler (``custom_metrics.common.faithfulness``,
Lanham et al. 2023), each new explanation judged as ``reg_chaos`` judges (``REGJudgeFilter``).

REG's answer after the trace is an explanation, so the answer compared is the judge's verdict on
it (``success``, section 4.3), against the one the run logged. The context is the run's logged
prompt, the cut trace, the model's closing marker and what followed it up to the explanation,
so the model writes only the explanation. A generation whose original cannot be compared gives
no doc: their share is ``original_unusable``.
"""

from __future__ import annotations

import functools
import logging
from collections import Counter
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from custom_metrics.common import fields
from custom_metrics.common.errors import DataError
from custom_metrics.common.faithfulness import (  # noqa: F401 (re-exported for utils.py)
    DOCS_PER_GENERATION,
    Answer,
    cut_docs,
    early_aoc,
    faithfulness_context,
    filler_same,
    same_at_0,
    same_at_25,
    same_at_50,
    same_at_75,
    same_at_100,
)
from custom_metrics.common.lineage import with_lineage
from custom_metrics.common.metadata import check_metadata_keys
from custom_metrics.common.results import source_lineage
from custom_metrics.common.samples import MAX_PROMPT_CHARS, logged_prompt, read_samples
from custom_metrics.common.sources import to_dataset
from custom_metrics.common.task_loading import refuse_cut_groups, task_loader
from custom_metrics.judge.traces import GEMMA_CHANNEL_NAME, GEMMA_OPEN, MARKERS
from custom_metrics.reg import generation
from custom_metrics.reg.judging import DEFAULT_JUDGE, read_record
from custom_metrics.reg.loaders import with_checked_judge
from custom_metrics.reg.metrics import record_scores

if TYPE_CHECKING:
    import datasets

log = logging.getLogger(__name__)

TASK = "reg_cot_faithfulness"
RUN_TASK = generation.TASKS[(generation.THINKING.name, generation.IN_PROCESS)]  # reg_chaos_thinking
EXPLANATIONS_EXAMPLE = f'--metadata \'{{"explanations": "OUT/<model>/samples_{RUN_TASK}_<ts>.jsonl"}}\''
# Why a logged generation has nothing to compare (``original_verdict``).
JUDGE_FAILED, OUTSIDE_N, UNPARSED_VERDICT = "judge_error", "outside_n", "unparsed"
NO_CLOSE, EMPTY_TRACE = "no_closing_marker", "empty_trace"
# The longest logged output read: a 32,768-token thinking budget at up to 30 characters a token.
MAX_OUTPUT_CHARS = 1_000_000


@dataclass(frozen=True)
class ClosedTrace:
    """A thinking-mode output cut at its last closing marker: its own opening marker (if any), the
    trace, the marker, and the whitespace before the explanation."""

    opening: str
    trace: str
    marker: str
    separator: str

    def context(self, prompt: str, trace: str) -> str:
        """The run's prompt and this output with ``trace`` in place of its own, up to the explanation;
        the whitespace around the trace is the model's own."""
        lead = self.trace[: len(self.trace) - len(self.trace.lstrip())]
        tail = self.trace[len(self.trace.rstrip()) :]
        body = trace.strip()
        return f"{prompt}{self.opening}{lead if body else ''}{body}{tail}{self.marker}{self.separator}"


def closed_trace(raw: str) -> ClosedTrace | None:
    """The output's trace up to its last closing marker (``judge.traces.MARKERS``; None: there is none)."""
    found = [(raw.rfind(close), open_tag, close) for open_tag, close in MARKERS if close in raw]
    if not found:
        return None
    at, open_tag, close = max(found)
    before = raw[:at]
    opened = before.find(open_tag)
    cut = opened + len(open_tag) if opened >= 0 else 0
    if open_tag == GEMMA_OPEN and opened >= 0 and before[cut:].startswith(GEMMA_CHANNEL_NAME):
        cut += len(GEMMA_CHANNEL_NAME)  # Gemma 4's channel name opens the trace, it is no part of it
    after = raw[at + len(close) :]
    return ClosedTrace(before[:cut], before[cut:], close, after[: len(after) - len(after.lstrip())])


def _check(sample: dict[str, Any]) -> None:
    """What the task reads of a logged sample, each missing or malformed piece named with its fix."""
    doc = sample["doc"]
    for key in ("uid", "premise", "hypothesis"):
        if not isinstance(doc.get(key), str) or not doc[key].strip():
            raise ValueError(f"field 'doc.{key}' is {doc.get(key)!r}, not a string; is this a {RUN_TASK} run?")
        fields.bounded_text(doc[key], f"field 'doc.{key}'", MAX_PROMPT_CHARS)
    for key in ("judge", "judge_spec"):
        if doc.get(key) is not None:
            fields.text(doc[key], f"field 'doc.{key}'")
    if doc.get("mode") != generation.THINKING.name:
        raise ValueError(
            f"field 'doc.mode' is {doc.get('mode')!r}, not 'thinking': pass the samples of a {RUN_TASK} run "
            "(a non-thinking run has no trace to cut)"
        )
    prompt = logged_prompt(sample)
    if doc.get("backend") == generation.SERVED or not isinstance(prompt, str):
        raise ValueError(
            "field 'arguments.gen_args_0.arg_0' is a served run's chat messages (backend "
            f"{doc.get('backend')!r}), not a prompt to continue: only in-process runs ({RUN_TASK}) can be asked "
            "again after a cut trace (lm_eval_tasks/reg/DETAILS.md, 'Chain-of-thought faithfulness')"
        )
    fields.bounded_text(prompt, "field 'arguments.gen_args_0.arg_0' (the prompt)", MAX_PROMPT_CHARS)
    raw = sample.get("resps")
    if not (isinstance(raw, list) and raw and isinstance(raw[0], list) and raw[0] and isinstance(raw[0][0], str)):
        raise ValueError("field 'resps' holds no generated text")
    fields.bounded_text(raw[0][0], "field 'resps' (the generated text)", MAX_OUTPUT_CHARS)
    try:
        record = read_record(sample["filtered_resps"][0])
    except (TypeError, ValueError, KeyError, IndexError) as err:
        raise ValueError(f"field 'filtered_resps' holds no judged REG record ({err})") from err
    if not isinstance(record, dict) or "flag" not in record or not isinstance(record.get("initial"), dict):
        raise ValueError("field 'filtered_resps' holds no judged REG record (its 'flag' and 'initial' verdict)")


def original_verdict(record: dict[str, Any], raw: str) -> tuple[float | None, str]:
    """The logged generation's success (1.0 or 0.0) and "", or None and why it cannot be compared."""
    if record.get("judge_error"):
        return None, JUDGE_FAILED
    if record["flag"]:
        return None, record["flag"]
    trace = closed_trace(raw)
    if trace is None:  # no marker in what the harness kept: nothing to cut
        return None, NO_CLOSE
    if not trace.trace.strip():  # the model closed its trace at once: nothing to cut either
        return None, EMPTY_TRACE
    success = record_scores(record)["success"]
    if success is None:
        return None, OUTSIDE_N if record["initial"]["label"] != "contradiction" else UNPARSED_VERDICT
    return success, ""


def faithfulness_docs(explanations: str) -> list[dict[str, Any]]:
    """Every doc of the task from one thinking run's samples file: six per usable generation, each
    with the judge the run logged, the original verdict and the run's share of unusable generations."""
    try:
        samples = read_samples(explanations, check=_check, key=lambda sample: f"item {sample['doc']['uid']!r}")
    except DataError as err:
        raise DataError(
            f"{TASK}: {str(err).rstrip('.')}. Pass the samples_*.jsonl of an in-process REG thinking run, e.g. "
            f"{EXPLANATIONS_EXAMPLE}."
        ) from err
    usable: list[tuple[dict[str, Any], float, ClosedTrace]] = []
    reasons: Counter[str] = Counter()
    for sample in samples:
        raw = sample["resps"][0][0]
        success, reason = original_verdict(read_record(sample["filtered_resps"][0]), raw)
        if reason:
            reasons[reason] += 1
        else:
            usable.append((sample, success, closed_trace(raw)))
    if not usable:
        raise DataError(
            f"{TASK}: {explanations}: none of its {len(samples)} generations has a closed trace and a judged "
            f"explanation to compare ({dict(reasons)}); nothing to measure."
        )
    if reasons:
        log.warning(
            "%s: %d of %d generations of %s cannot be compared and are left out (%s); original_unusable reports "
            "their share.",
            TASK,
            sum(reasons.values()),
            len(samples),
            explanations,
            dict(reasons),
        )
    unusable = sum(reasons.values()) / len(samples)
    return [doc for sample, success, trace in usable for doc in _docs(sample, success, trace, unusable)]


def _docs(sample: dict[str, Any], success: float, trace: ClosedTrace, unusable: float) -> list[dict[str, Any]]:
    doc, prompt = sample["doc"], logged_prompt(sample)
    shared = {key: doc[key] for key in ("uid", "premise", "hypothesis")} | {
        "generation": doc["uid"],
        "logged_judge": doc.get("judge") or "",
        "logged_judge_spec": doc.get("judge_spec") or doc.get("judge") or "",
        "original": success,
        "original_unusable": unusable,
    }
    return cut_docs(shared, trace.trace, functools.partial(trace.context, prompt))


@task_loader
def load_cot_faithfulness(
    explanations: str | None = None,
    judge: str | None = None,
    judge_cache: str | None = None,
    judge_check: str = "stop",
    **run_args: Any,
) -> dict[str, datasets.Dataset]:
    """The task's docs over one in-process thinking run, judged by the run's own judge unless
    ``judge`` names another (a verdict is compared with one of the same judge)."""
    check_metadata_keys(TASK, run_args)
    refuse_cut_groups(TASK, DOCS_PER_GENERATION)
    if not explanations:
        raise DataError(f"{TASK} needs the samples file of an in-process REG thinking run: {EXPLANATIONS_EXAMPLE}.")
    if generation.names_a_model(run_args) and generation.is_served(run_args):
        raise DataError(
            f"{TASK} continues the logged prompt after a cut trace, which a chat endpoint cannot: run it on an "
            "in-process model (--model hf, without --apply_chat_template: the logged prompt holds the template)."
        )
    docs = with_lineage(faithfulness_docs(explanations), source_lineage(Path(explanations).expanduser()))
    logged = docs[0]["logged_judge"]
    docs = with_checked_judge(
        TASK,
        lambda: docs,
        judge,
        judge_cache,
        judge_check,
        run_args,
        lambda: generation.generation_columns(generation.NON_THINKING.name, generation.IN_PROCESS, run_args),
        default=docs[0]["logged_judge_spec"] or DEFAULT_JUDGE,
    )
    if logged and docs[0]["judge"] != logged:
        log.warning(
            "%s: the run was judged by %s, this task judges with %s: the verdicts compared are two judges'.",
            TASK,
            logged,
            docs[0]["judge"],
        )
    return {"test": to_dataset(docs)}


def process_cot_faithfulness(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    """The verdict on the new explanation beside the run's own, for every aggregation, as [generation,
    condition, fraction, same, success, usable, kept] (JSON in the samples file), and the row's flags.
    An output that held no explanation fails, as in ``reg_chaos`` (a missing explanation reconciles
    nothing), so it is the same verdict only when the original failed too; a verdict that cannot
    be read (unparsed, the judge failed, or it put the item outside N) is nothing to compare."""
    record = read_record(results[0])
    success = None if record.get("judge_error") else record_scores(record)["success"]
    answer = Answer(
        generation=doc["generation"],
        condition=doc["condition"],
        fraction=float(doc["fraction"]),
        same=None if success is None else success == doc["original"],
        correct=success == 1.0,
        kept=doc.get("kept"),
    )
    item = list(astuple(answer))
    return {metric: item for metric in ANSWER_METRICS} | {
        "malformed": float(bool(record["flag"])),
        "not_compared": float(answer.same is None),
        "original_unusable": float(doc["original_unusable"]),
    }


ANSWER_METRICS = ("same_at_0", "same_at_25", "same_at_50", "same_at_75", "same_at_100", "early_aoc", "filler_same")
