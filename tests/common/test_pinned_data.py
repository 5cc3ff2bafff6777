"""The real pinned files, served in the raw.githubusercontent.com layout, through the real loaders.

The bytes come from the full data folder: the mirror's RULE, ChaosNLI and e-CARE files are
byte-identical to the pinned ones, and ``pinned/`` next to it holds the two files the mirror
keeps only converted (the COPA tarball, the GEESE Arrow file). A wrong sha256 or size in any
pin, or a loader that bypasses the download layer, fails here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import datasets
import pytest

from custom_metrics.common.jsonl import read_jsonl
from custom_metrics.common.settings import DATA_ENV
from custom_metrics.common.sources import Source, read_table_rows, rows_fingerprint
from custom_metrics.geese import data as geese_data
from custom_metrics.ibe import data as ibe_data
from custom_metrics.pinned import DATASETS, pinned_files
from custom_metrics.reg import data as reg_data
from custom_metrics.rule import data as rule_data
from tests.common.raw_github import RawGitHub
from tests.helpers import run_lm_eval

pytestmark = pytest.mark.fulldata


def _real_bytes(source: Source, full_data: Path) -> Path:
    if source.member:
        return full_data / "pinned/COPA-resources.tgz"
    if source.remote.path.endswith(".arrow"):
        return full_data / "pinned/explained-full-llama-3.test.arrow"
    return full_data / source.mirror_path


def _serve_all(server: RawGitHub, full_data: Path) -> int:
    files = {source.remote: _real_bytes(source, full_data) for sources in DATASETS.values() for source in sources}
    for remote, local in files.items():
        server.serve_file(remote, local)
    return len(files)


def _explain_eval_download(*args: str) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).with_name("explain-eval")), "download", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_every_pinned_file_downloads_verifies_and_then_loads_offline(
    raw_github: RawGitHub, full_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    count = _serve_all(raw_github, full_data)
    assert count == len(pinned_files([]))  # one per distinct file: COPA's two splits share one
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a login node's shell may have it; the command asks for network
    first = _explain_eval_download()
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("downloaded ") == count and f"{count} of {count} pinned file(s) verified" in first.stdout
    assert len(raw_github.requests) == count
    assert _explain_eval_download("--list").stdout.count("\n  here: cached, verified\n") == count
    again = _explain_eval_download("geese", "ibe")
    assert again.returncode == 0 and again.stdout.count("cached ") == 4 and len(raw_github.requests) == count

    raw_github.close()
    assert len(geese_data.load_docs()) == 800
    assert len(rule_data.main_questions()) == 943 and len(rule_data.all_sub_questions()) == 3003
    assert len(rule_data.demo_sets()) == 5
    assert len(reg_data.reg_docs(reg_data.load_items())) == 275
    assert len(ibe_data.copa_docs()) == 2000
    assert [len(ibe_data.load_ecare(split)) for split in ("train", "dev")] == [14928, 2132]


@pytest.mark.e2e
def test_geese_human_runs_from_the_served_pinned_arrow_file_then_offline(
    raw_github: RawGitHub, full_data: Path, small_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's acceptance run: no mirror, a fresh cache, the pinned GitHub source; then no server."""
    raw_github.serve_file(geese_data.SOURCE.remote, _real_bytes(geese_data.SOURCE, full_data))
    first, first_samples = run_lm_eval(small_model, "geese_human", tmp_path / "first", limit=4)
    assert first["n-samples"]["geese_human"]["effective"] == 4
    assert raw_github.requests == [
        "/andreazaninello/calamita-geese/de12d080de5a44c56c8d54e5335a6eff50e7bf14/"
        "scripts/explained_data/data-00000-of-00001.arrow"
    ]
    mirror_rows = read_jsonl(full_data / geese_data.SOURCE.mirror_path)[:4]
    assert [sample["doc"]["id"] for sample in first_samples["geese_human"]] == [row["id"] for row in mirror_rows]

    raw_github.close()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # Offline, with the server gone: the same docs from the cache (the model does not matter here).
    _, second_samples = run_lm_eval(["--model", "dummy"], "geese_human", tmp_path / "second", limit=4)
    assert [s["doc"] for s in second_samples["geese_human"]] == [s["doc"] for s in first_samples["geese_human"]]


def test_the_hub_alternative_accepts_exactly_the_pinned_content(
    full_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mirror's JSONL (the Arrow file's conversion) served as a dataset folder: same fingerprint."""
    arrow_rows = read_table_rows(full_data / "pinned/explained-full-llama-3.test.arrow", "GEESE")
    assert rows_fingerprint(arrow_rows) == geese_data.ROWS_FINGERPRINT
    folder = tmp_path / "hub-copy"
    folder.mkdir()
    (folder / "test.jsonl").write_bytes((full_data / geese_data.SOURCE.mirror_path).read_bytes())
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf")
    assert geese_data.load_docs(f"hub:{folder}") == arrow_rows
