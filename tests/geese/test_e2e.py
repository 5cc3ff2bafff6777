"""GEESE through the real `lm_eval` CLI on the embedded model: M1, then M2 on its output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import custom_metrics.geese.anonymize as geese_anon
import custom_metrics.geese.data as geese_data
from tests.geese.authors import authors_prompt
from tests.helpers import run_lm_eval


@pytest.mark.e2e
def test_m1_then_selfexp_m2(fixture_mirror: Path, embedded_model: Path, tmp_path: Path) -> None:
    env = {"EXPLAIN_EVAL_DATA": str(fixture_mirror)}
    results, samples = run_lm_eval(
        embedded_model, "geese_noexp,geese_generate_whyexp", tmp_path / "m1", limit=3, env=env
    )
    noexp = results["results"]["geese_noexp"]
    assert results["n-samples"]["geese_noexp"]["effective"] == 3
    assert noexp["acc,none"] in {0.0, 1 / 3, 2 / 3, 1.0}
    assert 0.0 <= noexp["f1_macro,none"] <= 1.0
    docs = {doc["id"]: doc for doc in geese_data.load_docs()}
    for sample in samples["geese_noexp"]:
        prompt = sample["arguments"]["gen_args_0"]["arg_0"]
        assert prompt == authors_prompt("noexp", docs[sample["doc"]["id"]])
        assert [args["arg_1"] for args in sample["arguments"].values()] == [" YES", " NO", " UNKNOWN"]

    generated = samples["geese_generate_whyexp"]
    assert len(generated) == 3
    for sample in generated:
        raw, anonymized = sample["resps"][0][0], sample["filtered_resps"][0]
        assert anonymized == geese_anon.anonymize(raw)
        assert not geese_anon.ANON_PATTERN.search(anonymized.replace(geese_anon.ANON_TOKEN, ""))
    assert results["results"]["geese_generate_whyexp"]["empty,anonymized"] <= 1.0

    m1_file = next((tmp_path / "m1").glob("*/samples_geese_generate_whyexp_*.jsonl"))
    results2, samples2 = run_lm_eval(
        embedded_model,
        "geese_selfexp",
        tmp_path / "m2",
        limit=None,
        env=env,
        extra=["--metadata", json.dumps({"explanations": str(m1_file)})],
    )
    assert results2["n-samples"]["geese_selfexp"]["effective"] == 3  # the docs M1 covered
    by_id = {sample["doc"]["id"]: sample["filtered_resps"][0] for sample in generated}
    for sample in samples2["geese_selfexp"]:
        assert sample["doc"]["hint"] == by_id[sample["doc"]["id"]]
        # the authors' whyexp prompt, with our M1 explanation in place of Llama-3's
        expected = authors_prompt("llama3", {**sample["doc"], "anon_whyexp": sample["doc"]["hint"]})
        assert sample["arguments"]["gen_args_0"]["arg_0"] == expected


@pytest.mark.e2e
def test_selfexp_without_explanations_fails_clearly(fixture_mirror: Path, embedded_model: Path, tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="geese_selfexp needs the samples file of an M1 run"):
        run_lm_eval(embedded_model, "geese_selfexp", tmp_path / "out", env={"EXPLAIN_EVAL_DATA": str(fixture_mirror)})


@pytest.mark.fulldata
def test_geese_tasks_build_all_800_docs(full_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval.tasks import TaskManager

    from tests.helpers import TASKS_DIR

    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(full_data))
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False)
    tasks = manager.load(["geese_human", "geese_generate_whyexp"])["tasks"]
    for name in ("geese_human", "geese_generate_whyexp"):
        docs = list(tasks[name].test_docs())
        assert len(docs) == 800 and len({doc["id"] for doc in docs}) == 800
    human = tasks["geese_human"]
    doc = next(d for d in human.test_docs() if d["id"] == "393")
    assert doc["hint"] == doc["anon_human"]
    assert human.doc_to_text(doc) == authors_prompt("human", doc)


@pytest.mark.e2e
@pytest.mark.fulldata
def test_geese_human_runs_across_the_whole_test_split(full_data: Path, embedded_model: Path, tmp_path: Path) -> None:
    """The real CLI on every 20th of the 800 documents (first to last; `--samples`): the
    whole split loads and scores, in about a minute instead of the full run's 15 (all
    3,200 M2 prompts are checked against the authors' template in test_geese.py)."""
    chosen = list(range(0, 800, 20))
    results, samples = run_lm_eval(
        embedded_model,
        "geese_human",
        tmp_path / "out",
        limit=None,
        extra=["--samples", json.dumps({"geese_human": chosen})],
        env={"EXPLAIN_EVAL_DATA": str(full_data)},
    )
    assert results["n-samples"]["geese_human"] == {"original": 800, "effective": len(chosen)}
    logged = samples["geese_human"]
    assert sorted(sample["doc_id"] for sample in logged) == chosen
    scores = results["results"]["geese_human"]
    assert scores["acc,none"] == pytest.approx(sum(sample["acc"] for sample in logged) / len(chosen))
    for label, metric in (("YES", "acc_yes"), ("NO", "acc_no"), ("UNKNOWN", "acc_unknown")):
        of_label = [sample["acc"] for sample in logged if sample["doc"]["label"] == label]
        assert of_label, label
        assert scores[f"{metric},none"] == pytest.approx(sum(of_label) / len(of_label))
