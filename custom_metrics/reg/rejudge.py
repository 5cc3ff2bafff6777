"""REG's part of ``explain-eval rejudge``: a logged ``reg_chaos*`` run judged again from its samples file.

The explanations judged are the logged ones (explanation and flag as recorded), so neither the
model under test nor its tokenizer is loaded.

- **Judging again** (``--judge SPEC``, repeatable): each judge is checked on the gold items as a
  run checks it, then judges every logged explanation; its records and aggregates (lm-eval's
  own) go to its folder beside the run (``rejudged``). The run's files are never rewritten.
- **Completing** (``--complete``): a judge that died after generation leaves the generations
  with no verdicts (``REGJudgeFilter`` records the failure). Completing judges them with the judge
  they name (or ``--complete SPEC``) and rewrites the samples and results files in place as the
  uninterrupted run would have. lm-eval's ``--use_cache`` cannot: it never reuses sampled generations.

A judge that fails part-way is said in one line: the judge, the item it stopped at, the reason and
what the verdict cache kept (the same command resumes there), not a traceback. ``Asked``
remembers the pairs asked, so the message can count what the cache kept and find the item.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import atomic_write_bytes, unwritable
from custom_metrics.common.harness_outputs import logged_samples_file
from custom_metrics.common.rejudging import (
    AGAIN,
    FOLDER,
    GOLD,
    RUN_JUDGE,
    Rater,
    RejudgedTask,
    RejudgeRequest,
    cut_notes,
    judge_folder_name,
)
from custom_metrics.common.results import ResultsFileError, friendly_spec, read_json_object, read_results_file
from custom_metrics.common.samples import read_samples
from custom_metrics.common.settings import judge_cache_dir
from custom_metrics.judge.available import JudgeUnavailable, check_available
from custom_metrics.judge.build import build_judge
from custom_metrics.judge.cache import CachedJudge, VerdictCacheError
from custom_metrics.judge.spec import JudgeSpec, parse_spec
from custom_metrics.judge.types import NLI_LABELS, UNPARSED, Pair, Verdict
from custom_metrics.reg import rejudged
from custom_metrics.reg.data import judge_check_docs, load_items, with_judge
from custom_metrics.reg.judging import check_judge, judge_outputs, read_record, release_backend
from custom_metrics.reg.metrics import process_results, record_scores, unparsed_count
from custom_metrics.reg.outputs import Output, combine

REG_TASK_PREFIX = "reg_chaos"
FILTER = "judged"
# The numbers of a task's results entry that its judge's verdicts decide.
JUDGED_METRICS = ("n", "coherence", "effectiveness", "success")
JUDGED_KEYS = tuple(f"{metric},{FILTER}" for metric in JUDGED_METRICS)
# What a judge's record holds that another judge replaces; the rest (explanation, flag,
# lengths) is the generation's.
VERDICT_FIELDS = ("judge", "initial", "effectiveness", "coherence", "judge_check")
DECISIONS = ("J(p, h)", "J(p;e, h)", "J(p, e)", "effective", "coherent", "success")
METRICS = ("N", "coherence", "effectiveness", "success", "unparsed", "judge check")
LABELS = (*NLI_LABELS, UNPARSED, "yes", "no")
GOLD_NAME = "ChaosNLI majority label (100 annotators)"
GOLD_NOTE = (
    "Gold exists for J(p, h) only: the ChaosNLI majority label, contradiction for every reg_chaos item, so a "
    "judge's raw agreement with it is the share of items it put in N; kappa is 0 (or undefined) and MCC undefined "
    "by construction. The judge check's accuracy on the balanced gold items is in the metrics table."
)


class Asked:
    """``judge`` as judge_outputs and check_judge call it, keeping every pair asked of it."""

    def __init__(self, judge: CachedJudge) -> None:
        self.cached = judge
        self.name = judge.name
        self.asked: list[Pair] = []
        self.last: list[Pair] = []  # the pairs of the latest call: the one that failed, when one did

    def judge(self, pairs: Sequence[Pair]) -> list[Verdict]:
        self.last = [(str(p), str(h)) for p, h in pairs]
        self.asked += self.last
        return self.cached.judge(pairs)

    def kept(self) -> int:
        unique = list(dict.fromkeys(self.asked))
        return len(self.cached.cache.get_many(self.cached.name, self.cached.prompt_id, unique))

    def missing(self) -> Pair | None:
        found = self.cached.cache.get_many(self.cached.name, self.cached.prompt_id, list(dict.fromkeys(self.last)))
        return next((pair for pair in self.last if pair not in found), None)


def _pair_item(pair: Pair | None, docs: Sequence[dict[str, Any]], outputs: Sequence[Output]) -> int | None:
    for index, (doc, out) in enumerate(zip(docs, outputs)):
        premise, hypothesis = doc["premise"], doc["hypothesis"]
        if pair in ((premise, hypothesis), (combine(premise, out.explanation), hypothesis), (premise, out.explanation)):
            return index
    return None


def stopped(
    error: Exception,
    judge: Asked,
    where: str,
    written: str,
    docs: Sequence[dict[str, Any]] | None = None,
    outputs: Sequence[Output] = (),
    samples: Path | None = None,
) -> DataError:
    """One line for a judge that failed: which judge, where it stopped (the item, given the docs
    and outputs it was judging), why, what the verdict cache kept and what ``written`` says."""
    if isinstance(error, VerdictCacheError):  # the cache's own message names its file and what to do
        return DataError(str(error))
    reason = str(error).removeprefix(f"judge {judge.name}: ") or type(error).__name__
    reason = " ".join(f"{type(error).__name__}: {reason}".split())  # one line, whatever the backend said
    place = where
    try:
        index = _pair_item(judge.missing(), docs, outputs) if docs is not None else None
        kept = f"{judge.kept()} of its verdicts are kept in the verdict cache {judge.cached.cache.path}"
    except VerdictCacheError:
        index, kept = None, "its verdict cache cannot be read to count what it kept"
    if docs is not None and index is not None:
        named = samples.name if samples else "the samples"
        place += f" item {docs[index].get('uid', index)} (line {index + 1} of {named})"
    return DataError(
        f"judge {judge.name} stopped at {place}: {reason}. {kept}; {written}. Rerun the same command when the judge "
        "answers again: it asks only for the verdicts not kept."
    )


def find(path: Path) -> list[Path]:
    """The results files under ``path`` (or ``path`` itself) holding a ``reg_chaos*`` task."""
    files = [path] if path.is_file() else sorted(path.rglob("results_*.json"))
    return [file for file in files if any(task.startswith(REG_TASK_PREFIX) for task in _results(file)["results"])]


def _results(path: Path) -> dict[str, Any]:
    try:
        results = read_json_object(path, "lm-eval results file")
    except ResultsFileError as error:
        raise DataError(f"{path}: {error}") from error
    if not isinstance(results.get("results"), dict):
        raise DataError(f'{path}: not an lm-eval results file (no "results" object)')
    return results


def _tasks(results: dict[str, Any]) -> list[str]:
    return sorted(task for task in results["results"] if task.startswith(REG_TASK_PREFIX))


def _check_sample(sample: dict[str, Any]) -> None:
    record = read_record(sample["filtered_resps"][0])
    if not isinstance(record, dict):
        raise ValueError("the judged record in filtered_resps is not a JSON object: not a reg_chaos sample")
    for key in ("explanation", "flag", "judge"):
        if key not in record:
            raise ValueError(f"the judged record in filtered_resps has no {key!r}: not a reg_chaos sample")
    if not isinstance(sample["doc"].get("uid"), str):
        raise ValueError("field 'doc.uid' must be the ChaosNLI item id")


def _read(results_file: Path, task: str) -> tuple[Path, list[dict[str, Any]]]:
    path = logged_samples_file(results_file, task, "the generations are")
    return path, read_samples(path, _check_sample, key=_item)


def _item(sample: dict[str, Any]) -> str:
    return f"item {sample['doc']['uid']!r}"


def _unjudged(samples: Sequence[dict[str, Any]]) -> int:
    return sum(bool(read_record(sample["filtered_resps"][0]).get("judge_error")) for sample in samples)


def check(results_file: Path, request: RejudgeRequest) -> None:
    """Before any judging: the folders written writable, every REG task's samples file there and
    readable, and the judge that completes a run whose judge failed available. A read-only copy of
    a run fails in a second, not after the judging."""
    written = {results_file.parent / FOLDER: "each judge's verdicts and the agreement tables"}
    if request.complete:
        written[results_file.parent] = "the completed samples and results files, in place"
    for folder, what in written.items():
        problem = unwritable(folder)
        if problem:
            raise DataError(
                f"{problem}: rejudge writes {what} beside the run, in {folder} (it has no --out option); copy the "
                "run's folder to a writable disk and pass the copy (the verdict cache's folder is --judge-cache)"
            )
    for task in _tasks(_results(results_file)):
        _, samples = _read(results_file, task)
        if request.complete and _unjudged(samples):
            _completing_judge(samples, request)


def _completing_judge(samples: Sequence[dict[str, Any]], request: RejudgeRequest) -> tuple[JudgeSpec, Path]:
    docs = [sample["doc"] for sample in samples]
    if request.complete_judge is not None:
        spec = request.complete_judge
    else:
        names = {doc.get("judge_spec") or doc.get("judge") for doc in docs}  # the whole spec, else the name
        if len(names) != 1:
            raise DataError(
                f"the samples name {len(names)} judges ({', '.join(map(str, names))}); pass --complete SPEC"
            )
        try:
            spec = parse_spec(names.pop())
        except ValueError as error:
            raise DataError(f"{error}; pass --complete SPEC") from error
    cache = request.judge_cache or Path(docs[0].get("judge_cache") or judge_cache_dir()).expanduser().resolve()
    try:
        build_judge(spec, cache_dir=cache).cache.check_writable()
        check_available(spec)
    except (JudgeUnavailable, VerdictCacheError) as error:
        raise DataError(str(error)) from error
    return spec, cache


def _write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write_bytes(path, json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8"))


def _write_samples(path: Path, samples: Sequence[dict[str, Any]]) -> None:
    atomic_write_bytes(path, "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples).encode("utf-8"))


def aggregate(
    task: str, per_sample: Sequence[dict[str, Any]], bootstrap_iters: int, metrics: Sequence[str] | None = None
) -> dict[str, Any]:
    """The task's results entry from its samples' metric values, as lm-eval aggregates them
    (``metrics``: only these, e.g. those a run logged before the task counted more), each metric's
    aggregation read from the task's YAML as lm-eval reads it."""
    from lm_eval.api.metrics import stderr_for_metric
    from lm_eval.api.registry import get_aggregation

    from custom_metrics.common.harness_api import read_task_yaml
    from custom_metrics.common.task_folders import TASKS_PATH

    entry: dict[str, Any] = {}
    for item in read_task_yaml(Path(TASKS_PATH) / "reg" / f"{task}.yaml")["metric_list"]:
        metric, function = item["metric"], item["aggregation"]
        if metrics is not None and metric not in metrics:
            continue
        function = get_aggregation(function) if isinstance(function, str) else function
        items = [tuple(value) if isinstance(value, list) else value for value in (s[metric] for s in per_sample)]
        entry[f"{metric},{FILTER}"] = function(items)
        stderr = stderr_for_metric(metric=function, bootstrap_iters=bootstrap_iters) if bootstrap_iters > 0 else None
        entry[f"{metric}_stderr,{FILTER}"] = stderr(items) if stderr and len(items) > 1 else "N/A"
    return entry


def _judged_samples(
    samples: Sequence[dict[str, Any]],
    judge: Asked,
    spec: JudgeSpec,
    cache: Path,
    check: dict[str, Any],
    where: tuple[str, Path, str],
) -> list[dict[str, Any]]:
    """The samples as a run judged by ``judge`` would have logged them (its verdicts, the docs naming
    it, the metrics anew). ``where``: the task, its samples file and what a failure leaves written."""
    records = [read_record(sample["filtered_resps"][0]) for sample in samples]
    docs = with_judge([sample["doc"] for sample in samples], spec, cache)
    # The generations as the run's judge saw them: explanation and flag as recorded (the records
    # keep their lengths: only the verdicts are replaced)
    outputs = [Output("", str(record["explanation"] or ""), "", record["flag"] or "") for record in records]
    task, samples_path, written = where
    try:
        records_new = judge_outputs(judge, docs, outputs, check)
    except DataError:
        raise
    except Exception as error:  # a judge down or erring part-way: what stopped where, and what was kept
        raise stopped(error, judge, task, written, docs, outputs, samples_path) from error
    judged = []
    for sample, doc, record, new in zip(samples, docs, records, records_new):
        kept = {key: value for key, value in record.items() if key != "judge_error"}
        filtered = json.dumps(kept | {key: new[key] for key in VERDICT_FIELDS})
        judged.append({**sample, "doc": doc, "filtered_resps": [filtered], **process_results(doc, [filtered])})
    return judged


def _checked_judge(spec: JudgeSpec, cache: Path, judge_check: str) -> tuple[Asked, dict[str, Any]]:
    """The judge built and checked on the gold items, as a run checks it before generation."""
    gold = judge_check_docs(load_items())
    try:
        judge = Asked(build_judge(spec, cache_dir=cache))
    except VerdictCacheError as error:
        raise DataError(str(error)) from error
    try:
        check = check_judge(judge, gold, another="--judge SPEC")
    except DataError:
        raise
    except Exception as error:  # the judge cannot judge: one line, before anything is judged or written
        raise stopped(
            error, judge, "the gold items of its check", "nothing of this judge is judged or written yet"
        ) from error
    if check["degenerate"] and judge_check == "stop":
        raise DataError(
            f"judge {judge.name} is degenerate on the gold items of its check (accuracy {check['acc']:.2f}, answers "
            f"{check['answers']}): its N would be nearly empty or arbitrary. Pass a stronger judge, or "
            "--judge-check warn to judge with it anyway."
        )
    return judge, check


def _bootstrap_iters(results: dict[str, Any]) -> int:
    return int((results.get("config") or {}).get("bootstrap_iters", 100000) or 0)


def _same(recorded: Any, counted: Any) -> bool:
    """Whether a results file's number is the one its samples give (NaN is NaN)."""
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (recorded, counted)):
        return recorded == counted
    both_nan = math.isnan(recorded) and math.isnan(counted)
    return both_nan or math.isclose(recorded, counted, rel_tol=1e-9, abs_tol=1e-12)


def _complete(results_file: Path, results: dict[str, Any], request: RejudgeRequest) -> list[str]:
    """Judge in place every task's samples whose judge failed after generation; the tasks completed.
    The samples files are replaced first, the results file last: after a stop in between, the next
    ``--complete`` counts the judged samples again (no judging) instead of finding nothing to do."""
    done = []
    for task in _tasks(results):
        samples_path, samples = _read(results_file, task)
        unjudged = _unjudged(samples)
        if not unjudged:
            # A results entry missing verdicts its samples hold: a completion stopped after it rewrote the
            # samples file and before the results file (each replaced whole, the samples first)
            counted = aggregate(task, samples, 0, JUDGED_METRICS)
            if not all(_same(results["results"][task].get(key), counted[key]) for key in JUDGED_KEYS):
                counted = aggregate(task, samples, _bootstrap_iters(results))  # the samples this command wrote
                results["results"][task] = {**results["results"][task], **counted}
                done.append(task)
                print(
                    f"{results_file}: {task}'s results did not count the verdicts its samples hold (a completion "
                    f"stopped before writing them); counted again from {samples_path.name}, no judging"
                )
            else:
                print(f"{samples_path}: every sample holds its judge's verdicts; nothing to complete")
            continue
        spec, cache = _completing_judge(samples, request)
        judge, check = _checked_judge(spec, cache, "warn")  # the run chose already what a degenerate judge does
        unchanged = f"{samples_path.name} is unchanged"
        judged = _judged_samples(samples, judge, spec, cache, check, (task, samples_path, unchanged))
        _write_samples(samples_path, judged)
        results["results"][task] = {**results["results"][task], **aggregate(task, judged, _bootstrap_iters(results))}
        done.append(task)
        print(f"{samples_path}: judged {len(judged)} samples ({unjudged} had no verdicts) with {spec.display_name}")
    if done:
        _write_json(results_file, results)
    return done


def _judge_again(results_file: Path, results: dict[str, Any], spec: JudgeSpec, request: RejudgeRequest) -> Path:
    """One judge's verdicts on every REG task of the run, written to its folder beside the run."""
    cache = request.judge_cache or judge_cache_dir()
    judge, check = _checked_judge(spec, cache, request.judge_check)
    folder = results_file.parent / FOLDER / judge_folder_name(spec.name, spec.display_name)
    tasks = _tasks(results)
    copy = {**results, "results": {task: dict(results["results"][task]) for task in tasks}}
    own = set()
    for task in tasks:
        samples_path, samples = _read(results_file, task)
        own.add(friendly_spec(_own_judge(samples)))
        unwritten = "no results of this judge are written until it has judged every task"
        judged = _judged_samples(samples, judge, spec, cache, check, (task, samples_path, unwritten))
        _write_samples(folder / samples_path.name, judged)
        copy["results"][task].update(aggregate(task, judged, _bootstrap_iters(results)))
    release_backend(judge.cached)
    path = folder / f"{rejudged.PREFIX}{results_file.name}"
    written = rejudged.Rejudged(path, spec.name, spec.display_name, results_file, tuple(sorted(own)))
    _write_json(written.path, {**copy, rejudged.BLOCK: written.block()})
    print(f"{written.path}: {', '.join(tasks)} judged again by {spec.display_name}")
    return written.path


def rater(name: str, role: str, samples: Sequence[dict[str, Any]], path: Path) -> Rater:
    """A judge's decisions on a task's items and its metrics, read from its records. The metrics
    count as the task does (``record_scores``); a flagged output fails by rule, not by the judge's
    decision, so it counts in the metrics and not in the agreement."""
    decisions: dict[str, dict[str, str]] = {decision: {} for decision in DECISIONS}
    scores: dict[str, dict[str, bool]] = {metric: {} for metric in JUDGED_METRICS}
    unparsed, check = [0, 0], {}
    for sample in samples:
        record = read_record(sample["filtered_resps"][0])
        if record.get("judge_error") or not isinstance(record.get("initial"), dict):
            continue
        uid = sample["doc"]["uid"]
        decisions["J(p, h)"][uid] = record["initial"]["label"]
        scores["n"][uid] = record["initial"]["label"] == "contradiction"
        item = record_scores(record)
        for metric, value in item.items():
            if metric in scores and value is not None:
                scores[metric][uid] = bool(value)
        effect, cohere = record.get("effectiveness"), record.get("coherence")
        if isinstance(effect, dict) and isinstance(cohere, dict):
            decisions["J(p;e, h)"][uid], decisions["J(p, e)"][uid] = effect["label"], cohere["label"]
            if item["success"] is not None:  # both verdicts parsed: the task's own decisions
                for decision, metric in (("effective", "effectiveness"), ("coherent", "coherence"), ("success",) * 2):
                    decisions[decision][uid] = "yes" if item[metric] else "no"
        unparsed = [total + count for total, count in zip(unparsed, unparsed_count(record))]
        check = record.get("judge_check") or check
    # Each metric as the tables name it (METRICS): (count, out of)
    counts = {name: (sum(scores[metric].values()), len(scores[metric])) for name, metric in zip(METRICS, scores)}
    counts["unparsed"] = (unparsed[0], unparsed[1])
    if check.get("items"):
        counts["judge check"] = (round(check["acc"] * check["items"]), check["items"])
    metrics = {metric: value for metric, value in counts.items() if value[1]}
    named = {name: scores[metric] for name, metric in zip(METRICS, scores) if scores[metric]}
    return Rater(name, role, {d: v for d, v in decisions.items() if v}, metrics, path, named)


def _own_judge(samples: Sequence[dict[str, Any]]) -> str:
    """The canonical name of the judge the run's records name (set by the filter, also when it failed)."""
    names = {read_record(sample["filtered_resps"][0]).get("judge") for sample in samples}
    return str(names.pop()) if len(names) == 1 else "several judges"


def run(results_file: Path, request: RejudgeRequest) -> list[RejudgedTask]:
    results = _results(results_file)
    if request.complete:
        _complete(results_file, results, request)
    own = {task: _own_judge(_read(results_file, task)[1]) for task in _tasks(results)}
    for spec in request.judges:
        if set(own.values()) == {spec.name}:
            print(f"{results_file}: {spec.display_name} is the run's own judge; its verdicts are the run's")
            continue
        _judge_again(results_file, results, spec, request)
    again, problems = rejudged.rejudged_beside(results_file)
    for problem in problems:
        print(f"skipped {problem.path}: {problem.reason}", file=sys.stderr)
    labels = rejudged.labels(again)
    try:
        cut = {run.task: run.subset for run in read_results_file(results_file)}
    except ResultsFileError:
        cut = {}  # _results read it: a field no reader of runs takes is named by the leaderboard
    judged = []
    for task in _tasks(results):
        samples_path, samples = _read(results_file, task)
        notes = [GOLD_NOTE, *cut_notes(cut.get(task))]
        raters = []
        if _unjudged(samples):
            notes.append(
                f"the run's own judge ({friendly_spec(own[task])}) failed after generation, so its verdicts are "
                "missing: --complete judges them with it, in place"
            )
        else:
            raters.append(rater(friendly_spec(own[task]), RUN_JUDGE, samples, samples_path))
        for item in sorted(again, key=lambda item: labels[item.path]):
            path = item.path.parent / samples_path.name
            if item.judge != own[task] and path.is_file():
                raters.append(rater(labels[item.path], AGAIN, read_samples(path, _check_sample, key=_item), path))
        gold = {s["doc"]["uid"]: s["doc"]["majority_label"] for s in samples if "majority_label" in s["doc"]}
        raters.append(Rater(f"gold: {GOLD_NAME}", GOLD, {"J(p, h)": gold} if gold else {}))
        out = results_file.parent / FOLDER
        judged.append(
            RejudgedTask(task, samples_path, out, tuple(raters), DECISIONS, METRICS, LABELS, tuple(notes), "success")
        )
    return judged
