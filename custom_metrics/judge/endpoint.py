"""An OpenAI-compatible chat endpoint as judge (vLLM, TGI, ``transformers serve``), for
judges too large to load beside the evaluated model."""

from __future__ import annotations

import json
import logging
import math
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from custom_metrics.judge.prompt import nli_prompt
from custom_metrics.judge.spec import JudgeSpec
from custom_metrics.judge.types import NLI_LABELS, Pair, Verdict, normalize_label, verdict_from_probs

log = logging.getLogger(__name__)


class OpenAIJudge:
    """An OpenAI-compatible chat endpoint judged through the logprobs of its first answer token.

    The label is read from the first answer position whose token has letters (so a
    leading "**" or space does not hide it): each top-logprob token that begins a label
    word ("Ent", "Contr", "neutral") adds its probability to that label, and the three are
    renormalized. A server that returns no logprobs is handled by parsing the answer text
    (method "text"); an answer naming no label gives method "unparsed" (see Verdict).
    The API key is read from the environment at call time and never stored or logged.
    """

    def __init__(self, spec: JudgeSpec) -> None:
        self.name = spec.name
        self.model = spec.model
        self.url = f"{spec.base_url}/chat/completions"
        self.concurrency = int(spec.options.get("concurrency", "8"))
        self.top_logprobs = int(spec.options.get("top_logprobs", "20"))
        self.key_env = spec.options.get("key_env", "OPENAI_API_KEY")
        self.thinking_off = spec.options.get("thinking") == "off"
        self.retries = 4

    def _payload(self, premise: str, hypothesis: str) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": nli_prompt(premise, hypothesis)}],
            "temperature": 0,
            "max_tokens": 5,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
        }
        if self.thinking_off:
            payload["chat_template_kwargs"] = {"enable_thinking": False}
        return payload

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.key_env, "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body = json.dumps(payload).encode()
        for attempt in range(self.retries):
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=300) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as err:
                retriable = err.code == 429 or err.code >= 500
                if not retriable or attempt == self.retries - 1:
                    detail = err.read()[:500].decode(errors="replace")
                    raise RuntimeError(f"judge {self.name}: HTTP {err.code} from {self.url}: {detail}") from err
            except urllib.error.URLError as err:
                if attempt == self.retries - 1:
                    raise RuntimeError(f"judge {self.name}: cannot reach {self.url} ({err.reason})") from err
            time.sleep(2**attempt)
        raise AssertionError("unreachable")

    def _verdict(self, response: dict[str, Any]) -> Verdict:
        choice = response["choices"][0]
        positions = ((choice.get("logprobs") or {}).get("content")) or []
        for position in positions:
            if not re.search(r"[A-Za-z]", position.get("token", "")):
                continue
            mass = dict.fromkeys(NLI_LABELS, 0.0)
            for candidate in position.get("top_logprobs") or [
                {"token": position["token"], "logprob": position["logprob"]}
            ]:
                label = label_for_prefix(candidate["token"])
                if label is not None:
                    mass[label] += math.exp(candidate["logprob"])
            if sum(mass.values()) > 0:
                return verdict_from_probs([mass[label] for label in NLI_LABELS])
            break
        text = (choice.get("message") or {}).get("content") or ""
        for word in re.findall(r"[A-Za-z]+", text):
            label = normalize_label(word)
            if label is not None:
                return Verdict(label, {name: float(name == label) for name in NLI_LABELS}, method="text")
        log.warning("judge %s: answer %r names no NLI label; verdict marked 'unparsed'", self.name, text[:80])
        return Verdict("neutral", dict.fromkeys(NLI_LABELS, 1 / 3), method="unparsed")

    def judge(self, pairs: Sequence[Pair]) -> list[Verdict]:
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            responses = list(pool.map(lambda pair: self._post(self._payload(*pair)), pairs))
        return [self._verdict(response) for response in responses]


def label_for_prefix(token: str) -> str | None:
    """The label whose word starts with this token's letters ("Ent" -> entailment), if any."""
    letters = re.sub(r"[^a-z]", "", token.lower())
    if not letters:
        return None
    matches = [label for label in NLI_LABELS if label.startswith(letters) or letters.startswith(label)]
    return matches[0] if len(matches) == 1 else None
