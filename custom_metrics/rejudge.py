"""``explain-eval rejudge RUN --judge SPEC [--judge SPEC ...]``: a logged run judged again by
other judges, their metrics side by side and how much they agree.

Each paper says which of its tasks a judge decides (``PaperSpec.rejudge``). Every judge named
decides the same logged outputs again (nothing is sent to the model under test), and each
judge's verdicts and metrics are written beside the run, never over it (``agreement_<samples
file>.json`` with every number, ``.md`` to read), with the judges' agreement per decision and
per pair of raters (``judge.agreement``), their vote (``judge.ensemble``) and, over several runs
of one task, the rankings they give (``judge.agreement``): docs/comparing-models.md,
"Judged numbers".

Every judge is parsed and found (its folder, Hub cache entry or server) and every logged file
read before the first judgment.
"""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import atomic_write_bytes
from custom_metrics.common.rejudging import GOLD, RejudgedTask, RejudgeRequest, Rejudging
from custom_metrics.common.settings import judge_cache_dir
from custom_metrics.judge.agreement import RESAMPLES, SEED, Agreement, agreement, exact_interval, rankings
from custom_metrics.judge.agreement import write as write_ranking
from custom_metrics.judge.available import JudgeUnavailable, check_available
from custom_metrics.judge.build import build_judge
from custom_metrics.judge.cache import VerdictCacheError
from custom_metrics.judge.ensemble import VOTE, Vote, with_vote
from custom_metrics.judge.ensemble import markdown as vote_markdown
from custom_metrics.judge.spec import JudgeSpec, parse_spec
from custom_metrics.leaderboard.registry import PAPERS

INTERVALS = (
    "Shares (metrics, raw agreement): exact (Clopper-Pearson) 95% binomial intervals. Cohen's kappa and MCC: "
    f"95% percentile bootstrap over items ({RESAMPLES:,} resamples, seed {SEED}); resamples on which one is "
    "undefined are left out and counted."
)


def _spec(text: str, option: str) -> JudgeSpec:
    try:
        return parse_spec(text)
    except ValueError as error:
        raise DataError(f"{option}: {error}") from error


def _hook(rejudging: Rejudging) -> Any:
    return importlib.import_module(rejudging.module)


def targets(runs: Sequence[Path]) -> list[tuple[Path, Rejudging]]:
    """Every logged file under ``runs`` that a paper's judge decided, with that paper's hook."""
    missing = [str(path) for path in runs if not path.exists()]
    if missing:
        raise DataError(f"no such file or folder: {', '.join(missing)}")
    found = [
        (path, spec.rejudge)
        for run in runs
        for spec in PAPERS
        if spec.rejudge is not None
        for path in _hook(spec.rejudge).find(run)
    ]
    if not found:
        judged = "; ".join(f"{spec.key.upper()}: {spec.rejudge.what}" for spec in PAPERS if spec.rejudge)
        raise DataError(
            f"{', '.join(map(str, runs))}: no logged run of a task a judge decides (results file with its samples "
            f"beside it). Judged tasks: {judged}. The other papers' tasks have no judge to ask again in their logged "
            "runs (docs/comparing-models.md, 'Judged numbers': where a judge applies)."
        )
    return found


def _share(count: tuple[int, int] | None) -> str:
    if count is None:
        return "–"
    k, n = count
    return f"{_number(k / n, exact_interval(k, n))} ({k}/{n})"


def _number(value: float | None, interval: tuple[float, float] | None) -> str:
    if value is None:
        return "undefined"
    return f"{value:.3f}" + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "")


Compared = list[tuple[str, str, str, Agreement]]  # (decision, rater A, rater B, their agreement)


def agreements(task: RejudgedTask) -> Compared:
    """(decision, rater A, rater B, agreement) for every decision and every two raters that made it."""
    return [
        (decision, a.name, b.name, agreement(a.decisions[decision], b.decisions[decision], task.label_order))
        for decision in task.decisions
        for a, b in combinations([rater for rater in task.raters if decision in rater.decisions], 2)
    ]


def spreads(task: RejudgedTask) -> dict[str, float]:
    """Each metric's spread over the judges that report it: the largest share minus the smallest."""
    result = {}
    for metric in task.metrics:
        judges = [rater for rater in task.raters if rater.role not in (GOLD, VOTE)]  # the vote is no judge
        values = [k / n for k, n in (r.metrics[metric] for r in judges if metric in r.metrics)]
        if len(values) > 1:
            result[metric] = max(values) - min(values)
    return result


def write(task: RejudgedTask, vote: Vote | None = None) -> tuple[Path, Path, str]:
    """The task's tables, written beside the run: (JSON file with every number, markdown file, the markdown)."""
    compared = agreements(task)
    data = {
        "task": task.task,
        "source": str(task.source),
        "raters": [
            {
                "name": rater.name,
                "role": rater.role,
                "file": str(rater.path) if rater.path else None,
                "metrics": {
                    metric: {"count": k, "of": n, "share": k / n, "interval": exact_interval(k, n)}
                    for metric, (k, n) in rater.metrics.items()
                },
            }
            for rater in task.raters
        ],
        "spread": spreads(task),
        "agreement": [
            {"decision": decision, "a": a, "b": b, **result.as_dict()} for decision, a, b, result in compared
        ],
        "intervals": INTERVALS,
        "notes": list(task.notes),
        "vote": vote.as_dict() if vote else None,
    }
    text = markdown(task, data, compared) + vote_markdown(vote)
    json_file = task.out / f"agreement_{task.source.stem}.json"
    atomic_write_bytes(json_file, json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8"))
    markdown_file = json_file.with_suffix(".md")
    atomic_write_bytes(markdown_file, text.encode("utf-8"))
    return json_file, markdown_file, text


def markdown(task: RejudgedTask, data: dict[str, Any], compared: Compared) -> str:
    """The tables as a reader reads them: metrics per judge side by side, then agreement per pair."""
    judges = [rater for rater in task.raters if rater.role != GOLD]
    lines = [
        f"## {task.task}: {task.source}",
        "",
        "### Metrics per judge",
        "",
        "| judge | role | " + " | ".join(task.metrics) + " |",
        "|---|---|" + "---|" * len(task.metrics),
    ]
    for rater in judges:
        cells = [_share(rater.metrics.get(metric)) for metric in task.metrics]
        lines.append(f"| {rater.name} | {rater.role} | " + " | ".join(cells) + " |")
    if data["spread"]:
        cells = [f"{data['spread'][m]:.3f}" if m in data["spread"] else "–" for m in task.metrics]
        lines.append("| spread (max − min) | | " + " | ".join(cells) + " |")
    lines += [
        "",
        "### Agreement",
        "",
        "| decision | A | B | items | raw agreement | Cohen's kappa | MCC | confusion matrix (rows A, columns B) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for decision, a, b, result in compared:
        raw = _number(result.raw, result.raw_interval)
        matrix = "; ".join(f"{label}: {' '.join(map(str, row))}" for label, row in zip(result.labels, result.matrix))
        header = f"[{' '.join(result.labels)}] " if result.labels else ""
        lines.append(
            f"| {decision} | {a} | {b} | {result.n} | {raw} | {_number(result.kappa, result.kappa_interval)} | "
            f"{_number(result.mcc, result.mcc_interval)} | {header}{matrix} |"
        )
    undefined = [f"{decision}, {a} vs {b}: {r.undefined}" for decision, a, b, r in compared if r.undefined]
    lines += ["", INTERVALS, *(f"- {note}" for note in (*undefined, *task.notes)), ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="explain-eval rejudge", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (searched) or results files")
    parser.add_argument(
        "--judge", action="append", default=[], metavar="SPEC", help="a judge to judge the run again; repeatable"
    )
    parser.add_argument(
        "--complete",
        nargs="?",
        const="",
        metavar="SPEC",
        help="first judge, in place, the samples whose judge failed after generation, with the judge they name "
        "(or SPEC, e.g. the same judge at a new URL)",
    )
    parser.add_argument(
        "--judge-cache",
        help="verdict cache folder (default: $EXPLAIN_EVAL_JUDGE_CACHE, else the suite's cache; for --complete, "
        "the one the samples name)",
    )
    parser.add_argument(
        "--judge-check",
        choices=("stop", "warn"),
        default="stop",
        help="a judge degenerate on the gold items of its check: stop (default), or judge with it anyway",
    )
    args = parser.parse_args(argv)
    if not args.judge and args.complete is None:
        parser.error("name a judge to judge the run again (--judge SPEC, repeatable), or --complete")
    cache = Path(args.judge_cache).expanduser().resolve() if args.judge_cache else None
    judges = {spec.name: spec for spec in (_spec(text, "--judge") for text in args.judge)}
    for spec in judges.values():  # its model or server there and its verdict cache writable: nothing loaded
        try:
            build_judge(spec, cache_dir=cache or judge_cache_dir()).cache.check_writable()
            check_available(spec)
        except (JudgeUnavailable, VerdictCacheError) as error:
            raise DataError(str(error)) from error
    complete_judge = _spec(args.complete, "--complete") if args.complete else None
    request = RejudgeRequest(tuple(judges.values()), cache, args.judge_check, args.complete is not None, complete_judge)
    found = targets([path.expanduser().resolve() for path in args.runs])
    for path, rejudging in found:
        _hook(rejudging).check(path, request)
    judged = []
    for path, rejudging in found:
        for task in _hook(rejudging).run(path, request):
            task, vote = with_vote(task)
            json_file, markdown_file, text = write(task, vote)
            print(text)
            print(f"agreement tables: {markdown_file} (every number: {json_file})")
            judged.append(task)
    for ranking in rankings(judged):  # a task judged in several runs: do the raters rank them alike
        markdown_file, text = write_ranking(ranking)
        print(text)
        print(f"rank agreement: {markdown_file} (every number: {markdown_file.with_suffix('.json')})")
    return 0


def reg_rejudge(argv: Sequence[str] | None = None) -> int:
    """``explain-eval reg-rejudge OUT [--judge SPEC] [--judge-cache DIR]``, kept as it was: the special case
    ``explain-eval rejudge OUT --complete [SPEC]``."""
    parser = argparse.ArgumentParser(
        prog="explain-eval reg-rejudge",
        description="Judge a REG run whose judge failed after generation, from its samples file (no generation): "
        "explain-eval rejudge OUT --complete [SPEC].",
    )
    parser.add_argument("out", help="the run's --output_path, a folder below it, or a results file")
    parser.add_argument("--judge", help="judge spec (default: the one each task's samples name)")
    parser.add_argument("--judge-cache", help="verdict cache folder (default: the one each task's samples name)")
    args = parser.parse_args(argv)
    rest = ["--judge-cache", args.judge_cache] if args.judge_cache else []
    return main([args.out, f"--complete={args.judge or ''}", *rest])
