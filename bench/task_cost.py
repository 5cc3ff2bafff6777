"""What each task costs: requests, tokens per request, measured time here, and a GPU estimate.

    python -m bench.task_cost [--requests 32]

Counts come from the harness itself: every task is built through ``TaskManager`` and its
requests through ``build_all_requests`` on the full data, so a count is what ``lm_eval``
sends (REG's two judge calls per explanation come on top, listed apart). Prompt tokens are
counted with the embedded gemma-3-270m tokenizer (other tokenizers differ by some 10-30 %).

Time is measured on the embedded models on this machine's CPU: log-likelihood tasks by
running the task's first requests through the harness' own ``HFLM.loglikelihood`` on
gemma-3-270m (batch 8) and dividing; generation tasks by
the decoding rate of SmolLM2-135M-Instruct (the demo's generator) at each task's own token
budget, since a small model rarely stops before it. The GPU column is an estimate, not a
measurement: the tokens a full run processes divided by an assumed rate for an 8B model in
bf16 on one 80 GB GPU with the harness' ``hf`` backend (``PREFILL_TOKENS_PER_S`` prompt
tokens and ``DECODE_TOKENS_PER_S`` generated tokens per second at batch 32), stated with
the table. vLLM is faster on generation.
"""

from __future__ import annotations

import argparse
import os
import statistics
from typing import Any

from bench.common import figure, save_section, scratch, setup_env, table, task_manager, timed

# Assumptions of the GPU estimate (8B model, bf16, one 80 GB GPU, lm_eval --model hf, batch 32).
PREFILL_TOKENS_PER_S = 8000.0
DECODE_TOKENS_PER_S = 600.0
# One task per kind of request and budget; variants of a task (GEESE's hints, RULE's splits)
# cost what their row says.
TASKS = (
    "geese_noexp",
    "geese_llama3",
    "geese_llama3_only",
    "geese_generate_whyexp",
    "rule_main",
    "rule_sub",
    "rule_1shot_split1",
    "rule_5shot_split1",
    "rule_5shot_cot_split1",
    "reg_chaos",
    "reg_chaos_thinking",
    "reg_judge_select",
    "ibe_copa",
    "ibe_ecare",
)

MODEL_ARGS = {"reg_chaos_thinking": {"chat_template_args": {"enable_thinking": True}}}


def count(task_name: str, manager: Any, tokenizer: Any) -> tuple[dict[str, Any], list[Any]]:
    """Docs, requests and tokens of one task on its full data, as the harness builds them;
    the requests too, so that the timing below runs the very requests ``lm_eval`` sends."""
    task = manager.load([task_name])["tasks"][task_name]
    task.build_all_requests(limit=None, rank=0, world_size=1)
    instances = task.instances
    kind = instances[0].request_type
    prompts = [inst.args[0] + (inst.args[1] if kind == "loglikelihood" else "") for inst in instances]
    lengths = [len(ids) for ids in tokenizer(prompts, add_special_tokens=False)["input_ids"]]
    budget = int(instances[0].args[1].get("max_gen_toks", 256)) if kind == "generate_until" else 0
    row = {
        "docs": len(task.eval_docs),
        "requests": len(instances),
        "kind": kind,
        "prompt_tokens_mean": round(statistics.fmean(lengths), 1),
        "max_gen_toks": budget,
        "prompt_tokens_total": sum(lengths),
    }
    return row, instances


def decode_rate(checkpoint: str) -> float:
    """Generated tokens per second of the demo's generator at batch 8 (no early stop)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    model = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    batch = tokenizer(["Explain why the premise entails the hypothesis."] * 8, return_tensors="pt", padding=True)
    new_tokens = 64
    with torch.no_grad(), timed() as wall:
        model.generate(**batch, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False)
    return 8 * new_tokens / wall["s"]


def run(requests: int) -> dict[str, Any]:
    from lm_eval.models.huggingface import HFLM
    from transformers import AutoTokenizer

    from custom_metrics.common.embedded_model import SMOLLM2, ensure_checkpoint

    os.environ["EXPLAIN_EVAL_JUDGE_CACHE"] = str(scratch("task_cost_verdicts"))
    gemma = str(ensure_checkpoint())
    tokenizer = AutoTokenizer.from_pretrained(gemma)
    # What lm_eval's CLI puts into every task's metadata: the model arguments (REG counts
    # output lengths in the generator's tokens and reads its tokenizer from them, and its
    # thinking task checks the chat template's switch).
    # (the embedded judge is degenerate: the check before generation would stop REG)
    metadata = {"pretrained": gemma, "judge_check": "warn"}
    counted = {name: count(name, task_manager({**metadata, **MODEL_ARGS.get(name, {})}), tokenizer) for name in TASKS}
    rows = {name: row for name, (row, _) in counted.items()}
    model = HFLM(pretrained=gemma, dtype="float32", device="cpu", batch_size=8)
    rate = decode_rate(str(ensure_checkpoint(SMOLLM2)))
    for name, row in rows.items():
        if row["kind"] == "generate_until":
            row["cpu_s_per_request"] = round(row["max_gen_toks"] / rate, 2)
            row["cpu_basis"] = f"SmolLM2 decoding at {rate:.0f} tokens/s (batch 8) x {row['max_gen_toks']} tokens"
            generated = row["requests"] * row["max_gen_toks"]
        else:
            first = counted[name][1][:requests]
            with timed() as wall:  # the harness model's own log-likelihood path
                model.loglikelihood(first, disable_tqdm=True)
            row["cpu_s_per_request"] = round(wall["s"] / len(first), 3)
            row["cpu_basis"] = f"gemma-3-270m, the first {requests} requests, batch 8"
            generated = 0
        row["cpu_full_h"] = round(row["cpu_s_per_request"] * row["requests"] / 3600, 2)
        gpu_s = row["prompt_tokens_total"] / PREFILL_TOKENS_PER_S + generated / DECODE_TOKENS_PER_S
        row["gpu_estimate_min"] = round(gpu_s / 60, 1)
    command = f"python -m bench.task_cost --requests {requests}"
    return {
        "assumptions": {
            "gpu": "8B model, bf16, one 80 GB GPU, lm_eval --model hf, batch 32 (an estimate)",
            "prefill_tokens_per_s": PREFILL_TOKENS_PER_S,
            "decode_tokens_per_s": DECODE_TOKENS_PER_S,
            "generated_tokens": "every generation request uses its whole budget (an upper bound)",
        },
        "smollm2_decode_tokens_per_s": round(rate, 1),
        "tasks": rows,
        "command": command,
        "figures": [
            figure(f"cost of `{name}` on its full data", "", _measured(row), None, command)
            for name, row in rows.items()
        ],
    }


def _measured(row: dict[str, Any]) -> str:
    budget = f" + up to {row['max_gen_toks']:,} generated" if row["max_gen_toks"] else ""
    return (
        f"{row['requests']:,} requests, {row['prompt_tokens_mean']:.0f} prompt tokens{budget}; "
        f"CPU here {row['cpu_full_h']} h; GPU ~{row['gpu_estimate_min']} min (estimate)"
    )


def report(result: dict[str, Any]) -> str:
    rows = [
        [
            name,
            r["docs"],
            r["requests"],
            r["prompt_tokens_mean"],
            r["max_gen_toks"] or "-",
            r["cpu_s_per_request"],
            r["cpu_full_h"],
            r["gpu_estimate_min"],
        ]
        for name, r in result["tasks"].items()
    ]
    header = ["task", "docs", "requests", "prompt tok", "gen budget", "CPU s/req", "CPU h (full)", "GPU min (est.)"]
    return table(rows, header)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=32, help="requests per log-likelihood task timed on the CPU")
    args = parser.parse_args()
    setup_env()
    result = run(args.requests)
    print(report(result))
    save_section("task_cost", result)


if __name__ == "__main__":
    main()
