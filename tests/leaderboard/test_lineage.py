"""A run that read another run's samples takes, on the leaderboard, that run's cut and setting and
is flagged when that run was another model's; its own results file counts only the documents it
built (36 of 36 over a --limit 6 chain-of-thought run) and the setting of its own prompt (zero-shot)."""

from __future__ import annotations

import json
from pathlib import Path

from custom_metrics.common.lineage import COLUMN, lineage_of
from custom_metrics.common.results import load_runs, source_lineage
from custom_metrics.leaderboard.lineage import inherit
from custom_metrics.leaderboard.tables import build_tables

COT_TASK, TASK = "rule_1shot_cot_split1", "rule_cot_faithfulness"


def _results(folder: Path, stamp: str, model: str, task: str, counts: tuple[int, int], **config: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    effective, original = counts
    data = {
        "results": {task: {"alias": task, "mainq_acc,none": 0.5, "early_aoc,none": 0.25}},
        "n-samples": {task: {"original": original, "effective": effective}},
        "n-shot": {task: 0},
        "configs": {task: {"task": task, "metadata": config.pop("metadata", {})}},
        "config": {"model": "hf", "model_args": {"pretrained": model}, "limit": config.pop("limit", None)},
        "model_name": model,
        "date": 1.0,
        "lm_eval_version": "0.4.13",
    }
    path = folder / f"results_{stamp}.json"
    path.write_text(json.dumps(data))
    return path


def _samples(folder: Path, stamp: str, task: str, doc: dict) -> Path:
    path = folder / f"samples_{task}_{stamp}.jsonl"
    path.write_text(json.dumps({"doc_id": 0, "doc": doc, "filtered_resps": ["x"]}) + "\n")
    return path


def _cot_run(tmp_path: Path) -> Path:
    """A one-shot CoT run on 6 of its 942 documents (--limit 6)."""
    stamp = "2026-01-01T00-00-00.1"
    _results(tmp_path / "cot", stamp, "org/writer", COT_TASK, (6, 942), limit=6)
    return _samples(tmp_path / "cot", stamp, COT_TASK, {"doc_id": "q0"})


def _reader(tmp_path: Path, name: str, model: str, source: Path, logged: bool = True) -> None:
    """A faithfulness run over ``source``: its own results count all of its 36 documents."""
    stamp = f"2026-01-02T00-00-0{len(name)}.1"
    _results(tmp_path / name, stamp, model, TASK, (36, 36), metadata={"explanations": str(source)})
    if logged:
        _samples(tmp_path / name, stamp, TASK, {"generation": "q0", COLUMN: source_lineage(source).column()})


def test_a_run_over_a_cut_run_is_cut_and_in_its_setting(tmp_path: Path) -> None:
    source = _cot_run(tmp_path)
    _reader(tmp_path, "mine", "org/writer", source)
    runs, problems = load_runs([tmp_path / "mine"])
    assert problems == [] and runs[0].subset is None  # alone, the reading run's file says "36 of 36"
    (run,) = inherit(runs)
    assert run.subset == f"read {COT_TASK}: --limit 6, 6 of 942 docs"
    assert run.setting == "one-shot on ReClor, CoT (1 of 5 splits)"  # the CoT run's, not zero-shot
    (table,) = [table for table in build_tables([run]) if table.key == "rule"]
    (row,) = [row for row in table.rows if row.kind == "run"]
    assert row.subsets == {TASK: run.subset} and row.mixed == []
    assert row.cells[f"{TASK}/early_aoc"].basis.startswith(f"read the {COT_TASK} run of org/writer (")


def test_a_run_over_another_models_run_is_flagged_in_its_own_template_too(tmp_path: Path) -> None:
    source = _cot_run(tmp_path)
    _reader(tmp_path, "other", "org/reader", source)
    (results,) = (tmp_path / "other").glob("results_*.json")
    results.write_text(json.dumps(json.loads(results.read_text()) | {"chat_template": "{{ messages }}"}))
    (table,) = [table for table in build_tables(inherit(load_runs([tmp_path / "other"])[0])) if table.key == "rule"]
    (row,) = [row for row in table.rows if row.kind == "run"]
    assert row.mixed == [f"{TASK} read a run of another model, org/writer"]
    assert row.setting == "one-shot on ReClor, CoT (1 of 5 splits), chat template"  # the CoT run's, and its own


def test_a_run_without_samples_takes_the_file_its_metadata_names(tmp_path: Path) -> None:
    source = _cot_run(tmp_path)
    _reader(tmp_path, "unlogged", "org/writer", source, logged=False)
    (run,) = load_runs([tmp_path / "unlogged"])[0]
    assert run.lineage == lineage_of(source_lineage(source).column(), "x") and run.lineage.limit == 6


def test_a_damaged_lineage_names_its_file(tmp_path: Path) -> None:
    source = _cot_run(tmp_path)
    _reader(tmp_path, "mine", "org/writer", source)
    (samples,) = (tmp_path / "mine").glob("samples_*.jsonl")
    row = json.loads(samples.read_text())
    row["doc"][COLUMN]["docs"] = -6
    samples.write_text(json.dumps(row) + "\n")
    runs, (problem,) = load_runs([tmp_path / "mine"])
    assert runs == [] and f"{samples}:1: field 'doc.{COLUMN}.docs' is -6, not a whole number" in problem.reason
