"""RULE's split protocol in one command: per-split runs, mean and std, Table 3.

The paper (Appendix E) runs few-shot prompting five times, test split k with published
demonstration set k, and reports each metric as mean and standard deviation across the
runs; consistency and MainQ-wise SubQ accuracy come without a std in Table 2, so they
are also computed once over all runs pooled. Its few-shot settings differ by the number
of shots (``--shots 5``, Table 2; ``--shots 1``, Table 6) and the demonstrations: ReClor
questions (``--demos reclor``, "Five-Shot on ReClor"), RULE subquestions (``--demos rule``,
"Five-Shot on RULE" and Table 3) or ReClor questions with a rationale before the answer
(``--demos cot``, "InstructGPT + CoT"; ``cot_complex`` and ``cot_incorrect``, the prompt
file's other two). Zero-shot rows are reported the same way across the five subquestion
splits of a single ``rule`` run.

    explain-eval rule-protocol --output-path runs/rule5 [--shots 1] [--demos rule] \\
        --model hf --model_args pretrained=MODEL --batch_size 8 [--limit N]

Every argument not listed below goes to ``lm_eval`` unchanged. Each split is its own
``lm_eval`` process writing under ``OUTPUT/split<k>``; a rerun with the same arguments
skips the splits already done, so an interrupted protocol loses no finished run. A split
is done only when its samples file holds every sample its results file counts (a kill
while lm_eval writes samples leaves it cut short): an unfinished split's files are
renamed ``*.incomplete`` and it runs again, saying why. ``--summarize-only`` reads
finished runs without running anything, and refuses an unfinished one.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from custom_metrics.common.errors import DataError
from custom_metrics.common.file_kinds import samples_task
from custom_metrics.common.harness_api import options_given
from custom_metrics.common.harness_args import check_harness_args, check_tasks
from custom_metrics.common.harness_outputs import IncompleteRun, finished_samples, set_aside
from custom_metrics.common.task_folders import TASKS_PATH
from custom_metrics.rule import ARGS_FILE, SUMMARY_FILE
from custom_metrics.rule.data import DEMOS, SHOTS, SPLITS, demo_sets, demo_setting, fewshot_task, main_questions
from custom_metrics.rule.metrics import MAIN, SUB_KINDS, TABLE2_METRICS, Outcome, groups, none_acc, subq_acc

POOLED_ONLY = ("consistency", "mainq_wise_subq_acc")  # single numbers in Table 2
RESERVED = ("--tasks", "--output_path", "--log_samples", "--include_path", "--num_fewshot")


@dataclass
class Run:
    """The outcomes of one lm_eval task run, and whether ``--limit`` cut it."""

    outcomes: list[Outcome]
    limited: bool
    unparsed: int | None = None  # generations whose answer was not read (chain of thought; None: not generated)


def task_name(shots: int, split: int, demos: str = "reclor") -> str:
    """The task of run ``split``: zero-shot runs are one ``rule`` run, seen split by split."""
    return fewshot_task(shots, split, demos) if shots else "rule"


def read_run(folder: Path, task: str) -> Run:
    """Outcomes from the samples file a finished lm_eval ``--log_samples`` run left in ``folder``."""
    try:
        rows, counts = finished_samples(folder, task)
    except IncompleteRun as unfinished:
        raise IncompleteRun(
            f"{unfinished}. Run the protocol again (without --summarize-only) to redo it.", unfinished.leftovers
        ) from unfinished
    outcomes, unparsed = [], None
    for where, sample in rows:
        if "unparsed" in sample:
            unparsed = (unparsed or 0) + bool(sample["unparsed"])
        value = next((sample[m] for m in TABLE2_METRICS if m in sample), None)
        if value is None:
            raise DataError(f"{where}: no RULE metric field (e.g. 'subq_acc'); is this a {task} samples file?")
        try:
            outcomes.append(Outcome.parse(value))
        except (TypeError, ValueError) as err:
            raise DataError(f"{where}: the RULE metric field is not an outcome list ({err}).") from err
    original = counts.get("original")
    return Run(outcomes, isinstance(original, int) and counts["effective"] < original, unparsed)


def pooled(runs: Sequence[list[Outcome]]) -> dict[str, float | int]:
    """Consistency and MainQ-wise SubQ accuracy over all runs together: a main question counts when
    every run holding some of its subquestions holds all of them, and is consistent when those and
    the main question in every such run are right (none such: only demonstrated, left out)."""
    per_main: dict[str, list] = {}
    for outcomes in runs:
        for main_id, group in groups(outcomes).items():
            per_main.setdefault(main_id, []).append(group)
    consistent, scored, shares, incomplete, demo_only = 0, 0, [], 0, 0
    for main_groups in per_main.values():
        with_subs = [g for g in main_groups if g.size > 0]  # runs whose split has some of its subquestions
        if not with_subs:
            continue
        if not all(g.complete for g in with_subs):
            incomplete += 1
            continue
        subs = [s for g in with_subs for s in g.subs]
        shares.append(sum(s.correct for s in subs) / len(subs))
        mains = [g.main for g in with_subs if g.main is not None]
        if not mains:
            demo_only += 1
            continue
        scored += 1
        consistent += all(s.correct for s in subs) and all(m.correct for m in mains)
    return {
        "consistency": consistent / scored if scored else math.nan,
        "mainq_wise_subq_acc": statistics.fmean(shares) if shares else math.nan,
        "n_consistency": scored,
        "n_mainq_wise": len(shares),
        "n_incomplete": incomplete,
        "n_demo_only": demo_only,
    }


def summarize(
    per_split: dict[int, list[Outcome]],
    pooled_runs: Sequence[list[Outcome]],
    none_in_shot: dict[int, int],
    *,
    grouped_splits: bool,
) -> dict:
    """Per-split metrics, their mean and (population) std, pooled values and Table 3;
    ``grouped_splits``: each split is a run of its own, so consistency per split means something."""
    splits = {
        k: {
            name: fn(outcomes) if grouped_splits or name not in POOLED_ONLY else math.nan
            for name, fn in TABLE2_METRICS.items()
        }
        for k, outcomes in per_split.items()
    }
    across = {}
    for name in TABLE2_METRICS:
        values = [row[name] for row in splits.values() if not math.isnan(row[name])]
        across[name] = {
            "mean": statistics.fmean(values) if values else math.nan,
            "std": statistics.pstdev(values) if values else math.nan,
            "n_splits": len(values),
        }
    all_subs = [o for outcomes in per_split.values() for o in outcomes if o.kind in SUB_KINDS]
    table3 = {
        k: {"subq_acc": subq_acc(o), "none_in_shot": none_in_shot.get(k, 0), "none_acc": none_acc(o)}
        for k, o in per_split.items()
    }
    table3["pooled"] = {
        "subq_acc": subq_acc(all_subs),
        "none_in_shot": statistics.fmean(none_in_shot.values()) if none_in_shot else 0,
        "none_acc": none_acc(all_subs),
    }
    return {"splits": splits, "across_splits": across, "pooled": pooled(pooled_runs), "table3": table3}


def _pct(value: float) -> str:
    return "-" if value is None or math.isnan(value) else f"{100 * value:.1f}"


def render(summary: dict) -> str:
    """Markdown tables laid out like the paper's Table 2 row and Table 3."""
    names = list(TABLE2_METRICS)
    lines = ["| split | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for k, row in summary["splits"].items():
        lines.append(f"| {k} | " + " | ".join(_pct(row[n]) for n in names) + " |")
    cells, short = [], {}
    for name in names:
        if name in POOLED_ONLY:
            cells.append(f"{_pct(summary['pooled'][name])} (pooled)")
            continue
        stats, of = summary["across_splits"][name], len(summary["splits"])
        cells.append(_across(stats, of))
        if stats["n_splits"] < of:
            short[name] = stats["n_splits"]
    table = "Table 6" if summary.get("shots") == 1 else "Table 2"  # one-shot rows are Appendix G's
    lines.append(f"| {table}, {summary['setting']} | " + " | ".join(cells) + " |")
    lines += ["", "| split | Acc. | # None in shot | None Acc. |", "|---|---|---|---|"]
    for k, row in summary["table3"].items():
        lines.append(f"| {k} | {_pct(row['subq_acc'])} | {row['none_in_shot']} | {_pct(row['none_acc'])} |")
    pooled_counts = summary["pooled"]
    lines.append(
        f"\nPooled consistency over {pooled_counts['n_consistency']} main questions, MainQ-wise over "
        f"{pooled_counts['n_mainq_wise']} ({pooled_counts['n_incomplete']} incomplete, "
        f"{pooled_counts['n_demo_only']} only demonstrated left out)."
    )
    mains = summary.get("main_questions")
    if mains:
        shown = ", ".join(str(n) for n in mains["per_split"].values())
        lines.append(
            f"MainQ per run over {shown} of {mains['total']} main questions: each run leaves out the main "
            "questions its demonstrations show (Appendix E says every run asks all of them; see the task README)."
        )
    if summary.get("unparsed"):
        counts = ", ".join(f"split {k}: {row['unread']} of {row['docs']}" for k, row in summary["unparsed"].items())
        lines.append(f"Generations with no readable answer, counted wrong ({counts}).")
    if summary.get("limited"):
        lines.append("WARNING: the runs were cut by --limit; these are not full-data numbers.")
    if short:
        held = ", ".join(f"{name} {count}" for name, count in short.items())
        lines.append(
            f"WARNING: some metrics rest on fewer than the {len(summary['splits'])} splits ({held}): a mean over "
            "fewer splits is not the paper's, and one split gives no spread. "
            "Main questions and their subquestions interleave in the documents, so a small --limit reaches few "
            "splits: raise it, or choose documents with --samples."
        )
    return "\n".join(lines)


def _across(stats: dict, splits: int) -> str:
    """Mean ± std over the splits that hold the metric, saying how many when not all do."""
    if stats["n_splits"] == 0:
        return "-"
    if stats["n_splits"] == 1:
        return f"{_pct(stats['mean'])} (1 of {splits} splits, no spread)"
    cell = f"{_pct(stats['mean'])} ± {_pct(stats['std'])}"
    return cell if stats["n_splits"] == splits else f"{cell} ({stats['n_splits']} of {splits} splits)"


def harness_command(lm_eval_args: list[str], task: str, include_path: Path, folder: Path) -> list[str]:
    """The ``lm_eval`` arguments of one split run: the user's, then what the protocol sets."""
    return [
        *lm_eval_args,
        "--tasks",
        task,
        "--include_path",
        str(include_path),
        "--log_samples",
        "--output_path",
        str(folder),
    ]


def check_harness(lm_eval_args: list[str], shots: int, include_path: Path, demos: str) -> None:
    """Everything the split runs would be refused for, before any state is written or any
    ``lm_eval`` starts: options the protocol sets itself, arguments lm-eval would refuse (a
    model without ``pretrained``, an unknown option, ``--limit 0``), its tasks missing from
    ``include_path``."""
    clash = sorted(options_given(lm_eval_args) & set(RESERVED))
    if clash:
        raise DataError(f"rule-protocol sets {', '.join(RESERVED)} itself; remove {', '.join(clash)}.")
    tasks = [task_name(shots, k, demos) for k in (SPLITS if shots else (0,))]
    check_harness_args(harness_command(lm_eval_args, tasks[0], include_path, Path("OUT")), "rule-protocol")
    check_tasks(tasks, include_path, "--include-path", defaults=False)  # the suite's own tasks


def _any_split_finished(output: Path) -> bool:
    """Whether some split run under ``output`` is done: only then do its settings bind the folder."""
    for folder in [*sorted(output.glob("split*")), output / "zeroshot"]:
        tasks = {samples_task(path.name) for path in folder.glob("**/samples_*.jsonl")} - {None}
        for task in sorted(tasks):
            try:
                finished_samples(folder, task)
                return True
            except IncompleteRun:
                continue
    return False


def _check_args(output: Path, lm_eval_args: list[str], shots: int, demos: str) -> None:
    """Refuse to resume a protocol whose finished runs were made with other settings (it
    would mix two models); a folder where no split finished takes the new settings."""
    record = output / ARGS_FILE
    wanted: dict = {"shots": shots, "lm_eval_args": lm_eval_args}
    if demos != "reclor":  # folders started before --demos existed hold ReClor runs
        wanted["demos"] = demos
    try:  # a damaged record says which file and what to do
        recorded = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else wanted
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise SystemExit(
            f"{record}: not the JSON record of a protocol run's settings ({err}); if its runs are yours, "
            "restore or delete the file (the next run records its own settings), else use a new --output_path."
        ) from None
    if recorded != wanted:
        if _any_split_finished(output):
            raise SystemExit(f"{output} holds a protocol run with other settings ({record}); use a new --output_path.")
        print(f"[rule-protocol] {record}: no split finished with the earlier settings; now these", file=sys.stderr)
    output.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(wanted, indent=1))


def run_protocol(output: Path, lm_eval_args: list[str], shots: int, include_path: Path, demos: str) -> None:
    check_harness(lm_eval_args, shots, include_path, demos)
    _check_args(output, lm_eval_args, shots, demos)
    folders = {k: output / f"split{k}" for k in SPLITS} if shots else {0: output / "zeroshot"}
    for key, folder in folders.items():
        task = task_name(shots, key, demos)
        try:
            finished_samples(folder, task)
            print(f"[rule-protocol] {task}: done earlier, kept ({folder})", file=sys.stderr)
            continue
        except IncompleteRun as unfinished:
            if unfinished.leftovers:
                moved = ", ".join(path.name for path in set_aside(unfinished.leftovers))
                print(f"[rule-protocol] {task}: running again, {unfinished} (set aside: {moved})", file=sys.stderr)
        command = [sys.executable, "-m", "lm_eval", *harness_command(lm_eval_args, task, include_path, folder)]
        print(f"[rule-protocol] running {task}", file=sys.stderr)
        code = subprocess.run(command).returncode
        if code:
            raise DataError(
                f"lm_eval exited {code} on {task} (its messages above); the finished splits are kept: "
                "fix the cause and run the same command again to go on."
            )


def collect(output: Path, shots: int, demos: str = "reclor") -> dict:
    extra: dict = {}
    if shots:
        runs = {k: read_run(output / f"split{k}", task_name(shots, k, demos)) for k in SPLITS}
        per_split = {k: run.outcomes for k, run in runs.items()}
        pooled_runs = list(per_split.values())
        sets = demo_sets(demos, shots)
        none_in_shot = {demo.index: demo.none_gold for demo in sets}
        limited = any(run.limited for run in runs.values())
        if any(demo.main_ids for demo in sets):  # Appendix E: the demonstrated main questions are not asked
            per_run = {k: sum(o.kind == MAIN for o in outcomes) for k, outcomes in per_split.items()}
            extra["main_questions"] = {"per_split": per_run, "total": len(main_questions())}
        if any(run.unparsed is not None for run in runs.values()):
            extra["unparsed"] = {k: {"unread": run.unparsed or 0, "docs": len(run.outcomes)} for k, run in runs.items()}
    else:
        run = read_run(output / "zeroshot", "rule")
        # the run seen split by split: every main question, each split's subquestions
        per_split = {k: [o for o in run.outcomes if o.kind == MAIN or o.split == k] for k in SPLITS}
        pooled_runs = [run.outcomes]
        none_in_shot = {k: 0 for k in SPLITS}
        limited = run.limited
    summary = summarize(per_split, pooled_runs, none_in_shot, grouped_splits=shots != 0)
    summary.update({"shots": shots, "setting": demo_setting(shots, demos), "limited": limited, **extra})
    return summary


def _without_nan(value):
    """NaN (an empty category) as JSON null, so strict JSON readers accept the summary."""
    if isinstance(value, dict):
        return {key: _without_nan(item) for key, item in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="explain-eval rule-protocol", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--output-path",
        "--output_path",
        type=Path,
        required=True,
        help="protocol folder: one lm_eval run per split (split<k>/ or zeroshot/) and the summary",
    )
    parser.add_argument(
        "--shots",
        type=int,
        choices=(0, *SHOTS),
        default=5,
        help="5: five-shot, one run per split (default; Table 2); 1: one-shot, the same way (Table 6); "
        "0: one zero-shot run, reported per split",
    )
    parser.add_argument(
        "--demos",
        choices=sorted(DEMOS),
        default="reclor",
        help="demonstrations: ReClor questions (reclor, Table 2), RULE subquestions (rule, Table 3), ReClor "
        "questions with a rationale before the answer (cot, the paper's chain of thought; cot_complex and "
        "cot_incorrect, the prompt file's other two), whose answers the model generates",
    )
    parser.add_argument(
        "--include-path",
        "--include_path",
        type=Path,
        default=TASKS_PATH,
        help="folder holding the rule/ task folder (default: the installed tasks, explain-eval tasks-path)",
    )
    parser.add_argument(
        "--summarize-only", action="store_true", help="summarize the finished runs in OUTPUT_PATH; run nothing"
    )
    args, lm_eval_args = parser.parse_known_args(argv)
    if args.shots == 0 and args.demos != "reclor":
        parser.error("--demos chooses few-shot demonstrations; zero-shot has none")
    output = args.output_path.resolve()
    if not args.summarize_only:
        run_protocol(output, lm_eval_args, args.shots, args.include_path.resolve(), args.demos)
    summary = collect(output, args.shots, args.demos)
    (output / SUMMARY_FILE).write_text(json.dumps(_without_nan(summary), indent=1))
    print(render(summary))
    print(f"\n[rule-protocol] summary written to {output / SUMMARY_FILE}", file=sys.stderr)
    return 0
