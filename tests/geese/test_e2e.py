"""GEESE through the real `lm_eval` CLI on the smaller embedded model (SmolLM2-135M-Instruct).

One run on the first two documents serves the module (one model load): M1 (short generations),
the explanation-only task of every explanation source, and the no-hint, human, Llama-3 and
own-M1 settings with the pair, the own-M1 explanations read from a real M1 run's samples file
(tests/fixtures/geese). Label leakage (LAS) of human, Llama-3 and the M1's explanations is then
read from the logged samples by the leaderboard and checked against the samples themselves (its
value on a hand-computed example is tests/geese/test_leakage.py's; every M2 prompt with the pair
is checked against the authors' template without a model in test_geese.py).
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
from custom_metrics.common.errors import DataError
from custom_metrics.leaderboard.build import build_leaderboard
from tests.geese.authors import alone_prompt, authors_prompt
from tests.helpers import FIXTURES, MIRROR, TASKS_DIR, run_lm_eval

SOURCES = ("human", "llama3", "llama3_whynot", "llama3_implicit")  # hints the data holds
PAIRED = ("human", "llama3", "selfexp")  # also run with the pair: LAS from the real run
DOCS = 2  # per task: log-likelihood requests on this model cost about half a second each on 2 cores
M1_FILE = FIXTURES / "geese" / "m1-whyexp" / "samples_geese_generate_whyexp_2026-12-02T00-06-55.779150.jsonl"


@dataclass(frozen=True)
class Run:
    root: Path
    results: dict
    samples: dict[str, list[dict]]  # by task


@pytest.fixture(scope="module")
def run(small_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = tmp_path_factory.mktemp("geese-e2e")
    tasks = [
        "geese_noexp",
        *(f"geese_{s}" for s in PAIRED),
        *(f"geese_{s}_only" for s in (*SOURCES, "selfexp")),
        "geese_generate_whyexp",
    ]
    results, samples = run_lm_eval(
        small_model,
        ",".join(tasks),
        root,
        limit=DOCS,
        extra=["--gen_kwargs", "max_gen_toks=16", "--metadata", json.dumps({"explanations": str(M1_FILE)})],
        env={"EXPLAIN_EVAL_DATA": str(MIRROR)},
    )
    return Run(root, results, samples)


@pytest.mark.e2e
def test_m2_prompts_are_the_authors_and_m1_is_anonymized(run: Run, fixture_mirror: Path) -> None:
    noexp = run.results["results"]["geese_noexp"]
    assert run.results["n-samples"]["geese_noexp"]["effective"] == DOCS
    assert noexp["acc,none"] == pytest.approx(sum(s["acc"] for s in run.samples["geese_noexp"]) / DOCS)
    assert 0.0 <= noexp["f1_macro,none"] <= 1.0
    docs = {doc["id"]: doc for doc in geese_data.load_docs()}
    for setting in ("noexp", "human", "llama3"):
        for sample in run.samples[f"geese_{setting}"]:
            assert sample["arguments"]["gen_args_0"]["arg_0"] == authors_prompt(setting, docs[sample["doc"]["id"]])
            assert [args["arg_1"] for args in sample["arguments"].values()] == [" YES", " NO", " UNKNOWN"]
    generated = run.samples["geese_generate_whyexp"]
    assert len(generated) == DOCS
    for sample in generated:
        raw, anonymized = sample["resps"][0][0], sample["filtered_resps"][0]
        assert anonymized == geese_anon.anonymize(raw)
        assert not geese_anon.ANON_PATTERN.search(anonymized.replace(geese_anon.ANON_TOKEN, ""))
    assert run.results["results"]["geese_generate_whyexp"]["empty,anonymized"] <= 1.0


@pytest.mark.e2e
def test_selfexp_reads_an_m1_runs_explanations(run: Run) -> None:
    assert run.results["n-samples"]["geese_selfexp"]["effective"] == DOCS  # the docs the M1 file covers
    m1 = [json.loads(line) for line in M1_FILE.read_text(encoding="utf-8").splitlines()]
    by_id = {str(line["doc"]["id"]): line["filtered_resps"][0] for line in m1}
    for sample in run.samples["geese_selfexp"]:
        assert sample["doc"]["hint"] == geese_anon.anonymize(by_id[sample["doc"]["id"]])
        # the authors' whyexp prompt, with the M1 explanation in place of Llama-3's
        expected = authors_prompt("llama3", {**sample["doc"], "anon_whyexp": sample["doc"]["hint"]})
        assert sample["arguments"]["gen_args_0"]["arg_0"] == expected
    # The samples file this run's M1 wrote is one the M2 tasks read, explanation for explanation.
    (fresh,) = run.root.glob("*/samples_geese_generate_whyexp_*.jsonl")
    written = {sample["doc"]["id"]: sample["filtered_resps"][0] for sample in run.samples["geese_generate_whyexp"]}
    assert geese_data.explanations_from_samples(fresh) == written


@pytest.mark.e2e
def test_explanation_only_tasks_drop_the_pair_and_nothing_else(run: Run, fixture_mirror: Path) -> None:
    docs = {doc["id"]: doc for doc in geese_data.load_docs()}
    for setting in (*SOURCES, "selfexp"):
        logged = run.samples[f"geese_{setting}_only"]
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
def test_las_of_every_source_on_the_leaderboard_equals_the_logged_outcomes(run: Run, tmp_path: Path) -> None:
    board = build_leaderboard([run.root], tmp_path / "board")
    (table,) = [table for table in board.tables if table.key == "geese"]
    (row,) = [row for row in table.rows if row.kind == "run"]
    assert {c.key for c in table.columns if c.metric == "las"} == {f"geese_{s}/las" for s in PAIRED}
    for setting in PAIRED:
        task = f"geese_{setting}"
        expected = _expected_las(run.samples["geese_noexp"], run.samples[task], run.samples[f"{task}_only"])
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


def test_selfexp_without_explanations_fails_clearly(fixture_mirror: Path) -> None:
    """When the harness reads the task's documents, before any model request."""
    from lm_eval.tasks import TaskManager

    from custom_metrics.common.harness_api import evaluation_docs

    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False)
    for task in ("geese_selfexp", "geese_selfexp_only"):
        with pytest.raises(DataError, match="geese_selfexp and geese_selfexp_only need the samples file of an M1 run"):
            evaluation_docs(manager.load([task])["tasks"][task])


@pytest.mark.fulldata
def test_geese_tasks_build_all_800_docs(full_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval.tasks import TaskManager

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
def test_geese_human_runs_across_the_whole_test_split(
    full_data: Path, embedded_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness in process (the CLI is the module's run) on the first and last of the 800
    documents and the first of each label: the whole split loads and scores (all 4,800 M2
    prompts are checked against the authors' template in test_geese.py, without a model)."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(full_data))
    labels = [doc["label"] for doc in geese_data.load_docs()]
    chosen = sorted({0, len(labels) - 1, *(labels.index(label) for label in geese_data.LABELS)})
    results = simple_evaluate(
        model="hf",
        model_args=f"pretrained={embedded_model},dtype=float32",
        device="cpu",
        batch_size=8,
        tasks=["geese_human"],
        task_manager=TaskManager(include_path=str(TASKS_DIR), include_defaults=False),
        samples={"geese_human": chosen},
        log_samples=True,
    )
    assert results["n-samples"]["geese_human"] == {"original": 800, "effective": len(chosen)}
    logged = results["samples"]["geese_human"]
    assert sorted(sample["doc_id"] for sample in logged) == chosen
    scores = results["results"]["geese_human"]
    assert scores["acc,none"] == pytest.approx(sum(sample["acc"] for sample in logged) / len(chosen))
    for label, metric in (("YES", "acc_yes"), ("NO", "acc_no"), ("UNKNOWN", "acc_unknown")):
        of_label = [sample["acc"] for sample in logged if sample["doc"]["label"] == label]
        assert of_label, label
        assert scores[f"{metric},none"] == pytest.approx(sum(of_label) / len(of_label))
