"""The explanations' model (and the judge's) travel from lm-eval's results into report.json."""

from __future__ import annotations

import json
from pathlib import Path

from ibe_postprocess.provenance import read_provenance, write_provenance


def _run(folder: Path, stamp: str, model: str, task: str = "ibe_copa") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"results_{stamp}.json").write_text(json.dumps({"model_name": model}))
    samples = folder / f"samples_{task}_{stamp}.jsonl"
    samples.write_text("{}\n")
    return samples


def test_provenance_from_the_results_beside_the_samples(tmp_path: Path) -> None:
    samples = _run(tmp_path / "run", "2026-11-30T04-48-14.1", "org/model-a")
    out = tmp_path / "features"
    out.mkdir()
    write_provenance([samples], out)
    assert read_provenance(out) == {"model": "org/model-a", "tasks": ["ibe_copa"]}


def test_provenance_of_both_datasets_and_of_the_judge(tmp_path: Path) -> None:
    copa = _run(tmp_path / "copa", "t1", "org/model-a")
    ecare = _run(tmp_path / "ecare", "t2", "org/model-a", "ibe_ecare")
    judge = _run(tmp_path / "judge", "t3", "org/judge-b", "ibe_judge_copa")
    out = tmp_path / "features"
    out.mkdir()
    write_provenance([copa, ecare, judge], out)
    assert read_provenance(out) == {
        "model": "org/model-a",
        "tasks": ["ibe_copa", "ibe_ecare"],
        "judge_model": "org/judge-b",
    }


def test_no_provenance_when_inputs_disagree_or_are_plain(tmp_path: Path) -> None:
    out = tmp_path / "features"
    out.mkdir()
    a = _run(tmp_path / "a", "t1", "org/model-a")
    b = _run(tmp_path / "b", "t2", "org/model-b")
    write_provenance([a], out)
    write_provenance([a, b], out)  # two models: the old record must not survive
    assert read_provenance(out) == {}
    plain = tmp_path / "plain.jsonl"
    plain.write_text("{}\n")
    write_provenance([plain], out)
    assert read_provenance(out) == {}
