"""The ``reg_chaos*`` task class: lm-eval's own generation task, with the request fields that
depend on the run set when the task is built (those of a ``_served`` task as its server takes them).

A task YAML's ``generation_kwargs`` are fixed, but some request fields follow the run's metadata
(checked by the task's loader); they land in the logged request arguments, and ``--gen_kwargs``
still overrides them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.harness_api import generation_task_base
from custom_metrics.judge.spec import SERVERS, server_fields
from custom_metrics.reg import generation
from custom_metrics.reg.tokens import special_trace_markers, tokenizer_name

DEFAULT_SERVER = SERVERS[0]
_SERVER_FIELDS = ("top_k", "min_p")


def served_sampling(task: str, kwargs: Mapping[str, Any], run_args: Mapping[str, Any]) -> dict[str, Any]:
    """A served task's request fields for the server ``--metadata server`` names (vLLM by default)."""
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
    moved = {key: kwargs[key] for key in _SERVER_FIELDS if key in kwargs}
    rest = {key: value for key, value in kwargs.items() if key not in _SERVER_FIELDS}
    return rest | server_fields(server, moved, bool(kwargs.get("do_sample", True)))


class REGChaosTask(generation_task_base()):
    """``reg_chaos`` and its variants (``class: !function utils.REGChaosTask`` in their YAML)."""

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        config = {key: value for key, value in (config or {}).items() if key != "class"}
        super().__init__(config=config, **kwargs)
        settings = self.config.dataset_kwargs or {}
        mode = settings.get("mode", generation.NON_THINKING.name)
        backend = settings.get("backend", generation.IN_PROCESS)
        run_args = self.config.metadata if isinstance(self.config.metadata, dict) else {}
        kwargs_now = dict(self.config.generation_kwargs or {})
        if backend == generation.REASONING:
            task = generation.TASKS[(mode, backend)]
            kwargs_now["reasoning_effort"] = generation.reasoning_effort(task, run_args)
        elif backend == generation.SERVED:
            # It asks for the special tokens it decodes where the generator's tokenizer (loaded by the
            # task's loader) writes its trace markers as special tokens
            named = generation.names_a_model(run_args) and generation.is_served(run_args)
            if named and special_trace_markers(tokenizer_name("reg_chaos_served", run_args)):
                kwargs_now["skip_special_tokens"] = False
            kwargs_now = served_sampling(generation.TASKS[(mode, backend)], kwargs_now, run_args)
        self.config.generation_kwargs = kwargs_now
