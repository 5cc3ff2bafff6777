"""An OpenAI-compatible chat endpoint as judge (vLLM, TGI, ``transformers serve``), for
judges too large to load beside the evaluated model."""

from __future__ import annotations

import json
import logging
import math
import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from custom_metrics.judge.answer import cut_answer, parse_label
from custom_metrics.judge.http_client import Deadline, EndpointError, JSONClient, Limits, body_bound, current
from custom_metrics.judge.prompt import nli_prompt
from custom_metrics.judge.spec import SERVERS, JudgeSpec, server_fields
from custom_metrics.judge.types import NLI_LABELS, JudgeError, Pair, Verdict, answer_verdict, verdict_from_probs

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 300.0  # one request, every attempt and wait included (judge option timeout=)
LOGLIK_MAX_TOKENS = 5  # the loglik mode reads the first lettered answer position


class OpenAIJudge:
    """An OpenAI-compatible chat endpoint, in one of two modes.

    ``generate`` (the default; the paper's protocol): the answer is sampled with the spec's sampling
    and a seed per pair, read by ``answer.parse_label``; an API reasoning model is sent its effort and
    ``max_completion_tokens`` only. ``loglik``: temperature 0 with logprobs, read at the first answer
    position whose token has letters (each top-logprob token that begins a label word adds its
    probability to that label); a server that returns no logprobs is read from its answer text.

    The API key is read from the environment at call time, never stored or logged; the answer is
    cut (``answer.cut_answer``) before it is cached or logged.
    """

    def __init__(self, spec: JudgeSpec) -> None:
        self.spec = spec
        self.name = spec.name
        self.url = f"{spec.base_url}/chat/completions"
        self.mode = spec.mode
        self.sampling = spec.sampling
        self.server = spec.options.get("server", SERVERS[0])
        self.key_env = spec.options.get("key_env", "OPENAI_API_KEY")
        self.max_tokens = self.sampling.max_tokens if self.mode == "generate" else LOGLIK_MAX_TOKENS
        limits = Limits(float(spec.options.get("timeout", DEFAULT_TIMEOUT_S)), body_bound(self.max_tokens))
        self.client = JSONClient(f"judge {self.name}", limits)

    def _payload(self, premise: str, hypothesis: str) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.spec.model,
            "messages": [{"role": "user", "content": nli_prompt(premise, hypothesis)}],
        }
        if self.spec.reasoning_effort is not None:  # an API reasoning model refuses every sampling field and max_tokens
            return payload | {
                "reasoning_effort": self.spec.reasoning_effort,
                "max_completion_tokens": self.sampling.max_tokens,
            }
        if self.mode == "generate":
            payload |= {
                "temperature": self.sampling.temperature,
                "top_p": self.sampling.top_p,
                "seed": self.sampling.pair_seed(premise, hypothesis),
                "max_tokens": self.sampling.max_tokens,
            }
            if self.sampling.top_k > 0:  # with min_p 0 (Qwen's); none when top_k is 0
                payload |= server_fields(self.server, {"top_k": self.sampling.top_k, "min_p": 0.0})
        else:
            payload |= {
                "temperature": 0,
                "max_tokens": LOGLIK_MAX_TOKENS,
                "logprobs": True,
                "top_logprobs": int(self.spec.options.get("top_logprobs", "20")),
            }
        # the chat template's switch; a server that ignores it: task README
        if self.spec.thinking not in (None, "unset"):
            payload["chat_template_kwargs"] = {"enable_thinking": self.spec.thinking == "on"}
        return payload

    def _post(self, payload: dict[str, Any], deadline: Deadline | None = None) -> dict[str, Any]:
        key = os.environ.get(self.key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            response = self.client.post(self.url, payload, headers, deadline)
        except EndpointError as error:
            if error.status == 422 and "top_k" in payload:  # transformers serve's answer to the fields
                raise EndpointError(
                    f"{error}. The server refuses top_k and min_p as request fields, as transformers serve does: "
                    "add server=transformers to the judge spec (openai:MODEL@URL?server=transformers), which sends "
                    "them in its generation_config field, or top_k=0 to send neither",
                    error.status,
                    error.reason,
                ) from error
            raise
        if not isinstance(response, dict):
            raise JudgeError(f"judge {self.name}: {self.url} answered {str(response)[:300]!r}, not a chat completion")
        return response

    def verdict(self, response: dict[str, Any]) -> Verdict:
        """The verdict of one chat-completion response (a recorded one in tests)."""
        choices = response.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            detail = response.get("error", response)
            raise JudgeError(f"judge {self.name}: {self.url} sent no answer choice: {json.dumps(detail)[:300]}")
        choice = choices[0]
        message = choice.get("message")
        text = message.get("content") if isinstance(message, dict) else None
        text = text if isinstance(text, str) else ""
        if self.mode == "loglik":
            scored = self._logprob_verdict(choice.get("logprobs"))
            if scored is not None:
                return scored
        method = "generated" if self.mode == "generate" else "text"
        verdict = answer_verdict(parse_label(text), cut_answer(text, self.max_tokens), method)
        if not verdict.parsed:
            log.warning("judge %s: answer %r names no single NLI label; counted as unparsed", self.name, text[:80])
        return verdict

    def _logprob_verdict(self, logprobs: Any) -> Verdict | None:
        """Label probabilities from the first lettered answer position's top logprobs, if usable."""
        positions = logprobs.get("content") if isinstance(logprobs, dict) else None
        for position in positions if isinstance(positions, list) else []:
            if not isinstance(position, dict) or not re.search(r"[A-Za-z]", str(position.get("token", ""))):
                continue
            candidates = position.get("top_logprobs") or [position]
            mass = dict.fromkeys(NLI_LABELS, 0.0)
            for candidate in candidates if isinstance(candidates, list) else []:
                if not isinstance(candidate, dict):
                    continue
                label = label_for_prefix(str(candidate.get("token", "")))
                logprob = candidate.get("logprob")
                if label is not None and isinstance(logprob, (int, float)) and math.isfinite(logprob):
                    mass[label] += math.exp(logprob)
            return verdict_from_probs([mass[label] for label in NLI_LABELS]) if sum(mass.values()) > 0 else None
        return None

    def judge(self, pairs: Sequence[Pair]) -> list[Verdict]:
        deadline = current()  # the caller's, read in this thread: the pool's threads do not see it
        with ThreadPoolExecutor(max_workers=int(self.spec.options.get("concurrency", "8"))) as pool:
            futures = [pool.submit(self._post, self._payload(*pair), deadline) for pair in pairs]
            try:
                responses = [future.result() for future in futures]
            except BaseException:
                pool.shutdown(cancel_futures=True)  # one failure is the batch's: no request waits for its turn
                raise
        return [self.verdict(response) for response in responses]


def label_for_prefix(token: str) -> str | None:
    """The label whose word starts with this token's letters ("Ent" -> entailment), if any."""
    letters = re.sub(r"[^a-z]", "", token.lower())  # none: every label matches, so none is chosen
    matches = [label for label in NLI_LABELS if label.startswith(letters) or letters.startswith(label)]
    return matches[0] if len(matches) == 1 else None
