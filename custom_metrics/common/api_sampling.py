"""Refuse an lm-eval API model class that would not send a task's temperature and stop sequences.

Why: lm-eval 0.4.13's ``openai-chat-completions`` forces ``temperature`` to 1 and drops ``stop``
for every model whose name contains "o1", "5", "o3" or "o4" (``gpt-3.5-turbo``, IBE's judge, and
a served Qwen3.5 do): a greedy judge would sample and run past its stop strings, silently. Rather
than copy that rule, the class's own request builder is asked what it would send for a greedy,
stopped request under the run's model name; a class that rewrites either field is refused in one
line naming the fix (``local-chat-completions``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.harness_api import option_value

# lm-eval's base of request-building API classes, as its registry names classes.
API_CLASS = "lm_eval.models.api_models:TemplateAPI"
OPENAI_CHAT_URL = "https://api.openai.com/v1/chat/completions"
# A request as the suite's greedy tasks ask for it: what a faithful class sends back unchanged.
_TEMPERATURE = 0.0
_STOPS = ["<|im_end|>", "</s>"]
_OVERRIDE_SOURCE = "lm_eval/models/openai_completions.py, OpenAIChatCompletion._create_payload"


def rewrites(model_class: Any, model_name: str) -> list[str]:
    """What ``model_class`` changes of a request asking for temperature 0 and stop sequences,
    for a model named ``model_name`` (e.g. ``["temperature forced to 1", "stop sequences
    dropped"]``); empty for a class that sends both, or that is no request-building API class."""
    from lm_eval.models.api_models import TemplateAPI

    if not (isinstance(model_class, type) and issubclass(model_class, TemplateAPI)):
        return []
    probe = object.__new__(model_class)  # no __init__: nothing connects, nothing is read from the environment
    probe.model, probe._max_gen_toks = model_name, 16
    gen_kwargs = {"until": list(_STOPS), "temperature": _TEMPERATURE, "do_sample": False, "max_gen_toks": 16}
    try:
        payload = probe._create_payload([{"role": "user", "content": "."}], generate=True, gen_kwargs=gen_kwargs)
    except Exception:  # a class that refuses these fields (an API reasoning model's) says so when it runs
        return []
    changes = []
    if payload.get("temperature", _TEMPERATURE) != _TEMPERATURE:
        changes.append(f"temperature forced to {payload['temperature']}")
    stops = payload.get("stop")
    if not set(_STOPS) <= set([stops] if isinstance(stops, str) else stops or []):
        changes.append("stop sequences dropped")
    return changes


def check_api_sampling(model: str, model_args: Mapping[str, Any]) -> None:
    """A DataError when ``--model model`` would rewrite the tasks' temperature or stop
    sequences for the model named in ``model_args`` (``model=...``)."""
    from lm_eval.api.registry import get_model

    try:
        model_class = get_model(model)
    except (ImportError, KeyError, ValueError):
        return  # an unknown or uninstalled class: lm-eval names it itself
    name = str(model_args.get("model") or "")
    changes = rewrites(model_class, name)
    if not changes:
        return
    base_url = str(model_args.get("base_url") or OPENAI_CHAT_URL)
    raise DataError(
        f"--model {model} with model={name}: lm-eval rewrites every request for this name ({' and '.join(changes)}; "
        f"{_OVERRIDE_SOURCE}: names containing 'o1', '5', 'o3' or 'o4'), so the task's temperature and stop "
        f"sequences would not be sent; pass --model local-chat-completions --model_args "
        f"model={name},base_url={base_url} (it sends them unchanged, with OPENAI_API_KEY as the key), or for an API "
        "reasoning model explain-eval lm-eval --model reasoning-chat-completions."
    )


def check_command_line(argv: list[str], run_args: Mapping[str, Any]) -> None:
    """``check_api_sampling`` for the ``lm_eval`` command line ``argv`` (its arguments, with or
    without the ``run`` lm-eval inserts), whose model arguments the harness merged into the
    task's ``run_args``."""
    model = option_value(argv, "model")
    if model is not None:
        check_api_sampling(model, run_args)
