"""``explain-eval judge-humans --judge SPEC [--judge SPEC ...]``: any NLI judge against ChaosNLI's
100 human labels per item, as ChaosNLI scores models, beside the authors' model rows.

REG's verdicts rest on one judge: this measures any judge spec on the items of
``reg_judge_humans``, through the verdict cache, without a run. A judge that answers with text
gives one-hot distributions, floored as ChaosNLI floors them, so its KL is large by construction.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import atomic_write_bytes
from custom_metrics.common.rejudging import told_apart
from custom_metrics.common.settings import judge_cache_dir
from custom_metrics.judge.available import JudgeUnavailable, check_available
from custom_metrics.judge.build import build_judge
from custom_metrics.judge.human_agreement import Agreement, item_agreement, summarize
from custom_metrics.judge.spec import JudgeSpec, parse_spec
from custom_metrics.reg.data import load_items
from custom_metrics.reg.published import CHAOSNLI_N, CHAOSNLI_SOURCE, chaosnli_rows

COLUMNS = "| judge | n | JSD | KL | accuracy | unparsed | verdicts |"
PROGRESS_ITEMS = 20  # items judged between two progress lines


def _spec(text: str) -> JudgeSpec:
    try:
        spec = parse_spec(text)
        check_available(spec)
    except (ValueError, JudgeUnavailable) as error:
        raise DataError(f"--judge {text}: {error}") from error
    return spec


def judge_names(specs: Sequence[JudgeSpec]) -> dict[str, JudgeSpec]:
    """Each judge by the name its row and JSON key show: its display name, told apart where another
    judge's reads the same (two checkpoints in folders both called ``final``), as ``rejudge`` names
    judges; a judge given twice is measured once. One name for two judges kept the last one's numbers."""
    judges = list({spec.name: spec for spec in specs}.values())
    shown = Counter(spec.display_name for spec in judges)
    return {
        spec.display_name if shown[spec.display_name] == 1 else told_apart(spec.display_name, spec.name): spec
        for spec in judges
    }


def measure(
    name: str, spec: JudgeSpec, items: Sequence[dict[str, Any]], cache: Path
) -> tuple[Agreement, dict[str, int]]:
    """One judge on the items: ChaosNLI's means and how its verdicts were made (``Verdict.method``).
    The items go to the judge ``PROGRESS_ITEMS`` at a time, each part a line on stderr: a judge on
    a CPU takes about a second an item, and all 1,599 items were half an hour without a word."""
    started = time.monotonic()
    print(f"judge-humans: {name}: loading, then {len(items):,} items", file=sys.stderr, flush=True)
    judge = build_judge(spec, cache_dir=cache)
    verdicts = []
    try:
        for start in range(0, len(items), PROGRESS_ITEMS):
            part = items[start : start + PROGRESS_ITEMS]
            verdicts += judge.judge([(doc["premise"], doc["hypothesis"]) for doc in part])
            took = time.monotonic() - started
            print(f"judge-humans: {name}: {len(verdicts):,} of {len(items):,} items ({took:.0f} s)", file=sys.stderr)
    finally:
        judge.release()
    scored = [
        item_agreement(doc["label_count"], doc["majority_label"], verdict.probs, verdict.label)
        for doc, verdict in zip(items, verdicts, strict=True)
    ]
    return summarize(scored), dict(Counter(verdict.method for verdict in verdicts))


def markdown(results: dict[str, tuple[Agreement, dict[str, int]]]) -> str:
    lines = [COLUMNS, "|---|---|---|---|---|---|---|"]
    for name, (result, methods) in results.items():
        numbers = f"{result.n:,} | {result.jsd:.4f} | {result.kl:.4f} | {result.acc:.4f} | {result.unparsed}"
        lines.append(f"| {name} | {numbers} | {', '.join(f'{n} {method}' for method, n in sorted(methods.items()))} |")
    for name, (jsd, kl, acc) in chaosnli_rows().items():
        lines.append(f"| {name} (published) | {CHAOSNLI_N:,} | {jsd:.4f} | {kl:.4f} | {acc:.4f} | - | fine-tuned |")
    lines += [
        "",
        "JSD: Jensen-Shannon distance (natural log) between the judge's and the humans' label distributions; KL: "
        "KL(humans || judge), the judge's probabilities floored at 1e-15; accuracy: against the 100-annotator "
        "majority. "
        f"Published rows: {CHAOSNLI_SOURCE}, all {CHAOSNLI_N:,} items; they compare with a run on all items only.",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="explain-eval judge-humans", description=__doc__.split("\n\n")[0])
    parser.add_argument("--judge", action="append", required=True, metavar="SPEC", help="a judge spec; repeatable")
    parser.add_argument("--limit", type=int, help="the first N items only (their numbers do not compare with the rows)")
    parser.add_argument("--judge-cache", type=Path, help="verdict cache folder (default: the suite's)")
    parser.add_argument("--out", type=Path, help="also write every number to this JSON file")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error(f"--limit must be at least 1, got {args.limit}")
    specs = [_spec(text) for text in args.judge]  # every judge found before the first verdict
    items = load_items()[: args.limit]
    cache = (args.judge_cache or judge_cache_dir()).expanduser().resolve()
    results = {name: measure(name, spec, items, cache) for name, spec in judge_names(specs).items()}
    print(markdown(results))
    if args.out:
        data = {
            "items": len(items),
            "judges": {name: {**asdict(result), "verdicts": methods} for name, (result, methods) in results.items()},
            "published": {
                "source": CHAOSNLI_SOURCE,
                "n": CHAOSNLI_N,
                "rows": {name: dict(zip(("jsd", "kl", "acc"), row)) for name, row in chaosnli_rows().items()},
            },
        }
        atomic_write_bytes(args.out, json.dumps(data, indent=2).encode("utf-8"))
        print(f"every number: {args.out}")
    return 0
