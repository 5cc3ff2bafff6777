"""REG's judge calls: batched against one call per pair, against the harness' own log-likelihoods.

The same 100 (premise, hypothesis) pairs, in the order REG judges them: for each of the
first ChaosNLI-MNLI-C items, J(p, h), J(p;e, h) and J(p, e), with a fixed reconciling
explanation e per item (the judge's cost does not depend on who wrote e). Four timings
on the default judge (the embedded model, prompted with the paper's C.2 prompt, three
label log-likelihoods per pair):

- batched: one ``judge.judge(pairs)`` call, fresh cache;
- one call per pair: ``judge.judge([pair])`` 100 times, fresh cache, same loaded model;
- harness: ``HFLM.loglikelihood`` (batch size 8) on the same 300 (context, continuation)
  requests, whose log-likelihoods must give the same verdicts;
- cached: the batched call again on the same cache (model calls must be 0).

    python -m bench.judge_batching [--pairs 100]
"""

from __future__ import annotations

import argparse

from bench.common import save_section, scratch, setup_env, table, timed, verdict

BATCH_SPEEDUP_TARGET = 4.0
HARNESS_RATIO_TARGET = 0.9  # judge throughput at least 90% of the harness'


def reg_pairs(count: int) -> list[tuple[str, str]]:
    from custom_metrics.reg.data import load_items, reg_docs
    from custom_metrics.reg.outputs import combine

    pairs: list[tuple[str, str]] = []
    for doc in reg_docs(load_items()):
        hypothesis = doc["hypothesis"].strip()
        explanation = f"Later on, it turned out that {hypothesis[:1].lower() + hypothesis[1:]}"
        pairs += [
            (doc["premise"], doc["hypothesis"]),
            (combine(doc["premise"], explanation), doc["hypothesis"]),
            (doc["premise"], explanation),
        ]
        if len(pairs) >= count:
            return pairs[:count]
    raise ValueError(f"ChaosNLI-MNLI-C gives only {len(pairs)} pairs, fewer than {count}")


def run(count: int) -> dict:
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    from custom_metrics.common.embedded_model import ensure_checkpoint
    from custom_metrics.judge.build import build_judge
    from custom_metrics.judge.cache import CachedJudge
    from custom_metrics.judge.types import verdict_from_scores

    pairs = reg_pairs(count)
    batched = build_judge(None, scratch("judge_batching_batched"))
    with timed() as load:
        backend = batched.backend
    single = CachedJudge(batched.name, batched.prompt_id, lambda: backend, scratch("judge_batching_single"))

    with timed() as t_batched:
        verdicts = batched.judge(pairs)
    with timed() as t_single:
        for pair in pairs:
            single.judge([pair])
    computed = batched.computed
    with timed() as t_cached:
        again = batched.judge(pairs)
    cached_calls = batched.computed - computed

    requests = [(backend.context(p, h), cont) for p, h in pairs for cont in backend.continuations()]
    harness = HFLM(pretrained=str(ensure_checkpoint()), dtype="float32", device="cpu", batch_size=8)
    instances = [Instance(request_type="loglikelihood", doc={}, arguments=r, idx=i) for i, r in enumerate(requests)]
    with timed() as t_harness:
        loglikelihoods = [ll for ll, _greedy in harness.loglikelihood(instances, disable_tqdm=True)]
    harness_verdicts = [verdict_from_scores(loglikelihoods[3 * i : 3 * i + 3]) for i in range(len(pairs))]
    max_prob_diff = max(abs(a.probs[k] - b.probs[k]) for a, b in zip(verdicts, harness_verdicts) for k in a.probs)

    speedup = t_single["s"] / t_batched["s"]
    harness_ratio = t_harness["s"] / t_batched["s"]  # judge throughput / harness throughput
    return {
        "pairs": len(pairs),
        "requests": len(requests),
        "judge": batched.name,
        "judge_load_s": round(load["s"], 2),
        "batched_s": round(t_batched["s"], 2),
        "single_s": round(t_single["s"], 2),
        "harness_s": round(t_harness["s"], 2),
        "cached_s": round(t_cached["s"], 4),
        "cached_model_calls": cached_calls,
        "batched_pairs_per_s": round(len(pairs) / t_batched["s"], 2),
        "single_pairs_per_s": round(len(pairs) / t_single["s"], 2),
        "harness_pairs_per_s": round(len(pairs) / t_harness["s"], 2),
        "speedup_batched_vs_single": round(speedup, 2),
        "throughput_vs_harness": round(harness_ratio, 2),
        "max_prob_diff_vs_harness": max_prob_diff,
        "same_verdicts_on_rerun": again == verdicts,
        "targets": {
            "speedup": BATCH_SPEEDUP_TARGET,
            "throughput_vs_harness": HARNESS_RATIO_TARGET,
            "cached_model_calls": 0,
        },
        "pass_speedup": speedup >= BATCH_SPEEDUP_TARGET,
        "pass_harness": harness_ratio >= HARNESS_RATIO_TARGET,
        "pass_cache": cached_calls == 0,
    }


def report(r: dict) -> str:
    rows = [
        ["judge, batched (one call)", r["batched_s"], r["batched_pairs_per_s"], ""],
        [
            "judge, one call per pair",
            r["single_s"],
            r["single_pairs_per_s"],
            f"batched {r['speedup_batched_vs_single']}x faster (target >= {BATCH_SPEEDUP_TARGET:g}x) "
            f"{verdict(r['pass_speedup'])}",
        ],
        [
            "HFLM.loglikelihood, same requests",
            r["harness_s"],
            r["harness_pairs_per_s"],
            f"judge/harness throughput {r['throughput_vs_harness']} (target >= {HARNESS_RATIO_TARGET}) "
            f"{verdict(r['pass_harness'])}",
        ],
        [
            "judge, batched again (cache)",
            r["cached_s"],
            "",
            f"{r['cached_model_calls']} model calls {verdict(r['pass_cache'])}",
        ],
    ]
    return table(rows, ["mode", "s", "pairs/s", "vs target"]) + (
        f"\n{r['pairs']} pairs = {r['requests']} label log-likelihoods, judge {r['judge']} "
        f"(load {r['judge_load_s']} s, "
        f"not timed); verdicts vs harness: max probability difference {r['max_prob_diff_vs_harness']:.2e}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=100)
    args = parser.parse_args()
    setup_env()
    result = run(args.pairs)
    result["command"] = f"python -m bench.judge_batching --pairs {args.pairs}"
    save_section("judge_batching", result)
    print(report(result))


if __name__ == "__main__":
    main()
