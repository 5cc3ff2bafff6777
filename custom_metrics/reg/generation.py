"""REG's two generation modes as the paper ran them, and what a run records of its outputs.

Section 4.2 evaluates every model in non-thinking and in thinking mode; section 4.4 uses
"the default sampling parameters recommended by Qwen Team (2026) when prompting models in
non-thinking and thinking modes respectively", with the details in Appendix G, which our
copy of the paper does not hold. The values here are the Qwen3.5 model cards' "Best
Practices" for general tasks (huggingface.co/Qwen/Qwen3.5-9B and its siblings):

- thinking: temperature 1.0, top_p 0.95, top_k 20, min_p 0.0, presence_penalty 1.5;
- non-thinking ("instruct"): temperature 0.7, top_p 0.8, top_k 20, min_p 0.0, presence_penalty 1.5

(repetition_penalty 1.0, the default, in both). The cards' other sets are for precise
coding (thinking: temperature 0.6, as Qwen3's card recommends for all thinking) and for
reasoning tasks in instruct mode; REG's explanations are neither.

Not every backend takes every field (lm-eval 0.4.13 and transformers 5.24, checked in their
sources and by running them; the task README tabulates it): transformers' generate() has
top_k and min_p but no presence penalty and refuses a ``seed``; ``transformers serve``
answers HTTP 422 to top_k and min_p (not OpenAI fields) and ignores presence_penalty; vLLM
takes them all. In process the sampling seed is the harness' torch seed (``lm_eval
--seed``); an API model sends its ``seed`` argument (default 1234) with every request. The
thinking switch reaches an in-process template through the ``chat_template_args`` model
argument and a served one through each request's ``chat_template_kwargs``,
so each mode has a task for in-process models (``reg_chaos``, ``reg_chaos_thinking``: top_k
and min_p in the request, the switch in the model arguments, checked here) and one for
OpenAI-compatible chat endpoints (``reg_chaos_served``, ``reg_chaos_thinking_served``: the
switch in the request, top_k and min_p as vLLM takes them or, for ``transformers serve``, in
its ``generation_config`` request field: ``served_sampling``). The task README gives the exact
command per backend.

Output lengths are counted in the generator's tokens (Table 3 reports "mean output tokens
(including reasoning tokens)", section 6 fits on output length): the harness hands the
task text only, so the run's tokenizer (named by the model arguments, or ``--metadata
tokenizer=...``) is loaded before any generation and re-encodes each output.

These checks need a model: the harness merges ``--model_args`` into the task's metadata
only for a model named by string (``lm_eval --model hf --model_args ...``). A task built with
no model named (a plain ``TaskManager``, as lm-eval's own task checks build it, or
``simple_evaluate`` with an LM object and no ``--metadata``) builds its documents and defers
the checks: the outputs are then split and judged as usual, their token counts left empty
unless ``--metadata tokenizer`` names the tokenizer (docs/python-api.md).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.judge.traces import MARKERS
from custom_metrics.reg.outputs import CUT_OFF, Output, split_output

log = logging.getLogger(__name__)

IN_PROCESS, SERVED, REASONING = "in-process", "served", "reasoning-api"
BACKENDS = (IN_PROCESS, SERVED, REASONING)
# lm-eval's API models send this seed with every request unless model_args set `seed`.
API_DEFAULT_SEED = 1234
# API reasoning models (the paper's gpt-5.6 rows) take a reasoning effort instead of sampling
# fields; section 4.4 sets "medium" in thinking mode. "none" (no reasoning at all) is their
# non-thinking mode; every other effort reasons, so it is thinking mode.
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
PAPER_REASONING_EFFORT = "medium"
NO_REASONING = "none"


@dataclass(frozen=True)
class Mode:
    """One of the paper's two modes: Qwen3.5's sampling set for it and the token budget."""

    name: str
    thinking: bool
    temperature: float
    top_p: float
    top_k: int
    min_p: float
    presence_penalty: float
    max_gen_toks: int

    def generation_kwargs(self, backend: str, reasoning_effort: str = PAPER_REASONING_EFFORT) -> dict[str, Any]:
        """The task's ``generation_kwargs`` (less ``until``) for a backend: what it accepts.

        In process, transformers has no presence penalty; a served model gets all of Qwen's
        set, top_k and min_p as vLLM and SGLang take them (``served_sampling`` moves them into
        ``transformers serve``'s own field) and presence_penalty (vLLM applies it,
        ``transformers serve`` ignores it); an API reasoning model gets only its reasoning
        effort and budget (such APIs refuse every sampling field)."""
        if backend == REASONING:
            return {"reasoning_effort": reasoning_effort, "max_gen_toks": self.max_gen_toks}
        kwargs: dict[str, Any] = {"do_sample": True, "temperature": self.temperature, "top_p": self.top_p}
        kwargs |= {"top_k": self.top_k, "min_p": self.min_p}
        if backend == SERVED:
            kwargs |= {
                "presence_penalty": self.presence_penalty,
                "chat_template_kwargs": {"enable_thinking": self.thinking},
            }
        return kwargs | {"max_gen_toks": self.max_gen_toks}


# The servers a _served task can address: vLLM (and SGLang) take top_k and min_p as request
# fields; ``transformers serve`` answers HTTP 422 ("Unexpected fields in the request") to them
# but reads a request's ``generation_config`` (a GenerationConfig as JSON, the fields it leaves
# unset taken from the served model's), so there they travel in that field, with do_sample,
# which it otherwise takes from the served folder only.
SERVERS = ("vllm", "transformers")
DEFAULT_SERVER = "vllm"
_SERVER_FIELDS = ("top_k", "min_p")


def served_sampling(task: str, kwargs: Mapping[str, Any], run_args: Mapping[str, Any]) -> dict[str, Any]:
    """A served task's request fields for the server ``--metadata server`` names (vLLM by
    default): unchanged for vLLM; for ``transformers serve``, top_k, min_p and do_sample in its
    ``generation_config`` field instead, so every request still carries the paper's values."""
    value = run_args.get("server")
    server = DEFAULT_SERVER if value in (None, "") else str(value).strip().lower()
    if server not in SERVERS:
        raise DataError(
            f"{task}: --metadata server is {value!r}, expected one of {', '.join(SERVERS)} (vllm, the default, "
            "also for SGLang: top_k and min_p as request fields; transformers: `transformers serve`, which takes "
            "them in its generation_config field)"
        )
    if server == DEFAULT_SERVER:
        return dict(kwargs)
    moved = {"do_sample": bool(kwargs.get("do_sample", True))} | {k: kwargs[k] for k in _SERVER_FIELDS if k in kwargs}
    rest = {key: value for key, value in kwargs.items() if key not in _SERVER_FIELDS}
    return rest | {"generation_config": json.dumps(moved, sort_keys=True)}


# Budgets: the single sentence the prompt asks for fits many times in 2,048 tokens; the
# Qwen3.5 cards recommend 32,768 output tokens for most queries, and Table 3's thinking
# traces average up to 6,470 tokens (Qwen3.5-0.8B, unsuccessful explanations).
NON_THINKING = Mode("non-thinking", False, 0.7, 0.8, 20, 0.0, 1.5, 2048)
THINKING = Mode("thinking", True, 1.0, 0.95, 20, 0.0, 1.5, 32768)
MODES = {mode.name: mode for mode in (NON_THINKING, THINKING)}
TASKS = {
    (NON_THINKING.name, IN_PROCESS): "reg_chaos",
    (THINKING.name, IN_PROCESS): "reg_chaos_thinking",
    (NON_THINKING.name, SERVED): "reg_chaos_served",
    (THINKING.name, SERVED): "reg_chaos_thinking_served",
    (THINKING.name, REASONING): "reg_chaos_reasoning_served",
}


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


def run_mode(mode: str, backend: str, run_args: Mapping[str, Any]) -> Mode:
    """The mode a run generates in: the task's, except that an API reasoning model's mode is
    its reasoning effort's (none: non-thinking, any other: thinking)."""
    if backend != REASONING:
        return MODES[mode]
    return NON_THINKING if reasoning_effort(TASKS[(mode, backend)], run_args) == NO_REASONING else THINKING


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


def check_thinking_switch(task: str, mode: Mode, run_args: Mapping[str, Any]) -> None:
    """An in-process run's chat-template switch must say the task's mode, and the harness
    must hand the task the whole output.

    lm-eval's ``enable_thinking=True`` model argument requires ``think_end_token``, with
    which the harness keeps only the text after the trace: the trace's length (Table 3,
    section 6) is lost, and a trace cut off by the budget (no end token) would be judged
    as the explanation. ``chat_template_args`` passes the switch to the template alone.
    """
    switch = '--model_args \'{"pretrained": ..., "chat_template_args": {"enable_thinking": %s}}\''
    if run_args.get("think_end_token") not in (None, ""):
        raise DataError(
            f"{task}: model argument think_end_token makes the harness drop the thinking trace before the task "
            "sees it (its length is lost, and a trace cut off by the token budget would be judged as the "
            f"explanation). Pass the switch to the chat template instead: {switch % 'true'} "
            "(lm_eval_tasks/reg/DETAILS.md, 'Running each mode')."
        )
    for where, value in (
        ("enable_thinking", run_args.get("enable_thinking")),
        ("chat_template_args.enable_thinking", _template_args(task, run_args).get("enable_thinking")),
    ):
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
    for where, value in (
        ("enable_thinking", run_args.get("enable_thinking")),
        ("chat_template_args.enable_thinking", _template_args(task, run_args).get("enable_thinking")),
    ):
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


def tokenizer_name(task: str, run_args: Mapping[str, Any]) -> str:
    """The tokenizer that counts output tokens: ``tokenizer`` (``--metadata`` or the API
    models' argument), else the model itself (``pretrained``, or a served ``model``)."""
    for key in ("tokenizer", "pretrained", "model"):
        value = run_args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    raise DataError(
        f"{task} counts output lengths in the generator's tokens (Table 3, section 6) and needs its tokenizer: "
        "the model arguments name none (pretrained, model or tokenizer); pass --metadata tokenizer=<Hugging Face "
        "id or folder>."
    )


@lru_cache(maxsize=4)
def load_tokenizer(name: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(name)


def count_tokens(name: str, texts: Sequence[str]) -> list[int]:
    """Each text's length in the tokenizer's tokens, without special tokens added: the
    generated text re-encoded, the end-of-turn token the decoder dropped not counted."""
    if not texts:
        return []
    encoded = load_tokenizer(name)(list(texts), add_special_tokens=False)["input_ids"]
    return [len(ids) for ids in encoded]


def _sampling_seed(backend: str, run_args: Mapping[str, Any]) -> int | str | None:
    """The seed the generations are drawn with: an API model sends its ``seed`` argument with
    every request (an API reasoning model is sent none: it takes no sampling fields); in
    process, the harness' torch seed (``lm_eval --seed``) is already set when the task's data
    loads. Torch's unseeded default can pass int64, which a dataset column cannot hold: such a
    seed is kept as text."""
    if backend == REASONING:
        return None
    if backend == SERVED:
        return int(run_args.get("seed", API_DEFAULT_SEED))
    import torch

    seed = int(torch.initial_seed())
    return seed if seed < 2**63 else str(seed)


def special_trace_markers(name: str) -> list[str]:
    """The trace markers (``judge.traces.MARKERS``) that are special tokens of this tokenizer:
    a decoder with ``skip_special_tokens=True`` (``--model hf``, a server's default) drops
    them, and the trace can no longer be told from the explanation."""
    tokenizer = load_tokenizer(name)
    special = set(getattr(tokenizer, "all_special_tokens", ()))
    special |= {token.content for token in getattr(tokenizer, "added_tokens_decoder", {}).values() if token.special}
    return [marker for pair in MARKERS for marker in pair if marker in special]


def keep_special_tokens(run_args: Mapping[str, Any]) -> bool:
    """Whether a served task must ask for the special tokens it decodes (``skip_special_tokens:
    false``, a vLLM request field): the generator's tokenizer writes its trace markers as
    special tokens. Read when the task is built, like the tokenizer itself."""
    if not names_a_model(run_args) or not is_served(run_args):
        return False
    return bool(special_trace_markers(tokenizer_name("reg_chaos_served", run_args)))  # loaded by the task's loader


def _check_trace_markers(task: str, chosen: Mode, backend: str, name: str, run_args: Mapping[str, Any]) -> None:
    """Special-token trace markers (Gemma 4's ``<|channel>``/``<channel|>`` may be) survive a
    served vLLM (the task asks for them) but not ``--model hf``, which decodes with
    ``skip_special_tokens=True``: every thinking output would count as cut off."""
    kept = run_args.get("trace_markers")
    if kept not in (None, "", "kept"):
        raise DataError(f'{task}: --metadata trace_markers is {kept!r}; the one value it takes is "kept"')
    markers = special_trace_markers(name)
    if not markers or backend != IN_PROCESS or kept == "kept":
        return
    message = (
        f"{task}: the tokenizer {name!r} writes the thinking-trace markers {markers} as special tokens, which "
        "--model hf drops when it decodes (skip_special_tokens=True), so the task could not find any trace"
    )
    remedy = (
        "serve the model with vLLM and run the _served task (it asks vLLM for skip_special_tokens=false), or, on a "
        'backend that keeps special tokens (lm-eval\'s --model vllm), pass --metadata \'{"trace_markers": "kept"}\' '
        "(lm_eval_tasks/reg/DETAILS.md, 'Running each mode')"
    )
    if chosen.thinking:
        raise DataError(f"{message}: every output would count as cut off. To run it, {remedy}.")
    log.warning(
        "%s; in non-thinking mode a trace the model writes anyway would be judged as the explanation: %s.",
        message,
        remedy,
    )


def generation_columns(mode: str, backend: str, run_args: Mapping[str, Any]) -> dict[str, Any]:
    """The doc columns a ``reg_chaos*`` run's filter reads (``mode``, ``backend``,
    ``length_tokenizer``, ``sampling_seed``), after checking, before any generation, that the
    run can do what the task says: the model kind, the thinking switch or reasoning effort, a
    loadable tokenizer whose trace markers the backend keeps.

    ``run_args`` are the task's metadata, which lm-eval merges from ``--model_args`` and
    ``--metadata``. An API reasoning model's lengths come from its responses' ``usage`` (its
    trace is hidden), so it needs no tokenizer.
    """
    if mode not in MODES:
        raise DataError(f"reg_chaos: dataset_kwargs mode is {mode!r}, expected one of {sorted(MODES)}")
    if backend not in BACKENDS:
        raise DataError(f"reg_chaos: dataset_kwargs backend is {backend!r}, expected one of {', '.join(BACKENDS)}")
    task, chosen, served = TASKS[(mode, backend)], run_mode(mode, backend, run_args), is_served(run_args)
    columns = {"mode": chosen.name, "backend": backend, "length_tokenizer": ""}
    if not names_a_model(run_args):
        log.info(
            "%s: no model named in the task's metadata (a TaskManager without model arguments, or an LM object "
            "without --metadata): the thinking switch and the tokenizer are not checked, and output tokens are not "
            "counted; pass --metadata tokenizer=<id or folder> to count them (docs/python-api.md).",
            task,
        )
        return columns | {"sampling_seed": _sampling_seed(backend, {})}
    if served and backend == IN_PROCESS:
        other = TASKS[(mode, SERVED)]
        raise DataError(
            f"{task} is for in-process models (--model hf); the model arguments name a server "
            f"(base_url or model): run {other}, which sends the thinking switch in each request."
        )
    if not served and backend != IN_PROCESS:
        other = TASKS[(mode, IN_PROCESS)] if (mode, IN_PROCESS) in TASKS else TASKS[(THINKING.name, IN_PROCESS)]
        raise DataError(f"{task} is for OpenAI-compatible chat endpoints; for an in-process model run {other}.")
    if backend == REASONING:
        return columns | {"sampling_seed": _sampling_seed(backend, run_args)}
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
    _check_trace_markers(task, chosen, backend, name, run_args)
    return columns | {"length_tokenizer": name, "sampling_seed": _sampling_seed(backend, run_args)}


def _warn_on_mode_mismatch(mode: Mode, outputs: Sequence[Output]) -> None:
    """A run whose outputs contradict its mode: say so once, with the likely cause."""
    if not outputs:
        return
    closed = sum(out.closed_trace for out in outputs)
    if mode.thinking and not closed:
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


def _usage_lengths(output: Output, response: Any, budget: int) -> Output:
    """An API reasoning model's output, its lengths from the response's ``usage``: the
    completion tokens (trace included, as Table 3 counts) and the hidden trace's reasoning
    tokens, when they can be counts of this answer (``usage_problem``; else the row says why
    and its lengths are left empty). An answer the budget stopped (``finish_reason``
    "length") is cut off, as a trace cut off in the other modes: with no text the budget ran
    out reasoning, with text it ended the explanation mid-way; neither is judged."""
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


def _warn_on_usage(outputs: Sequence[Output]) -> None:
    """Responses whose token counts cannot be: say how many and why, once."""
    flagged = [out.usage_problem for out in outputs if out.usage_problem]
    if flagged:
        log.warning(
            "REG: %d of %d responses reported token usage that cannot be their answer's (%s); their lengths are "
            "left out of output_tokens and thinking_tokens, and each such row's usage_problem says why.",
            len(flagged),
            len(outputs),
            "; ".join(sorted(set(flagged))[:3]),
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
        outputs = [_usage_lengths(split_output(response), response, mode.max_gen_toks) for response in responses]
        outputs = [replace(out, thinking_mode=mode.thinking) for out in outputs]
        _warn_on_usage(outputs)
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
