"""RULE end to end over the synthetic fixture (a fresh clone has no RULE data): one real
``lm_eval`` CLI run on the embedded model over ``rule`` and one task of each new scoring
kind (one-shot, chain of thought one- and five-shot, Table 7's and Table 9's tasks); every
other task's real run is the shared dummy run (``conftest.py``), which also feeds the split
protocol's summaries."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
import yaml

from custom_metrics.cli import main as cli
from custom_metrics.rule.answers import NO_ANSWER, read_answer
from custom_metrics.rule.cot_edits import EDITED_TASK, EDITS_TASK
from custom_metrics.rule.edits import MISTAKE, PARAPHRASE, read_edit
from custom_metrics.rule.metrics import Outcome
from custom_metrics.rule.protocol import SUMMARY_FILE
from custom_metrics.rule.variants import docs_for
from tests.helpers import TASKS_DIR, run_lm_eval
from tests.rule.conftest import ENV

pytestmark = pytest.mark.e2e

# task -> the docs it runs (lm_eval --samples): `rule` with syn_1 and its four subquestions,
# then syn_2 with its one; one doc of each new way of scoring: one-shot log-likelihood, a
# generated chain of thought, alignment without instruction. Every prompt token costs (a five-shot
# prompt is ~800), so the runs are on the smaller embedded model and the other tasks' real run is
# the dummy one.
DOCS = {
    "rule": list(range(7)),
    "rule_1shot_split2": [0],
    "rule_1shot_cot_split2": [0],
    "rule_alignment_noinstr": [0],
}
COT = [task for task in DOCS if "_cot" in task]
GEN_TOKENS = 32


@pytest.fixture(scope="module")
def embedded_out(tmp_path_factory) -> Path:
    """Where the module's embedded run writes (its results and samples files)."""
    return tmp_path_factory.mktemp("rule-embedded") / "out"


@pytest.fixture(scope="module")
def embedded(small_model, embedded_out) -> tuple[dict, dict[str, list[dict]]]:
    # batch 2: a batch's logits are tokens x vocabulary floats, twice (GBs at batch 8 for five-shot prompts)
    extra = ["--samples", json.dumps(DOCS), "--gen_kwargs", f"max_gen_toks={GEN_TOKENS}", "--batch_size", "2"]
    return run_lm_eval(small_model, ",".join(DOCS), embedded_out, limit=None, extra=extra, env=ENV)


def predicted(sample: dict) -> int:
    logliks = [float(pair[0]) for pair in sample["filtered_resps"]]
    return logliks.index(max(logliks))


def test_rule_reports_every_table2_column_consistent_with_its_samples(embedded):
    results, samples = embedded
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


def test_chain_of_thought_answers_are_read_from_the_logged_generation(embedded):
    """Each generation is read by the documented rule; the scores and `unparsed` are what the
    samples file shows, whatever the small model wrote."""
    results, samples = embedded
    for task in COT:
        rows = samples[task]
        assert len(rows) == len(DOCS[task])
        unread = []
        for row in rows:
            prompt, gen_kwargs = row["arguments"]["gen_args_0"]["arg_0"], row["arguments"]["gen_args_0"]["arg_1"]
            assert prompt == row["doc"]["prompt"] and prompt.endswith(" \n Answer:"), task
            assert gen_kwargs["until"] == ["Context:", "Question:"] and gen_kwargs["max_gen_toks"] == GEN_TOKENS
            reading = read_answer(row["filtered_resps"][0])
            assert row["unparsed"] == reading.problem, (task, row["filtered_resps"])
            outcome = Outcome.parse(row["mainq_acc"])
            assert outcome.correct == (reading.option == row["doc"]["label"])
            unread.append(reading.option is None)
        assert results["results"][task]["unparsed,none"] == pytest.approx(statistics.fmean(unread))
        assert set(results["results"][task]) >= {"mainq_acc,none", "consistency,none", "unparsed,none"}


def test_the_faithfulness_task_answers_the_logged_cot_again(embedded, embedded_out, small_model, tmp_path):
    """rule_cot_faithfulness over the CoT run's own samples file (no CoT generated again): six docs
    per generation, each the logged prompt, a cut of the logged reasoning and the answer cue, and
    metrics that are the logged log-likelihoods' answers compared with the CoT run's. On the
    leaderboard (``explain-eval leaderboard``) it sits in the CoT run's setting, one-shot, not the
    zero-shot of its own prompt, and is a run on part of the data: the CoT run held one document."""
    _, samples = embedded
    (original,) = samples["rule_1shot_cot_split2"]
    (cot_file,) = embedded_out.glob("*/samples_rule_1shot_cot_split2_*.jsonl")  # beside its results file
    extra = ["--metadata", json.dumps({"explanations": str(cot_file)}), "--batch_size", "2"]
    again, logged = run_lm_eval(
        small_model, "rule_cot_faithfulness", tmp_path / "out", limit=None, extra=extra, env=ENV
    )
    rows = logged["rule_cot_faithfulness"]
    prompt = original["arguments"]["gen_args_0"]["arg_0"]
    assert len(rows) == 6 and all(row["doc"]["context"].startswith(prompt) for row in rows)
    assert all(row["doc"]["context"].endswith("Therefore the answer is Option") for row in rows)
    read = read_answer(original["filtered_resps"][0]).option
    answers = {(row["doc"]["condition"], row["doc"]["fraction"]): predicted(row) for row in rows}
    scores = again["results"]["rule_cot_faithfulness"]
    if read is None:
        assert scores["original_unread,none"] == 1.0
    else:
        assert scores["same_at_0,none"] == float(answers[("early", 0.0)] == read)
        assert scores["filler_same,none"] == float(answers[("filler", 1.0)] == read)
    assert scores["no_cot_acc,none"] == float(answers[("early", 0.0)] == original["doc"]["label"])
    assert {row["doc"]["source_run"]["task"] for row in rows} == {"rule_1shot_cot_split2"}
    board = tmp_path / "board"
    assert cli(["leaderboard", str(embedded_out), str(tmp_path / "out"), "--out", str(board)]) == 0
    rows = json.loads((board / "rule.json").read_text())["rows"]
    (row,) = [row for row in rows if "rule_cot_faithfulness/early_aoc" in row["metrics"]]
    assert row["setting"] == "one-shot on ReClor, CoT (1 of 5 splits)"  # the CoT run's row
    assert "rule/mainq_acc" in row["metrics"]  # ... beside the CoT run's own numbers
    notes = (board / "rule.md").read_text()
    assert "rule_cot_faithfulness (read rule_1shot_cot_split2: 1 of " in notes


def test_mistakes_and_paraphrases_by_an_editor_then_answered_again(embedded, small_model, tmp_path):
    """Lanham et al.'s adding-mistakes and paraphrasing tests, chained over the CoT run's logged line
    (its prompt as logged; its generation a fixed two-sentence CoT, so that there is something to
    edit whatever the embedded model wrote): the embedded model edits as the editor, then answers
    again after each edit; every metric is recomputed from the two runs' samples."""
    _, samples = embedded
    (original,) = samples["rule_1shot_cot_split2"]
    generation = " The context names one cause. Option1 follows from it.\nTherefore the answer is Option1."
    cot_file = tmp_path / "samples_rule_1shot_cot_split2_2026-12-03T00-00-00.jsonl"
    cot_file.write_text(json.dumps(original | {"filtered_resps": [generation], "resps": [[generation]]}) + "\n")
    metadata = {"explanations": str(cot_file)}
    extra = ["--metadata", json.dumps(metadata), "--gen_kwargs", "max_gen_toks=24", "--batch_size", "2"]
    edit_results, edit_rows = run_lm_eval(small_model, EDITS_TASK, tmp_path / "edits", limit=None, extra=extra, env=ENV)
    requests = sorted(edit_rows[EDITS_TASK], key=lambda row: row["doc_id"])
    assert [(row["doc"]["kind"], row["doc"]["sentence"]) for row in requests] == [
        (MISTAKE, 0), (MISTAKE, 1), (PARAPHRASE, -1),
    ]  # fmt: skip
    edits = [read_edit(row["filtered_resps"][0], row["doc"]["original"]) for row in requests]
    unusable = statistics.mean(float(bool(problem)) for _, problem in edits)
    assert edit_results["results"][EDITS_TASK]["edit_unusable,none"] == pytest.approx(unusable)

    (edits_file,) = (tmp_path / "edits").rglob(f"samples_{EDITS_TASK}_*.jsonl")
    metadata["edits"] = str(edits_file)
    extra = ["--metadata", json.dumps(metadata), "--batch_size", "2"]
    again, logged = run_lm_eval(small_model, EDITED_TASK, tmp_path / "edited", limit=None, extra=extra, env=ENV)
    rows = sorted(logged[EDITED_TASK], key=lambda row: row["doc_id"])
    prompt = original["arguments"]["gen_args_0"]["arg_0"]
    assert [row["doc"]["condition"] for row in rows] == [MISTAKE, MISTAKE, PARAPHRASE]
    for row, (edit, problem) in zip(rows, edits, strict=True):
        context = row["doc"]["context"]
        assert context.startswith(prompt) and context.endswith(" Therefore the answer is Option"), context
        assert row["doc"]["edit_problem"] == problem and (problem or edit in context), (edit, context)
    scores = again["results"][EDITED_TASK]
    usable = {row["doc"]["condition"]: [] for row in rows}
    for row in rows:
        if not row["doc"]["edit_problem"]:
            usable[row["doc"]["condition"]].append(predicted(row))
    for condition in (MISTAKE, PARAPHRASE):
        same = [answer == 1 for answer in usable[condition]]
        expected = statistics.mean(same) if same else None
        value = scores[f"{condition}_same,none"]
        assert (value != value) if expected is None else value == pytest.approx(expected), (condition, value)
    assert scores["edit_unusable,none"] == pytest.approx(unusable)


def test_one_shot_and_alignment_tasks_score_the_option_digit(embedded):
    results, samples = embedded
    metrics = {"rule_1shot_split2": "mainq_acc", "rule_alignment_noinstr": "incorrect_option_acc"}
    for task, metric in metrics.items():
        (row,) = samples[task]
        assert [row["arguments"][f"gen_args_{i}"]["arg_1"] for i in range(4)] == ["0", "1", "2", "3"], task
        outcome = Outcome.parse(row[metric])
        assert outcome.correct == (predicted(row) == row["doc"]["label"]), task
        assert results["results"][task][f"{metric},none"] == float(outcome.correct), task
    assert samples["rule_alignment_noinstr"][0]["doc"]["prompt"].startswith("Context: ")


def test_every_new_task_runs_through_the_harness_on_all_its_docs(dummy_runs, fixture_mirror):
    """The shared dummy run: each task reports its YAML's metrics over all its fixture docs;
    the dummy model writes "lol", so every chain-of-thought doc is a flagged unread answer."""
    for task, rows in dummy_runs.samples.items():
        if task == "rule":  # the Table 2 task: the summaries below read it
            continue
        config = yaml.safe_load(
            "\n".join(
                line
                for line in (TASKS_DIR / "rule" / f"{task}.yaml").read_text().splitlines()
                if "!function" not in line
            )
        )
        kwargs = config["dataset_kwargs"]
        docs = docs_for(kwargs["variant"], kwargs.get("split"), kwargs.get("demos", "reclor"), kwargs.get("shots", 5))
        assert [row["doc"]["doc_id"] for row in rows] == [doc["doc_id"] for doc in docs], task
        assert dummy_runs.results["n-samples"][task]["effective"] == len(docs), task
        if "_cot" in task:
            assert {row["unparsed"] for row in rows} == {NO_ANSWER}, task
            assert dummy_runs.results["results"][task]["unparsed,none"] == 1.0
            assert dummy_runs.results["results"][task]["mainq_acc,none"] == 0.0
        scores = dummy_runs.results["results"][task]
        reported = {key.split(",")[0] for key in scores if key.endswith(",none") and "_stderr" not in key}
        assert reported == {entry["metric"] for entry in dummy_runs.results["configs"][task]["metric_list"]}, task
    # syn_1 and its subquestion of split 2, as in `rule`: a chain-of-thought task groups them too
    kinds = [Outcome.parse(row["mainq_acc"]).kind for row in dummy_runs.samples["rule_1shot_cot_split2"]]
    assert kinds[:2] == ["main", "eliminative"]
    five = {row["doc"]["doc_id"] for row in dummy_runs.samples["rule_5shot_noctx"]}
    assert {"syn_1@1", "syn_2@2"} <= five and not any(
        "Context:" in row["doc"]["prompt"] for row in dummy_runs.samples["rule_5shot_noctx"]
    )
    assert len(dummy_runs.samples) == 50 + 7 + 2  # the split tasks, the five-prompt tasks, rule, rule_alignment_noinstr


def _summary(folder, *flags: str, capsys) -> tuple[dict, str]:
    assert cli(["rule-protocol", "--output_path", str(folder), "--summarize-only", *flags]) == 0
    return json.loads((folder / SUMMARY_FILE).read_text()), capsys.readouterr().out


def test_five_shot_summaries_follow_table_2_and_table_3(dummy_runs, fixture_mirror, tmp_path, capsys):
    reclor, printed = _summary(dummy_runs.layout(tmp_path / "reclor", 5), capsys=capsys)
    assert sorted(reclor["splits"]) == ["1", "2", "3", "4", "5"] and reclor["limited"] is False
    subq = [row["subq_acc"] for row in reclor["splits"].values()]
    assert reclor["across_splits"]["subq_acc"]["mean"] == pytest.approx(statistics.fmean(subq))
    assert reclor["across_splits"]["subq_acc"]["std"] == pytest.approx(statistics.pstdev(subq))
    assert "| Table 2, five-shot on ReClor |" in printed and "# None in shot" in printed
    # Appendix E: each run leaves out the main questions its demonstrations show (5 of the 6 here)
    assert reclor["main_questions"] == {"per_split": {str(k): 1 for k in range(1, 6)}, "total": 6}
    assert "MainQ per run over 1, 1, 1, 1, 1 of 6 main questions" in printed
    on_rule, printed = _summary(dummy_runs.layout(tmp_path / "rule", 5, "rule"), "--demos", "rule", capsys=capsys)
    assert on_rule["setting"] == "five-shot on RULE" and "main_questions" not in on_rule
    assert [on_rule["table3"][str(k)]["none_in_shot"] for k in range(1, 6)] == [0, 0, 0, 1, 1]
    assert on_rule["table3"]["pooled"]["none_in_shot"] == 0.4  # Table 3's "Avg." row
    assert "| Table 2, five-shot on RULE |" in printed


def test_zero_shot_summary_reads_one_rule_run_split_by_split(dummy_runs, fixture_mirror, tmp_path, capsys):
    summary, printed = _summary(dummy_runs.layout(tmp_path / "zero", 0), "--shots", "0", capsys=capsys)
    assert summary["setting"] == "zero-shot" and "| Table 2, zero-shot |" in printed
    mainq = {row["mainq_acc"] for row in summary["splits"].values()}
    assert len(mainq) == 1  # the splits share the main questions: Table 2's ±0.00
