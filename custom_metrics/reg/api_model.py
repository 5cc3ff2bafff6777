"""API reasoning models (the paper's gpt-5.6 rows) as an lm-eval model class that keeps token usage.

OpenAI's reasoning models hide their trace: the answer is the explanation, and the trace's
length, which Table 3 and section 6 count ("output tokens (including reasoning tokens)"), is
only in each response's ``usage`` (``completion_tokens``, and ``completion_tokens_details.
reasoning_tokens`` for the trace). lm-eval's API models return the text alone, so this class,
a subclass of lm-eval's own chat-completions client, returns each answer as an
``APIAnswer``: a ``str`` (to the harness, the samples file and every other task it is the
text) that also carries the response's ``usage`` and ``finish_reason``, which the
``reg_chaos_reasoning_served`` filter reads from the responses it is handed.

Such APIs refuse the sampling fields (temperature, top_p, top_k, stop, logprobs,
chat_template_kwargs...) and ``max_tokens``: a request carries the messages, the model,
``max_completion_tokens`` (the task's ``max_gen_toks``, trace included) and the task's
``reasoning_effort``, nothing else. A task that asks for another field is refused before the
first request, naming the field. The harness registers models before it loads any task, so
the class is registered by the suite's own entry to lm-eval's CLI, ``explain-eval lm-eval``
(or ``python -m custom_metrics.reg.api_model``), which takes lm-eval's arguments unchanged;
from Python, import this module and pass ``ReasoningChatCompletions(...)`` to
``simple_evaluate``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from lm_eval.api.registry import register_model
from lm_eval.models.openai_completions import LocalChatCompletion

from custom_metrics.common.errors import DataError

MODEL_NAME = "reasoning-chat-completions"
OPENAI_CHAT_URL = "https://api.openai.com/v1/chat/completions"
# What the harness puts into every request's generation arguments and this class consumes:
# the stop strings (such APIs take none: the answer ends with the turn), do_sample (the
# harness' own flag) and the budget (sent as max_completion_tokens).
CONSUMED = ("until", "do_sample", "max_gen_toks")
SENT = ("reasoning_effort",)


class APIAnswer(str):
    """An answer's text, with its response's token ``usage`` and ``finish_reason``."""

    usage: dict[str, Any] | None
    finish_reason: str | None

    def __new__(cls, text: str, usage: Any = None, finish_reason: Any = None) -> APIAnswer:
        answer = super().__new__(cls, text)
        answer.usage = usage if isinstance(usage, dict) else None
        answer.finish_reason = finish_reason if isinstance(finish_reason, str) else None
        return answer


def check_generation_kwargs(gen_kwargs: dict[str, Any]) -> None:
    """A request this class would send must hold only fields reasoning APIs take."""
    refused = sorted(set(gen_kwargs) - set(CONSUMED) - set(SENT))
    if refused:
        raise DataError(
            f"{MODEL_NAME}: the task asks for {', '.join(refused)}, which API reasoning models refuse (they take "
            "reasoning_effort and a token budget only); run reg_chaos_reasoning_served, or drop them from --gen_kwargs"
        )


@register_model(MODEL_NAME)
class ReasoningChatCompletions(LocalChatCompletion):
    """lm-eval's chat-completions client for API reasoning models, keeping each response's usage."""

    def __init__(self, base_url: str = OPENAI_CHAT_URL, **kwargs: Any) -> None:
        super().__init__(base_url=base_url, **kwargs)

    def _create_payload(
        self,
        messages: list[dict],
        generate: bool = False,
        gen_kwargs: dict | None = None,
        seed: int = 1234,
        eos: str | None = None,
        **kwargs: Any,
    ) -> dict:
        if not generate:
            raise NotImplementedError(f"{MODEL_NAME} generates only: API reasoning models return no log-likelihoods")
        gen_kwargs = dict(gen_kwargs or {})
        check_generation_kwargs(gen_kwargs)
        payload: dict[str, Any] = {
            "messages": messages,
            "model": self.model,
            "max_completion_tokens": int(gen_kwargs.get("max_gen_toks", self._max_gen_toks)),
        }
        return payload | {key: gen_kwargs[key] for key in SENT if key in gen_kwargs}

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        for request in requests:  # every request checked before the first is sent
            check_generation_kwargs(dict(request.args[1]))
        return super().generate_until(requests, disable_tqdm=disable_tqdm)

    def parse_generations(self, outputs: dict | list[dict], **kwargs: Any) -> list[str]:
        answers: list[str] = []
        for output in outputs if isinstance(outputs, list) else [outputs]:
            choices = output.get("choices") if isinstance(output, dict) else None
            if not isinstance(choices, list) or not choices:
                answers.append(APIAnswer("", output.get("usage") if isinstance(output, dict) else None))
                continue
            for choice in sorted(choices, key=lambda choice: choice.get("index", 0)):
                message = choice.get("message") if isinstance(choice, dict) else None
                content = message.get("content") if isinstance(message, dict) else None
                answers.append(
                    APIAnswer(
                        content if isinstance(content, str) else "", output.get("usage"), choice.get("finish_reason")
                    )
                )
        return answers


def main(argv: Sequence[str] | None = None) -> int:
    """lm-eval's own CLI with this class registered (``explain-eval lm-eval`` registers every
    model class of the suite: ``custom_metrics.lm_eval_cli``)."""
    from lm_eval.__main__ import cli_evaluate

    sys.argv = ["lm_eval", *(sys.argv[1:] if argv is None else argv)]
    cli_evaluate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
