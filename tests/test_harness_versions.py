"""One run per paper gives the same numbers on lm-eval 0.4.13 and 0.5.

The suite supports both harness versions through ``custom_metrics/common/harness_api.py``;
0.5 changed what a filter returns, the generation task class, the samples' nesting and the
standard errors it computes, and one of those changes once turned GEESE M1's ``words`` from 12
into 1 without a word. Here the real ``lm_eval`` CLI of each version runs the same command (one
task per paper, the embedded model, the fixture mirror) and every metric, every filtered
response and every per-document value must be equal. Standard errors are left out: 0.5
bootstraps the suite's aggregations where 0.4.13 reports none.

``make test-next`` runs this in the 0.5 environment with ``EXPLAIN_EVAL_OTHER_LM_EVAL`` naming
the 0.4.13 environment's ``lm_eval``.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import pytest

from custom_metrics.common.harness_api import harness_version
from tests.helpers import MIRROR, run_lm_eval

OTHER_LM_EVAL_ENV = "EXPLAIN_EVAL_OTHER_LM_EVAL"
# GEESE M1 (the filter whose output 0.5 split into characters), RULE main and sub questions
# (log-likelihood, cross-document aggregations), REG (the judge filter and the task class), IBE.
TASKS = "geese_generate_whyexp,rule,reg_chaos,ibe_copa"
SETTINGS = ["--gen_kwargs", "max_gen_toks=24", "--metadata", '{"judge_check": "warn"}']
NOT_COMPARED = {"alias", "name", "sample_len"}

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.versions]


def _other_lm_eval() -> str:
    command = os.environ.get(OTHER_LM_EVAL_ENV, "")
    if not command:
        pytest.skip(f"set {OTHER_LM_EVAL_ENV} to the other harness version's lm_eval (make test-next does)")
    if not Path(command).is_file():
        raise AssertionError(f"{OTHER_LM_EVAL_ENV}={command}: no such file")
    return command


def _same(left: object, right: object) -> bool:
    if isinstance(left, float) and isinstance(right, float):
        return left == right or (math.isnan(left) and math.isnan(right))
    return left == right


def _metrics(results: dict, task: str) -> dict[str, object]:
    return {
        key: value
        for key, value in results["results"][task].items()
        if key not in NOT_COMPARED and "_stderr," not in key
    }


def _per_document(samples: list[dict]) -> dict[int, dict[str, object]]:
    return {
        sample["doc_id"]: {
            "filtered_resps": sample["filtered_resps"],
            **{name: json.dumps(sample.get(name)) for name in sample.get("metrics", [])},
        }
        for sample in samples
    }


def test_one_task_per_paper_gives_equal_numbers_on_both_harness_versions(embedded_model: Path, tmp_path: Path) -> None:
    other = _other_lm_eval()
    env = {"EXPLAIN_EVAL_DATA": str(MIRROR), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    runs = {}
    for name, entry in (("this", [str(Path(sys.executable).with_name("lm_eval"))]), ("other", [other])):
        runs[name] = run_lm_eval(embedded_model, TASKS, tmp_path / name, limit=4, extra=SETTINGS, env=env, entry=entry)
    (this, this_samples), (that, that_samples) = runs["this"], runs["other"]
    versions = {this["lm_eval_version"], that["lm_eval_version"]}
    assert len(versions) == 2, f"both runs used lm-eval {versions}: {OTHER_LM_EVAL_ENV} must name the other version"
    assert str(harness_version()) in versions
    for task in TASKS.split(","):
        mine, theirs = _metrics(this, task), _metrics(that, task)
        assert mine.keys() == theirs.keys(), task
        differ = {key: (mine[key], theirs[key]) for key in mine if not _same(mine[key], theirs[key])}
        assert not differ, f"{task}: metrics differ between lm-eval {sorted(versions)}: {differ}"
        assert this["n-samples"][task] == that["n-samples"][task], task
        assert _per_document(this_samples[task]) == _per_document(that_samples[task]), task
    geese = _metrics(this, "geese_generate_whyexp")
    assert geese["words,anonymized"] > 1, "M1's explanations were read as single characters"
