"""docs/python-api.md runs as written: its code blocks, read from the page, on the embedded model.

Only the values of the page's first block (the settings a reader edits) are replaced: the
embedded model on the CPU, four documents per task (for ``ibe_copa`` one training and one test
question, both options), generation capped, IBE scored with the embedded judge and the lexicon
uncertainty (the paper's models are on the Hub). Every other line is the page's.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ibe_postprocess import features_file, report_file
from ibe_postprocess.folder import FeaturesFolder
from tests.helpers import MIRROR, REPO

PAGE = REPO / "docs" / "python-api.md"


def code_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", PAGE.read_text(), flags=re.M | re.S)


def assigned_names(code: str) -> list[str]:
    return [target.id for node in ast.parse(code).body if isinstance(node, ast.Assign) for target in node.targets]


@pytest.mark.e2e
def test_the_page_runs_as_written(small_model: Path, tmp_path: Path) -> None:
    settings, *steps = code_blocks()
    out = tmp_path / "runs"
    ours = {
        "MODEL_ARGS": repr(f"pretrained={small_model},dtype=float32"),
        "DEVICE": "'cpu'",
        "BATCH_SIZE": "8",
        "LIMIT": "4",
        "GEN_KWARGS": "'max_gen_toks=32'",  # ibe_copa's explanations: tests/ibe/test_e2e.py's cap
        "SCORE_SETTINGS": "ScoreSettings(nli_judge='embedded', certainty_model='lexicon')",
        "OUT": f"Path({str(out)!r})",
    }
    assert assigned_names(settings) == list(ours), "the page's settings changed: update this test's values"
    script = "\n".join([settings, *(f"{name} = {value}" for name, value in ours.items()), *steps])
    (tmp_path / "example.py").write_text(script)
    run = subprocess.run(
        [sys.executable, "example.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "EXPLAIN_EVAL_DATA": str(MIRROR)},
    )
    assert run.returncode == 0, run.stderr[-6000:]

    printed = run.stdout
    assert re.search(r"^GEESE, no hint: acc [\d.]+$", printed, flags=re.M)
    assert re.search(r"^RULE main questions: acc [\d.]+$", printed, flags=re.M)
    assert "4 explanations scored" in printed
    (results_file,) = out.glob("*/results_*.json")
    results = json.loads(results_file.read_text())
    assert set(results["results"]) == {"geese_noexp", "rule_main", "ibe_copa"}
    assert {path.name.split("_2")[0] for path in out.glob("*/samples_*.jsonl")} == {
        "samples_geese_noexp",
        "samples_rule_main",
        "samples_ibe_copa",
    }
    features = features_file.read(FeaturesFolder(out / "ibe")).rows
    assert len(features) == 4 and {row["uncertainty_source"] for row in features} == {"lexicon"}
    report = report_file.read(FeaturesFolder(out / "ibe").report)
    assert report.model == "SmolLM2-135M-Instruct (embedded)" and report.tasks == ("ibe_copa",)
    assert re.search(
        r"^IBE-Eval on COPA: SmolLM2-135M-Instruct \(embedded\) [\d.]+ ibe_copa: --limit 4", printed, flags=re.M
    )
    assert (out / "leaderboard" / "index.html").is_file() and f"page: {out / 'leaderboard' / 'index.html'}" in printed
    for paper in ("geese", "rule", "ibe"):
        assert re.search(rf"^{paper} SmolLM2-135M-Instruct \(embedded\) \{{.+\}}$", printed, flags=re.M), printed[
            -3000:
        ]
