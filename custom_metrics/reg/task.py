"""The ``reg_chaos*`` task class: lm-eval's own generation task, with the request fields that
depend on the run set when the task is built.

A task YAML's ``generation_kwargs`` are fixed, but some request fields follow the run's
metadata (checked by the task's loader): an API reasoning model's ``reasoning_effort``; a
served generator's ``skip_special_tokens: false`` when its trace markers are special tokens
(``served.keep_special_tokens``); top_k and min_p as ``transformers serve`` reads them
(``served.served_sampling``). They land in the logged request arguments; ``--gen_kwargs`` still
overrides them.
"""

from __future__ import annotations

from typing import Any

from custom_metrics.common.harness_api import generation_task_base
from custom_metrics.reg import generation, served


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
            if served.keep_special_tokens(run_args):
                kwargs_now["skip_special_tokens"] = False
            kwargs_now = served.served_sampling(generation.TASKS[(mode, backend)], kwargs_now, run_args)
        self.config.generation_kwargs = kwargs_now
