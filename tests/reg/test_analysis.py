"""Section 6 GLM on samples files shaped like reg_chaos output, with a known true effect."""

from __future__ import annotations

import csv
import json
import math
import random
import re
from pathlib import Path

import pytest

from custom_metrics.common.errors import DataError
from custom_metrics.reg.analysis import main

TRUE_OR_DOUBLING = 0.5  # odds ratio per doubling of output length
TRUE_OR_WCON = 0.7  # odds ratio per 0.1 of w_con


def _record(label_initial: str, success: bool, thinking: str, tokens: int = 2, mode: str = "thinking") -> str:
    def verdict(label):
        return {
            "label": label,
            "probs": {name: float(name == label) for name in ("entailment", "neutral", "contradiction")},
            "method": "scores",
        }

    return json.dumps(
        {
            "explanation": "e",
            "flag": "",
            "judge": "test",
            "initial": verdict(label_initial),
            "effectiveness": verdict("entailment" if success else "neutral")
            if label_initial == "contradiction"
            else None,
            "coherence": verdict("neutral") if label_initial == "contradiction" else None,
            "mode": mode,
            "output_chars": 0,
            "output_words": 0,
            "output_tokens": tokens,
            "thinking_chars": len(thinking),
            "thinking_words": len(thinking.split()),
            "thinking_tokens": len(thinking.split()),
        }
    )


def _write_run(path: Path, model_shift: float, rng: random.Random, w_cons: list[float]) -> None:
    """One run: every item in N except a few; success drawn from the true logistic model."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        for i, w_con in enumerate(w_cons):
            length = int(2 ** rng.uniform(5, 11))
            logit = (
                model_shift
                + math.log(TRUE_OR_DOUBLING) * (math.log2(length) - 8)
                + math.log(TRUE_OR_WCON) * (w_con * 10 - 6.5)
            )
            success = rng.random() < 1 / (1 + math.exp(-logit))
            initial = "neutral" if i % 50 == 0 else "contradiction"
            # the raw text is a stand-in: the fit reads the length the run recorded
            sample = {
                "doc_id": i,
                "doc": {"uid": f"item{i}", "w_con": w_con, "premise": "p", "hypothesis": "h"},
                "resps": [["<think>w</think>x"]],
                "filtered_resps": [_record(initial, success, "w", tokens=length)],
            }
            handle.write(json.dumps(sample) + "\n")


def test_glm_recovers_known_odds_ratios(tmp_path, capsys):
    rng = random.Random(7)
    first, second = tmp_path / "model-a" / "samples_reg_chaos_x.jsonl", tmp_path / "b" / "samples_reg_chaos_x.jsonl"
    w_cons = [rng.uniform(0.4, 0.9) for _ in range(600)]  # one contradiction weight per item
    _write_run(first, 0.0, rng, w_cons)
    _write_run(second, -0.7, rng, w_cons)
    assert main([str(first), f"{second}=model-b", "--out", str(tmp_path / "out")]) == 0
    table = {row["term"]: row for row in csv.DictReader((tmp_path / "out" / "glm.csv").read_text().splitlines())}
    doubling = table["log2(output length) (per doubling)"]
    wcon = table["w_con (per 0.1)"]
    assert float(doubling["ci_low"]) < TRUE_OR_DOUBLING < float(doubling["ci_high"])
    assert float(wcon["ci_low"]) < TRUE_OR_WCON < float(wcon["ci_high"])
    model_term = next(term for term in table if term.startswith("C(model)"))
    assert float(table[model_term]["odds_ratio"]) < 1  # model-b was drawn with lower success
    rows = list(csv.DictReader((tmp_path / "out" / "rows.csv").read_text().splitlines()))
    assert len(rows) == 2 * (600 - 12)  # items outside N are left out
    assert {row["model"] for row in rows} == {"model-a", "model-b"}
    summary = (tmp_path / "out" / "summary.txt").read_text()
    assert "clusters (items): 588" in summary  # an item of both runs is one cluster
    assert "OR =" in capsys.readouterr().out
    table3 = list(csv.DictReader((tmp_path / "out" / "table3.csv").read_text().splitlines()))
    assert float(table3[0]["mean_length_successful"]) < float(table3[0]["mean_length_unsuccessful"])


def test_bad_samples_line_names_file_and_line(tmp_path):
    path = tmp_path / "samples.jsonl"
    path.write_text(
        json.dumps(
            {
                "doc": {"uid": "x", "w_con": 0.5},
                "resps": [["a"]],
                "filtered_resps": [_record("contradiction", True, "")],
            }
        )
        + "\n"
        + json.dumps({"doc": {}})
        + "\n"
    )
    with pytest.raises(DataError, match=r"samples.jsonl:2: field"):
        main([str(path), "--out", str(tmp_path / "out")])


def test_no_variation_is_reported_not_crashed(tmp_path, capsys):
    path = tmp_path / "samples.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "doc": {"uid": f"x{i}", "w_con": 0.5},
                    "resps": [["a b"]],
                    "filtered_resps": [_record("contradiction", False, "")],
                }
            )
            + "\n"
            for i in range(5)
        )
    )
    assert main([str(path), "--out", str(tmp_path / "out")]) == 2
    assert "both successful and unsuccessful" in capsys.readouterr().err


# --- hostile and careless input (issue 17) ------------------------------------------------


def _good_line(uid: str = "x", **doc) -> dict:
    return {
        "doc": {"uid": uid, "w_con": 0.5, **doc},
        "resps": [["a b"]],
        "filtered_resps": [_record("contradiction", True, "")],
    }


def _write_lines(path: Path, *lines: str) -> Path:
    path.write_bytes(b"".join((line if isinstance(line, bytes) else line.encode()) + b"\n" for line in lines))
    return path


def _cli(args: list[str], capsys) -> tuple[int, str]:
    from custom_metrics.cli import main as explain_eval

    code = explain_eval(["reg-analysis", *args])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    "second, message",
    [
        (b"\xff\xfe not utf-8", r"samples.jsonl:2: not UTF-8 text"),
        (json.dumps(_good_line(w_con=float("nan"))), r"samples.jsonl:2: field 'doc.w_con' is nan, expected a number"),
        (json.dumps(_good_line(w_con=float("inf"))), r"samples.jsonl:2: field 'doc.w_con' is inf"),
        ('{"doc": {"uid": "y", "w_con": 0.5}}', r"samples.jsonl:2: field 'filtered_resps' missing"),
        (json.dumps(_good_line(w_con="0.5")), r"samples.jsonl:2: field 'doc.w_con' is '0.5'"),
        (json.dumps(_good_line(w_con=1.5)), r"samples.jsonl:2: field 'doc.w_con' is 1.5"),
        (json.dumps({**_good_line(), "filtered_resps": ["{not json"]}), r"samples.jsonl:2: field 'filtered_resps' is"),
        (json.dumps({**_good_line(), "filtered_resps": [[1, 2]]}), r"samples.jsonl:2: field 'filtered_resps' is not"),
        (
            json.dumps({**_good_line(), "filtered_resps": [json.dumps({"flag": "", "initial": {}})]}),
            r"samples.jsonl:2: field 'filtered_resps.output_tokens' missing",
        ),
        (json.dumps({"doc": {"w_con": 0.5}, "filtered_resps": _good_line()["filtered_resps"]}), r":2: field 'doc.uid'"),
        ("[" * 100_000, r"samples.jsonl:2: JSON nested too deeply"),
    ],
)
def test_bad_lines_are_errors_naming_file_line_and_field_not_tracebacks(tmp_path, capsys, second, message):
    path = _write_lines(tmp_path / "samples.jsonl", json.dumps(_good_line()), second)
    code, err = _cli([str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and "Traceback" not in err
    assert re.search(message, err), err


def test_recorded_lengths_are_used_and_tokenizer_recounts(tmp_path, capsys):
    """The fit's length is the run's recorded output_tokens; --tokenizer recounts the raw text."""
    from custom_metrics.reg.tokens import count_tokens
    from tests.tiny_models import small_tokenizer

    raw = "<think>Tom never left town.</think>He read about Paris."
    lines = [
        {
            "doc": {"uid": f"u{i}", "w_con": 0.5},
            "resps": [[raw]],
            "filtered_resps": [_record("contradiction", i % 2 == 0, "t", tokens=7 + i)],
        }
        for i in range(4)
    ]
    (tmp_path / "m").mkdir()
    path = _write_lines(tmp_path / "m" / "samples.jsonl", *map(json.dumps, lines))
    main([str(path), "--out", str(tmp_path / "recorded")])
    rows = list(csv.DictReader((tmp_path / "recorded" / "rows.csv").read_text().splitlines()))
    assert [int(row["length"]) for row in rows] == [7, 8, 9, 10] and {row["mode"] for row in rows} == {"thinking"}
    assert "tokens as recorded" in capsys.readouterr().out
    # every item has w_con 0.5 here: a constant covariate is left out, said, not a singular fit
    assert "w_con left out" in (tmp_path / "recorded" / "summary.txt").read_text()
    tokenizer = str(small_tokenizer(tmp_path / "tokenizer"))
    main([str(path), "--out", str(tmp_path / "recounted"), "--tokenizer", tokenizer])
    rows = list(csv.DictReader((tmp_path / "recounted" / "rows.csv").read_text().splitlines()))
    assert {int(row["length"]) for row in rows} == set(count_tokens(tokenizer, [raw]))


def test_modes_are_not_mixed_in_one_fit(tmp_path, capsys):
    thinking = _good_line("u1")
    plain = {**_good_line("u2"), "filtered_resps": [_record("contradiction", False, "", mode="non-thinking")]}
    path = _write_lines(tmp_path / "samples.jsonl", json.dumps(thinking), json.dumps(plain))
    code, err = _cli([str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and "mix modes (non-thinking at" in err and "thinking at" in err


def test_a_recount_needs_the_raw_generation_and_a_tokenizer(tmp_path, capsys):
    from tests.tiny_models import small_tokenizer

    tokenizer = str(small_tokenizer(tmp_path / "tokenizer"))
    second = json.dumps({**_good_line(), "resps": [[None]]})
    path = _write_lines(tmp_path / "samples.jsonl", json.dumps(_good_line()), second)
    code, err = _cli([str(path), "--out", str(tmp_path / "out"), "--tokenizer", tokenizer], capsys)
    assert code == 2 and re.search(r"samples.jsonl:2: field 'resps' holds no generated text", err), err
    code, err = _cli([str(path), "--out", str(tmp_path / "out"), "--tokenizer", str(tmp_path / "none")], capsys)
    assert code == 2 and "Traceback" not in err and f"cannot load tokenizer '{tmp_path}/none'" in err, err


def test_a_file_given_twice_is_refused(tmp_path, capsys):
    path = _write_lines(tmp_path / "samples.jsonl", json.dumps(_good_line()))
    code, err = _cli([str(path), f"{tmp_path}/./samples.jsonl=other", "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and f"{tmp_path}/samples.jsonl: given twice ({path})" in err


def test_a_copy_under_the_same_model_is_refused_by_item(tmp_path, capsys):
    first = _write_lines(tmp_path / "a.jsonl", json.dumps(_good_line("u1")), json.dumps(_good_line("u2")))
    copy = _write_lines(tmp_path / "b.jsonl", json.dumps(_good_line("u2")))
    code, err = _cli([f"{first}=m", f"{copy}=m", "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and f"b.jsonl:1: item 'u2' of model 'm' was already read at {first}:2" in err


def test_a_directory_or_missing_file_is_named(tmp_path, capsys):
    code, err = _cli([str(tmp_path), "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and f"{tmp_path}: no such samples file" in err
