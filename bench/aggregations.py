"""Every custom aggregation the suite's tasks name, called 10,000 times on a full-size input.

    python -m bench.aggregations [--calls 10000] [--budget-s 60] [--only NAME,...]

lm-eval 0.5 estimates the standard error of every aggregation but its own ``mean`` by
bootstrap: 100,000 resamples by default, each one call of the aggregation on a list as long
as the task's. So what one call costs, times 100,000, is what a task's metric adds to a run
(spread over the pool's workers). Each aggregation named by ``aggregation: !function
utils.<name>`` in a task YAML gets the values its ``process_results`` hands it, as many as
the full data gives (800 GEESE docs, 3,946 RULE docs, a RULE CoT run's 3,946 generations
re-asked six times, ChaosNLI's 1,599 items...): the real docs where their structure matters
(GEESE's gold labels, RULE's groups of subquestions), the model's side drawn with a fixed
seed. An aggregation that would take longer than ``--budget-s`` is timed on fewer calls and
its time scaled to ``--calls`` (the table says so). Its value on the input is printed beside
the time, so a faster implementation can be checked to give the same number. Writes the
``aggregations`` section of bench/results.json.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import random
import re
import time
from collections.abc import Callable
from dataclasses import astuple
from typing import Any

from bench.common import REPO, figure, save_section, setup_env, table

PAPERS = ("geese", "rule", "reg", "ibe")
SEED = 0
RULE_MAIN_QUESTIONS = 943  # the biased tasks ask RULE's main questions
# A full bootstrap (lm-eval's default 100,000 resamples) of any one aggregation within 10 minutes
# of one core: 6 ms a call.
TARGET_10K_S = 60.0
_AGGREGATION = re.compile(r"aggregation:\s*!function\s+utils\.(\w+)")


def declared() -> dict[str, set[str]]:
    """The custom aggregations each paper's task YAMLs name (paper -> function names)."""
    found: dict[str, set[str]] = {}
    for paper in PAPERS:
        for path in sorted((REPO / "lm_eval_tasks" / paper).iterdir()):
            if path.is_file() and (path.suffix == ".yaml" or path.name.endswith("_yaml")):
                found.setdefault(paper, set()).update(_AGGREGATION.findall(path.read_text(encoding="utf-8")))
    return found


def _answers(rng: random.Random, generations: int, conditions: list[tuple[str, float]]) -> list[list[Any]]:
    """A faithfulness task's items (``astuple`` of an ``Answer``): every generation re-asked under each condition."""
    from custom_metrics.common.faithfulness import Answer

    items = []
    for generation in range(generations):
        unread = rng.random() < 0.03
        usable = rng.random() > 0.05
        for condition, fraction in conditions:
            same = None if unread or not usable else rng.random() < 0.5 + 0.5 * fraction
            answer = Answer(f"g{generation}", condition, fraction, same, rng.random() < 0.6, usable)
            items.append(list(astuple(answer)))
    return items


def _biased(rng: random.Random, doc_id: str) -> list[Any]:
    """A biased task's item (a logged ``BiasedAnswer``): the bias on a wrong option two times in three,
    followed half the time; no chain of thought (``None``) for a fifth of the docs."""
    from custom_metrics.common.classification import NO_PREDICTION

    gold = rng.randrange(4)
    target = gold if rng.random() < 1 / 3 else rng.choice([option for option in range(4) if option != gold])
    answer = NO_PREDICTION if rng.random() < 0.01 else target if rng.random() < 0.5 else rng.randrange(4)
    mention = None if rng.random() < 0.2 else rng.choice(["", "", "the suggested answer"])
    return [doc_id, gold, target, answer, mention]


def inputs(rng: random.Random) -> dict[str, list[Any]]:
    """Per input kind, the values ``process_results`` gives on the full data (model outputs drawn)."""
    from custom_metrics.common.classification import NO_PREDICTION
    from custom_metrics.common.faithfulness import EARLY, FILLER, FRACTIONS
    from custom_metrics.geese.data import LABELS, load_docs
    from custom_metrics.ibe.data import ECARE_TEST_SIZE, ORDER_SHOWN, ORDER_SWAPPED
    from custom_metrics.reg.data import load_items
    from custom_metrics.rule.answers import read_answer
    from custom_metrics.rule.edits import MISTAKE, PARAPHRASE
    from custom_metrics.rule.metrics import answered
    from custom_metrics.rule.variants import docs_for

    def predicted(gold: int) -> int:
        roll = rng.random()
        return NO_PREDICTION if roll < 0.01 else gold if roll < 0.6 else rng.randrange(len(LABELS))

    rule_docs = docs_for("combined")
    outputs = ["so the answer is Option2.", "Option1", "", "Option1 or Option3", "the answer is (B)", "unsure"]
    reg_items = 275  # ChaosNLI-MNLI-C, reg_chaos's docs
    early = [(EARLY, fraction) for fraction in FRACTIONS]
    return {
        "geese pairs": [(gold, predicted(gold)) for gold in (LABELS.index(doc["label"]) for doc in load_docs())],
        "rule outcomes": [answered(doc, rng.random() < 0.6) for doc in rule_docs],
        "rule problems": [
            read_answer(rng.choices(outputs, weights=(60, 25, 5, 4, 3, 3))[0]).problem for _ in rule_docs
        ],
        "rule faithfulness": _answers(rng, len(rule_docs), [*early, (FILLER, 1.0)]),
        "rule edits": _answers(rng, len(rule_docs), [(MISTAKE, 0.0), (PARAPHRASE, 0.0)]),
        "rule biased": [_biased(rng, f"q{index}") for index in range(RULE_MAIN_QUESTIONS)],
        "reg faithfulness": _answers(rng, reg_items, [*early, (FILLER, 1.0)]),
        "reg scored": [
            (rng.random() < 0.7, None if rng.random() < 0.05 else float(rng.random() < 0.5)) for _ in range(reg_items)
        ],
        "reg n": [float(rng.random() < 0.7) for _ in range(reg_items)],
        "reg verdicts": [(int(rng.random() < 0.05), 3) for _ in range(reg_items)],
        "reg tokens": [
            (None if rng.random() < 0.3 else float(rng.random() < 0.5), float(rng.randrange(20, 400)))
            for _ in range(reg_items)
        ],
        "reg humans": [None if rng.random() < 0.01 else rng.random() for _ in load_items()],
        "ibe slots": [
            (f"ecare-{question}", order, NO_PREDICTION if rng.random() < 0.01 else rng.randrange(2))
            for question in range(ECARE_TEST_SIZE)
            for order in (ORDER_SHOWN, ORDER_SWAPPED)
        ],
    }


# Which input each aggregation reads, by the shape of its task's process_results.
INPUT_OF: dict[tuple[str, str], str] = {
    **{("geese", name): "geese pairs" for name in ("f1_macro", "acc_yes", "acc_no", "acc_unknown")},
    **{
        ("rule", name): "rule outcomes"
        for name in (
            "mainq_acc",
            "subq_acc",
            "selective_acc",
            "eliminative_acc",
            "consistency",
            "mainq_wise_subq_acc",
            "none_acc",
            "subq_acc_mainq_correct",
            "selective_acc_mainq_correct",
            "eliminative_acc_mainq_correct",
            "consistency_mainq_correct",
            "mainq_wise_subq_acc_mainq_correct",
            "correct_option_acc",
            "incorrect_option_acc",
        )
    },
    ("rule", "unparsed"): "rule problems",
    **{("rule", name): "rule biased" for name in ("bias_follow", "articulation")},
    **{
        ("rule", name): "rule faithfulness"
        for name in (
            *(f"same_at_{k}" for k in (0, 25, 50, 75, 100)),
            "early_aoc",
            "filler_same",
            "filler_acc",
            "no_cot_acc",
            "original_unread",
        )
    },
    **{
        ("rule", name): "rule edits"
        for name in ("mistake_same", "mistake_acc", "paraphrase_same", "paraphrase_acc", "edit_unusable")
    },
    **{
        ("reg", name): "reg faithfulness"
        for name in (*(f"same_at_{k}" for k in (0, 25, 50, 75, 100)), "early_aoc", "filler_same")
    },
    ("reg", "mean_over_n"): "reg scored",
    ("reg", "size_of_n"): "reg n",
    ("reg", "unparsed_share"): "reg verdicts",
    ("reg", "mean_tokens_successful"): "reg tokens",
    ("reg", "mean_tokens_unsuccessful"): "reg tokens",
    ("reg", "mean_comparable"): "reg humans",
    ("ibe", "position_bias_share"): "ibe slots",
    ("ibe", "first_slot_share"): "ibe slots",
}


def timed_calls(
    function: Callable[[list[Any]], Any], values: list[Any], calls: int, budget_s: float
) -> tuple[float, int]:
    """CPU seconds of this process for ``calls`` calls on ``values`` (a shared machine's load moves wall
    time far more), and how many were made: fewer when ``budget_s`` runs out, the time then scaled up."""
    done, start = 0, time.process_time()
    while done < calls:
        function(values)
        done += 1
        if done % 10 == 0 and time.process_time() - start > budget_s:
            break
    return (time.process_time() - start) * calls / done, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--budget-s", type=float, default=60.0, help="CPU seconds per aggregation; beyond, scale up")
    parser.add_argument("--only", default="", help="comma-separated paper.function names (nothing saved)")
    args = parser.parse_args()
    setup_env()
    logging.disable(logging.WARNING)  # RULE's warnings about the drawn input are not what is measured
    wanted = declared()
    missing = sorted(
        f"{paper}.{name}" for paper, names in wanted.items() for name in names if (paper, name) not in INPUT_OF
    )
    if missing:
        raise SystemExit(f"no benchmark input for {', '.join(missing)}: add it to INPUT_OF")
    values = inputs(random.Random(SEED))
    only = {name for name in args.only.split(",") if name}
    rows, measured = [], {}
    for paper, names in wanted.items():
        hooks = importlib.import_module(f"lm_eval_tasks.{paper}.utils")
        for name in sorted(names):
            key = f"{paper}.{name}"
            if only and key not in only:
                continue
            function, kind = getattr(hooks, name), INPUT_OF[(paper, name)]
            seconds, done = timed_calls(function, values[kind], args.calls, args.budget_s)
            value = function(values[kind])
            measured[key] = {"s": round(seconds, 4), "calls_timed": done, "input": kind, "n": len(values[kind])}
            measured[key]["value"] = repr(value)
            scaled = "" if done == args.calls else f" (scaled from {done})"
            rows.append([key, f"{kind} ({len(values[kind]):,})", f"{seconds:.3f} s{scaled}", repr(value)])
    print(table(rows, ["aggregation", "input (values)", f"{args.calls:,} calls (CPU s)", "value"]))
    if only:  # a check of some: the stored figures cover all of them
        return 0
    slowest = max(measured, key=lambda key: measured[key]["s"])
    total = sum(entry["s"] for entry in measured.values())
    run = f"python -m bench.aggregations --calls {args.calls}"
    save_section(
        "aggregations",
        {
            "calls": args.calls,
            "seed": SEED,
            "aggregations": measured,
            "figures": [
                figure(
                    f"slowest custom aggregation, {args.calls:,} calls on its full-size input, CPU",
                    f"< {TARGET_10K_S:g} s",
                    f"{measured[slowest]['s']:.2f} s ({slowest}); all {len(measured)}: {total:.1f} s",
                    measured[slowest]["s"] < TARGET_10K_S * args.calls / 10_000,
                    run,
                )
            ],
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
