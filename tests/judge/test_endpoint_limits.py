"""The endpoint judge's HTTP client against a real local server that misbehaves on purpose
(tests/judge/endpoint_server.py): every request ends by its deadline, reads no more than its
bound, retries only what a retry can fix, and says which judge and URL failed; a long answer
is cut before the verdict cache and the samples file hold it; a full disk under a sound cache
says to keep the cache."""

from __future__ import annotations

import json
import sqlite3
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

import pytest

from custom_metrics.judge.answer import ANSWER_CHARS_PER_TOKEN
from custom_metrics.judge.build import build_judge
from custom_metrics.judge.cache import VerdictCacheError
from custom_metrics.judge.endpoint import OpenAIJudge
from custom_metrics.judge.http_client import RETRIES, answers_within, body_bound
from custom_metrics.judge.spec import parse_spec
from custom_metrics.judge.types import JudgeError
from tests.helpers import FIXTURES, fill_disk, tmpfs
from tests.judge.conftest import PAIRS
from tests.judge.endpoint_server import EndpointServer, Reply, completion
from tests.serving import free_port

# Far above what the client's own work takes, far below the 20 minutes a silent server cost before.
MARGIN_S = 30.0


@pytest.fixture()
def server():
    scripted = EndpointServer(lambda body: Reply(completion("Entailment")))
    yield scripted
    scripted.close()


def _judge(server: EndpointServer, options: str = "") -> OpenAIJudge:
    return OpenAIJudge(parse_spec(f"openai:scripted@{server.url}" + (f"?{options}" if options else "")))


def _fails(judge: OpenAIJudge, seconds: float | None = None) -> tuple[JudgeError, float]:
    started = time.monotonic()
    with pytest.raises(JudgeError) as caught:
        if seconds is None:
            judge.judge(PAIRS[:1])
        else:
            with answers_within(seconds, f"the test's {seconds:g} s"):
                judge.judge(PAIRS[:1])
    message = str(caught.value)
    assert judge.name in message and f"{judge.url}" in message, message
    return caught.value, time.monotonic() - started


@pytest.mark.parametrize("reply", [Reply(silent=True), Reply(completion("Neutral"), trickle_s=0.2)])
def test_a_server_that_never_answers_or_trickles_ends_at_the_deadline(server, reply) -> None:
    server.script = lambda body: reply
    error, took = _fails(_judge(server), seconds=0.5)
    assert "no whole answer within the test's 0.5 s" in str(error) and took < 0.5 + MARGIN_S
    if reply.silent:  # the judge's own option, without a caller's deadline
        error, took = _fails(_judge(server, "timeout=1"))
        assert "within its request timeout of 1 s (judge option timeout=)" in str(error) and took < 1 + MARGIN_S


def test_an_endless_body_is_read_to_its_bound_and_no_further(server) -> None:
    server.script = lambda body: Reply(b'{"choices": [' + b" " * 1024, endless=True)
    judge = _judge(server)
    tracemalloc.start()  # the server's thread included: its chunks and the socket's reads are most of it
    try:
        error, took = _fails(judge, seconds=60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    bound = body_bound(16)
    assert f"sent more than {bound // 1024} KiB, the bound for this answer" in str(error) and took < 60
    assert peak < 4 * 1024 * 1024, f"{peak} bytes held for a bound of {bound}: the body was not cut at the bound"


def test_an_answer_past_the_bound_is_refused_and_a_long_one_is_cut_before_it_is_kept(server, tmp_path) -> None:
    server.script = lambda body: Reply(completion("Neutral " * 1_300_000))  # 10 MB where 16 tokens were asked
    error, _ = _fails(_judge(server))
    assert "announced a body of 9.9 MiB, above the bound of 68 KiB" in str(error) and server.requests == 1

    long = "Neutral. " + "Because the premise says so. " * 100  # 3 KB: within the bound, far past 16 tokens
    server.script = lambda body: Reply(completion(long))
    judge = build_judge(f"openai:scripted@{server.url}", cache_dir=tmp_path)
    (verdict,) = judge.judge(PAIRS[:1])
    kept = ANSWER_CHARS_PER_TOKEN * 16
    assert verdict.label == "neutral" and verdict.answer.startswith(long[:kept])
    assert verdict.answer.endswith(f"[cut: {len(long):,} characters, asked for max_tokens=16]")
    (stored,) = sqlite3.connect(tmp_path / "verdicts.sqlite").execute("SELECT answer FROM verdicts").fetchone()
    assert stored == verdict.answer and len(stored) < kept + 80


def _quick(judge: OpenAIJudge) -> OpenAIJudge:
    """The judge with retries 50 ms apart instead of 1 s, 2 s, 4 s: the same client, a shorter test."""
    judge.client.limits = replace(judge.client.limits, backoff_s=0.05)
    return judge


def test_only_what_a_retry_can_fix_is_retried_within_the_deadline(server) -> None:
    answers = iter([Reply(b"overloaded", status=503), Reply(completion("Contradiction"))])
    server.script = lambda body: next(answers)
    (verdict,) = _quick(_judge(server)).judge(PAIRS[:1])
    assert verdict.label == "contradiction" and server.requests == 2

    attempts = RETRIES + 1
    for reply, says in [
        (Reply(b"busy", status=429), f"HTTP 429: busy ({attempts} attempts)"),
        (Reply(completion("Entailment"), cut_at=40, chunked=True), "RemoteProtocolError"),  # cut mid-answer
    ]:
        server.requests, server.script = 0, (lambda body, reply=reply: reply)
        error, _ = _fails(_quick(_judge(server)))
        assert says in str(error) and server.requests == attempts  # bounded
    server.requests, server.script = 0, (lambda body: Reply(b"busy", status=503))
    error, took = _fails(_judge(server, "timeout=2"))  # the real backoff: 1 s, then 2 s would pass the deadline
    assert "(2 attempts)" in str(error) and server.requests == 2 and took < 2 + MARGIN_S
    for reply, says in [
        (Reply(b'{"error": "no such model"}', status=404), "HTTP 404 from"),
        (Reply(b"<html>502 Bad Gateway</html>"), "answered with no JSON: b'<html>502"),
        (Reply(b"[1, 2]"), "answered '[1, 2]', not a chat completion"),
        (Reply(b"[" * 50_000), "answered with no JSON"),  # nesting no parser holds
    ]:
        server.requests, server.script = 0, (lambda body, reply=reply: reply)
        error, _ = _fails(_judge(server))
        assert says in str(error) and server.requests == 1


def test_a_server_that_refuses_top_k_names_the_spec_option_that_moves_it(server) -> None:
    """``transformers serve`` answers HTTP 422 to top_k and min_p as request fields (its recorded
    answer, replayed): the error names ``server=transformers``, with which the same server answers."""
    recorded = json.loads((FIXTURES / "judge" / "transformers_serve_responses.json").read_text())["top_k_rejected"]
    server.script = lambda body: (
        Reply(recorded["body"].encode(), status=recorded["status"]) if "top_k" in body else Reply(completion("Neutral"))
    )
    error, _ = _fails(_judge(server))
    assert "HTTP 422" in str(error) and "add server=transformers to the judge spec" in str(error), error
    (verdict,) = _judge(server, "server=transformers").judge(PAIRS[:1])
    assert verdict.label == "neutral"


def test_an_unreachable_server_names_judge_and_url() -> None:
    port = free_port()
    judge = _quick(OpenAIJudge(parse_spec(f"openai:m@http://127.0.0.1:{port}/v1")))
    error, _ = _fails(judge)
    assert f"POST http://127.0.0.1:{port}/v1/chat/completions: cannot reach or read it (ConnectError" in str(error)
    assert f"({RETRIES + 1} attempts)" in str(error)


def test_a_full_disk_under_a_sound_cache_says_to_keep_it(server, tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "size=256k") as mount:
        judge = build_judge(f"openai:scripted@{server.url}", cache_dir=mount)
        judge.judge(PAIRS[:1])  # a sound cache holding a verdict
        fill_disk(mount / "filler")
        many = [(f"premise {i} " * 40, f"hypothesis {i}") for i in range(200)]
        with pytest.raises(VerdictCacheError) as caught:
            judge.judge(many)
        message = str(caught.value)
        assert "the disk holding it is full" in message and "keep it, free space" in message
        assert "delete" not in message and str(mount / "verdicts.sqlite") in message
        reader = build_judge(f"openai:scripted@{server.url}", cache_dir=mount)
        assert reader.judge(PAIRS[:1])[0].label == "entailment" and reader.computed == 0  # the cache still serves


def test_a_full_disk_that_sqlite_calls_an_io_error_says_disk_full_and_to_keep_the_cache(server, tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "size=256k") as mount:
        judge = build_judge(f"openai:scripted@{server.url}", cache_dir=mount)
        judge.judge(PAIRS[:1])  # a sound cache holding a verdict, closed at the end of the run
        judge.cache.close()
        fill_disk(mount / "filler")
        with pytest.raises(VerdictCacheError) as caught:  # sqlite: "disk I/O error" (its WAL index cannot grow)
            build_judge(f"openai:scripted@{server.url}", cache_dir=mount)
        message = str(caught.value)
        assert f"disk full at {mount} (the disk holding it is full: 0 bytes free" in message, message
        assert "keep it, free space" in message and "delete" not in message
        (mount / "filler").unlink()  # space freed: the kept cache serves its verdict
        reader = build_judge(f"openai:scripted@{server.url}", cache_dir=mount)
        assert reader.judge(PAIRS[:1])[0].label == "entailment" and reader.computed == 0
