"""``hf-prefix`` against the harness' ``HFLM`` on the suite's log-likelihood tasks: time, tokens, outputs.

    python -m bench.prefix_lm [--docs rule_5shot_split1=4,rule_sub=8,geese_noexp=8,ibe_judge_copa=8]

The first documents of RULE five-shot (``rule_5shot_split1``), ``rule_sub``, GEESE M2
(``geese_noexp``) and ``ibe_judge_copa`` on the full data, their requests built by the harness
(``build_all_requests``), go through one loaded embedded model (gemma-3-270m, fp32, CPU) two
ways, same batch size: ``PrefixHFLM.loglikelihood`` and ``HFLM.loglikelihood`` (the peer,
handed the same loaded model). ``ibe_judge_copa`` reads explanations of an ``ibe_copa`` run;
the benchmark's explanations (``bench/explanations.py``, IBE's format) stand in, as the judge's
cost depends on their length only.

Reported per task: wall seconds each way (both warmed up first on other requests), the
speed-up, and tokens: the floor (each distinct context once plus each continuation's tokens),
what ``HFLM`` runs (each sequence its one-token logits cache leaves, context included) and
what ``hf-prefix`` runs (real tokens, and positions with the left padding between contexts
of one batch); outputs must be equal (|Δ loglik| <= 1e-4, same ``is_greedy``, same choice).
RULE's digits, GEESE's " YES" / " NO" and ``ibe_judge``'s two answers differ in their last
token only, which HFLM's own logits cache already runs once per context (GEESE's " UNKNOWN"
makes it run a context twice): there the saving is the vocabulary projection of every
context position (262k words on gemma), which HFLM computes and discards. The batch size is 2 by default:
HFLM's float32 log-softmax over a RULE five-shot batch of 8 would hold ~22 GB.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from typing import Any

from bench.common import figure, save_section, scratch, setup_env, table, task_manager, timed

TASKS = {"rule_5shot_split1": 4, "rule_sub": 8, "geese_noexp": 8, "ibe_judge_copa": 8}
SPEEDUP_TARGET = 3.0  # RULE five-shot: HFLM seconds / hf-prefix seconds
FLOOR_TARGET = 1.3  # hf-prefix positions / floor tokens
TOLERANCE = 1e-4


def judge_explanations() -> str:
    """A samples file of ``ibe_copa`` with the benchmark's explanations, for ``ibe_judge_copa``."""
    import random

    from bench.explanations import explanation_text
    from custom_metrics.ibe.data import copa_docs

    rng = random.Random(7)
    path = scratch("prefix_lm") / "samples_ibe_copa_bench.jsonl"
    rows = [{"doc": d, "filtered_resps": [explanation_text(d["premise"], d["conclusion"], rng)]} for d in copa_docs()]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def build_requests(docs: dict[str, int]) -> dict[str, list[Any]]:
    tasks = task_manager({"explanations": judge_explanations()}).load(list(docs))["tasks"]
    built = {}
    for name, limit in docs.items():
        tasks[name].build_all_requests(limit=limit, rank=0, world_size=1)
        built[name] = tasks[name].instances
    return built


def token_counts(lm: Any, instances: list[Any]) -> dict[str, int]:
    """The floor, and the tokens HFLM runs, counted from the requests as both models encode them."""
    from custom_metrics.prefix_lm import group_by_context

    encoded = [(i.args, *lm._encode_pair(*i.args)) for i in instances]
    groups = group_by_context(encoded, range(len(encoded)), lm.max_length)
    floor = sum(len(g.context) for g in groups) + sum(len(cont) for _, _, cont in encoded)
    # HFLM runs one sequence per distinct context + continuation[:-1] (its one-token logits cache)
    sequences = {tuple((ctx + cont)[-(lm.max_length + 1) :][:-1]) for _, ctx, cont in encoded}
    return {"floor": floor, "hflm": sum(map(len, sequences))}


def chosen(instances: list[Any], answers: list[tuple[float, bool]]) -> list[int]:
    options: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for instance, (loglik, _) in zip(instances, answers, strict=True):
        options[instance.doc_id].append((loglik, instance.idx))
    return [max(scores)[1] for _, scores in sorted(options.items())]


def run(docs: dict[str, int], batch_size: int) -> dict[str, Any]:
    from lm_eval.models.huggingface import HFLM

    from custom_metrics.common.embedded_model import ensure_checkpoint
    from custom_metrics.prefix_lm import PrefixHFLM

    requests = build_requests(docs)
    prefix = PrefixHFLM(pretrained=str(ensure_checkpoint()), dtype="float32", device="cpu", batch_size=batch_size)
    peer = HFLM(pretrained=prefix.model, tokenizer=prefix.tokenizer, device="cpu", batch_size=batch_size)
    warm = requests["geese_noexp"][:6]  # first-call allocations are neither model's cost
    prefix.loglikelihood(warm, disable_tqdm=True)
    peer.loglikelihood(warm, disable_tqdm=True)
    rows = {}
    for name, instances in requests.items():
        before = prefix.token_counts.positions, prefix.token_counts.contexts + prefix.token_counts.continuations
        with timed() as ours_time:
            ours = prefix.loglikelihood(instances, disable_tqdm=True)
        with timed() as peer_time:
            theirs = peer.loglikelihood(instances, disable_tqdm=True)
        counts = token_counts(prefix, instances)
        positions = prefix.token_counts.positions - before[0]
        real = prefix.token_counts.contexts + prefix.token_counts.continuations - before[1]
        rows[name] = {
            "docs": docs[name],
            "requests": len(instances),
            "hflm_s": round(peer_time["s"], 3),
            "prefix_s": round(ours_time["s"], 3),
            "speedup": round(peer_time["s"] / ours_time["s"], 2),
            "floor_tokens": counts["floor"],
            "hflm_tokens": counts["hflm"],
            "prefix_tokens": real,
            "prefix_positions": positions,
            "positions_per_floor": round(positions / counts["floor"], 3),
            "max_abs_diff": max(abs(a[0] - b[0]) for a, b in zip(ours, theirs)),
            "greedy_mismatches": sum(a[1] != b[1] for a, b in zip(ours, theirs)),
            "choice_mismatches": sum(a != b for a, b in zip(chosen(instances, ours), chosen(instances, theirs))),
        }
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", default=",".join(f"{k}={v}" for k, v in TASKS.items()), help="task=docs,...")
    parser.add_argument("--batch-size", type=int, default=2)
    args = parser.parse_args()
    setup_env()
    docs = {name: int(count) for name, count in (item.split("=") for item in args.docs.split(","))}
    rows = run(docs, args.batch_size)
    command = f"`python -m bench.prefix_lm --docs {args.docs} --batch-size {args.batch_size}`"
    header = ["task", "docs", "requests", "HFLM s", "hf-prefix s", "speed-up", "floor tok", "HFLM tok"]
    header += ["hf-prefix tok", "positions", "pos/floor", "max |Δ|", "greedy ≠", "choice ≠"]
    print(table([[name, *row.values()] for name, row in rows.items()], header))
    figures = []
    for name, row in rows.items():
        equal = row["max_abs_diff"] <= TOLERANCE and row["greedy_mismatches"] == row["choice_mismatches"] == 0
        five_shot = name.startswith("rule_5shot")
        figures += [
            figure(
                f"hf-prefix vs HFLM wall time, `{name}`, {row['docs']} docs",
                f">= {SPEEDUP_TARGET}x" if five_shot else "",
                f"{row['speedup']}x ({row['prefix_s']} s vs {row['hflm_s']} s)",
                row["speedup"] >= SPEEDUP_TARGET if five_shot else None,
                command,
                peer=f"HFLM: {row['hflm_s']} s",
            ),
            figure(
                f"hf-prefix positions / floor (each context once + continuation tokens), `{name}`",
                f"<= {FLOOR_TARGET}x",
                f"{row['positions_per_floor']}x ({row['prefix_positions']} vs {row['floor_tokens']}; "
                f"HFLM runs {row['hflm_tokens']})",
                row["positions_per_floor"] <= FLOOR_TARGET,
                command,
            ),
            figure(
                f"hf-prefix outputs vs HFLM, `{name}`",
                f"|Δ| <= {TOLERANCE}, same greedy and choices",
                f"max |Δ| {row['max_abs_diff']:.1e}, {row['greedy_mismatches']} greedy and "
                f"{row['choice_mismatches']} choice mismatches",
                equal,
                command,
            ),
        ]
    save_section("prefix_lm", {"batch_size": args.batch_size, "tasks": rows, "figures": figures})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
