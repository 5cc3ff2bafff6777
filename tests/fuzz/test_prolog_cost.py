"""Prolog programs of growing size cost bounded time and memory: the guard refuses what is over
its bounds quickly, and the real prover (SWI-Prolog through janus, MiniLM similarities)
proves what it accepts within its own deadline plus a fixed margin, without the memory
growth of the old unbounded load (3.1 GB for one rule of 2,500 distinct goals)."""

from __future__ import annotations

import contextlib
import resource
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibe_postprocess.embeddings import PredicateEmbedder
from ibe_postprocess.formalize import Program
from ibe_postprocess.prolog_guard import GuardError, guarded_program
from ibe_postprocess.prover import Prover
from tests.fuzz.support import SECONDS, within

pytestmark = pytest.mark.fuzz

PROOF_SECONDS = 2.0  # the prover's deadline in this test
MARGIN_SECONDS = 3.0  # Python around the proof: similarities of at most MAX_NAMES names, janus' conversion
MEMORY_MIB = 512  # peak RSS growth over the whole property
# Names built from a small vocabulary: few distinct words to embed, many distinct names to compare.
WORDS = ("balloon", "air", "pressure", "rain", "street", "wet", "glass", "fall", "break", "sun", "shadow", "grass")


@pytest.fixture(scope="module")
def prover() -> Prover:
    """The real prover, its encoder and SWI-Prolog loaded before any example is measured."""
    prover = Prover(PredicateEmbedder(), seconds=PROOF_SECONDS)
    prover.prove(guarded_program("balloon(x).\nair(X) :- balloon(X).", "air(x)"))
    return prover


@st.composite
def programs(draw) -> tuple[str, str]:
    """Facts, then rules of growing size and fan-in over names of two to three words."""
    names = st.lists(st.sampled_from(WORDS), min_size=2, max_size=3).map("_".join)
    rules, goals = draw(st.integers(1, 80)), draw(st.integers(1, 24))
    facts = [f"{draw(names)}(x)." for _ in range(draw(st.integers(1, 4)))]
    body = [
        f"{draw(names)}(X) :- " + ", ".join(f"{draw(names)}(X)" for _ in range(draw(st.integers(1, goals)))) + "."
        for _ in range(rules)
    ]
    return "\n".join(facts + body), f"{draw(names)}(x)"


@settings(max_examples=max(6, settings.default.max_examples // 5), deadline=None)
@given(programs())
def test_growing_programs_cost_bounded_time_and_memory(prover: Prover, case: tuple[str, str]) -> None:
    text, query = case
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    program: Program | None = None
    with contextlib.suppress(GuardError):
        program = within(SECONDS, lambda: guarded_program(text, query))
    if program is None:
        return
    prover.embedder.embed(sorted(program.predicates()))  # encoder time is a speed matter (bench/), not a bound
    start = time.perf_counter()
    proof = prover.prove(program)
    took = time.perf_counter() - start
    assert took < PROOF_SECONDS + MARGIN_SECONDS, (took, proof.status, len(program.predicates()))
    assert proof.status in ("complete", "inference_limit", "time_limit")
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - peak
    assert grown < MEMORY_MIB, grown
