"""The endpoint formalizer (``ibe score --formalizer openai:...``) goes through the suite's one
bounded client: against a real local server that never ends its answer, sends 100 MB or
trickles a byte a second, the run ends by its deadline with one line, having read no more than
the body bound; a long answer within the bound is cut before the cache keeps it."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest

from custom_metrics.common.errors import DataError
from custom_metrics.judge.answer import ANSWER_CHARS_PER_TOKEN
from custom_metrics.judge.http_client import body_bound
from ibe_postprocess.autoformalize import MAX_NEW_TOKENS, EndpointFormalizer, parse_endpoint
from ibe_postprocess.cli import main as ibe
from tests.helpers import BALLOON
from tests.judge.endpoint_server import EndpointServer, Reply, completion

MARGIN_S = 30.0  # far above the client's own work, far below a hung run
HUNDRED_MB = 100 * 1024 * 1024
PROGRAM = "Goal: expanded_balloon(me).\nFacts:\nblew_into_balloon(me).\n"


@pytest.fixture()
def server():
    scripted = EndpointServer(lambda body: Reply(completion(PROGRAM)))
    yield scripted
    scripted.close()


def _formalizer(server: EndpointServer, options: str = "") -> EndpointFormalizer:
    return EndpointFormalizer(parse_endpoint(f"openai:scripted@{server.url}" + (f"?{options}" if options else "")))


def _fails(formalizer: EndpointFormalizer) -> tuple[str, float, int]:
    """The one-line error, the seconds it took and the peak bytes held meanwhile."""
    started = time.monotonic()
    tracemalloc.start()  # the server's thread included
    try:
        with pytest.raises(DataError) as caught:
            formalizer.generate(["Goal:"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(caught.value)
    assert message.startswith(f"--formalizer {formalizer.name}: ") and "\n" not in message, message
    return message, time.monotonic() - started, peak


def test_an_endless_answer_stops_ibe_score_with_one_line_at_the_bound(
    server, tmp_path: Path, tiny_nli: Path, capsys
) -> None:
    server.script = lambda body: Reply(b'{"choices": [' + b" " * 1024, endless=True)
    out = tmp_path / "out"
    formalizer = f"openai:scripted@{server.url}?timeout=60"
    options = ["--certainty-model", "lexicon", "--processes", "1", "--nli-judge", f"seqcls:{tiny_nli}"]
    started = time.monotonic()
    assert ibe(["score", str(BALLOON), "--out", str(out), "--formalizer", formalizer, *options]) == 2
    err = capsys.readouterr().err  # progress bars, then the one line
    assert [line for line in err.splitlines() if "error" in line.lower()] == [err.splitlines()[-1]], err
    assert err.splitlines()[-1].startswith("error: --formalizer ") and "Traceback" not in err, err
    assert f"sent more than {body_bound(MAX_NEW_TOKENS) // 1024} KiB, the bound for this answer" in err, err
    assert "a rerun resumes" in err and time.monotonic() - started < 60 + MARGIN_S
    assert not any("scripted" in path.read_text() for path in out.glob("cache/autoformalized*"))


@pytest.mark.parametrize("chunked", [False, True], ids=["announced", "chunked"])
def test_a_100_mb_answer_is_not_read_whole(server, chunked: bool) -> None:
    big = completion("a" * HUNDRED_MB)  # made before the memory is traced: the server's, not the client's
    server.script = lambda body: Reply(big, chunked=chunked)
    message, _, peak = _fails(_formalizer(server))
    says = "announced a body of 100.0 MiB, above the bound of" if not chunked else "sent more than"
    assert says in message and server.requests == 1, message  # a bound is no retry
    assert peak < 8 * 1024 * 1024, f"{peak} bytes held for a bound of {body_bound(MAX_NEW_TOKENS)}"


@pytest.mark.parametrize(
    "reply", [Reply(completion(PROGRAM), trickle_s=1.0), Reply(silent=True)], ids=["1 byte/s", "silent"]
)
def test_a_trickled_or_silent_answer_ends_at_the_whole_request_deadline(server, reply: Reply) -> None:
    server.script = lambda body: reply
    message, took, _ = _fails(_formalizer(server, "timeout=3"))
    assert "no whole answer within its timeout of 3 s for a batch of 1 request(s) (?timeout=)" in message, message
    assert server.sent <= 3 + 2 and took < 3 + MARGIN_S  # a byte a second, stopped at the deadline


def test_a_long_answer_within_the_bound_is_cut_before_it_is_cached(server) -> None:
    long = PROGRAM + "% commentary\n" * 2_000  # 26 KB: within the body bound, far past 16 tokens
    server.script = lambda body: Reply(completion(long))
    (answer,) = _formalizer(server, "max_tokens=16").generate(["Goal:"])
    kept = ANSWER_CHARS_PER_TOKEN * 16
    assert answer.startswith(long[:kept]) and answer.endswith(
        f"[cut: {len(long):,} characters, asked for max_tokens=16]"
    )
    assert len(answer) < kept + 80


def test_a_batch_trickled_within_each_requests_time_ends_at_its_timeout(
    server, tmp_path: Path, tiny_nli: Path, capsys
) -> None:
    """Each answer trickled slowly enough to end within the timeout (a byte a second and a short
    answer: 280 s of 300), so a deadline per request never came and ``ibe score`` was held one
    timeout per round of ``concurrency`` requests (past 420 s). The timeout bounds the batch."""
    first: list[float] = []

    def trickle(body: dict) -> Reply:
        first.append(time.monotonic())
        return Reply(completion(PROGRAM), trickle_s=0.01)  # about 3 s an answer

    server.script = trickle
    inputs = tmp_path / "in.jsonl"
    rows = BALLOON.read_text().splitlines()
    inputs.write_text("".join(row.replace('"balloon"', f'"q{k}"') + "\n" for k in range(4) for row in rows))
    timeout = 8  # four rounds of two requests: about 12 s
    formalizer = f"openai:scripted@{server.url}?timeout={timeout}&concurrency=2"
    options = ["--certainty-model", "lexicon", "--processes", "1", "--nli-judge", f"seqcls:{tiny_nli}"]
    assert ibe(["score", str(inputs), "--out", str(tmp_path / "out"), "--formalizer", formalizer, *options]) == 2
    took = time.monotonic() - first[0]
    last = capsys.readouterr().err.splitlines()[-1]
    assert f"no whole answer within its timeout of {timeout} s for a batch of 8 request(s) (?timeout=)" in last, last
    assert took < timeout + 3, took
