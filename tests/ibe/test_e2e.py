"""End to end: lm_eval generates explanations on the embedded model (in-process, or served
by a real ``transformers serve``), the judge task reads them, and ``explain-eval ibe``
scores them and writes the report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from custom_metrics.common.results import model_name
from custom_metrics.ibe.prompts import explanation_prompt
from ibe_postprocess import features_file
from ibe_postprocess.folder import FeaturesFolder
from tests.helpers import MIRROR, run_lm_eval
from tests.ibe.test_pipeline import tiny_classifier

pytestmark = pytest.mark.e2e


def test_generate_judge_score_report(lm_eval_cli, tmp_path: Path) -> None:
    env = {"EXPLAIN_EVAL_DATA": str(MIRROR)}
    # --limit 4: one training and one test question (docs interleave the two), both options.
    results, samples = lm_eval_cli("ibe_copa", limit=4, extra=["--gen_kwargs", "max_gen_toks=128"], env=env)
    generated = samples["ibe_copa"]
    assert [(s["doc"]["qid"], s["doc"]["option"], s["doc"]["split"]) for s in generated] == [
        ("copa-1", 1, "train"),
        ("copa-1", 2, "train"),
        ("copa-501", 1, "test"),
        ("copa-501", 2, "test"),
    ]
    assert all(isinstance(s["filtered_resps"][0], str) for s in generated)
    assert "steps,none" in results["results"]["ibe_copa"]
    samples_file = next((tmp_path / "out").glob("*/samples_ibe_copa_*.jsonl"))

    judge_results, judge_samples = lm_eval_cli(
        "ibe_judge_copa",
        limit=None,
        extra=["--metadata", json.dumps({"explanations": str(samples_file)})],
        env=env,
    )
    assert judge_results["results"]["ibe_judge_copa"]["acc,none"] in (0.0, 1.0)
    assert judge_samples["ibe_judge_copa"][0]["doc"]["qid"] == "copa-501"
    judge_file = next((tmp_path / "out").glob("*/samples_ibe_judge_copa_*.jsonl"))

    nli = tiny_classifier(tmp_path / "nli", 3)
    features = tmp_path / "features"
    command = [sys.executable, "-m", "custom_metrics.cli", "ibe"]
    scored = subprocess.run(
        [
            *command,
            "score",
            str(samples_file),
            str(judge_file),
            "--out",
            str(features),
            "--nli-judge",
            f"seqcls:{nli}",
            "--certainty-model",
            "lexicon",
        ],
        capture_output=True,
        text=True,
    )
    assert scored.returncode == 0, scored.stderr[-3000:]
    rows = features_file.read(FeaturesFolder(features)).rows
    assert len(rows) == 4 and {row["uncertainty_source"] for row in rows} == {"lexicon"}
    assert all(row["consistent"] in (0, 1) and row["depth"] >= 0 for row in rows)

    reported = subprocess.run([*command, "report", str(features)], capture_output=True, text=True)
    assert reported.returncode == 0, reported.stderr[-3000:]
    report = (features / "report.md").read_text()
    assert "Uncertainty is the lexicon-based estimate" in report
    model = model_name(judge_results)  # the embedded model judged its own explanations, named as people name it
    assert model == "gemma-3-270m (embedded)"
    assert f"| Baselines | LLM judge: {model} (this run) | " in report and "(n=1)" in report
    assert "| Baselines | LLM judge: GPT 3.5 (paper) |" in report
    summary = json.loads((features / "report.json").read_text())
    assert summary["model"] == summary["judge_model"] == model and summary["tasks"] == ["ibe_copa"]
    copa = summary["datasets"]["copa"]
    assert copa["test_questions"] == 1 and len(copa["table1"]) == 11 and copa["judge"]["questions"] == 1
    assert (features / "figure2.png").is_file() and (features / "features_by_correctness.png").is_file()


def test_generation_from_a_served_model_cached_by_the_harness(served_model, tmp_path: Path) -> None:
    """ibe_copa through ``--model local-completions`` against a real ``transformers serve``.

    IBE's generation has no judge inside the harness; what a rerun may skip is the
    generation itself, which only the harness' own response cache (``--use_cache``) keeps.
    With it, the rerun sends the server 0 requests (counted in its access log) and logs
    the same explanations.
    """
    env = {"EXPLAIN_EVAL_DATA": str(MIRROR)}
    extra = ["--gen_kwargs", "max_gen_toks=16", "--use_cache", str(tmp_path / "responses")]
    completions = "/v1/completions"

    def run(out: Path) -> tuple[list[dict], int]:
        before = served_model.requests(completions)
        _, samples = run_lm_eval(served_model.completion_flags(), "ibe_copa", out, limit=2, extra=extra, env=env)
        return samples["ibe_copa"], served_model.requests(completions) - before

    generated, sent = run(tmp_path / "first")
    assert sent == len(generated) == 2, served_model.log_tail()
    assert [(s["doc"]["qid"], s["doc"]["option"]) for s in generated] == [("copa-1", 1), ("copa-1", 2)]
    assert all(s["arguments"]["gen_args_0"]["arg_0"] == explanation_prompt(s["doc"]) for s in generated)
    assert all(isinstance(s["filtered_resps"][0], str) and s["filtered_resps"][0] for s in generated)

    regenerated, resent = run(tmp_path / "second")
    assert resent == 0, served_model.log_tail()
    assert [s["filtered_resps"] for s in regenerated] == [s["filtered_resps"] for s in generated]
