"""Hooks for the ibe_* lm-eval tasks (re-exported by ``lm_eval_tasks/ibe/utils.py``).

The generation tasks only log explanations (plus format statistics); the IBE features and
the selector run afterwards in ``python -m ibe_postprocess``, because they need every
explanation of the task at once (a selector fitted on the training questions) and tools
(Prolog, NLI, certainty models) that do not belong inside an lm-eval metric.

The judge tasks read the explanations of an earlier generation run: the samples file
is passed with ``--metadata '{"explanations": "PATH"}'`` (as geese_selfexp does).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import datasets

from custom_metrics.data import DataError, to_dataset
from ibe_postprocess import data
from ibe_postprocess.inputs import read_inputs
from ibe_postprocess.parsing import parse_explanation


def load_copa(**_: Any) -> dict[str, datasets.Dataset]:
    return {"test": to_dataset(data.copa_docs())}


def load_ecare(
    ecare_train_size: int = data.ECARE_TRAIN_SIZE, ecare_test_size: int = data.ECARE_TEST_SIZE,
    ecare_seed: int = data.ECARE_SEED, **_: Any,
) -> dict[str, datasets.Dataset]:
    docs = data.ecare_docs(int(ecare_train_size), int(ecare_test_size), int(ecare_seed))
    return {"test": to_dataset(docs)}


def process_generation(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """Format statistics of one explanation; IBE scoring happens in ibe_postprocess."""
    parsed = parse_explanation(results[0])
    return {
        "steps": float(len(parsed.steps)),
        "well_formed": float(bool(parsed.steps) and parsed.summary is not None and not parsed.flags),
        "no_steps": float(not parsed.steps),
    }


def judge_docs(explanations: str | None, dataset: str) -> list[dict[str, Any]]:
    """One judge doc per test question of ``dataset`` whose two explanations were generated."""
    if not explanations:
        raise DataError(
            f"ibe_judge_{dataset} needs the samples file of an ibe_{dataset} run: "
            f"--metadata '{{\"explanations\": \"OUT/.../samples_ibe_{dataset}_<ts>.jsonl\"}}'."
        )
    records, _ = read_inputs([Path(explanations).expanduser()])
    strangers = [r.qid for r in records if not r.qid.startswith(f"{dataset}-")]
    if strangers:
        raise DataError(f"{explanations}: qid {strangers[0]!r} is not a {dataset} question; is this an ibe_{dataset} samples file?")
    by_question: dict[str, dict[int, Any]] = {}
    for record in records:
        if record.split == "test":
            by_question.setdefault(record.qid, {})[record.option] = record
    docs = []
    for qid, options in by_question.items():
        if sorted(options) != [1, 2]:
            continue  # a --limit run may cut a question in half; the count is in the results file
        pair = [options[1], options[2]]
        if sum(r.correct for r in pair) != 1:
            raise DataError(f"{explanations}: question {qid!r} does not have exactly one correct option.")
        docs.append({
            "qid": qid,
            "gold": 1 + [r.correct for r in pair].index(1),
            "explanations": [{"premise": r.premise, "conclusion": r.conclusion, "explanation": r.explanation} for r in pair],
        })
    if not docs:
        raise DataError(f"{explanations}: no test question of {dataset} has explanations for both options.")
    return docs


def load_judge(dataset: str, explanations: str | None = None) -> dict[str, datasets.Dataset]:
    return {"test": to_dataset(judge_docs(explanations, dataset))}
