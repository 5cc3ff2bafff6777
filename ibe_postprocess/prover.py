"""Consistency and proof depth: the weak-unification prover in SWI-Prolog, run through janus.

janus-swi embeds SWI-Prolog in this process; it must find the Prolog home it was built
against before ``import janus_swi`` (a mismatching system Prolog aborts the import with
"incompatible VM-signature"), so ``swi_home`` sets ``SWI_HOME_DIR`` itself: an explicit
setting wins, then an ``swipl`` >= 9.1.12 on PATH, then the build that
``scripts/install_swipl.sh`` leaves in the cache folder.

Settings follow Logic-Explainer's solver: threshold 0.13 on the proof score (product of
similarities), depth bound 13, best proof kept. A proof counts when its score is strictly
greater than the threshold, as the paper's Algorithm 1 states (``depth > threshold``).
Depth is the number of distinct rules in the best proof; no proof above the threshold
means inconsistent and depth 0.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from custom_metrics.common.settings import cache_root
from ibe_postprocess.embeddings import PredicateEmbedder
from ibe_postprocess.formalize import Atom, Program

THRESHOLD = 0.13
MAX_DEPTH = 13
MAX_INFERENCES = 5_000_000
SECONDS = 10.0
MIN_PLVERSION = 90112  # janus-swi needs SWI-Prolog >= 9.1.12
PROVER_FILE = Path(__file__).with_name("prover.pl")
QUERY = "ibe_prover:ibe_prove(Facts, Rules, Query, Sims, T, D, I, S, R)"


class PrologUnavailable(RuntimeError):
    """No SWI-Prolog suitable for janus-swi was found."""


def swi_home() -> Path:
    """The SWI-Prolog home janus must use (see the module docstring for the order)."""
    explicit = os.environ.get("SWI_HOME_DIR")
    if explicit and Path(explicit, "boot.prc").is_file():
        return Path(explicit)
    swipl = shutil.which("swipl")
    if swipl:
        output = subprocess.run([swipl, "--dump-runtime-variables"], capture_output=True, text=True, timeout=30).stdout
        variables = dict(re.findall(r'^(\w+)="(.*)";$', output, flags=re.MULTILINE))
        if int(variables.get("PLVERSION", "0") or 0) >= MIN_PLVERSION and variables.get("PLBASE"):
            return Path(variables["PLBASE"])
    builds = sorted(
        cache_root().glob("swipl-*/lib/swipl"),
        key=lambda p: tuple(int(n) for n in re.findall(r"\d+", p.parent.parent.name.removeprefix("swipl-"))),
    )
    if builds:
        return builds[-1]
    raise PrologUnavailable(
        "No SWI-Prolog >= 9.1.12 found (janus-swi needs one). Run `make install` or "
        "`scripts/install_swipl.sh` (builds one into the cache folder), or set SWI_HOME_DIR."
    )


@lru_cache(maxsize=1)
def janus():
    """janus_swi with the prover consulted; imported once, after SWI_HOME_DIR is set."""
    os.environ["SWI_HOME_DIR"] = str(swi_home())
    import janus_swi

    janus_swi.consult(str(PROVER_FILE))
    return janus_swi


def system_predicate_check():
    """``(name, arity) -> bool``: is this one of SWI-Prolog's own (system) predicates?"""
    prolog = janus()

    def is_system(name: str, arity: int) -> bool:
        return bool(
            prolog.query_once(
                "atom_string(_N, Name), functor(_H, _N, A), predicate_property(system:_H, defined)",
                {"Name": name, "A": arity},
            )["truth"]
        )

    return is_system


@dataclass(frozen=True)
class Unification:
    """One step of a proof: a goal's predicate weakly unified with a rule head or a fact."""

    goal: str
    matched: str
    similarity: float
    rule: int | None  # the rule's 1-based index; None for a fact


@dataclass(frozen=True)
class Proof:
    consistent: bool
    depth: int
    score: float
    rules: list[int]  # 1-based indices of the program's rules used in the best proof
    status: str  # "complete", "inference_limit" or "time_limit"
    # The best proof's unifications, the query first (its score is their similarities' product);
    # empty when no proof clears the threshold.
    unifications: list[Unification] = field(default_factory=list)


def _spec(atom: Atom) -> list:
    return [atom.name, list(atom.args)]


@dataclass(frozen=True)
class Prover:
    """Best weak-unification proof of a program's query, one Prolog call per program."""

    embedder: PredicateEmbedder
    threshold: float = THRESHOLD
    max_depth: int = MAX_DEPTH
    max_inferences: int = MAX_INFERENCES
    seconds: float = SECONDS

    def settings(self) -> dict:
        """What a proof depends on besides its program: the bounds and the encoder's name."""
        return {"encoder": self.embedder.name} | {k: v for k, v in vars(self).items() if k != "embedder"}

    def query_args(self, program: Program) -> dict:
        """The arguments of ``QUERY`` for ``program`` (its similarities embedded first)."""
        sims = [list(triple) for triple in self.embedder.similarities(sorted(program.predicates()))]
        rules = [
            [index, _spec(rule.head), [_spec(atom) for atom in rule.body]]
            for index, rule in enumerate(program.rules, 1)
        ]
        return {
            "Facts": [_spec(fact) for fact in program.facts],
            "Rules": rules,
            "Query": _spec(program.query),
            "Sims": sims,
            "T": float(self.threshold),
            "D": int(self.max_depth),
            "I": int(self.max_inferences),
            "S": float(self.seconds),
        }

    def prove(self, program: Program) -> Proof:
        score, used, status, steps = janus().query_once(QUERY, self.query_args(program))["R"]
        consistent = bool(used) and score > self.threshold
        unifications = [
            Unification(str(goal), str(matched), float(sim), int(rule) or None) for goal, matched, sim, rule in steps
        ]
        return Proof(
            consistent,
            len(used) if consistent else 0,
            float(score) if consistent else 0.0,
            list(used),
            str(status),
            unifications if consistent else [],
        )

    def prove_many(self, programs: Sequence[Program]) -> list[Proof]:
        """Proofs of ``programs``; all predicate names are embedded in one batch first."""
        self.embedder.embed(name for program in programs for name in sorted(program.predicates()))
        return [self.prove(program) for program in programs]
