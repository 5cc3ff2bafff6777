"""REG's LM judge at the floor of its compute: the shared KV path against the full-sequence path, the
harness' own log-likelihoods and one forward pass over each pair's own tokens.

The same 100 (premise, hypothesis) pairs, in the order REG judges them: for each of the
first ChaosNLI-MNLI-C items, J(p, h), J(p;e, h) and J(p, e), with a fixed reconciling
explanation e per item (the judge's cost does not depend on who wrote e). One loaded
judge (the embedded model by default, prompted with the C.2 prompt, three label
log-likelihoods per pair) is timed four ways on the same pairs:

- shared: ``LMJudge.label_scores`` (prefix KV cache from load, each pair's context once,
  the label tokens from its cache);
- full: the full-sequence path (``LMJudge.full_sequence_scores``: three sequences per pair, as
  before this change and as the fallback for models the probe rejects);
- floor: one batched forward pass over each pair's own tokens (its context minus the
  shared instruction prefix) on the instruction's KV cache, batched by length as the judge
  batches, computing one position's logits: what any judge must run to read the pair;
- bare floor: the same tokens without the instruction to attend to (not a judge's
  computation, reported beside it as the strictest reading of "one pass over the pair's
  own tokens");
- harness: ``HFLM.loglikelihood`` (same batch size) on the same 300 requests;

then the cached rerun through ``CachedJudge`` (model calls must be 0). Verdicts must agree
to 1e-4 in probability. Tokens processed per verdict are counted, not estimated. The two
floors and the shared path run alternately ``--repeats`` times and their medians are
compared: on a shared 2-core machine single runs of the same work vary by 10%.

    python -m bench.judge_sharing [--pairs 100]                       # CPU, fp32, batch 8
    python -m bench.judge_sharing --device cuda --dtype bfloat16 --batch-size 32 --pairs 1000   # one GPU
"""

from __future__ import annotations

import argparse
import statistics

from bench.common import figure, save_section, scratch, setup_env, table, timed, verdict

FLOOR_RATIO_TARGET = 1.3  # shared-path seconds per pair / one forward pass over the pair's own tokens
SPEEDUP_TARGET = 2.5  # full-sequence path seconds / shared path seconds
MAX_PROB_DIFF = 1e-4


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


def by_length(rows: list[list[int]], batch_size: int) -> list[list[list[int]]]:
    """Batches as the judge forms them: rows sorted by length, so padding is as small as it can be."""
    ordered = sorted(rows, key=len)
    return [ordered[start : start + batch_size] for start in range(0, len(ordered), batch_size)]


def own_tokens_pass(judge, rows: list[list[int]]) -> None:
    """The floor: each row (a pair's own tokens) once on the instruction's cache, last logits only."""
    import torch

    with torch.inference_mode():
        for batch in by_length(rows, judge.batch_size):
            judge.shared.first_pass(batch)


def bare_tokens_pass(judge, rows: list[list[int]]) -> None:
    """The bare floor: the same rows with nothing before them, left-padded, last logits only."""
    import torch

    for batch in by_length(rows, judge.batch_size):
        width = max(len(row) for row in batch)
        ids = torch.full((len(batch), width), judge.pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for index, row in enumerate(batch):
            ids[index, width - len(row) :] = torch.tensor(row)
            mask[index, width - len(row) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        extra = {"logits_to_keep": 1} if judge.slices_logits else {}
        with torch.inference_mode():
            judge.model(
                input_ids=ids.to(judge.device),
                attention_mask=mask.to(judge.device),
                position_ids=positions.to(judge.device),
                **extra,
            )


def _max_diff(first: list[list[float]], second: list[list[float]]) -> float:
    from custom_metrics.judge.types import verdict_from_scores

    return max(
        abs(a - b)
        for x, y in zip(first, second)
        for a, b in zip(verdict_from_scores(x).probs.values(), verdict_from_scores(y).probs.values())
    )


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run(count: int, model: str | None, device: str, dtype: str, batch_size: int, harness: bool, repeats: int) -> dict:
    from custom_metrics.common.embedded_model import ensure_checkpoint
    from custom_metrics.judge.cache import CachedJudge
    from custom_metrics.judge.lm import LMJudge
    from custom_metrics.judge.spec import parse_spec

    pairs = reg_pairs(count)
    path = model or str(ensure_checkpoint())
    spec = parse_spec(f"lm:{path}?batch_size={batch_size}&device={device}&dtype={dtype}")
    with timed() as load:
        judge = LMJudge(spec)
    if judge.shared is None:
        raise SystemExit(f"{path}: the shared KV path is not available for this model (see the log)")
    prefix = len(judge.shared.prefix)
    items = [judge.encode_labels(p, h) for p, h in pairs]
    own = [context[prefix:] for context, _ in items]

    own_tokens_pass(judge, own[: judge.batch_size])  # warm-up: first-call allocations are not the judge's cost
    bare_tokens_pass(judge, own[: judge.batch_size])
    runs: dict[str, list[dict[str, float]]] = {"floor": [], "bare": [], "shared": []}
    before = judge.shared.tokens, judge.shared.padded_tokens
    for _ in range(repeats):
        with timed() as t_shared:
            shared = judge.label_scores(pairs)
            _sync(device)
        runs["shared"].append(t_shared)
        if not runs["floor"]:
            shared_tokens = judge.shared.tokens - before[0]
            shared_padded = judge.shared.padded_tokens - before[1]
        for name, floor in (("floor", own_tokens_pass), ("bare", bare_tokens_pass)):
            with timed() as t_floor:
                floor(judge, own)
                _sync(device)
            runs[name].append(t_floor)
    t = {name: {key: statistics.median(r[key] for r in done) for key in ("s", "cpu")} for name, done in runs.items()}
    before_full = judge.full_tokens
    with timed() as t_full:
        full = judge.full_sequence_scores([judge.encode_labels(p, h) for p, h in pairs])
        _sync(device)
    full_tokens = judge.full_tokens - before_full

    cache = CachedJudge(judge.name, spec.prompt_id, lambda: judge, scratch("judge_sharing_cache"))
    first = cache.judge(pairs)
    computed = cache.computed
    with timed() as t_cached:
        again = cache.judge(pairs)
    cached_calls = cache.computed - computed

    paths = {"floor": t["floor"], "bare_floor": t["bare"], "shared": t["shared"], "full": t_full}
    result = {
        "pairs": len(pairs),
        "judge": judge.name,
        "device": device,
        "dtype": dtype,
        "batch_size": batch_size,
        "judge_load_s": round(load["s"], 2),
        "prefix_tokens": prefix,
        "own_tokens_per_pair": round(sum(map(len, own)) / len(pairs), 1),
        "shared_tokens_per_verdict": round(shared_tokens / len(pairs), 1),
        "shared_padded_tokens_per_verdict": round(shared_padded / len(pairs), 1),
        "full_tokens_per_verdict": round(full_tokens / len(pairs), 1),
        "repeats": repeats,
        "runs_s": {name: [round(r["s"], 3) for r in done] for name, done in runs.items()},
        **{f"{name}_s": round(took["s"], 3) for name, took in paths.items()},
        **{f"{name}_cpu_s": round(took["cpu"], 3) for name, took in paths.items()},
        "cached_s": round(t_cached["s"], 4),
        "cached_model_calls": cached_calls,
        "same_verdicts_on_rerun": again == first,
        "floor_ratio": round(t["shared"]["s"] / t["floor"]["s"], 2),
        "bare_floor_ratio": round(t["shared"]["s"] / t["bare"]["s"], 2),
        "speedup_vs_full": round(t_full["s"] / t["shared"]["s"], 2),
        "floor_ratio_cpu": round(t["shared"]["cpu"] / t["floor"]["cpu"], 2),
        "speedup_vs_full_cpu": round(t_full["cpu"] / t["shared"]["cpu"], 2),
        "max_prob_diff_vs_full": _max_diff(shared, full),
        "targets": {
            "floor_ratio": FLOOR_RATIO_TARGET,
            "speedup_vs_full": SPEEDUP_TARGET,
            "max_prob_diff": MAX_PROB_DIFF,
            "cached_model_calls": 0,
        },
    }
    if harness:
        result.update(_harness(judge, pairs, batch_size, device, shared))
    result["pass_floor"] = result["floor_ratio"] <= FLOOR_RATIO_TARGET
    result["pass_speedup"] = result["speedup_vs_full"] >= SPEEDUP_TARGET
    result["pass_verdicts"] = max(result["max_prob_diff_vs_full"], result.get("max_prob_diff_vs_harness", 0)) <= (
        MAX_PROB_DIFF
    )
    result["pass_cache"] = cached_calls == 0
    return result


def _harness(judge, pairs, batch_size: int, device: str, shared: list[list[float]]) -> dict:
    """The peer: lm-eval's HFLM on the judge's own (context, continuation) requests, same model object."""
    from lm_eval.models.huggingface import HFLM

    from custom_metrics.common.harness_api import new_instance

    requests = [(judge.context(p, h), cont) for p, h in pairs for cont in judge.continuations()]
    model = HFLM(pretrained=judge.model, tokenizer=judge.tokenizer, batch_size=batch_size, device=device)
    instances = [new_instance("loglikelihood", r, i) for i, r in enumerate(requests)]
    with timed() as t_harness:
        flat = [ll for ll, _greedy in model.loglikelihood(instances, disable_tqdm=True)]
        _sync(device)
    scores = [flat[3 * i : 3 * i + 3] for i in range(len(pairs))]
    return {
        "harness_s": round(t_harness["s"], 3),
        "harness_cpu_s": round(t_harness["cpu"], 3),
        "max_prob_diff_vs_harness": _max_diff(shared, scores),
    }


def report(r: dict) -> str:
    per = lambda seconds: f"{1000 * seconds / r['pairs']:.1f}"
    paths = {  # a timed path's key in the result -> its row's label, tokens per verdict and note
        "floor": (
            "floor: one pass over each pair's own tokens, on the instruction's cache",
            r["own_tokens_per_pair"],
            "",
        ),
        "bare_floor": (
            "bare floor: the same tokens, no instruction to attend to",
            r["own_tokens_per_pair"],
            f"shared path: {r['bare_floor_ratio']}x this",
        ),
        "shared": (
            "judge, shared KV (prefix once, context once)",
            r["shared_tokens_per_verdict"],
            f"{r['floor_ratio']}x the floor (CPU s: {r['floor_ratio_cpu']}x; target <= {FLOOR_RATIO_TARGET}) "
            f"{verdict(r['pass_floor'])}",
        ),
        "full": (
            "judge, full-sequence path (3 sequences per pair)",
            r["full_tokens_per_verdict"],
            f"shared {r['speedup_vs_full']}x faster (CPU s: {r['speedup_vs_full_cpu']}x; target >= "
            f"{SPEEDUP_TARGET}) {verdict(r['pass_speedup'])}",
        ),
        "harness": ("HFLM.loglikelihood, same requests", "", ""),
    }
    rows = [
        [label, r[f"{key}_s"], r[f"{key}_cpu_s"], per(r[f"{key}_s"]), tokens, note]
        for key, (label, tokens, note) in paths.items()
        if f"{key}_s" in r
    ]
    rows.append(["judge, again (cache)", r["cached_s"], "", "", "", f"{r['cached_model_calls']} model calls"])
    diffs = f"max probability difference vs the full-sequence path {r['max_prob_diff_vs_full']:.1e}"
    if "max_prob_diff_vs_harness" in r:
        diffs += f", vs HFLM {r['max_prob_diff_vs_harness']:.1e}"
    return table(rows, ["path", "wall s", "CPU s", "ms/pair (wall)", "tokens/verdict", "vs target"]) + (
        f"\nmedians of {r['repeats']} alternating runs (wall s: {r['runs_s']}); "
        f"{r['pairs']} pairs, judge {r['judge']} ({r['device']}, {r['dtype']}, batch {r['batch_size']}; load "
        f"{r['judge_load_s']} s incl. the {r['prefix_tokens']}-token prefix and the probe, not timed); "
        f"{diffs} (target <= {MAX_PROB_DIFF}) {verdict(r['pass_verdicts'])}; cache {verdict(r['pass_cache'])}"
    )


def figures(r: dict) -> list[dict]:
    """The summary table's rows: every target of the judge, the harness' path as the peer."""
    command, pairs = f"`{r['command']}`", r["pairs"]
    peer = f"HFLM.loglikelihood: {r['harness_s']} s" if "harness_s" in r else ""
    max_diff = max(r["max_prob_diff_vs_full"], r.get("max_prob_diff_vs_harness", 0))
    return [
        figure(
            f"judge compute per pair / one pass over the pair's own tokens, {pairs} REG pairs",
            f"<= {FLOOR_RATIO_TARGET}x",
            f"{r['floor_ratio']}x ({r['shared_tokens_per_verdict']} vs {r['own_tokens_per_pair']} tokens per verdict; "
            f"{r['bare_floor_ratio']}x a pass without the instruction)",
            r["pass_floor"],
            command,
        ),
        figure(
            f"shared-KV judge vs the three-full-sequence path, {pairs} pairs",
            f">= {SPEEDUP_TARGET}x faster",
            f"{r['speedup_vs_full']}x ({r['shared_s']} s vs {r['full_s']} s)",
            r["pass_speedup"],
            command,
            peer,
        ),
        figure(
            "max probability difference vs the old path and HFLM",
            f"<= {MAX_PROB_DIFF}",
            f"{max_diff:.1e}",
            r["pass_verdicts"],
            command,
        ),
        figure("second run of the same pairs", "0 model calls", f"{r['cached_model_calls']}", r["pass_cache"], command),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--model", default=None, help="a causal LM folder or Hub id (default: the embedded model)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs of the floors and the shared path")
    parser.add_argument("--no-harness", action="store_true", help="skip the HFLM comparison")
    args = parser.parse_args()
    setup_env()
    result = run(args.pairs, args.model, args.device, args.dtype, args.batch_size, not args.no_harness, args.repeats)
    result["command"] = (
        f"python -m bench.judge_sharing --pairs {args.pairs} --device {args.device} --dtype {args.dtype} "
        f"--batch-size {args.batch_size}" + (f" --model {args.model}" if args.model else "")
    )
    result["figures"] = figures(result)
    save_section("judge_sharing" if args.device == "cpu" else f"judge_sharing_{args.device.split(':')[0]}", result)
    print(report(result))


if __name__ == "__main__":
    main()
