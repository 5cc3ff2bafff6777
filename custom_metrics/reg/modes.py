"""REG's two generation modes as the paper ran them: each mode's sampling set and budget, the
backends and the task of each mode and backend.

Section 4.2 evaluates every model in non-thinking and in thinking mode; section 4.4 uses
"the default sampling parameters recommended by Qwen Team (2026) when prompting models in
non-thinking and thinking modes respectively", with the details in Appendix G, which our
copy of the paper does not hold. The values here (``THINKING``, ``NON_THINKING``: the cards'
"instruct") are the Qwen3.5 model cards' "Best Practices" for general tasks
(huggingface.co/Qwen/Qwen3.5-9B and its siblings; repetition_penalty 1.0, the default, in both);
the cards' other sets are for coding and reasoning tasks, which REG's explanations are not.

Not every backend takes every field (lm-eval 0.4.13, transformers 5.24; the task README
tabulates it): transformers' generate() has no presence penalty; ``transformers serve`` refuses
top_k and min_p (HTTP 422) and ignores presence_penalty; vLLM takes them all. The thinking
switch reaches an in-process template through the ``chat_template_args`` model argument
(``generation``) and a served one through each request's ``chat_template_kwargs``, so
each mode has an in-process task and a served one (``task``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

IN_PROCESS, SERVED, REASONING = "in-process", "served", "reasoning-api"
BACKENDS = (IN_PROCESS, SERVED, REASONING)
# API reasoning models (the paper's gpt-5.6 rows) take a reasoning effort instead of sampling
# fields; section 4.4 sets "medium" in thinking mode. "none" (no reasoning at all) is their
# non-thinking mode; every other effort (judge.spec's REASONING_EFFORTS) reasons, so it is thinking mode.
PAPER_REASONING_EFFORT = "medium"
NO_REASONING = "none"


@dataclass(frozen=True)
class Mode:
    name: str
    thinking: bool
    temperature: float
    top_p: float
    top_k: int
    min_p: float
    presence_penalty: float
    max_gen_toks: int

    def generation_kwargs(self, backend: str) -> dict[str, Any]:
        """The task's ``generation_kwargs`` (less ``until``) for a backend: what it accepts (an API
        reasoning model refuses every sampling field: the effort, which ``task.py`` sets, and budget)."""
        if backend == REASONING:
            return {"reasoning_effort": PAPER_REASONING_EFFORT, "max_gen_toks": self.max_gen_toks}
        kwargs: dict[str, Any] = {"do_sample": True, "temperature": self.temperature, "top_p": self.top_p}
        kwargs |= {"top_k": self.top_k, "min_p": self.min_p}
        if backend == SERVED:
            kwargs |= {
                "presence_penalty": self.presence_penalty,
                "chat_template_kwargs": {"enable_thinking": self.thinking},
            }
        return kwargs | {"max_gen_toks": self.max_gen_toks}


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
