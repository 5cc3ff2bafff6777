"""IBE coherence's default judge: the paper's NLI classifier when it loads, else the embedded LM, said so.

Both cases run in one fresh interpreter with a Hugging Face cache folder of its own: the Hub
cache location is read when huggingface_hub is imported, and a user's machine may hold the
real model. The cache is empty for the first case; then the tiny stand-in classifier is laid
out in it under the paper's model id, so the second goes through the loading path a user
with Hub access takes (``from_pretrained`` of that id, here offline from the cache).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ibe_postprocess.coherence import PAPER_NLI_MODEL
from tests.helpers import BALLOON, REPO

_SCRIPT = """
import json, shutil, sys
from pathlib import Path
from ibe_postprocess.parsing import parse_explanation
from ibe_postprocess.coherence import Coherence

hub, stand_in, repo, verdicts, balloon = map(Path, sys.argv[1:6])
parsed = [parse_explanation(json.loads(line)["explanation"]) for line in balloon.read_text().splitlines()]
for case in ("empty", "holds the paper's model"):
    if case != "empty":  # laid out as huggingface_hub caches a download of the paper's model id
        commit = "0" * 40
        shutil.copytree(stand_in, hub / repo / "snapshots" / commit)
        (hub / repo / "refs").mkdir(parents=True)
        (hub / repo / "refs" / "main").write_text(commit)
    coherence = Coherence(None, verdicts / case)
    print(json.dumps({"case": case, "name": coherence.name, "source": coherence.source,
                      "scores": coherence.score_many(parsed)}))
"""


@pytest.fixture(scope="module")
def defaults(tmp_path_factory, tiny_nli: Path, embedded_model: Path) -> dict[str, dict]:
    """The default judge's name, source and balloon scores with the Hub cache empty, then holding the stand-in."""
    work = tmp_path_factory.mktemp("coherence-default")
    repo = f"models--{PAPER_NLI_MODEL.removeprefix('seqcls:').replace('/', '--')}"
    env = {**os.environ, "HF_HUB_CACHE": str(work / "hub"), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    (work / "hub").mkdir()
    arguments = [str(work / "hub"), str(tiny_nli), repo, str(work / "verdicts"), str(BALLOON)]
    done = subprocess.run([sys.executable, "-c", _SCRIPT, *arguments], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"case"')]
    return {result["case"]: result for result in results}


@pytest.mark.slow
def test_the_papers_nli_model_is_the_default_when_it_loads(defaults: dict) -> None:
    result = defaults["holds the paper's model"]
    assert result["name"] == result["source"] == PAPER_NLI_MODEL  # no fallback note
    assert len(result["scores"]) == 2 and all(-1 <= score <= 1 for score, _ in result["scores"])


@pytest.mark.slow
def test_without_the_papers_model_the_embedded_lm_judges_and_rows_say_why(defaults: dict, embedded_model) -> None:
    result = defaults["empty"]
    assert result["name"] == f"lm:{embedded_model}?mode=loglik"  # parse_spec("embedded") names the checkpoint
    assert result["source"] == f"lm:{embedded_model}?mode=loglik ({PAPER_NLI_MODEL} unavailable: OSError)"
    assert len(result["scores"]) == 2 and all(-1 <= score <= 1 for score, _ in result["scores"])
