"""The suite's one HTTP client for the endpoints it calls (httpx): every request ends, in time and in memory.

Every endpoint goes through it (``openai:`` judges, the IBE formalizer, REG's API models). A
server can accept the connection and never answer (a run waited 20 minutes and more), stream an
endless body (a run grew past 5.7 GB in 75 s), or send megabytes where 16 tokens were asked.
So every request has

- a deadline for the whole request, every retry and wait included (the judge's ``timeout`` or a
  caller's ``answers_within``, whichever comes first: REG's check of its judge on gold items sets
  one for all its requests); each attempt runs in a worker thread the caller stops waiting for,
  so a server trickling its headers cannot stretch it;
- a bound on the body (``body_bound``): a larger ``Content-Length`` is refused unread, the body
  is streamed up to the bound, and no compression is asked for;
- bounded retries with backoff, only for what a retry can fix (no connection, a dropped one,
  HTTP 429 and 5xx), never past the deadline.

Every failure is an ``EndpointError`` naming the judge and the URL; API keys travel in
headers only and are never part of a message.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpx

from custom_metrics.judge.types import JudgeError

RETRIES = 3  # further attempts after a failed one
BACKOFF_S = 1.0  # the first wait before a retry, doubled each time
ERROR_DETAIL_BYTES = 500  # of an error response's body, quoted in the message
# A chat completion's envelope (ids, usage, a few positions of 20 top logprobs) fits in the
# base; each token asked for may add this many bytes (a long token, escaped, with logprobs).
BODY_BASE_BYTES = 64 * 1024
BODY_BYTES_PER_TOKEN = 256


@dataclass(frozen=True)
class Deadline:
    """``at`` on the ``time.monotonic`` clock; ``what`` names it in messages (and how to change it)."""

    at: float
    what: str

    def remaining(self) -> float:
        return self.at - time.monotonic()


_CURRENT: ContextVar[Deadline | None] = ContextVar("judge_deadline", default=None)


def current() -> Deadline | None:
    """The deadline set by the innermost ``answers_within`` of this thread, if any. A judge that
    answers in worker threads reads it here and passes it on (context variables stay in their thread)."""
    return _CURRENT.get()


@contextmanager
def answers_within(seconds: float, what: str) -> Iterator[Deadline]:
    """Every endpoint request made inside (this thread) ends ``seconds`` from now at the latest."""
    deadline = Deadline(time.monotonic() + seconds, what)
    outer = _CURRENT.get()
    token = _CURRENT.set(deadline if outer is None or deadline.at < outer.at else outer)
    try:
        yield deadline
    finally:
        _CURRENT.reset(token)


def body_bound(max_tokens: int) -> int:
    """The largest response body accepted for an answer of at most ``max_tokens`` tokens."""
    return BODY_BASE_BYTES + BODY_BYTES_PER_TOKEN * max_tokens


def _size(count: int) -> str:
    return f"{count / 1024:.0f} KiB" if count < 1024 * 1024 else f"{count / 1024 / 1024:.1f} MiB"


class EndpointError(JudgeError):
    """A request to a judge's server failed; ``status`` is the HTTP status when one came, ``reason``
    what went wrong without the judge and URL that the message names."""

    def __init__(self, message: str, status: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason or message


class AnswerTooLarge(EndpointError):
    """The body is over its bound: this answer is refused, which another request need not be (a
    caller that answers many requests can flag this one and go on)."""


class _Retryable(EndpointError):
    """An attempt failed in a way another attempt may not (the message says how)."""


@dataclass(frozen=True)
class Limits:
    """``timeout_s``: the whole request, every attempt and wait included; ``max_bytes``: the body."""

    timeout_s: float
    max_bytes: int
    retries: int = RETRIES
    backoff_s: float = BACKOFF_S
    timeout_set_by: str = "judge option timeout="  # what sets ``timeout_s``, named when it runs out


class JSONClient:
    """JSON requests to one judge's server, within ``Limits``; one client per judge, shared by its threads."""

    def __init__(self, who: str, limits: Limits) -> None:
        self.who = who  # what messages name: the judge, or another caller (a formalizer)
        self.limits = limits
        self._client: httpx.Client | None = None
        self._opening = threading.Lock()

    @property
    def _http(self) -> httpx.Client:
        """Opened at the first request (its TLS context costs a file read): a judge answered from
        the verdict cache never opens one."""
        with self._opening:
            if self._client is None:
                self._client = httpx.Client(headers={"Accept-Encoding": "identity"}, follow_redirects=False)
            return self._client

    def post(self, url: str, payload: Any, headers: Mapping[str, str], deadline: Deadline | None = None) -> Any:
        return self.request("POST", url, payload, {"Content-Type": "application/json", **headers}, deadline)

    def request(
        self, method: str, url: str, payload: Any, headers: Mapping[str, str], deadline: Deadline | None
    ) -> Any:
        """The JSON value of the answer, or an ``EndpointError`` by the deadline at the latest."""
        own = Deadline(
            time.monotonic() + self.limits.timeout_s,
            f"its request timeout of {self.limits.timeout_s:g} s ({self.limits.timeout_set_by})",
        )
        until = own if deadline is None or own.at <= deadline.at else deadline
        body = None if payload is None else json.dumps(payload).encode()
        failure = _Retryable("no attempt made")
        attempts = 0
        for attempt in range(self.limits.retries + 1):
            if attempt:
                wait = self.limits.backoff_s * 2 ** (attempt - 1)
                if wait >= until.remaining():
                    break
                time.sleep(wait)
            attempts += 1
            try:
                raw = self._attempt(method, url, body, dict(headers), until)
            except _Retryable as error:
                failure = error
                continue
            try:
                return json.loads(raw)
            except (ValueError, UnicodeDecodeError, RecursionError) as error:
                raise EndpointError(f"{self.who}: {url} answered with no JSON: {raw[:300]!r}") from error
        reason = f"{failure} ({attempts} attempt{'s' if attempts != 1 else ''})"
        raise EndpointError(f"{self.who}: {method} {url}: {reason}", failure.status, reason)

    def _attempt(self, method: str, url: str, body: bytes | None, headers: dict[str, str], until: Deadline) -> bytes:
        """One exchange in a worker thread, waited for until the deadline and no longer."""
        outcome: dict[str, Any] = {}

        def exchange() -> None:
            try:
                outcome["body"] = self._exchange(method, url, body, headers, until)
            except BaseException as error:  # handed to the caller's thread
                outcome["error"] = error

        worker = threading.Thread(target=exchange, name="judge-request", daemon=True)
        worker.start()
        worker.join(max(until.remaining(), 0.0))
        if worker.is_alive():
            raise self._late(method, url, until)
        if "error" in outcome:
            raise outcome["error"]
        return outcome["body"]

    def _late(self, method: str, url: str, until: Deadline) -> EndpointError:
        reason = f"no whole answer within {until.what}"
        return EndpointError(f"{self.who}: {method} {url}: {reason}", reason=reason)

    def _exchange(self, method: str, url: str, body: bytes | None, headers: dict[str, str], until: Deadline) -> bytes:
        remaining = until.remaining()
        if remaining <= 0:
            raise self._late(method, url, until)
        try:
            with self._http.stream(method, url, content=body, headers=headers, timeout=remaining) as response:
                status = response.status_code
                if status == 429 or status >= 500:
                    raise _Retryable(f"HTTP {status}: {self._detail(response)}", status)
                if not 200 <= status < 300:
                    where = f" (to {response.headers['location']})" if "location" in response.headers else ""
                    raise EndpointError(
                        f"{self.who}: HTTP {status}{where} from {url}: {self._detail(response)}", status
                    )
                return self._bounded_body(method, url, response, until)
        except httpx.TimeoutException as error:
            raise self._late(method, url, until) from error
        except (httpx.TransportError, httpx.DecodingError) as error:  # refused, reset, cut mid-answer
            raise _Retryable(f"cannot reach or read it ({type(error).__name__}: {error or 'no detail'})") from error

    def _bounded_body(self, method: str, url: str, response: httpx.Response, until: Deadline) -> bytes:
        bound = self.limits.max_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > bound:
            raise AnswerTooLarge(
                f"{self.who}: {url} announced a body of {_size(int(declared))}, above the bound of "
                f"{_size(bound)} for this answer; not read"
            )
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > bound:
                raise AnswerTooLarge(
                    f"{self.who}: {url} sent more than {_size(bound)}, the bound for this answer "
                    "(does the server ignore max_tokens?); stopped reading"
                )
            if until.remaining() <= 0:
                raise self._late(method, url, until)
            chunks.append(chunk)
        return b"".join(chunks)

    @staticmethod
    def _detail(response: httpx.Response) -> str:
        """The start of an error response's body, for the message."""
        kept = next(response.iter_bytes(ERROR_DETAIL_BYTES), b"")
        return kept.decode(errors="replace").strip() or "(no body)"

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
