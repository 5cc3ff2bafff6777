"""API reasoning models (the paper's gpt-5.6 rows) as an lm-eval model class that keeps token usage.

OpenAI's reasoning models hide their trace: its length, which Table 3 and section 6 count
("output tokens (including reasoning tokens)"), is only in each response's ``usage``. lm-eval's
API models return the text alone, so this subclass of its chat-completions client returns each
answer as an ``APIAnswer``: a ``str`` that also carries the response's ``usage`` and
``finish_reason``, which the ``reg_chaos_reasoning_served`` filter reads.

Such APIs refuse the sampling fields and ``max_tokens``; a task asking for another field than
``reasoning_effort`` and the budget is refused before the first request. Requests go through the suite's
bounded client (``judge.http_client``): each ends by ``timeout`` (retries included), its body is
read no further than a bound from its token budget, and a failure stops the run naming the URL;
an answer over its bound fails its own document only (an ``APIAnswer`` with its ``failure``), keeping
the others (it once ended the run, losing the generations already made).

Registered by ``explain-eval lm-eval`` (the harness registers models before it loads any task);
from Python, pass ``ReasoningChatCompletions(...)`` to ``simple_evaluate``.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import threading
from typing import Any

from lm_eval.api.registry import register_model
from lm_eval.models.openai_completions import LocalChatCompletion

from custom_metrics.common.errors import DataError
from custom_metrics.judge.http_client import AnswerTooLarge, EndpointError, JSONClient, Limits, body_bound

log = logging.getLogger(__name__)

MODEL_NAME = "reasoning-chat-completions"
OPENAI_CHAT_URL = "https://api.openai.com/v1/chat/completions"
# What the harness puts into every request's generation arguments and this class consumes:
# the stop strings (such APIs take none: the answer ends with the turn), do_sample (the
# harness' own flag) and the budget (sent as max_completion_tokens).
CONSUMED = ("until", "do_sample", "max_gen_toks")
SENT = ("reasoning_effort",)


class APIAnswer(str):
    """An answer's text, with its response's token ``usage`` and ``finish_reason``; ``failure``:
    why there is no answer (it was refused, e.g. over its size bound), else empty."""

    usage: dict[str, Any] | None
    finish_reason: str | None
    failure: str

    def __new__(cls, text: str, usage: Any = None, finish_reason: Any = None, failure: str = "") -> APIAnswer:
        answer = super().__new__(cls, text)
        answer.usage = usage if isinstance(usage, dict) else None
        answer.finish_reason = finish_reason if isinstance(finish_reason, str) else None
        answer.failure = failure
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
        # The bounded client makes every attempt within one deadline; lm-eval's own retry loop
        # around each call (a fresh deadline per attempt) makes one.
        self._attempts, self.max_retries = max(self.max_retries, 1), 1
        self._clients: dict[int, JSONClient] = {}
        self._opening = threading.Lock()

    def _client(self, budget: int) -> JSONClient:
        """The bounded client for requests of this token budget (its body bound), one per budget."""
        with self._opening:
            if budget not in self._clients:
                limits = Limits(
                    float(self.timeout), body_bound(budget), self._attempts - 1, timeout_set_by="--model_args timeout="
                )
                self._clients[budget] = JSONClient(f"{MODEL_NAME} {self.model}", limits)
            return self._clients[budget]

    def _post(self, payload: dict[str, Any]) -> Any:
        try:
            headers = {key: value for key, value in self.header.items() if value.strip() != "Bearer"}  # no key
            return self._client(payload["max_completion_tokens"]).post(self.base_url, payload, headers)
        except AnswerTooLarge as err:  # this answer only: the server answers, and the other documents are kept
            log.warning("%s; its document's generation is flagged as failed (no_explanation) and the run goes on", err)
            return APIAnswer("", failure=str(err))
        except EndpointError as err:
            raise DataError(f"{err}; check the server, or raise --model_args timeout=/max_retries=") from err

    def model_call(
        self, messages: Any, *, generate: bool = True, gen_kwargs: dict | None = None, **kwargs: Any
    ) -> dict | None:
        payload = self._create_payload(
            self.create_message(messages), generate=generate, gen_kwargs=copy.deepcopy(gen_kwargs), **kwargs
        )
        return self._post(payload)

    async def amodel_call(
        self,
        session: Any,
        sem: asyncio.Semaphore,
        messages: Any,
        *,
        generate: bool = True,
        cache_keys: list | None = None,
        ctxlens: list[int] | None = None,
        gen_kwargs: dict | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """lm-eval's concurrent path (``num_concurrent`` > 1): the same bounded request, in a thread;
        lm-eval's session is not used."""
        async with sem:
            outputs = await asyncio.to_thread(
                self.model_call, messages, generate=generate, gen_kwargs=gen_kwargs, **kwargs
            )
        answers = self.parse_generations(outputs)
        for answer, key in zip(answers, cache_keys or [], strict=False):
            self.cache_hook.add_partial("generate_until", key, answer)
        return answers

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
            if isinstance(output, APIAnswer):  # refused for its size (``_post``)
                answers.append(output)
                continue
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
