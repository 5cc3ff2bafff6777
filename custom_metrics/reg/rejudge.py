"""REG's part of ``explain-eval rejudge``: a logged ``reg_chaos*`` run judged again from its samples file.

The samples file of a ``reg_chaos`` run holds every generation and the record of its judging
(``judging.judge_outputs``: explanation, flag, lengths, the three verdicts, the judge check).
Two things are done with it, and neither sends the model under test anything: the
explanations judged are the logged ones (explanation and flag as the run recorded them;
nothing is split or counted again, so neither the generator nor its tokenizer is loaded).

- **Judging again** (``--judge SPEC``, repeatable). Each judge is checked on the gold items
  as a run checks it (degenerate: stop, unless ``--judge-check warn``), then judges every
  logged explanation in the run's two batched calls; its records, per-sample metrics and
  aggregates (lm-eval's own aggregations and standard errors) go to its folder beside the run
  (``rejudge_files``). The run's files are never rewritten.
- **Completing** (``--complete``, what ``explain-eval reg-rejudge`` did). A judge checked
  before generation can still die during it (an endpoint restarted, a node lost); the
  generations are then kept (``REGJudgeFilter`` records the failure, so lm-eval writes the
  samples file, with n and every judge metric NaN). Completing judges those samples with the
  judge they name (or ``--complete SPEC``: the same judge at a new URL) and rewrites the
  samples and results files in place as the uninterrupted run would have written them.
  Nothing is overwritten: those records hold no verdicts. lm-eval's ``--use_cache`` cannot do
  this: it never reuses sampled generations, and REG samples.

Then each task's raters go back to the command: the run's own judge (when its verdicts are
there), every judge the run was judged again by (this time or before), and the gold labels
(ChaosNLI's majority label, for J(p, h)).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from custom_metrics.common.display_names import friendly_spec
from custom_metrics.common.errors import DataError
from custom_metrics.common.files import atomic_write_bytes
from custom_metrics.common.rejudging import AGAIN, GOLD, RUN_JUDGE, Rater, RejudgedTask, RejudgeRequest
from custom_metrics.common.results import ResultsFileError, read_json_object
from custom_metrics.common.samples import read_samples
from custom_metrics.common.settings import judge_cache_dir
from custom_metrics.judge.available import JudgeUnavailable, check_available
from custom_metrics.judge.build import build_judge
from custom_metrics.judge.cache import CachedJudge, VerdictCacheError
from custom_metrics.judge.spec import JudgeSpec, parse_spec
from custom_metrics.judge.types import NLI_LABELS, UNPARSED
from custom_metrics.reg import rejudge_files
from custom_metrics.reg.data import judge_check_docs, load_items, with_judge
from custom_metrics.reg.judging import check_judge, judge_outputs, read_record, release_backend
from custom_metrics.reg.metrics import process_results, record_scores, unparsed_count
from custom_metrics.reg.outputs import Output

REG_TASK_PREFIX = "reg_chaos"
FILTER = "judged"
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


def _samples_file(results_file: Path, task: str) -> Path:
    stamp = results_file.stem[len("results_") :]
    path = results_file.with_name(f"samples_{task}_{stamp}.jsonl")
    if not path.is_file():
        raise DataError(
            f"{results_file}: task {task} has no samples file {path.name} beside it; the generations are only "
            "kept in the samples file: rerun with --log_samples"
        )
    return path


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
    path = _samples_file(results_file, task)
    return path, read_samples(path, _check_sample)


def _unjudged(samples: Sequence[dict[str, Any]]) -> int:
    return sum(bool(read_record(sample["filtered_resps"][0]).get("judge_error")) for sample in samples)


def check(results_file: Path, request: RejudgeRequest) -> None:
    """Before any judging: every REG task's samples file there and readable, and the judge that
    completes a run whose judge failed available."""
    results = _results(results_file)
    for task in _tasks(results):
        _, samples = _read(results_file, task)
        if request.complete and _unjudged(samples):
            _completing_judge(samples, request)


def _completing_judge(samples: Sequence[dict[str, Any]], request: RejudgeRequest) -> tuple[JudgeSpec, Path]:
    docs = [sample["doc"] for sample in samples]
    if request.complete_judge is not None:
        spec = request.complete_judge
    else:
        names = {doc.get("judge") for doc in docs}
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
        check_available(spec)
    except JudgeUnavailable as error:
        raise DataError(str(error)) from error
    return spec, cache


def _write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write_bytes(path, json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8"))


def _write_samples(path: Path, samples: Sequence[dict[str, Any]]) -> None:
    atomic_write_bytes(path, "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples).encode("utf-8"))


def _aggregations(task: str) -> dict[str, Any]:
    """The task's aggregation per metric, read from its YAML as lm-eval reads it."""
    from lm_eval.api.registry import get_aggregation
    from lm_eval.tasks._yaml_loader import load_yaml  # the harness' own YAML reader (includes, !function)

    from custom_metrics.common.task_folders import TASKS_PATH

    config = load_yaml(Path(TASKS_PATH) / "reg" / f"{task}.yaml")
    return {
        item["metric"]: get_aggregation(item["aggregation"])
        if isinstance(item["aggregation"], str)
        else item["aggregation"]
        for item in config["metric_list"]
    }


def aggregate(task: str, per_sample: Sequence[dict[str, Any]], bootstrap_iters: int) -> dict[str, Any]:
    """The task's results entry from its samples' metric values, as lm-eval aggregates them."""
    from lm_eval.api.metrics import stderr_for_metric

    entry: dict[str, Any] = {}
    for metric, function in _aggregations(task).items():
        items = [tuple(value) if isinstance(value, list) else value for value in (s[metric] for s in per_sample)]
        entry[f"{metric},{FILTER}"] = function(items)
        stderr = stderr_for_metric(metric=function, bootstrap_iters=bootstrap_iters) if bootstrap_iters > 0 else None
        entry[f"{metric}_stderr,{FILTER}"] = stderr(items) if stderr and len(items) > 1 else "N/A"
    return entry


def _logged_output(sample: dict[str, Any], record: dict[str, Any]) -> Output:
    """The generation as the run's judge saw it: its explanation and flag as recorded."""
    raw = sample["resps"][0][0] if sample.get("resps") and sample["resps"][0] else ""
    return Output(raw=str(raw), explanation=str(record["explanation"] or ""), thinking="", flag=record["flag"] or "")


def _judged_samples(
    samples: Sequence[dict[str, Any]], judge: CachedJudge, spec: JudgeSpec, cache: Path, check: dict[str, Any]
) -> list[dict[str, Any]]:
    """The samples as a run judged by ``judge`` would have logged them: the judge's verdicts in each
    record (everything else as logged), the docs naming the judge, the per-sample metrics anew."""
    records = [read_record(sample["filtered_resps"][0]) for sample in samples]
    docs = [{**sample["doc"], **with_judge([sample["doc"]], spec, cache)[0]} for sample in samples]
    outputs = [_logged_output(sample, record) for sample, record in zip(samples, records)]
    judged = []
    for sample, doc, record, new in zip(samples, docs, records, judge_outputs(judge, docs, outputs, check)):
        merged = {key: value for key, value in record.items() if key != "judge_error"}
        merged.update({key: new[key] for key in VERDICT_FIELDS})
        filtered = json.dumps(merged)
        judged.append({**sample, "doc": doc, "filtered_resps": [filtered], **process_results(doc, [filtered])})
    return judged


def _checked_judge(spec: JudgeSpec, cache: Path, judge_check: str) -> tuple[CachedJudge, dict[str, Any]]:
    """The judge built and checked on the gold items, as a run checks it before generation."""
    try:
        judge = build_judge(spec, cache_dir=cache)
        check = check_judge(judge, judge_check_docs(load_items()))
    except VerdictCacheError as error:
        raise DataError(str(error)) from error
    if check["degenerate"] and judge_check == "stop":
        raise DataError(
            f"judge {judge.name} is degenerate on the gold items of its check (accuracy {check['acc']:.2f}, answers "
            f"{check['answers']}): its N would be nearly empty or arbitrary. Pass a stronger judge, or "
            "--judge-check warn to judge with it anyway."
        )
    return judge, check


def _bootstrap_iters(results: dict[str, Any]) -> int:
    return int((results.get("config") or {}).get("bootstrap_iters", 100000) or 0)


def _complete(results_file: Path, results: dict[str, Any], request: RejudgeRequest) -> list[str]:
    """Judge in place every task's samples whose judge failed after generation; the tasks completed."""
    done = []
    for task in _tasks(results):
        samples_path, samples = _read(results_file, task)
        unjudged = _unjudged(samples)
        if not unjudged:
            print(f"{samples_path}: every sample holds its judge's verdicts; nothing to complete")
            continue
        spec, cache = _completing_judge(samples, request)
        judge, check = _checked_judge(spec, cache, "warn")  # the run chose already what a degenerate judge does
        judged = _judged_samples(samples, judge, spec, cache, check)
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
    folder = rejudge_files.judge_folder(results_file, spec.name, spec.display_name)
    tasks = _tasks(results)
    copy = {**results, "results": {task: dict(results["results"][task]) for task in tasks}}
    own = set()
    for task in tasks:
        samples_path, samples = _read(results_file, task)
        own.add(friendly_spec(_own_judge(samples)))
        judged = _judged_samples(samples, judge, spec, cache, check)
        _write_samples(folder / samples_path.name, judged)
        copy["results"][task].update(aggregate(task, judged, _bootstrap_iters(results)))
    release_backend(judge)
    path = rejudge_files.rejudged_results_file(folder, results_file)
    rejudged = rejudge_files.Rejudged(path, spec.name, spec.display_name, results_file, tuple(sorted(own)))
    _write_json(rejudged.path, {**copy, rejudge_files.BLOCK: rejudged.block()})
    print(f"{rejudged.path}: {', '.join(tasks)} judged again by {spec.display_name}")
    return rejudged.path


def rater(name: str, role: str, samples: Sequence[dict[str, Any]], path: Path) -> Rater:
    """A judge's decisions on a task's items and its metrics, read from its records.

    The metrics count as the task counts them (``metrics.record_scores``: a flagged output in
    N fails every criterion). The decisions on explanations are those call 2 made (items in
    N whose output holds an explanation, both verdicts parsed): a flagged output fails by
    rule, not by any judge's decision, so it counts in the metrics and not in the agreement.
    """
    decisions: dict[str, dict[str, str]] = {decision: {} for decision in DECISIONS}
    counts = {metric: [0, 0] for metric in METRICS}
    check: dict[str, Any] = {}
    scores: dict[str, dict[str, bool]] = {metric: {} for metric in METRICS}
    for sample in samples:
        record = read_record(sample["filtered_resps"][0])
        if record.get("judge_error") or not isinstance(record.get("initial"), dict):
            continue
        uid = sample["doc"]["uid"]
        decisions["J(p, h)"][uid] = record["initial"]["label"]
        counts["N"][0] += record["initial"]["label"] == "contradiction"
        counts["N"][1] += 1
        scores["N"][uid] = record["initial"]["label"] == "contradiction"
        for metric, value in record_scores(record).items():
            if metric in counts and value is not None:
                counts[metric][0] += int(value)
                counts[metric][1] += 1
                scores[metric][uid] = bool(value)
        effect, cohere = record.get("effectiveness"), record.get("coherence")
        if isinstance(effect, dict) and isinstance(cohere, dict):
            decisions["J(p;e, h)"][uid], decisions["J(p, e)"][uid] = effect["label"], cohere["label"]
            if UNPARSED not in (effect["label"], cohere["label"]):
                effective, coherent = effect["label"] == "entailment", cohere["label"] != "contradiction"
                decisions["effective"][uid] = "yes" if effective else "no"
                decisions["coherent"][uid] = "yes" if coherent else "no"
                decisions["success"][uid] = "yes" if effective and coherent else "no"
        unparsed, verdicts = unparsed_count(record)
        counts["unparsed"][0] += unparsed
        counts["unparsed"][1] += verdicts
        check = record.get("judge_check") or check
    if check.get("items"):
        counts["judge check"] = [round(check["acc"] * check["items"]), check["items"]]
    metrics = {metric: (value[0], value[1]) for metric, value in counts.items() if value[1]}
    return Rater(
        name, role, {d: v for d, v in decisions.items() if v}, metrics, path, {m: v for m, v in scores.items() if v}
    )


def _gold(samples: Sequence[dict[str, Any]]) -> Rater:
    labels = {
        sample["doc"]["uid"]: sample["doc"]["majority_label"] for sample in samples if "majority_label" in sample["doc"]
    }
    return Rater(f"gold: {GOLD_NAME}", GOLD, {"J(p, h)": labels} if labels else {})


def _own_judge(samples: Sequence[dict[str, Any]]) -> str:
    """The canonical name of the judge the run's records name (set by the filter, also when it failed)."""
    names = {read_record(sample["filtered_resps"][0]).get("judge") for sample in samples}
    return str(names.pop()) if len(names) == 1 else "several judges"


def run(results_file: Path, request: RejudgeRequest) -> list[RejudgedTask]:
    """Complete (when asked), judge again with each judge, and return each task's raters."""
    results = _results(results_file)
    if request.complete:
        _complete(results_file, results, request)
    own = {task: _own_judge(_read(results_file, task)[1]) for task in _tasks(results)}
    for spec in request.judges:
        if set(own.values()) == {spec.name}:
            print(f"{results_file}: {spec.display_name} is the run's own judge; its verdicts are the run's")
            continue
        _judge_again(results_file, results, spec, request)
    rejudged, problems = rejudge_files.rejudged_beside(results_file)
    for problem in problems:
        print(f"skipped {problem.path}: {problem.reason}", file=sys.stderr)
    labels = rejudge_files.labels(rejudged)
    judged = []
    for task in _tasks(results):
        samples_path, samples = _read(results_file, task)
        notes = [GOLD_NOTE]
        raters = []
        if _unjudged(samples):
            notes.append(
                f"the run's own judge ({friendly_spec(own[task])}) failed after generation, so its verdicts are "
                "missing: --complete judges them with it, in place"
            )
        else:
            raters.append(rater(friendly_spec(own[task]), RUN_JUDGE, samples, samples_path))
        for item in sorted(rejudged, key=lambda item: labels[item.path]):
            path = item.path.parent / samples_path.name
            if item.judge != own[task] and path.is_file():
                raters.append(rater(labels[item.path], AGAIN, read_samples(path, _check_sample), path))
        raters.append(_gold(samples))
        out = results_file.parent / rejudge_files.FOLDER
        judged.append(
            RejudgedTask(task, samples_path, out, tuple(raters), DECISIONS, METRICS, LABELS, tuple(notes), "success")
        )
    return judged
