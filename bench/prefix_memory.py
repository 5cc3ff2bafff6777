"""``hf-prefix``'s peak memory against ``HFLM``'s as the options sharing one context grow.

    python -m bench.prefix_memory [--options 10,100,1000] [--context-tokens 1000] [--hf-max 100]

One context of about ``--context-tokens`` tokens (COPA premises and conclusions from the
data, cut at a token), followed by N options of exactly two tokens each (a word and a digit,
" cause7"): the shape where ``hf-prefix`` runs the context once and every option's second
token on its KV cache, and where ``HFLM`` runs each option as its own full sequence. Each
(model, N) runs in a fresh process on the embedded model (gemma-3-270m, fp32, CPU, batch size
1, lm-eval's default), which reports its peak resident memory (``ru_maxrss``: the model's
weights, 1.1 GB in float32, included), its wall time and its answers; the parent compares the
answers of the two models where both ran (|Δ loglik| <= 1e-4, same greedy flags).

``HFLM`` computes every position's logits of each 1,000-token sequence (1 GB in float32,
and as much again for their log-softmax), about 9 s an option on this loaded 2-core machine,
so it runs only up to ``--hf-max`` options (it holds one batch at a time); the comparison at
larger N is against its peak at ``--hf-max``.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from bench.common import child_json, figure, peak_rss_mib, save_section, setup_env, table

MODELS = ("hf-prefix", "hf")
TOLERANCE = 1e-4
FLAT_TARGET = 1.10  # hf-prefix peak at the most options / at the fewest


def context_text(tokenizer: Any, tokens: int) -> str:
    """Real text of ``tokens`` tokens (cut at a token), then the question the options answer."""
    from custom_metrics.ibe.data import copa_docs

    lines, ids = [], []
    for doc in copa_docs():
        lines.append(f"{doc['premise']} {doc['conclusion']}")
        ids = tokenizer("\n".join(lines), add_special_tokens=False)["input_ids"]
        if len(ids) >= tokens:
            break
    return tokenizer.decode(ids[:tokens]) + "\nWhich option explains it best? Answer:"


def two_token_options(lm: Any, context: str, count: int) -> list[str]:
    """``count`` options that each add exactly two tokens to ``context`` (as the harness encodes them)."""
    words = sorted({word.strip(".,;:!?'\"").lower() for word in context.split()} - {""})
    options = []
    for word in words:
        if not word.isalpha():
            continue
        for digit in "0123456789":
            option = f" {word}{digit}"
            if len(lm._encode_pair(context, option)[1]) == 2:
                options.append(option)
                if len(options) == count:
                    return options
    raise SystemExit(f"only {len(options)} two-token options found in the context; {count} asked")


def child(model: str, count: int, context_tokens: int) -> None:
    """One model on ``count`` options in this (fresh) process; prints its figures."""
    from lm_eval.models.huggingface import HFLM

    from custom_metrics.common.embedded_model import ensure_checkpoint
    from custom_metrics.common.harness_api import new_instance
    from custom_metrics.prefix_lm import PrefixHFLM

    model_class = PrefixHFLM if model == "hf-prefix" else HFLM
    lm = model_class(pretrained=str(ensure_checkpoint()), dtype="float32", device="cpu", batch_size=1)
    context = context_text(lm.tokenizer, context_tokens)
    options = two_token_options(lm, context, count)
    requests = [new_instance("loglikelihood", (context, option), i) for i, option in enumerate(options)]
    start = time.perf_counter()
    answers = lm.loglikelihood(requests, disable_tqdm=True)
    seconds = time.perf_counter() - start
    figures = {
        "context_tokens": len(lm.tok_encode(context)),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "seconds": round(seconds, 1),
        "answers": answers,
    }
    print(json.dumps(figures))


def compare(ours: list[list[Any]], theirs: list[list[Any]]) -> tuple[float, int]:
    """Max |Δ loglik| and greedy mismatches over the options both models ran."""
    pairs = list(zip(ours, theirs))
    return max(abs(a[0] - b[0]) for a, b in pairs), sum(a[1] != b[1] for a, b in pairs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--options", default="10,100,1000", help="option counts, comma-separated")
    parser.add_argument("--context-tokens", type=int, default=1000)
    parser.add_argument("--hf-max", type=int, default=100, help="run HFLM up to this many options")
    parser.add_argument("--child", choices=MODELS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    setup_env()
    if args.child:
        child(args.child, int(args.options), args.context_tokens)
        return 0
    counts = [int(count) for count in args.options.split(",")]
    if min(counts) > args.hf_max:
        raise SystemExit(f"--hf-max {args.hf_max}: HFLM would run at none of {counts}")
    context = ("--context-tokens", str(args.context_tokens))
    runs = {
        (model, count): child_json("bench.prefix_memory", "--child", model, "--options", str(count), *context)
        for count in counts
        for model in MODELS
        if model == "hf-prefix" or count <= args.hf_max
    }
    rows = {}
    for count in counts:
        ours = runs["hf-prefix", count]
        ran = max(c for c in counts if c <= min(count, args.hf_max))
        theirs = runs["hf", ran]
        diff, greedy = compare(ours["answers"], theirs["answers"])
        rows[count] = {
            "context_tokens": ours["context_tokens"],
            "prefix_peak_mib": ours["peak_rss_mib"],
            "prefix_s": ours["seconds"],
            "hf_options": ran,
            "hf_peak_mib": theirs["peak_rss_mib"],
            "hf_s": theirs["seconds"],
            "max_abs_diff": diff,
            "greedy_mismatches": greedy,
        }
    header = ["options", "context tok", "hf-prefix peak MiB", "hf-prefix s", "HFLM ran", "HFLM peak MiB", "HFLM s"]
    header += ["max |Δ|", "greedy ≠"]
    print(table([[count, *row.values()] for count, row in rows.items()], header))
    command = f"python -m bench.prefix_memory --options {args.options} --context-tokens {args.context_tokens}"
    command += f" --hf-max {args.hf_max}"
    fewest, most = rows[min(counts)], rows[max(counts)]
    growth = most["prefix_peak_mib"] / fewest["prefix_peak_mib"]
    figures = [
        figure(
            f"hf-prefix peak memory, {max(counts)} / {min(counts)} two-token options on one context",
            f"<= {FLAT_TARGET}x",
            f"{growth:.3f}x ({fewest['prefix_peak_mib']:.0f} -> {most['prefix_peak_mib']:.0f} MiB)",
            growth <= FLAT_TARGET,
            command,
        ),
        figure(
            f"hf-prefix peak memory at {max(counts)} options against HFLM's",
            "<= HFLM's",
            f"{most['prefix_peak_mib']:.0f} MiB",
            most["prefix_peak_mib"] <= most["hf_peak_mib"],
            command,
            peer=f"HFLM: {most['hf_peak_mib']:.0f} MiB ({most['hf_options']} options)",
        ),
        figure(
            "hf-prefix outputs vs HFLM, options sharing one context",
            f"|Δ| <= {TOLERANCE}, same greedy",
            f"max |Δ| {max(r['max_abs_diff'] for r in rows.values()):.1e}, "
            f"{sum(r['greedy_mismatches'] for r in rows.values())} greedy mismatches",
            all(r["max_abs_diff"] <= TOLERANCE and r["greedy_mismatches"] == 0 for r in rows.values()),
            command,
        ),
    ]
    save_section("prefix_memory", {"batch_size": 1, "options": rows, "figures": figures})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
