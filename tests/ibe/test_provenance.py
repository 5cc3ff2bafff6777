"""The explanations' model (and the judge's), and how much of each task the runs covered,
travel from lm-eval's results into the features header and report.json."""

from __future__ import annotations

import json
from pathlib import Path

from ibe_postprocess.provenance import provenance_of
from ibe_postprocess.render import cut_lines
from ibe_postprocess.report_file import GenerationRun


def _run(folder: Path, stamp: str, model: str, task: str = "ibe_copa", limit: float | None = None) -> Path:
    """A samples file and the results file lm-eval writes beside it (0.4.13 layout)."""
    folder.mkdir(parents=True, exist_ok=True)
    docs = 2000 if limit is None else int(limit)
    results = {
        "results": {task: {"alias": task}},
        "n-samples": {task: {"original": 2000, "effective": docs}},
        "config": {"model": "hf", "model_args": {"pretrained": model}, "limit": limit},
        "model_name": model,
    }
    (folder / f"results_{stamp}.json").write_text(json.dumps(results))
    samples = folder / f"samples_{task}_{stamp}.jsonl"
    samples.write_text("{}\n")
    return samples


def test_provenance_from_the_results_beside_the_samples(tmp_path: Path) -> None:
    samples = _run(tmp_path / "run", "2026-11-30T04-48-14.1", "org/model-a", limit=3)
    found = provenance_of([samples])
    assert (found["model"], found["tasks"]) == ("org/model-a", ["ibe_copa"])
    (run,) = found["runs"]
    assert run == {"task": "ibe_copa", "samples": samples.name, "limit": 3.0, "docs": 3, "of_docs": 2000}
    assert GenerationRun(**run).subset == "ibe_copa: --limit 3 (3 of 2,000 docs)"
    (line, _) = cut_lines(found)  # report.md says it
    assert line.startswith("**Explanations of runs on part of the data** (ibe_copa: --limit 3 (3 of 2,000 docs))")


def test_provenance_of_both_datasets_and_of_the_judge(tmp_path: Path) -> None:
    copa = _run(tmp_path / "copa", "t1", "org/model-a")
    ecare = _run(tmp_path / "ecare", "t2", "org/model-a", "ibe_ecare")
    judge = _run(tmp_path / "judge", "t3", "org/judge-b", "ibe_judge_copa")
    found = provenance_of([copa, ecare, judge])
    assert (found["model"], found["tasks"], found["judge_model"]) == (
        "org/model-a",
        ["ibe_copa", "ibe_ecare"],
        "org/judge-b",
    )
    assert [GenerationRun(**run).subset for run in found["runs"]] == [None, None]  # whole tasks
    assert cut_lines(found) == []


def test_no_provenance_when_inputs_disagree_or_are_plain(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", "t1", "org/model-a")
    b = _run(tmp_path / "b", "t2", "org/model-b")
    assert provenance_of([a, b]) == {}  # two models: no name is right
    plain = tmp_path / "plain.jsonl"
    plain.write_text("{}\n")
    assert provenance_of([plain]) == {}
