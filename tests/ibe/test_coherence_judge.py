"""IBE coherence's default judge: the paper's NLI classifier when it loads, else the embedded LM, said so.

Each case runs in a fresh interpreter with its own Hugging Face cache folder: the Hub
cache location is read when huggingface_hub is imported, and a user's machine may hold
the real model. "Loadable" is shown with the tiny stand-in classifier placed in that
cache under the paper's model id, so the default spec goes through the loading path a
user with Hub access takes (``from_pretrained`` of that id, here offline from the cache).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ibe_postprocess.coherence import PAPER_NLI_MODEL
from tests.helpers import BALLOON, REPO
from tests.ibe.test_pipeline import tiny_classifier

_SCRIPT = """
import json, sys
from pathlib import Path
from ibe_postprocess.parsing import parse_explanation
from ibe_postprocess.coherence import Coherence

coherence = Coherence(None, Path(sys.argv[1]))
parsed = [parse_explanation(json.loads(line)["explanation"]) for line in Path(sys.argv[2]).read_text().splitlines()]
print(json.dumps({"name": coherence.name, "source": coherence.source, "scores": coherence.score_many(parsed)}))
"""


def _default_coherence(hub_cache: Path, cache_dir: Path) -> dict:
    env = {**os.environ, "HF_HUB_CACHE": str(hub_cache), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(cache_dir), str(BALLOON)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _place_in_hub_cache(hub_cache: Path, repo_id: str, model: Path) -> None:
    """Lay a local model out as huggingface_hub caches a download of ``repo_id``."""
    repo = hub_cache / f"models--{repo_id.replace('/', '--')}"
    commit = "0" * 40
    shutil.copytree(model, repo / "snapshots" / commit)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)


def test_the_papers_nli_model_is_the_default_when_it_loads(tmp_path) -> None:
    repo_id = PAPER_NLI_MODEL.removeprefix("seqcls:")
    _place_in_hub_cache(tmp_path / "hub", repo_id, tiny_classifier(tmp_path / "stand-in", 3))
    result = _default_coherence(tmp_path / "hub", tmp_path / "verdicts")
    assert result["name"] == result["source"] == PAPER_NLI_MODEL  # no fallback note
    assert len(result["scores"]) == 2 and all(-1 <= score <= 1 for score, _ in result["scores"])


def test_without_the_papers_model_the_embedded_lm_judges_and_rows_say_why(tmp_path, embedded_model) -> None:
    result = _default_coherence(tmp_path / "empty-hub", tmp_path / "verdicts")
    assert result["name"] == f"lm:{embedded_model}?mode=loglik"  # parse_spec("embedded") names the checkpoint
    assert result["source"] == f"lm:{embedded_model}?mode=loglik ({PAPER_NLI_MODEL} unavailable: OSError)"
    assert len(result["scores"]) == 2 and all(-1 <= score <= 1 for score, _ in result["scores"])
