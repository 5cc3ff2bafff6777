"""The thinking switch of a run, checked against its task's mode before any generation.

An in-process run's chat template takes the switch as a model argument
(``chat_template_args``); REG's judges run non-thinking (Table 1, section 4.4).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.reg.modes import IN_PROCESS, NO_REASONING, TASKS, Mode


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
    """The run's thinking switches: lm-eval's model argument and the chat template's."""
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
