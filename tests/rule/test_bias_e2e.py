"""Biased contexts end to end on the embedded model: ONE real ``lm_eval`` run (``explain-eval lm-eval
--model hf-prefix``, each log-likelihood context once) of every bias, direct and chain of thought,
beside the unbiased tasks they pair with, ``--limit 1`` and 32-token generations; then ``explain-eval
rejudge`` with the embedded model as judge over the logged chains of thought; then the leaderboard.
Every number is recomputed from the files: the tasks' metrics from their samples, the paired rows from
both runs' samples, each judge row's rate, kappa and range from the verdicts."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

import custom_metrics.leaderboard.build as leaderboard
from custom_metrics.cli import main as cli
from custom_metrics.common.classification import predicted_index
from custom_metrics.judge.agreement import agreement
from custom_metrics.rule.answers import read_answer
from custom_metrics.rule.bias import BIASES, BiasedAnswer, bias_task, hinted_option
from custom_metrics.rule.bias_judges import NO, UNPARSED, YES, articulated, read_verdicts
from tests.helpers import run_lm_eval
from tests.rule.conftest import ENV

pytestmark = pytest.mark.e2e

BASELINES = {"reclor": "rule_5shot_split1", "cot": "rule_5shot_cot_split1"}
BIASED = {bias_task(demos, bias, 1): (demos, bias) for demos in BASELINES for bias in BIASES}


@pytest.fixture(scope="module")
def run(small_model: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, dict[str, list[dict]]]:
    out = tmp_path_factory.mktemp("rule-bias") / "out"
    flags = ["--model", "hf-prefix", "--model_args", f"pretrained={small_model},dtype=float32", "--device", "cpu"]
    results, samples = run_lm_eval(
        [*flags, "--batch_size", "2"],
        ",".join([*BASELINES.values(), *BIASED]),
        out,
        limit=1,
        extra=["--gen_kwargs", "max_gen_toks=32"],
        env=ENV,
        entry=[str(Path(sys.executable).with_name("explain-eval")), "lm-eval"],
    )
    return out, results, samples


def answer_of(sample: dict) -> int | None:
    if isinstance(sample.get("unparsed"), str):
        return read_answer(sample["filtered_resps"][0]).option
    return predicted_index([(pair[0], False) for pair in sample["filtered_resps"]])


def test_each_bias_is_in_its_prompt_and_its_metrics_are_its_samples(run) -> None:
    _, results, samples = run
    (plain,) = samples["rule_5shot_cot_split1"]
    for task, (demos, bias) in BIASED.items():
        (sample,) = samples[task]
        doc, prompt = sample["doc"], sample["arguments"]["gen_args_0"]["arg_0"]
        assert prompt == doc["prompt"] and doc["bias"] == bias and doc["doc_id"] == plain["doc"]["doc_id"]
        target = 0 if bias == "always0" else hinted_option(doc["main_id"], doc["label"])
        assert doc["bias_target"] == target
        assert ("I think the answer is" in prompt) == (bias == "suggested")
        assert (f"<answer>Option{target}</answer>" in prompt) == (bias == "metadata")
        logged = BiasedAnswer._make(sample["bias_follow"])
        answer = answer_of(sample)
        assert logged.answer == (-1 if answer is None else answer) and logged.target == target
        scores = results["results"][task]
        assert scores["mainq_acc,none"] == float(answer == doc["label"])
        assert same(scores["bias_follow,none"], float(answer == target) if logged.pushed else math.nan)
        if demos == "cot":
            assert same(scores["articulation,none"], float(bool(logged.mention)) if logged.followed else math.nan)


def test_rejudged_then_the_paired_rows_and_the_detectors_on_the_leaderboard(run, tmp_path: Path) -> None:
    out, _, samples = run
    kept = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    assert cli(["rejudge", str(out), "--judge", "embedded", "--judge-cache", str(tmp_path / "cache")]) == 0
    assert {path: path.read_bytes() for path in kept} == kept  # the run's own files untouched
    board = leaderboard.build_leaderboard([out], tmp_path / "site")

    within = {(d.task, d.metric): d.result for d in board.differences["rule"] if d.kind == "same run"}
    for task, (demos, _) in BIASED.items():
        (biased,), (plain,) = samples[task], samples[BASELINES[demos]]
        doc = biased["doc"]
        accuracy = within[(task, "mainq_acc")]
        assert (accuracy.n, accuracy.mean_a, accuracy.mean_b) == (
            1,
            float(answer_of(biased) == doc["label"]),
            float(answer_of(plain) == doc["label"]),
        )
        follow = within.get((task, "bias_follow"))
        if doc["bias_target"] == doc["label"]:
            assert follow is None  # the target is right: nothing to follow
            continue
        assert (follow.mean_a, follow.mean_b) == (
            float(answer_of(biased) == doc["bias_target"]),
            float(answer_of(plain) == doc["bias_target"]),
        )

    (table,) = [table for table in board.tables if table.key == "rule"]
    judge_rows = [row for row in table.rows if "articulation by" in row.setting]
    assert len(judge_rows) == 3  # one per chain-of-thought bias, the one judge
    for task, (demos, _) in BIASED.items():
        if demos != "cot":
            continue
        (sample,) = samples[task]
        answer = BiasedAnswer._make(sample["bias_follow"])
        (verdicts_file,) = out.rglob(f"rejudge/*/articulation_samples_{task}_*.json")
        verdicts = read_verdicts(verdicts_file).verdicts
        assert set(verdicts) == {answer.doc_id} and set(verdicts.values()) <= {YES, NO, UNPARSED}
        patterns = {answer.doc_id: YES if answer.mention else NO}
        (row,) = [
            row for row in judge_rows if Path(row.cells["rule_bias/articulation"].source).name == verdicts_file.name
        ]
        cells = {key.split("/")[1]: cell.value for key, cell in row.cells.items()}
        k, n = articulated([answer], verdicts)
        assert same(cells["articulation"], k / n if n else math.nan)
        decided = {key: value for key, value in verdicts.items() if value != UNPARSED}
        kappa = agreement(patterns, decided, (YES, NO)).kappa
        assert same(cells["detector_kappa"], math.nan if kappa is None else kappa)
        rates = [float(bool(answer.mention)) if answer.followed else math.nan, k / n if n else math.nan]
        assert same(cells["articulation_range"], max(rates) - min(rates))


def same(value: float | None, expected: float) -> bool:
    return (value is None or math.isnan(value)) if math.isnan(expected) else value == pytest.approx(expected)
