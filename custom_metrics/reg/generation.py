"""What a ``reg_chaos*`` run records of its generations, checked before the first one (its mode,
the model kind, the thinking switch, a tokenizer counting lengths), and its outputs split in
that mode with their lengths.

An in-process run's chat template takes the thinking switch as a model argument
(``chat_template_args``); REG's judges run non-thinking (Table 1, section 4.4).

These checks need a model: the harness merges ``--model_args`` into the task's metadata only for
a model named by string. A task built with none named (a plain ``TaskManager``, or an LM object
without ``--metadata``) defers them: its outputs are split and judged as usual, their token
counts left empty unless ``--metadata tokenizer`` names the tokenizer (docs/python-api.md).

An API reasoning model's trace stays on the server, so the token counts its responses report
(``usage``) are the only lengths there are, checked before use (``usage_problem``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.judge.spec import REASONING_EFFORTS
from custom_metrics.reg.modes import (
    BACKENDS,
    IN_PROCESS,
    MODES,
    NO_REASONING,
    NON_THINKING,
    PAPER_REASONING_EFFORT,
    REASONING,
    SERVED,
    TASKS,
    THINKING,
    Mode,
)
from custom_metrics.reg.outputs import CUT_OFF, Output, split_output
from custom_metrics.reg.tokens import check_trace_markers, count_tokens, load_tokenizer, tokenizer_name

log = logging.getLogger(__name__)

# lm-eval's API models send this seed with every request unless model_args set `seed`.
API_DEFAULT_SEED = 1234
# Tokens an API may report past the budget it was sent (an end-of-turn token counted):
# anything further is no count of this answer.
USAGE_SLACK_TOKENS = 16


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def usage_problem(completion: Any, reasoning: Any, budget: int) -> str:
    """Why a response's token counts cannot be its answer's ("" when they can): whole numbers
    (a boolean is none), 0 <= reasoning <= completion <= the budget sent (and a little slack).
    A response without counts has no problem: its lengths are simply not known."""
    if completion is None and reasoning is None:
        return ""
    for name, value in (("completion_tokens", completion), ("reasoning_tokens", reasoning)):
        if value is not None and not _whole(value):
            return f"{name} is {value!r}, not a whole number of tokens"
    if completion is None:
        return f"reasoning_tokens is {reasoning!r} without completion_tokens"
    if completion < 0 or (reasoning is not None and reasoning < 0):
        return f"a negative token count (completion_tokens {completion!r}, reasoning_tokens {reasoning!r})"
    if reasoning is not None and reasoning > completion:
        return f"reasoning_tokens {reasoning} is more than completion_tokens {completion}, which include them"
    if completion > budget + USAGE_SLACK_TOKENS:
        return f"completion_tokens {completion} is past the budget of {budget} tokens the request was sent"
    return ""


def usage_lengths(output: Output, response: Any, budget: int) -> Output:
    """An API reasoning model's output, its lengths from the response's ``usage`` when they can be
    this answer's (``usage_problem``). An answer the budget stopped (``finish_reason`` "length") is
    cut off, as a trace cut off in the other modes, and not judged."""
    usage = getattr(response, "usage", None)
    usage = usage if isinstance(usage, Mapping) else {}
    details = usage.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, Mapping) else None
    completion = usage.get("completion_tokens")
    problem = usage_problem(completion, reasoning, budget)
    if getattr(response, "finish_reason", None) == "length":
        output = replace(output, flag=CUT_OFF, explanation="")
    return replace(
        output,
        output_tokens=completion if _whole(completion) and not problem else None,
        thinking_tokens=reasoning if _whole(reasoning) and not problem else None,
        usage_problem=problem,
        generation_error=getattr(response, "failure", "") or "",  # api_model.APIAnswer: refused, so empty and flagged
    )


def reasoning_effort(task: str, run_args: Mapping[str, Any]) -> str:
    """The reasoning effort an API reasoning model is asked for: ``--metadata reasoning_effort``,
    the paper's "medium" by default."""
    value = run_args.get("reasoning_effort")
    effort = PAPER_REASONING_EFFORT if value in (None, "") else str(value).strip().lower()
    if effort not in REASONING_EFFORTS:
        raise DataError(
            f"{task}: --metadata reasoning_effort is {value!r}, expected one of {', '.join(REASONING_EFFORTS)} "
            f"(the paper's thinking mode: {PAPER_REASONING_EFFORT}; non-thinking: {NO_REASONING})"
        )
    return effort


# Model arguments (or --metadata keys) that name the generator, its server or its tokenizer.
MODEL_KEYS = ("pretrained", "model", "base_url", "tokenizer")


def names_a_model(run_args: Mapping[str, Any]) -> bool:
    """Whether the task's metadata names the generator (or its tokenizer): only then can the
    checks that need a model run while the task is built."""
    return any(run_args.get(key) not in (None, "") for key in MODEL_KEYS)


def is_served(run_args: Mapping[str, Any]) -> bool:
    """An OpenAI-compatible client (lm-eval's API models name a ``base_url`` or a ``model``);
    in-process models name ``pretrained``."""
    return "base_url" in run_args or ("model" in run_args and "pretrained" not in run_args)


def _sampling_seed(backend: str, run_args: Mapping[str, Any]) -> int | str | None:
    """The seed the generations are drawn with: an API model's ``seed`` argument (none for an API
    reasoning model), else the harness' torch seed (``lm_eval --seed``), as text beyond int64
    (torch's unseeded default can be, and a dataset column cannot hold it)."""
    if backend == REASONING:
        return None
    if backend == SERVED:
        return int(run_args.get("seed", API_DEFAULT_SEED))
    import torch

    seed = int(torch.initial_seed())
    return seed if seed < 2**63 else str(seed)


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise DataError(f"enable_thinking is {value!r}, expected true or false")


def _template_args(task: str, run_args: Mapping[str, Any]) -> dict[str, Any]:
    value = run_args.get("chat_template_args") or {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as err:
            raise DataError(f"{task}: model argument chat_template_args is not a JSON object: {value!r}") from err
    if not isinstance(value, dict):
        raise DataError(f"{task}: model argument chat_template_args is {value!r}, expected a JSON object")
    return value


def _switches(task: str, run_args: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    template = _template_args(task, run_args).get("enable_thinking")
    return ("enable_thinking", run_args.get("enable_thinking")), ("chat_template_args.enable_thinking", template)


def check_thinking_switch(task: str, mode: Mode, run_args: Mapping[str, Any]) -> None:
    """An in-process run's chat-template switch must say the task's mode, and the harness must
    hand the task the whole output: lm-eval's ``enable_thinking=True`` requires ``think_end_token``,
    which drops the trace (its length is lost, and a cut-off trace would be judged as the
    explanation); ``chat_template_args`` passes the switch to the template alone."""
    switch = '--model_args \'{"pretrained": ..., "chat_template_args": {"enable_thinking": %s}}\''
    if run_args.get("think_end_token") not in (None, ""):
        raise DataError(
            f"{task}: model argument think_end_token makes the harness drop the thinking trace before the task "
            "sees it (its length is lost, and a trace cut off by the token budget would be judged as the "
            f"explanation). Pass the switch to the chat template instead: {switch % 'true'} "
            "(lm_eval_tasks/reg/DETAILS.md, 'Running each mode')."
        )
    for where, value in _switches(task, run_args):
        said = _flag(value)
        if said is not None and said != mode.thinking:
            raise DataError(
                f"{task} runs the {mode.name} mode, but model argument {where} is {value!r}; run "
                f"{TASKS[(('thinking' if said else 'non-thinking'), IN_PROCESS)]} for that mode, or pass "
                f"{switch % str(mode.thinking).lower()}."
            )
    if mode.thinking and _flag(_template_args(task, run_args).get("enable_thinking")) is None:
        raise DataError(
            f"{task}: the chat template's thinking switch is not set; pass {switch % 'true'} (and "
            "--apply_chat_template) so the model thinks because the run says so, not by its template's default."
        )


def check_judge_non_thinking(task: str, run_args: Mapping[str, Any]) -> None:
    """The model as NLI judge runs non-thinking (Table 1: "all tested in non-thinking mode";
    section 4.4): a thinking switch set to true, or a reasoning effort that reasons, stops the
    run before any request."""
    for where, value in _switches(task, run_args):
        if _flag(value):
            raise DataError(
                f"{task} measures the model as the paper's judges were measured, non-thinking (Table 1, section "
                f"4.4), but model argument {where} is {value!r}; pass it false (or leave it out for a template "
                "that does not think by default)."
            )
    effort = run_args.get("reasoning_effort")
    if effort not in (None, "") and str(effort).strip().lower() != NO_REASONING:
        raise DataError(
            f"{task} measures the model non-thinking (Table 1, section 4.4), but --metadata reasoning_effort is "
            f"{effort!r}; an API reasoning model judges with reasoning_effort {NO_REASONING} "
            "(reg_judge_select_reasoning_served sends it)."
        )


def generation_columns(mode: str, backend: str, run_args: Mapping[str, Any]) -> dict[str, Any]:
    """The doc columns a ``reg_chaos*`` run's filter reads, after checking, before any generation, the
    model kind, the thinking switch or reasoning effort, and a loadable tokenizer whose trace markers
    the backend keeps (an API reasoning model's lengths come from ``usage``: no tokenizer)."""
    if mode not in MODES:
        raise DataError(f"reg_chaos: dataset_kwargs mode is {mode!r}, expected one of {sorted(MODES)}")
    if backend not in BACKENDS:
        raise DataError(f"reg_chaos: dataset_kwargs backend is {backend!r}, expected one of {', '.join(BACKENDS)}")
    task, chosen, served = TASKS[(mode, backend)], MODES[mode], is_served(run_args)
    if backend == REASONING:  # an API reasoning model's mode is its reasoning effort's (none: non-thinking)
        chosen = NON_THINKING if reasoning_effort(task, run_args) == NO_REASONING else THINKING
    seed = _sampling_seed(backend, run_args if names_a_model(run_args) else {})
    columns = {"mode": chosen.name, "backend": backend, "length_tokenizer": "", "sampling_seed": seed}
    if not names_a_model(run_args):
        log.info(
            "%s: no model named in the task's metadata (a TaskManager without model arguments, or an LM object "
            "without --metadata): the thinking switch and the tokenizer are not checked, and output tokens are not "
            "counted; pass --metadata tokenizer=<id or folder> to count them (docs/python-api.md).",
            task,
        )
        return columns
    if served and backend == IN_PROCESS:
        raise DataError(
            f"{task} is for in-process models (--model hf); the model arguments name a server "
            f"(base_url or model): run {TASKS[(mode, SERVED)]}, which sends the thinking switch in each request."
        )
    if not served and backend != IN_PROCESS:
        other = TASKS[(mode, IN_PROCESS)]  # each mode has its in-process task
        raise DataError(f"{task} is for OpenAI-compatible chat endpoints; for an in-process model run {other}.")
    if backend == REASONING:
        return columns
    if not served:
        check_thinking_switch(task, chosen, run_args)
    name = tokenizer_name(task, run_args)
    try:
        load_tokenizer(name)
    except Exception as err:  # any loader failure (missing files, no network, bad config) says the same
        raise DataError(
            f"{task}: cannot load tokenizer {name!r} to count output tokens ({type(err).__name__}: {err}); pass "
            "--metadata tokenizer=<Hugging Face id or folder of the generator's tokenizer>."
        ) from err
    check_trace_markers(task, chosen, backend, name, run_args)
    return columns | {"length_tokenizer": name}


def _warn_on_mode_mismatch(mode: Mode, outputs: Sequence[Output]) -> None:
    closed = sum(out.closed_trace for out in outputs)
    if mode.thinking and outputs and not closed:
        log.warning(
            "REG thinking mode: none of the %d outputs ended a thinking trace (no </think> or <channel|>), so "
            "all are counted cut off. Either the token budget is too small for the model's traces, or the trace "
            "never reached the task: a server that returns it separately (vLLM --reasoning-parser, transformers "
            "serve on Qwen models), a harness that strips it (think_end_token), a decoder that drops the "
            "markers (special tokens), or a chat template without a thinking switch. Task README, 'Running each "
            "mode'.",
            len(outputs),
        )
    elif not mode.thinking and closed:
        log.warning(
            "REG non-thinking mode: %d of %d outputs hold a thinking trace; the model thinks by default, so pass "
            "the chat template's switch set to false (lm_eval_tasks/reg/DETAILS.md, 'Running each mode').",
            closed,
            len(outputs),
        )


def split_outputs(resps: Iterable[list[str]], docs: Sequence[Mapping[str, Any]]) -> list[Output]:
    """A task's outputs split in the docs' mode, with their lengths in the run's tokens (an API
    reasoning model's: from its responses' ``usage``)."""
    settings = {(doc.get("mode"), doc.get("length_tokenizer"), doc.get("backend", "")) for doc in docs}
    if len(settings) != 1 or None in next(iter(settings)):
        raise ValueError(
            f"reg_chaos docs name the generation settings {sorted(map(str, settings))}; expected one (mode, "
            "length_tokenizer, backend), as the task's loader writes them"
        )
    mode_name, tokenizer, backend = settings.pop()
    mode = MODES[mode_name]
    responses = [answers[0] if answers else "" for answers in resps]
    if backend == REASONING:  # the trace stays on the server: the text is the answer, usage its length
        outputs = [usage_lengths(split_output(response), response, mode.max_gen_toks) for response in responses]
        outputs = [replace(out, thinking_mode=mode.thinking) for out in outputs]
        flagged = [out.usage_problem for out in outputs if out.usage_problem]
        if flagged:
            log.warning(
                "REG: %d of %d responses reported token usage that cannot be their answer's (%s); their lengths "
                "are left out of output_tokens and thinking_tokens, and each such row's usage_problem says why.",
                len(flagged),
                len(outputs),
                "; ".join(sorted(set(flagged))[:3]),
            )
        if outputs and all(out.output_tokens is None and not out.usage_problem for out in outputs):
            log.warning(
                "REG: no response carried its token usage, so output_tokens and thinking_tokens are NaN (Table 3 "
                "and section 6 need them): run API reasoning models with the suite's model class, explain-eval "
                "lm-eval --model reasoning-chat-completions (lm_eval_tasks/reg/DETAILS.md, 'API reasoning models'); "
                "a --use_cache replay keeps no usage either."
            )
        return outputs
    outputs = [split_output(response, mode.thinking) for response in responses]
    if tokenizer:
        counts = count_tokens(tokenizer, [out.raw for out in outputs] + [out.thinking for out in outputs])
        outputs = [
            replace(out, output_tokens=counts[i], thinking_tokens=counts[len(outputs) + i])
            for i, out in enumerate(outputs)
        ]
    elif outputs:
        log.warning(
            "REG: no tokenizer was named for this run, so output_tokens and thinking_tokens are NaN (Table 3 and "
            "section 6 need them): pass --metadata tokenizer=<the generator's tokenizer> (docs/python-api.md)."
        )
    _warn_on_mode_mismatch(mode, outputs)
    return outputs
