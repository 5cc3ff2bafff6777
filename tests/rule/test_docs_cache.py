"""The verified Arrow cache of RULE docs: same docs as a fresh build, never stale, never corrupt."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

import custom_metrics.rule.variants as rule_variants
from custom_metrics.rule.cache import ARROW_FILE
from tests.helpers import MIRROR

VARIANTS = [(v, None) for v in ("combined", "main", "sub", "combined_noctx", "alignment", "rationale_both")]


@pytest.fixture()
def mirror(tmp_path: Path, monkeypatch) -> Path:
    """A private copy of the fixture mirror (the tests edit it) and an empty cache folder."""
    copy = tmp_path / "mirror"
    shutil.copytree(MIRROR / "rule", copy / "rule")
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(copy))
    monkeypatch.setenv("EXPLAIN_EVAL_CACHE", str(tmp_path / "cache"))
    return copy


def _entries(tmp_path: Path, prefix: str = "combined-") -> list[Path]:
    return sorted((tmp_path / "cache" / "rule-docs").glob(f"{prefix}*"))


def _from_cache(docs) -> bool:
    return any(ARROW_FILE in entry["filename"] for entry in docs.cache_files)


@pytest.mark.parametrize("variant, split", [*VARIANTS, ("fewshot", 2)])
def test_cached_docs_equal_a_fresh_build(mirror, variant: str, split: int | None) -> None:
    first = rule_variants.load(variant, split)["test"]
    again = rule_variants.load(variant, split)["test"]
    assert not _from_cache(first) and _from_cache(again)
    assert again.features == first.features
    assert again.to_list() == first.to_list() == rule_variants.docs_for(variant, split)


def test_rule_demonstrations_are_their_own_cache_entry(mirror) -> None:
    """``rule_5shot_rule_split*`` (demos=rule) and ``rule_5shot_split*`` differ only in their
    demonstrations: neither may ever be served the other's cached docs."""
    reclor = rule_variants.load("fewshot", 2)["test"].to_list()
    rule = rule_variants.load("fewshot", 2, demos="rule")["test"]
    assert not _from_cache(rule)
    assert rule.to_list() == rule_variants.docs_for("fewshot", 2, "rule") != reclor
    assert rule_variants.load("fewshot", 2)["test"].to_list() == reclor


def test_building_one_entry_keeps_the_entries_whose_names_it_starts(mirror) -> None:
    """``fewshot2-`` (ReClor) starts ``fewshot2-rule-`` and ``fewshot2-cot-1shot-``: clearing the
    stale keys of one must not delete the others (each was rebuilt on every other run)."""
    others = [("rule", 5), ("cot", 1)]
    for demos, shots in others:
        rule_variants.load("fewshot", 2, demos=demos, shots=shots)
    rule_variants.load("fewshot", 2)  # a first build: sweeps its own stale keys
    assert all(_from_cache(rule_variants.load("fewshot", 2, demos=d, shots=k)["test"]) for d, k in others)


def test_an_edited_input_file_rebuilds_the_docs(mirror, tmp_path: Path) -> None:
    rule_variants.load("combined")
    (old,) = _entries(tmp_path)
    mainq = mirror / "rule" / "eval_data" / "mainq.jsonl"
    mainq.write_text(mainq.read_text().replace("Our town library", "Our city library"))
    docs = rule_variants.load("combined")["test"]
    assert not _from_cache(docs) and "Our city library" in docs[0]["prompt"]
    assert _entries(tmp_path) != [old] and len(_entries(tmp_path)) == 1  # the stale copy is gone


def test_a_damaged_copy_is_rebuilt_not_read(mirror, tmp_path: Path, caplog) -> None:
    fresh = rule_variants.load("combined")["test"].to_list()
    (entry,) = _entries(tmp_path)
    arrow = entry / ARROW_FILE
    damaged = bytearray(arrow.read_bytes())
    damaged[-200] ^= 0xFF  # one flipped byte inside the prompts' text
    arrow.write_bytes(bytes(damaged))
    with caplog.at_level(logging.WARNING):
        docs = rule_variants.load("combined")["test"]
    assert "does not match its manifest" in caplog.text and not _from_cache(docs) and docs.to_list() == fresh
    assert _from_cache(rule_variants.load("combined")["test"])  # and the rebuilt copy is good


def test_an_unwritable_cache_folder_still_gives_the_docs(mirror, tmp_path: Path, monkeypatch, caplog) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("EXPLAIN_EVAL_CACHE", str(blocker))
    with caplog.at_level(logging.WARNING):
        docs = rule_variants.load("main")["test"]
    assert "cannot be written" in caplog.text and docs.to_list() == rule_variants.docs_for("main")
