"""Autoformalization by an OpenAI-compatible endpoint (the paper's GPT-3.5, Appendix A.3):
``ibe score --formalizer openai:<model>@<base_url>`` sends the paper's prompt, reads the chat
answer however it is wrapped, guards it like the in-process LM's, and caches every answer, so
a rerun sends no request (and needs no server); a server that is down stops the run before
spaCy and Prolog. Against a recording server (the request fields) and a real
``transformers serve`` (what a real server sends)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ibe_postprocess.features as features
from ibe_postprocess import features_file
from ibe_postprocess.autoformalize import (
    MAX_NEW_TOKENS,
    formalization_prompt,
    parse_endpoint,
    program_from_answer,
)
from ibe_postprocess.cli import main as ibe
from ibe_postprocess.folder import FeaturesFolder
from ibe_postprocess.parsing import parse_explanation
from ibe_postprocess.prolog_guard import GuardError
from tests.helpers import BALLOON
from tests.ibe.recording_server import RecordingServer

BALLOON_ROWS = [json.loads(line) for line in BALLOON.read_text().splitlines()]
PROGRAM = (
    "Goal: expanded_balloon(me).\nFacts:\nblew_into_balloon(me).\nRules:\n"
    "inflated_balloon(X) :- blew_into_balloon(X).\nexpanded_balloon(X) :- inflated_balloon(X).\n"
)
# A chat model's way of answering: prose, a fenced block, markdown labels, commentary after.
CHAT_ANSWER = (
    "Here is the Prolog program:\n\n```prolog\n**Goal:** expanded_balloon(me).\n\n**Facts:**\n"
    "blew_into_balloon(me).\n\n**Rules:**\ninflated_balloon(X) :- blew_into_balloon(X).\n"
    "expanded_balloon(X) :- inflated_balloon(X).\n```\n\nThis proves the goal from the fact."
)


@pytest.mark.parametrize(
    "answer",
    [PROGRAM, CHAT_ANSWER, "<think>The goal is the conclusion.</think>\n" + PROGRAM, PROGRAM.replace("\n", "\r\n")],
    ids=["plain", "markdown and prose", "reasoning trace", "CRLF"],
)
def test_a_chat_answer_is_read_however_it_is_wrapped(answer: str) -> None:
    program = program_from_answer(answer)
    assert program.text() == (
        "blew_into_balloon(me).\ninflated_balloon(X) :- blew_into_balloon(X).\n"
        "expanded_balloon(X) :- inflated_balloon(X).\n?- expanded_balloon(me)."
    )


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "no 'Goal:' line"),
        ("I cannot translate this explanation.", "no 'Goal:' line"),
        ("<think>First the goal, then", "inside its reasoning trace"),
        (PROGRAM.replace("blew_into_balloon(me).\n", ":- shell('rm -rf /').\n", 1), "rm"),
        (PROGRAM.replace("Facts:\nblew_into_balloon(me).\n", "Facts:\n"), "no facts"),
        ("Goal: a(x).\nb(x).\nFacts:\nc(x).", "not one query"),
        (PROGRAM + "halt.\n", "halt"),
    ],
    ids=["empty", "prose", "cut in its trace", "directive", "no facts", "two goal lines", "halt"],
)
def test_a_pathological_answer_is_rejected_with_its_reason(answer: str, reason: str) -> None:
    with pytest.raises(GuardError, match=reason):
        program_from_answer(answer)


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("openai:gpt-3.5-turbo", "expected --formalizer openai:<model>@<base_url>"),
        ("openai:m@localhost:8000/v1", "expected --formalizer openai:<model>@<base_url>"),
        ("openai:m@http://h/v1?max_tokens=0", "option 'max_tokens=0' is not understood"),
        ("openai:m@http://h/v1?temperature=0.7", "option 'temperature=0.7' is not understood"),
    ],
)
def test_a_malformed_endpoint_is_an_error_before_any_work(tmp_path: Path, capsys, spec: str, says: str) -> None:
    assert ibe(["score", str(BALLOON), "--out", str(tmp_path / "out"), "--formalizer", spec]) == 2
    assert says in capsys.readouterr().err and not (tmp_path / "out").exists()
    with pytest.raises(ValueError):
        parse_endpoint(spec)


def _score(out: Path, formalizer: str, nli: Path) -> int:
    options = ["--nli-judge", f"seqcls:{nli}", "--certainty-model", "lexicon", "--processes", "1"]
    return ibe(["score", str(BALLOON), "--out", str(out), "--formalizer", formalizer, *options])


def test_the_paper_prompt_goes_to_the_endpoint_and_a_rerun_sends_nothing(tmp_path: Path, tiny_nli: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-recorded")
    # E1 gets a well-formed program wrapped as chat models wrap it, E2 an answer that is no program.
    server = RecordingServer(lambda body: CHAT_ANSWER if "I blew" in body["messages"][0]["content"] else "Sorry.")
    formalizer = f"openai:gpt-3.5-turbo@{server.base_url}?concurrency=2"
    out = tmp_path / "out"
    try:
        assert _score(out, formalizer, tiny_nli) == 0
    finally:
        server.close()
    assert [(r.method, r.path) for r in server.requests[:1]] == [("GET", "/v1/models")]  # checked first
    prompts = {
        formalization_prompt(row["premise"], row["conclusion"], parse_explanation(row["explanation"]))
        for row in BALLOON_ROWS
    }
    bodies = [request.body for request in server.posts()]
    assert {body["messages"][0]["content"] for body in bodies} == prompts and len(bodies) == 2
    assert all(
        body["model"] == "gpt-3.5-turbo"
        and [m["role"] for m in body["messages"]] == ["user"]
        and body["temperature"] == 0
        and body["max_tokens"] == MAX_NEW_TOKENS
        for body in bodies
    )
    assert {request.authorization for request in server.requests} == {"Bearer sk-recorded"}

    rows = {row["option"]: row for row in features_file.read(FeaturesFolder(out)).rows}
    name = f"openai:gpt-3.5-turbo@{server.base_url}?max_tokens={MAX_NEW_TOKENS}"
    assert rows[1]["formalization"] == name and "inflated_balloon(X) :- blew_into_balloon(X)." in rows[1]["program"]
    assert rows[1]["consistent"] in (0, 1) and "autoformalized" not in rows[1]["flag"]
    assert rows[2]["formalization"] == "deterministic"
    assert "autoformalized program rejected (the answer has no 'Goal:' line)" in rows[2]["flag"]
    text = out.joinpath("features.jsonl").read_text()
    assert "sk-recorded" not in text and "sk-recorded" not in "".join(p.read_text() for p in out.glob("cache/*.jsonl"))

    before = out.joinpath("features.jsonl").read_bytes()
    assert _score(out, formalizer, tiny_nli) == 0  # the server is gone: every answer comes from the cache
    assert out.joinpath("features.jsonl").read_bytes() == before and len(server.requests) == 3


@pytest.mark.parametrize(
    ("problem", "says"),
    [
        ("down", "no model list from {url}/models"),
        ("wrong key", "{url} refused the API key (HTTP 401); set $OPENAI_API_KEY"),
    ],
)
def test_a_server_down_or_refusing_the_key_stops_the_run_before_spacy(
    tmp_path: Path, capsys, monkeypatch, problem, says
) -> None:
    def reached(*args, **kwargs):
        raise AssertionError("spaCy was loaded before the formalizer was checked")

    monkeypatch.setattr(features, "pipeline", reached)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    server = RecordingServer(lambda body: PROGRAM, key="sk-right")
    url = server.base_url
    if problem == "down":
        server.close()  # nothing listens there now
    try:
        assert ibe(["score", str(BALLOON), "--out", str(tmp_path / "out"), "--formalizer", f"openai:m@{url}"]) == 2
    finally:
        if problem != "down":
            server.close()
    err = capsys.readouterr().err
    assert says.format(url=url) in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert not server.posts()  # no formalization was asked for


@pytest.mark.e2e
def test_a_real_server_formalizes_and_a_rerun_sends_nothing(served_model, tmp_path: Path, tiny_nli: Path) -> None:
    """The embedded base model writes no Prolog worth the name: what counts is that a real server's
    answers are read (formalized or flagged, never a crash) and cached."""
    chats = "/v1/chat/completions"
    formalizer = f"openai:{served_model.model}@{served_model.base_url}?max_tokens=8"
    out = tmp_path / "out"
    before = served_model.requests(chats)
    assert _score(out, formalizer, tiny_nli) == 0
    assert served_model.requests(chats) - before == 2, served_model.log_tail()
    rows = features_file.read(FeaturesFolder(out)).rows
    assert all(
        row["formalization"] == parse_endpoint(formalizer).name or "autoformalized program rejected" in row["flag"]
        for row in rows
    )
    assert _score(out, formalizer, tiny_nli) == 0 and served_model.requests(chats) - before == 2
