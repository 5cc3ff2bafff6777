"""RULE end to end: the real lm_eval CLI and the split-protocol runner on the embedded
model, over the synthetic fixture (a fresh clone has no RULE data)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

import pytest

from tests.helpers import MIRROR

pytestmark = pytest.mark.e2e

ENV = {"EXPLAIN_EVAL_DATA": str(MIRROR)}


def predicted(sample: dict) -> int:
    logliks = [float(pair[0]) for pair in sample["filtered_resps"]]
    return logliks.index(max(logliks))


def test_rule_reports_every_table2_column_consistent_with_its_samples(lm_eval_cli):
    # 7 docs: syn_1 with its four subquestions, then syn_2 with its one.
    results, samples = lm_eval_cli("rule", limit=7, env=ENV)
    scores = results["results"]["rule"]
    rows = sorted(samples["rule"], key=lambda s: s["doc_id"])
    assert [r["doc"]["doc_id"] for r in rows] == [
        "syn_1",
        "syn_1_sub1",
        "syn_1_sub2",
        "syn_1_sub3",
        "syn_1_sub4",
        "syn_2",
        "syn_2_sub1",
    ]
    for row in rows:
        assert row["arguments"]["gen_args_0"]["arg_0"] == row["doc"]["prompt"]
        assert [row["arguments"][f"gen_args_{i}"]["arg_1"] for i in range(4)] == ["0", "1", "2", "3"]
    right = {r["doc"]["doc_id"]: predicted(r) == r["doc"]["label"] for r in rows}
    subs = [i for i in right if "_sub" in i]
    assert scores["mainq_acc,none"] == pytest.approx((right["syn_1"] + right["syn_2"]) / 2)
    assert scores["subq_acc,none"] == pytest.approx(sum(right[i] for i in subs) / 5)
    assert scores["selective_acc,none"] == pytest.approx((right["syn_1_sub2"] + right["syn_2_sub1"]) / 2)
    assert scores["eliminative_acc,none"] == pytest.approx(
        sum(right[i] for i in ("syn_1_sub1", "syn_1_sub3", "syn_1_sub4")) / 3
    )
    consistent = [
        right["syn_1"] and all(right[f"syn_1_sub{k}"] for k in range(1, 5)),
        right["syn_2"] and right["syn_2_sub1"],
    ]
    assert scores["consistency,none"] == pytest.approx(sum(consistent) / 2)
    share_1 = sum(right[f"syn_1_sub{k}"] for k in range(1, 5)) / 4
    assert scores["mainq_wise_subq_acc,none"] == pytest.approx((share_1 + right["syn_2_sub1"]) / 2)
    assert scores["none_acc,none"] == pytest.approx(float(right["syn_1_sub4"]))
    assert results["n-samples"]["rule"] == {"original": 21, "effective": 7}


def test_split_protocol_runs_five_splits_and_resumes(tmp_path):
    # The runner's wiring (five real lm_eval runs, reading their samples, resuming) does not
    # depend on the model; lm_eval's offline `dummy` model keeps five runs cheap.
    out = tmp_path / "protocol"
    command = [
        sys.executable,
        "-m",
        "custom_metrics.cli",
        "rule-protocol",
        "--output_path",
        str(out),
        "--model",
        "dummy",
        "--limit",
        "3",
    ]
    env = {**os.environ, **ENV}
    first = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-4000:]
    summary = json.loads((out / "rule_protocol_summary.json").read_text())
    assert sorted(summary["splits"]) == ["1", "2", "3", "4", "5"] and summary["limited"] is True
    subq = [row["subq_acc"] for row in summary["splits"].values()]
    assert summary["across_splits"]["subq_acc"]["mean"] == pytest.approx(statistics.fmean(subq))
    assert summary["across_splits"]["subq_acc"]["std"] == pytest.approx(statistics.pstdev(subq))
    assert "| Table 2, five-shot on ReClor |" in first.stdout and "# None in shot" in first.stdout
    for k in range(1, 6):
        assert list((out / f"split{k}").glob(f"*/samples_rule_5shot_split{k}_*.jsonl"))

    again = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-4000:]
    assert again.stderr.count("done earlier, kept") == 5
    changed = subprocess.run([*command[:-1], "2"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert changed.returncode != 0 and "other settings" in changed.stderr
    other_demos = subprocess.run([*command, "--demos", "rule"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert other_demos.returncode != 0 and "other settings" in other_demos.stderr
    zero = subprocess.run([*command, "--shots", "0", "--demos", "rule"], capture_output=True, text=True, env=env)
    assert zero.returncode != 0 and "zero-shot has none" in zero.stderr


def test_split_protocol_with_rule_demonstrations(tmp_path):
    """Five-shot on RULE: the rule_5shot_rule_split{k} tasks, Table 3's None-in-shot column."""
    out = tmp_path / "protocol"
    command = [sys.executable, "-m", "custom_metrics.cli", "rule-protocol", "--output_path", str(out), "--demos"]
    command += ["rule", "--model", "dummy", "--limit", "2"]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **ENV}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    for k in range(1, 6):
        assert list((out / f"split{k}").glob(f"*/samples_rule_5shot_rule_split{k}_*.jsonl"))
    summary = json.loads((out / "rule_protocol_summary.json").read_text())
    assert summary["setting"] == "five-shot on RULE"
    assert [summary["table3"][str(k)]["none_in_shot"] for k in range(1, 6)] == [0, 0, 0, 1, 1]
    assert summary["table3"]["pooled"]["none_in_shot"] == 0.4  # Table 3's "Avg." row
    assert "| Table 2, five-shot on RULE |" in done.stdout
