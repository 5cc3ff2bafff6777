"""GEESE through the real `lm_eval` CLI on the embedded model.

Two runs on the first two documents serve the module (one model load each): M1 (short
generations) with every M2 setting whose hint is fixed, with and without the sentence pair;
then M2 on that M1's own explanations, with and without the pair. Label leakage (LAS) is then
read from their logged samples by the leaderboard and checked against the samples themselves
(its value on a hand-computed example is tests/geese/test_leakage.py's).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

import custom_metrics.geese.anonymize as geese_anon
import custom_metrics.geese.data as geese_data
from custom_metrics.leaderboard.build import build_leaderboard
from tests.geese.authors import alone_prompt, authors_prompt
from tests.helpers import MIRROR, run_lm_eval

SOURCES = ("human", "llama3", "llama3_whynot", "llama3_implicit")  # hints fixed by the data
DOCS = 2  # per task: log-likelihood requests on this model cost about half a second each on 2 cores


@dataclass(frozen=True)
class Runs:
    root: Path
    results: dict  # the first run (M1 and the fixed hints)
    samples: dict[str, list[dict]]  # both runs' samples, by task
    selfexp: dict  # the second run's results


@pytest.fixture(scope="module")
def runs(embedded_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    root = tmp_path_factory.mktemp("geese-e2e")
    env = {"EXPLAIN_EVAL_DATA": str(MIRROR)}
    tasks = ["geese_noexp", *(f"geese_{s}" for s in SOURCES), *(f"geese_{s}_only" for s in SOURCES)]
    results, samples = run_lm_eval(
        embedded_model,
        ",".join([*tasks, "geese_generate_whyexp"]),
        root / "m1",
        limit=DOCS,
        extra=["--gen_kwargs", "max_gen_toks=32"],
        env=env,
    )
    m1_file = next((root / "m1").glob("*/samples_geese_generate_whyexp_*.jsonl"))
    selfexp, more = run_lm_eval(
        embedded_model,
        "geese_selfexp,geese_selfexp_only",
        root / "m2",
        limit=None,
        env=env,
        extra=["--metadata", json.dumps({"explanations": str(m1_file)})],
    )
    return Runs(root, results, {**samples, **more}, selfexp)


@pytest.mark.e2e
def test_m2_prompts_are_the_authors_and_m1_is_anonymized(runs: Runs, fixture_mirror: Path) -> None:
    noexp = runs.results["results"]["geese_noexp"]
    assert runs.results["n-samples"]["geese_noexp"]["effective"] == DOCS
    assert noexp["acc,none"] == pytest.approx(sum(s["acc"] for s in runs.samples["geese_noexp"]) / DOCS)
    assert 0.0 <= noexp["f1_macro,none"] <= 1.0
    docs = {doc["id"]: doc for doc in geese_data.load_docs()}
    for setting in ("noexp", *SOURCES):
        for sample in runs.samples[f"geese_{setting}"]:
            assert sample["arguments"]["gen_args_0"]["arg_0"] == authors_prompt(setting, docs[sample["doc"]["id"]])
            assert [args["arg_1"] for args in sample["arguments"].values()] == [" YES", " NO", " UNKNOWN"]
    generated = runs.samples["geese_generate_whyexp"]
    assert len(generated) == DOCS
    for sample in generated:
        raw, anonymized = sample["resps"][0][0], sample["filtered_resps"][0]
        assert anonymized == geese_anon.anonymize(raw)
        assert not geese_anon.ANON_PATTERN.search(anonymized.replace(geese_anon.ANON_TOKEN, ""))
    assert runs.results["results"]["geese_generate_whyexp"]["empty,anonymized"] <= 1.0


@pytest.mark.e2e
def test_selfexp_reads_the_m1_runs_own_explanations(runs: Runs) -> None:
    assert runs.selfexp["n-samples"]["geese_selfexp"]["effective"] == DOCS  # the docs M1 covered
    by_id = {sample["doc"]["id"]: sample["filtered_resps"][0] for sample in runs.samples["geese_generate_whyexp"]}
    for sample in runs.samples["geese_selfexp"]:
        assert sample["doc"]["hint"] == by_id[sample["doc"]["id"]]
        # the authors' whyexp prompt, with our M1 explanation in place of Llama-3's
        expected = authors_prompt("llama3", {**sample["doc"], "anon_whyexp": sample["doc"]["hint"]})
        assert sample["arguments"]["gen_args_0"]["arg_0"] == expected


@pytest.mark.e2e
def test_explanation_only_tasks_drop_the_pair_and_nothing_else(runs: Runs, fixture_mirror: Path) -> None:
    docs = {doc["id"]: doc for doc in geese_data.load_docs()}
    for setting in (*SOURCES, "selfexp"):
        logged = runs.samples[f"geese_{setting}_only"]
        assert len(logged) == DOCS, setting
        for sample in logged:
            doc = docs[sample["doc"]["id"]]
            if setting == "selfexp":
                doc = {**doc, "anon_whyexp": sample["doc"]["hint"]}
                expected = alone_prompt("llama3", doc)
            else:
                expected = alone_prompt(setting, doc)
            prompt = sample["arguments"]["gen_args_0"]["arg_0"]
            assert prompt == expected and doc["text_h"].strip() not in prompt, (setting, doc["id"])
            assert [args["arg_1"] for args in sample["arguments"].values()] == [" YES", " NO", " UNKNOWN"]


def _expected_las(without: list[dict], with_hint: list[dict], alone: list[dict]) -> float:
    """LAS by its definition, straight from the three runs' logged samples."""
    x, xe, e = ({s["doc"]["id"]: s["acc"] for s in samples} for samples in (without, with_hint, alone))
    effects = []
    for leaking in (1.0, 0.0):
        docs = [doc for doc in x if e[doc] == leaking]
        effects.append(sum(xe[doc] - x[doc] for doc in docs) / len(docs) if docs else math.nan)
    return (effects[0] + effects[1]) / 2


@pytest.mark.e2e
def test_las_of_every_source_on_the_leaderboard_equals_the_logged_outcomes(runs: Runs, tmp_path: Path) -> None:
    board = build_leaderboard([runs.root / "m1", runs.root / "m2"], tmp_path / "board")
    (table,) = [table for table in board.tables if table.key == "geese"]
    (row,) = [row for row in table.rows if row.kind == "run"]
    assert {c.key for c in table.columns if c.metric == "las"} == {f"geese_{s}/las" for s in (*SOURCES, "selfexp")}
    for setting in (*SOURCES, "selfexp"):
        task = f"geese_{setting}"
        expected = _expected_las(runs.samples["geese_noexp"], runs.samples[task], runs.samples[f"{task}_only"])
        cell = row.cells[f"{task}/las"]
        assert cell.basis.startswith(f"LAS over {DOCS} docs; leaking "), cell.basis
        if math.isnan(expected):
            assert math.isnan(cell.value) and "undefined: no " in cell.basis
        else:
            assert cell.value == pytest.approx(expected) and "exact sign-flip test" in cell.basis
    # Beside effectiveness in the summary, the explanation alone's accuracy (its leakage) and LAS.
    summary = board.summaries[board.tables.index(table)]
    labels = [headline.label for headline in summary.headlines]
    assert {"effectiveness, Llama-3", "leakage, Llama-3", "LAS, Llama-3"} <= set(labels)


@pytest.mark.e2e
def test_selfexp_without_explanations_fails_clearly(tmp_path: Path) -> None:
    """Before any model request: the harness' dummy model is enough to reach the check."""
    with pytest.raises(AssertionError, match="geese_selfexp and geese_selfexp_only need the samples file of an M1"):
        run_lm_eval(
            ["--model", "dummy"], "geese_selfexp_only", tmp_path / "out", env={"EXPLAIN_EVAL_DATA": str(MIRROR)}
        )


@pytest.mark.fulldata
def test_geese_tasks_build_all_800_docs(full_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval.tasks import TaskManager

    from tests.helpers import TASKS_DIR

    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(full_data))
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False)
    tasks = manager.load(["geese_human", "geese_human_only", "geese_generate_whyexp"])["tasks"]
    for name in ("geese_human", "geese_human_only", "geese_generate_whyexp"):
        docs = list(tasks[name].test_docs())
        assert len(docs) == 800 and len({doc["id"] for doc in docs}) == 800
        assert Counter(doc["label"] for doc in docs) == {"YES": 388, "NO": 70, "UNKNOWN": 342}  # the README's
    for name, prompt in (("geese_human", authors_prompt), ("geese_human_only", alone_prompt)):
        task = tasks[name]
        doc = next(d for d in task.test_docs() if d["id"] == "393")
        assert doc["hint"] == doc["anon_human"]
        assert task.doc_to_text(doc) == prompt("human", doc)


@pytest.mark.e2e
@pytest.mark.fulldata
def test_geese_human_runs_across_the_whole_test_split(full_data: Path, embedded_model: Path, tmp_path: Path) -> None:
    """The real CLI on the first and last of the 800 documents and the first of each label
    (`--samples`): the whole split loads and scores (all 4,800 M2 prompts are checked against
    the authors' template in test_geese.py, without a model)."""
    env = {"EXPLAIN_EVAL_DATA": str(full_data)}
    labels = [doc["label"] for doc in _full_docs(full_data)]
    chosen = sorted({0, len(labels) - 1, *(labels.index(label) for label in geese_data.LABELS)})
    results, samples = run_lm_eval(
        embedded_model,
        "geese_human",
        tmp_path / "out",
        limit=None,
        extra=["--samples", json.dumps({"geese_human": chosen})],
        env=env,
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


def _full_docs(full_data: Path) -> list[dict]:
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(full_data))
    try:
        return geese_data.load_docs()
    finally:
        monkeypatch.undo()
