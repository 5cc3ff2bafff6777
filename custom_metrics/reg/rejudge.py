"""``explain-eval reg-rejudge OUT``: judge a REG run whose judge failed after generation.

A judge checked before generation can still die during it (an endpoint restarted, a node
lost). The generations are then kept: ``REGJudgeFilter`` records the failure instead of
raising, so lm-eval writes the samples file, with n and every judge metric NaN. This
command judges those samples with the judge working again and rewrites the samples and
results files in place, as the uninterrupted run would have written them: the same
records, per-sample metrics and aggregates (lm-eval's own standard errors). It sends the
model under test nothing; verdicts already in the cache (the gold items of the check)
are not asked again. lm-eval's ``--use_cache`` cannot do this: it never reuses sampled
generations, and REG samples (Qwen's recommended parameters).

    explain-eval reg-rejudge OUT [--judge SPEC] [--judge-cache DIR]

``OUT`` is the run's ``--output_path`` (or a folder or results file below it). Without
``--judge`` each task is judged by the judge it names (its canonical spec, which holds
every option that changes verdicts; pass ``--judge`` for a new URL or speed options).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.judge.available import JudgeUnavailable, check_available
from custom_metrics.judge.build import build_judge
from custom_metrics.judge.spec import JudgeSpec, parse_spec
from custom_metrics.reg.data import judge_check_docs, load_items, with_judge
from custom_metrics.reg.generation import split_outputs
from custom_metrics.reg.judging import check_judge, judge_outputs, read_record
from custom_metrics.reg.metrics import process_results

REG_TASK_PREFIX = "reg_chaos"
FILTER = "judged"


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.rejudge")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _results_files(target: Path) -> list[Path]:
    if target.is_file():
        return [target]
    found = sorted(target.rglob("results_*.json"))
    if not found:
        raise DataError(f"{target}: no lm-eval results file (results_*.json) under it; pass the run's --output_path")
    return found


def _samples_file(results_file: Path, task: str) -> Path:
    stamp = results_file.stem[len("results_") :]
    path = results_file.with_name(f"samples_{task}_{stamp}.jsonl")
    if not path.is_file():
        raise DataError(
            f"{results_file}: task {task} has no samples file {path.name} beside it; the generations are only "
            "kept in the samples file: rerun with --log_samples"
        )
    return path


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


def rejudge_task(samples: list[dict[str, Any]], judge: JudgeSpec | None, judge_cache: str | None) -> int:
    """Judge one task's samples again in place; how many records had no verdicts."""
    docs = [sample["doc"] for sample in samples]
    unjudged = sum(bool(read_record(sample["filtered_resps"][0]).get("judge_error")) for sample in samples)
    names = {doc["judge"] for doc in docs}
    if judge is None and len(names) != 1:
        raise DataError(f"the samples name {len(names)} judges ({', '.join(sorted(names))}); pass --judge")
    try:
        spec = judge or parse_spec(names.pop())
    except ValueError as err:
        raise DataError(f"{err}; pass --judge") from err
    cache = Path(judge_cache or docs[0]["judge_cache"]).expanduser().resolve()
    try:
        check_available(spec)
    except JudgeUnavailable as err:
        raise DataError(str(err)) from err
    docs = [{**doc, **with_judge([doc], spec, cache)[0]} for doc in docs]
    judged = build_judge(spec, cache_dir=cache)
    check = check_judge(judged, judge_check_docs(load_items()))
    outputs = split_outputs([sample["resps"][0] for sample in samples], docs)
    for sample, doc, record in zip(samples, docs, judge_outputs(judged, docs, outputs, check)):
        filtered = json.dumps(record)
        sample["doc"], sample["filtered_resps"] = doc, [filtered]
        sample.update(process_results(doc, [filtered]))
    return unjudged


def rejudge_results_file(path: Path, judge: JudgeSpec | None, judge_cache: str | None) -> list[str]:
    """Rejudge every REG generation task of one results file; the tasks rewritten."""
    results = json.loads(path.read_text(encoding="utf-8"))
    bootstrap_iters = int((results.get("config") or {}).get("bootstrap_iters", 100000) or 0)
    done = []
    for task in sorted(results.get("results", {})):
        if not task.startswith(REG_TASK_PREFIX):
            continue
        samples_path = _samples_file(path, task)
        samples = [json.loads(line) for line in samples_path.read_text(encoding="utf-8").splitlines() if line.strip()]
        unjudged = rejudge_task(samples, judge, judge_cache)
        if not unjudged and judge is None:
            print(f"{samples_path}: every sample was judged already; nothing to do")
            continue
        lines = "".join(json.dumps(sample, ensure_ascii=False) + "\n" for sample in samples)
        _write_atomically(samples_path, lines)
        results["results"][task] = {**results["results"][task], **aggregate(task, samples, bootstrap_iters)}
        done.append(task)
        print(f"{samples_path}: judged {len(samples)} samples ({unjudged} had no verdicts)")
    if done:
        _write_atomically(path, json.dumps(results, indent=2, ensure_ascii=False))
    return done


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="explain-eval reg-rejudge", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the run's --output_path, a folder below it, or a results file")
    parser.add_argument("--judge", help="judge spec (default: the one each task's samples name)")
    parser.add_argument("--judge-cache", help="verdict cache folder (default: the one each task's samples name)")
    args = parser.parse_args(argv)
    try:
        judge = parse_spec(args.judge) if args.judge else None
    except ValueError as err:
        raise DataError(str(err)) from err
    done = [task for path in _results_files(args.out) for task in rejudge_results_file(path, judge, args.judge_cache)]
    if not done and judge is None:
        print("reg-rejudge: no REG sample without verdicts; nothing rewritten", file=sys.stderr)
    return 0
