"""The endpoint judge against a real local server answering anything (custom_metrics/judge/http_client.py).

Whatever the server sends (any size, after any delay, malformed, cut short, chunked or not,
any status), the judge gives a verdict or an error naming the judge and its URL, by the
caller's deadline (plus what a busy machine adds), holding no more than the body's bound.
"""

from __future__ import annotations

import json
import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from custom_metrics.judge.endpoint import OpenAIJudge
from custom_metrics.judge.http_client import answers_within, body_bound
from custom_metrics.judge.spec import parse_spec
from custom_metrics.judge.types import JudgeError
from tests.fuzz.support import json_values, names
from tests.judge.endpoint_server import EndpointServer, Reply, completion

pytestmark = pytest.mark.fuzz

DEADLINE_S = 0.4
LATE_S = 10.0  # a busy machine's threads and sockets, far below any wait the client could add itself
BOUND = body_bound(16)
HELD = 4 * 1024 * 1024  # the client's reads and the server thread's chunks; the body alone is cut at BOUND


@pytest.fixture(scope="module")
def server():
    scripted = EndpointServer(lambda body: Reply())
    yield scripted
    scripted.close()


sizes = st.sampled_from([0, 1, 100, BOUND - 200, BOUND + 1, 4 * BOUND])
bodies = st.one_of(
    st.builds(lambda text: completion(text), st.text(max_size=40)),
    st.builds(lambda size: completion("Neutral" + "." * size), sizes),  # a long answer, maybe past the bound
    st.builds(lambda value: json.dumps(value).encode(), json_values),  # JSON of any shape
    st.binary(max_size=200),  # anything at all
    st.builds(lambda depth: b"[" * depth, st.sampled_from([10, 5_000, 60_000])),
)
replies = st.builds(
    Reply,
    body=bodies,
    status=st.sampled_from([200, 200, 200, 404, 429, 500]),
    delay_s=st.sampled_from([0.0, 0.0, 0.05, 0.2, 2 * DEADLINE_S]),
    chunked=st.booleans(),
    cut_at=st.one_of(st.none(), st.integers(0, 300)),
    trickle_s=st.sampled_from([0.0, 0.0, 0.0, 0.1]),
    endless=st.sampled_from([False, False, False, True]),
    silent=st.sampled_from([False, False, False, False, True]),
)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(replies)
@example(Reply(silent=True))
@example(Reply(b"x", endless=True))
@example(Reply(completion("Entailment"), cut_at=30))
@example(Reply(completion("Neutral" * 20_000)))
def test_any_response_is_a_verdict_or_an_error_by_the_deadline_within_the_bound(server, reply: Reply) -> None:
    server.script = lambda body: reply
    judge = OpenAIJudge(parse_spec(f"openai:fuzz-judge@{server.url}"))
    started = time.monotonic()
    tracemalloc.start()
    try:
        with answers_within(DEADLINE_S, "the property's deadline"):
            (verdict,) = judge.judge([("A premise.", "A hypothesis.")])
    except JudgeError as error:
        assert names(error, judge.name, judge.url), str(error)
    else:
        assert reply.status == 200 and not (reply.silent or reply.endless)
        assert len(verdict.answer) <= 16 * 16 + 80  # cut before anything keeps it
    finally:
        _, held = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    took = time.monotonic() - started
    assert took < DEADLINE_S + LATE_S, f"{took:.1f} s for a deadline of {DEADLINE_S} s"
    assert held < HELD, f"{held} bytes held for a body bound of {BOUND}"
