"""REG judging (section 4.3): the judge J decides (i) J(p, h): only items called a
contradiction form the evaluated set N; (ii) J(p;e, h): e is *effective* when p and e
together entail h; (iii) J(p, e): e is *coherent* when it does not contradict p.

The judge is found and checked on gold items while the harness builds the task: a judge that
cannot answer, or a degenerate one, stops the run there rather than after hours of generation.
``REGJudgeFilter`` then judges a task's responses in batches; its record per doc is logged as
``filtered_resps``, which ``process_results`` and section 6 read.
"""

from __future__ import annotations

import gc
import json
import logging
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lm_eval.api.filter import Filter

from custom_metrics.common.errors import DataError
from custom_metrics.common.harness_api import filter_output
from custom_metrics.common.metadata import check_metadata_keys
from custom_metrics.common.settings import JUDGE_CHECK_DEADLINE_ENV, JUDGE_ENV, env_number, judge_cache_dir
from custom_metrics.judge.available import JudgeUnavailable, check_available
from custom_metrics.judge.build import build_judge
from custom_metrics.judge.cache import CachedJudge, VerdictCacheError
from custom_metrics.judge.http_client import answers_within
from custom_metrics.judge.spec import JudgeSpec, judge_from_environment, parse_spec, resolve_judge
from custom_metrics.judge.types import UNPARSED, NLIJudge, Verdict
from custom_metrics.reg.data import judge_check_docs, load_items
from custom_metrics.reg.generation import NO_REASONING, split_outputs
from custom_metrics.reg.outputs import Output, combine

log = logging.getLogger(__name__)

# A judge is degenerate when one outcome (a label, or "unparsed") covers at least this share of
# the balanced gold items, or when it is no better than chance on them.
DEGENERATE_SHARE = 0.8
CHANCE = 1 / 3
DEFAULT_JUDGE = "embedded"
# --metadata judge_check: what a degenerate judge does to the run (a judge that cannot
# answer at all always stops it).
ON_DEGENERATE = ("stop", "warn")
# How the user names another judge, and runs with a degenerate one anyway (reg-dapo: its options).
METADATA_OPTIONS = (f'--metadata \'{{"judge": "<spec>"}}\' or ${JUDGE_ENV}', '--metadata \'{"judge_check": "warn"}\'')
# Seconds an endpoint judge has for all of the check's requests together (twelve pairs);
# $EXPLAIN_EVAL_JUDGE_CHECK_DEADLINE changes it (a slow but healthy remote judge, say).
CHECK_DEADLINE_S = 60.0
# The doc column saying the task build ran ``check_before_generation`` on the docs' judge.
CHECKED_COLUMN = "judge_checked"


def _verdict_record(verdict: Verdict | None) -> dict[str, Any] | None:
    if verdict is None:
        return None
    record = {"label": verdict.label, "probs": verdict.probs, "method": verdict.method}
    if verdict.answer:
        record["answer"] = verdict.answer
    return record


def check_judge(
    judge: NLIJudge, gold: Sequence[dict[str, Any]], warn: bool = True, another: str = METADATA_OPTIONS[0]
) -> dict[str, Any]:
    """The judge on gold (premise, hypothesis, majority label) items: accuracy, answers, degeneracy.
    ``warn=False``: the task build announced it already; ``another``: how to name another judge."""
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
    if check["degenerate"] and not warn:
        log.info("REG judge check: %s is degenerate on the gold items (see the warning above)", judge.name)
    elif check["degenerate"]:
        log.warning(
            "\n%s\nREG JUDGE CHECK FAILED: judge %s answered %r for %d of %d gold items (accuracy %.2f, chance "
            "1/3): it is degenerate. reg_chaos's N (items it calls a contradiction) will be nearly empty or "
            "arbitrary, and coherence/effectiveness/success NaN or meaningless. Choose a stronger judge "
            "with %s (measure candidates with reg_judge_select).\n%s",
            "!" * 100,
            judge.name,
            top,
            top_count,
            len(gold),
            check["acc"],
            another,
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
    """The three judgments over a whole task in two batched calls: every (p, h), then (p;e, h) and
    (p, e) only for the items in N with a usable explanation, the only ones scored."""
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
    return [
        unjudged_record(judge.name, out)
        | {
            "initial": _verdict_record(verdict),
            "effectiveness": _verdict_record(effect.get(i)),
            "coherence": _verdict_record(cohere.get(i)),
            "judge_check": check,
        }
        for i, (verdict, out) in enumerate(zip(initial, outputs))
    ]


def locate_judge(task: str, judge: str | None, judge_cache: str | None) -> tuple[JudgeSpec, Path, CachedJudge]:
    """The run's judge (``--metadata judge``, else ``$EXPLAIN_EVAL_JUDGE``, else embedded), found in
    seconds before anything is loaded: spec parsed, verdict cache writable, model or server checked."""
    spec = find_judge(task, judge)
    cache = Path(judge_cache).expanduser().resolve() if judge_cache else judge_cache_dir()
    try:
        cached = build_judge(spec, cache_dir=cache)
        cached.cache.check_writable()
    except VerdictCacheError as err:
        raise DataError(f"{task}: {err}") from err
    return spec, cache, cached


def find_judge(task: str, judge: str | None, *, here: bool = True) -> JudgeSpec:
    """The run's judge parsed, checked non-thinking and (``here``: on this machine) found, loading
    nothing: also what ``explain-eval lm-eval`` and the sweep check before the model loads."""
    try:
        spec = resolve_judge(judge, judge_from_environment(), DEFAULT_JUDGE)
    except ValueError as err:
        raise DataError(f"{task}: {err}") from err
    # REG's judge runs non-thinking (section 4.4: "Our NLI judge is prompted in non-thinking mode
    # throughout"): an endpoint told to think, or an API reasoning model given an effort that
    # reasons, is refused. In-process judges always render their template without thinking.
    if spec.thinking == "on":
        raise DataError(
            f"{task}: judge {spec.name} is told to think (thinking=on), but the paper's judge runs non-thinking "
            "(section 4.4); drop thinking=on (the default sends the switch off)."
        )
    if spec.reasoning_effort not in (None, NO_REASONING):
        raise DataError(
            f"{task}: judge {spec.name} reasons (reasoning_effort={spec.reasoning_effort}), but the paper's judge "
            f"runs non-thinking (section 4.4); pass reasoning_effort={NO_REASONING}."
        )
    try:
        if here:
            check_available(spec)
    except JudgeUnavailable as err:
        raise DataError(f"{task}: {err}") from err
    return spec


# The tasks that load a judge when the harness builds them: reg_chaos, its variants and the tag
# holding it, and reg_cot_faithfulness (its own judge's spec is in the run it reads).
JUDGED_TASK = re.compile(r"reg(_chaos\w*|_cot_faithfulness)?")


def check_run_judge(tasks: Sequence[str], metadata: Mapping[str, Any], *, here: bool = True) -> None:
    """The REG tasks' judge checks, run before lm-eval loads the model under test (it builds the
    tasks after), so a wrong judge costs no model load or queue wait; the task still checks it."""
    named = next((task for task in tasks if JUDGED_TASK.fullmatch(task)), None)
    if named is None:
        return
    task = "reg_chaos" if named == "reg" else named
    check_metadata_keys(task, metadata)
    check_judge_check(task, metadata.get("judge_check", "stop"))
    judge = metadata.get("judge")
    if judge_named(judge if isinstance(judge, str) else None):
        find_judge(task, judge if isinstance(judge, str) else None, here=here)


def judge_named(judge: str | None) -> bool:
    return bool((judge or "").strip() or (judge_from_environment() or "").strip())


def default_judge(task: str, judge_cache: str | None, default: str = DEFAULT_JUDGE) -> tuple[JudgeSpec, Path]:
    """The default judge's spec (``default``) and the cache folder, parsed only (nothing opened or loaded)."""
    try:
        spec = resolve_judge(None, None, default)
    except ValueError as err:
        raise DataError(f"{task}: {err}") from err
    return spec, Path(judge_cache).expanduser().resolve() if judge_cache else judge_cache_dir()


def check_judge_check(task: str, judge_check: Any) -> None:
    if judge_check not in ON_DEGENERATE:
        expected = " or ".join(ON_DEGENERATE)
        raise DataError(f"{task}: --metadata judge_check is {judge_check!r}, expected {expected}")


def check_before_generation(
    task: str, judge: CachedJudge, judge_check: str = "stop", options: tuple[str, str] = METADATA_OPTIONS
) -> None:
    """Load the located judge (``locate_judge``) and check it on the gold items before any generation: one that does
    not load or answer within ``CHECK_DEADLINE_S`` (a silent endpoint would otherwise stop the run
    only after its retries), or (unless ``judge_check=warn``) is degenerate, stops the run. The
    model is then released for the generator; its gold verdicts stay in the cache. ``options``:
    how the messages name another judge, and going on with a degenerate one."""
    check_judge_check(task, judge_check)
    started = time.monotonic()
    seconds = env_number(JUDGE_CHECK_DEADLINE_ENV, CHECK_DEADLINE_S, minimum=1)
    try:
        with answers_within(seconds, f"the check's deadline of {seconds:g} s ({JUDGE_CHECK_DEADLINE_ENV})"):
            check = check_judge(judge, judge_check_docs(load_items()), another=options[0])
    except Exception as err:  # whatever stops a model from loading or answering: one message, before generation
        raise DataError(
            f"{task}: judge {judge.name} could not judge the gold items of its check before generation "
            f"({type(err).__name__}: {err}). Fix it, or pass another judge with {options[0]} (task README, "
            '"Choosing the judge").'
        ) from err
    log.info("%s: judge %s loaded and checked in %.1f s", task, judge.name, time.monotonic() - started)
    if check["degenerate"] and judge_check == "stop":
        raise DataError(
            f"{task}: judge {judge.name} is degenerate on the gold items of its check (accuracy "
            f"{check['acc']:.2f}, answers {check['answers']}): its N would be nearly empty or arbitrary. Pass a "
            f"stronger judge with {options[0]} (measure candidates with reg_judge_select), or {options[1]} to run "
            "with it anyway."
        )
    release_backend(judge)


def release_backend(judge: CachedJudge) -> None:
    """Free the judge's model (and its GPU memory) while the generator runs."""
    judge.release()
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


def judge_for_docs(docs: Sequence[dict[str, Any]]) -> CachedJudge:
    """The judge the docs' ``judge_spec``/``judge_cache`` columns name: what the task build checked
    reaches the filter only through the docs and the cache, never through a kept object."""
    settings = {(doc.get("judge_spec") or doc["judge"], doc["judge_cache"]) for doc in docs}  # older docs: the name
    if len(settings) != 1:
        raise ValueError(f"reg_chaos docs name {len(settings)} judge settings; expected one: {sorted(settings)}")
    spec, cache = settings.pop()
    return build_judge(parse_spec(spec), cache_dir=cache)


class REGJudgeFilter(Filter):
    """Check the judge, then judge all of a task's explanations at once; each filtered response is
    the doc's record as JSON (the harness logs it with ``str()``), so the samples file stays readable."""

    def apply(self, resps: Iterable[list[str]], docs: list[dict]) -> list:
        outputs = split_outputs(resps, docs)
        judge = judge_for_docs(docs)
        try:
            # the build announced a degenerate judge already where it checked it (the docs say so)
            warn = not all(doc.get(CHECKED_COLUMN) for doc in docs)
            check = check_judge(judge, judge_check_docs(load_items()), warn=warn)
            records = judge_outputs(judge, docs, outputs, check)
        except Exception as err:  # any judge failure: the generations must survive it
            log.exception(JUDGE_FAILED, "!" * 100, judge.name, f"{type(err).__name__}: {err}", "!" * 100)
            records = [unjudged_record(judge.name, out, f"{type(err).__name__}: {err}") for out in outputs]
        return filter_output(json.dumps(record) for record in records)


# Why the run goes on: the harness writes the samples file (the generations) only if the
# filter returns; ``reg-rejudge`` judges that file later without asking the model again.
JUDGE_FAILED = (
    "\n%s\nREG JUDGE FAILED AFTER GENERATION: judge %s: %s.\nThe generations are kept: the run goes on and "
    "writes them to its samples file (pass --log_samples), with n and every judge metric NaN. Once the judge "
    "answers again, judge them without any new generation:\n    explain-eval reg-rejudge <--output_path of this "
    "run> [--judge <spec>]\n%s"
)


def unjudged_record(judge: str, output: Output, error: str = "") -> dict[str, Any]:
    """The record of an output without verdicts: before the judge gives them (``judge_outputs``),
    or with ``error``, why the judge failed on it."""
    return {
        "explanation": output.explanation,
        "flag": output.flag,
        "judge": judge,
        **({"judge_error": error} if error else {}),
        "initial": None,
        "effectiveness": None,
        "coherence": None,
        **output.length_fields(),
        "judge_check": None,
    }


def read_record(filtered: str | dict[str, Any]) -> dict[str, Any]:
    return filtered if isinstance(filtered, dict) else json.loads(filtered)
