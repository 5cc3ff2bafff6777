"""The longest log-likelihood request of every log-likelihood task of the suite, in tokens.

    python -m bench.request_tokens

What the papers state as ``RunSteps.request_tokens`` (the check of ``--model hf``'s logits
memory before a run, ``custom_metrics/common/logits_memory.py``) comes from here: each
log-likelihood task is built through ``TaskManager`` on the full data and its requests through
``build_all_requests``; a request's tokens are its context and continuation, counted with the
embedded gemma-3-270m tokenizer (other tokenizers differ by some 10-30 %). A task that reads
another run's generations (RULE's faithfulness tests, IBE's judges, GEESE's selfexp) is built on
a stand-in run of its source task whose every generation is as long as the source task lets it
be (its ``max_gen_toks``, in tokens of real text), so its figure bounds a run on the defaults.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.common import figure, save_section, scratch, setup_env, table, task_manager

# Tasks that read other runs' samples: the chain of (source generation task, its max_gen_toks, --metadata key).
COT = ("rule_5shot_cot_split{split}", 320, "explanations")
WHYEXP = ("geese_generate_whyexp", 128, "explanations")
READERS = {
    "geese_selfexp": (WHYEXP,),
    "geese_selfexp_only": (WHYEXP,),
    "rule_cot_faithfulness": (COT,),
    "rule_cot_faithfulness_edits": (COT, ("rule_cot_edits", 320, "edits")),
    **{
        f"ibe_judge_{data}{kind}": ((f"ibe_{data}", 512, "explanations"),)
        for data in ("copa", "ecare")
        for kind in ("", "_position")
    },
}
SPLITS = (1, 2, 3, 4, 5)
FILLER = "Each option is checked against the context, and the reasoning follows from it step by step. "


def loglik_tasks(manager: Any) -> list[str]:
    """The suite's tasks (not groups) whose YAML makes log-likelihood requests (lm-eval 0.4.13's index)."""
    return [
        name
        for name, entry in sorted(manager.task_index.items())
        if entry.kind.name == "TASK" and (entry.cfg or {}).get("output_type") in ("multiple_choice", "loglikelihood")
    ]


def longest(task: Any, tokenizer: Any) -> tuple[int, int]:
    """(requests, tokens of the longest context + continuation) of a built task."""
    task.build_all_requests(limit=None, rank=0, world_size=1)
    by_context: dict[str, int] = {}
    for instance in task.instances:
        context, continuation = instance.args[0], instance.args[1]
        by_context[context] = max(by_context.get(context, 0), len(continuation))
    contexts = list(by_context)
    lengths = tokenizer(contexts, add_special_tokens=False)["input_ids"]
    # the continuation's characters bound its tokens; the longest context carries the longest option
    tokens = max(len(ids) + by_context[text] for ids, text in zip(lengths, contexts, strict=True))
    return len(task.instances), tokens


def generation_of(tokens: int, tokenizer: Any) -> str:
    """Real text of exactly ``tokens`` tokens, ending in a RULE-style answer line."""
    ids = tokenizer(FILLER * (tokens // 8 + 1), add_special_tokens=False)["input_ids"]
    return tokenizer.decode(ids[: tokens - 12]) + " Therefore, the answer is Option1."


def stand_in_run(source: Any, tokens: int, tokenizer: Any, path: Path) -> str:
    """A samples file of ``source``'s docs, every generation ``tokens`` tokens long."""
    text = generation_of(tokens, tokenizer)
    rows = []
    for index, doc in enumerate(source.eval_docs):
        prompt = source.doc_to_text(doc)
        rows.append(
            {"doc_id": index, "doc": doc, "arguments": {"gen_args_0": {"arg_0": prompt}}, "filtered_resps": [text]}
        )
    path.write_text("".join(json.dumps(row, default=str) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def run() -> dict[str, Any]:
    from transformers import AutoTokenizer

    from custom_metrics.common.embedded_model import ensure_checkpoint

    gemma = str(ensure_checkpoint())
    tokenizer = AutoTokenizer.from_pretrained(gemma)
    folder = scratch("request_tokens")
    base = {"pretrained": gemma, "judge_check": "warn"}
    manager = task_manager(base)
    rows: dict[str, dict[str, Any]] = {}
    for name in loglik_tasks(manager):
        if name in READERS:
            worst = (0, 0)
            for split in SPLITS if "{split}" in READERS[name][0][0] else (None,):
                metadata = dict(base)
                for source_name, budget, key in READERS[name]:
                    source_task = source_name.format(split=split)
                    source = task_manager(metadata).load([source_task])["tasks"][source_task]
                    metadata[key] = stand_in_run(source, budget, tokenizer, folder / f"samples_{source_task}_x.jsonl")
                worst = max(
                    worst, longest(task_manager(metadata).load([name])["tasks"][name], tokenizer), key=lambda r: r[1]
                )
            requests, tokens = worst
        else:
            requests, tokens = longest(manager.load([name])["tasks"][name], tokenizer)
        rows[name] = {"requests": requests, "longest_request_tokens": tokens}
        print(f"{name}: {requests:,} requests, longest {tokens:,} tokens", flush=True)
    listed = [[name, row["requests"], row["longest_request_tokens"]] for name, row in rows.items()]
    print(table(listed, ["task", "requests", "longest request (tokens)"]))
    longest_task = max(rows, key=lambda name: rows[name]["longest_request_tokens"])
    figures = [
        figure(
            "longest log-likelihood request of any task (gemma-3 tokens)",
            "",
            f"{rows[longest_task]['longest_request_tokens']:,} ({longest_task})",
            None,
            command="python -m bench.request_tokens",
        )
    ]
    return {"tasks": rows, "figures": figures}


def main() -> None:
    setup_env()
    save_section("request_tokens", run())


if __name__ == "__main__":
    main()
