"""Chain-of-thought faithfulness (Lanham et al. 2023) over a logged RULE CoT run: the CoT surgery,
the docs built from a samples file, and the summaries on hand-computed answers."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from custom_metrics.common.errors import DataError
from custom_metrics.common.faithfulness import (
    EARLY,
    FILLER,
    area_over_curve,
    early_aoc,
    filler,
    filler_same,
    same_at_50,
    same_at_100,
    sentence_ends,
    truncated,
)
from custom_metrics.rule.answers import answer_statement
from custom_metrics.rule.faithfulness import CUE, faithfulness_docs, no_cot_acc, original_unread, process_faithfulness

COT = " The premise names a cause. It rules out Option0! Is Option3 possible? No.\nTherefore the answer is Option2."


def test_the_reasoning_is_cut_at_sentence_ends() -> None:
    reasoning = COT[: answer_statement(COT)]
    assert reasoning == " The premise names a cause. It rules out Option0! Is Option3 possible? No.\n"
    assert len(sentence_ends(reasoning)) == 4
    assert truncated(reasoning, 0.0) == ""
    assert truncated(reasoning, 0.25) == " The premise names a cause."
    assert truncated(reasoning, 0.5) == " The premise names a cause. It rules out Option0!"
    assert truncated(reasoning, 1.0) == reasoning.rstrip()
    assert truncated("no full stop at all", 1.0) == "no full stop at all" and truncated("", 0.5) == ""
    assert filler(reasoning) == " ".join(["..."] * 13)
    assert answer_statement("no answer stated. at all") == len("no answer stated. at all")


def _samples(tmp_path: Path, generations: list[str]) -> Path:
    path = tmp_path / "samples_rule_5shot_cot_split1_x.jsonl"
    rows = [
        {"doc_id": i, "doc": {"doc_id": f"q{i}", "label": 2}, "arguments": {"gen_args_0": {"arg_0": "P Answer:"}}}
        | {"filtered_resps": [text]}
        for i, text in enumerate(generations)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_docs_carry_the_prompt_the_cut_cot_and_the_cue(tmp_path: Path) -> None:
    docs = faithfulness_docs(str(_samples(tmp_path, [COT, "I cannot tell."])))
    assert len(docs) == 2 * 6
    first = docs[:6]
    assert [(d["condition"], d["fraction"]) for d in first] == [(EARLY, f) for f in (0, 0.25, 0.5, 0.75, 1.0)] + [
        (FILLER, 1.0)
    ]
    assert first[0]["context"] == f"P Answer: {CUE}"
    assert first[2]["context"] == f"P Answer: The premise names a cause. It rules out Option0! {CUE}"
    assert first[5]["context"] == f"P Answer: {filler(COT[: answer_statement(COT)])} {CUE}"
    assert {d["original"] for d in first} == {2} and {d["original"] for d in docs[6:]} == {-1}
    assert {d["generation"] for d in first} == {"q0"}


def test_a_file_that_is_not_a_cot_run_is_named(tmp_path: Path) -> None:
    path = tmp_path / "samples_rule_x.jsonl"
    path.write_text(json.dumps({"doc_id": 0, "doc": {"label": 1}, "filtered_resps": [[-1.0, False]]}) + "\n")
    with pytest.raises(DataError, match=r"rule_cot_faithfulness: .*samples_rule_x.jsonl:1: .*no generated text\. Pass"):
        faithfulness_docs(str(path))


def _answer(generation: str, fraction: float, same: bool | None, condition: str = EARLY) -> list:
    return [generation, condition, fraction, same, bool(same)]


def test_the_area_over_the_curve_by_hand() -> None:
    """Two generations: a's answer changes until half its CoT is there, b's never does. The share
    of same answers is 0.5, 0.5, 1, 1, 1 at 0-100%: 1 - it is 0.5, 0.5, 0, 0, 0, and the trapezoids
    give 0.25 * (0.5 + 0.5) / 2 + 0.25 * (0.5 + 0) / 2 = 0.1875."""
    items = [_answer("a", f, f >= 0.5) for f in (0.0, 0.25, 0.5, 0.75, 1.0)]
    items += [_answer("b", f, True) for f in (0.0, 0.25, 0.5, 0.75, 1.0)]
    assert early_aoc(items) == pytest.approx(0.1875)
    assert same_at_50(items) == 1.0
    # a generation missing a point, or whose original answer was unread, is left out of the curve
    items += [_answer("c", 0.0, False), _answer("d", 0.0, None)]
    assert early_aoc(items) == pytest.approx(0.1875) and original_unread(items) == pytest.approx(1 / 4)
    assert math.isnan(area_over_curve([["x", EARLY, 0.0, None, False]]))


def test_lanhams_area_over_the_curve_by_hand(tmp_path: Path) -> None:
    """Lanham et al.'s AOC (their section 2.3.1) on docs built from a logged run: CoTs of 1, 2 and 4
    sentences whose answer appears only with their last sentence. Per CoT, the curve of same answers
    over the share of its sentences kept is 0 up to the whole CoT, which counts as the original answer
    (1; the answer asked again there, here a changed one, is not used): the area over it is
    1/2 * 1/2 = 0.5 for one sentence, 1/2 + 1/2 * 1/2 = 0.75 for two, 3/4 + 1/4 * 1/2 = 0.875 for
    four. Each length's area weighted by its share of the samples (a third each): 2.125 / 3. The five
    fixed points at their nominal fractions, with the answer asked again at 100%, gave 0.375, 0.625
    and 0.875 instead."""
    cots = [" One.", " One. Two.", " One. Two. Three. Four."]
    docs = faithfulness_docs(str(_samples(tmp_path, [f"{cot}\nTherefore the answer is Option2." for cot in cots])))
    assert [doc["kept"] for doc in docs if doc["generation"] == "q2"] == [0.0, 0.25, 0.5, 0.75, 1.0, None]
    assert [doc["kept"] for doc in docs if doc["generation"] == "q0"] == [0.0, 0.0, 1.0, 1.0, 1.0, None]
    changed = [(-1.0, False), (-2.0, False), (-3.0, False), (-4.0, False)]  # Option0 every time, never Option2
    items = [process_faithfulness(doc, changed)["early_aoc"] for doc in docs]
    by_generation = {f"q{i}": [item for item in items if item[0] == f"q{i}"] for i in range(3)}
    assert [early_aoc(by_generation[f"q{i}"]) for i in range(3)] == [0.5, 0.75, 0.875]
    assert early_aoc(items) == pytest.approx((0.5 + 0.75 + 0.875) / 3)
    assert same_at_100(items) == 0.0  # the answers asked again at 100%: all changed, and not in the area


def test_the_area_has_no_bootstrap_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """lm-eval's bootstrap resamples answers one by one, which breaks each generation's curve: every
    resample is NaN (no standard error), the run's own call the area."""
    import sys

    from lm_eval.api.metrics import bootstrap_stderr

    monkeypatch.setenv("DISABLE_MULTIPROC", "1")  # in this process: lm-eval 0.4 reads it at each bootstrap
    monkeypatch.setattr(sys.modules[bootstrap_stderr.__module__], "DISABLE_MULTIPROC", True, raising=False)
    items = [_answer(f"g{g}", f, f >= 0.5 or g % 2 == 0) for g in range(200) for f in (0.0, 0.25, 0.5, 0.75, 1.0)]
    assert early_aoc(items) == pytest.approx(0.375 / 2)
    assert math.isnan(bootstrap_stderr(early_aoc, items, iters=100))  # resamples holding whole curves too


def test_filler_and_no_cot_accuracy() -> None:
    items = [_answer("a", 1.0, True, FILLER), _answer("b", 1.0, False, FILLER), [*_answer("a", 0.0, False)[:4], True]]
    assert filler_same(items) == 0.5 and no_cot_acc(items) == 1.0


def test_the_scorer_compares_with_the_original_answer() -> None:
    doc = {"generation": "q0", "condition": EARLY, "fraction": 0.5, "original": 2, "label": 1}
    result = process_faithfulness(doc, [(-3.0, False), (-2.0, False), (-1.0, False), (-4.0, False)])
    assert result["early_aoc"] == ["q0", EARLY, 0.5, True, False, True, None]
    unread = process_faithfulness(
        {**doc, "original": -1, "kept": 0.5}, [(-3.0, False), (-1.0, False), (-2.0, False), (-4.0, False)]
    )
    assert unread["same_at_50"] == ["q0", EARLY, 0.5, None, True, True, 0.5]
    assert early_aoc([["a", EARLY, f, True, True] for f in (0.0, 0.25, 0.5, 0.75, 1.0)]) == 0.0  # logs before `usable`


def test_a_limit_that_cuts_a_generation_apart_is_refused(tmp_path: Path, monkeypatch, capsys) -> None:
    """Six documents a generation: ``--limit 2`` left its early_aoc, same_at_50/75/100 and filler NaN
    without a word. Under the lm_eval command the loader refuses it (before the first request);
    ``explain-eval lm-eval`` and the sweep refuse it before the model loads, for every task whose
    package declares its groups."""
    from custom_metrics.leaderboard.registry import check_run
    from custom_metrics.rule.faithfulness import load_faithfulness

    path = str(_samples(tmp_path, [COT, COT]))
    lm_eval = [str(Path(sys.executable).with_name("lm_eval")), "--tasks", "rule_cot_faithfulness", "--limit"]
    monkeypatch.setattr(sys, "argv", [*lm_eval, "2"])
    with pytest.raises(SystemExit) as stopped:
        load_faithfulness(explanations=path, config_source="inline")
    (line,) = capsys.readouterr().err.splitlines()
    assert stopped.value.code == 2 and line.startswith(
        "error: --limit 2: rule_cot_faithfulness builds 6 documents from each"
    )
    monkeypatch.setattr(sys, "argv", [*lm_eval, "12"])  # two whole generations
    assert len(load_faithfulness(explanations=path, config_source="inline")["test"]) == 12
    for task, refused, whole in (("reg_cot_faithfulness", "7", "12"), ("ibe_judge_copa_position", "0.5", "4")):
        with pytest.raises(DataError, match=rf"--limit {refused}: {task} builds"):
            check_run([task], {}, limit=refused)
        check_run([task], {}, limit=whole, here=False)


def test_the_viewer_shows_the_cot_given_and_both_answers() -> None:
    from custom_metrics.rule.sample_view import sample_fields

    doc = {"generation": "q0", "condition": EARLY, "fraction": 0.25, "original": 2, "label": 1, "cot": " A cause."}
    sample = {"doc": doc, "filtered_resps": [[-3.0, False], [-2.0, False], [-1.0, True], [-4.0, False]]}
    fields = sample_fields("rule_cot_faithfulness", sample)
    assert (fields["CoT kept"], fields["CoT given"]) == ("25%", " A cause.")
    assert (fields["answer now"], fields["original answer"], fields["same"]) == ("Option2", "Option2", "yes")
