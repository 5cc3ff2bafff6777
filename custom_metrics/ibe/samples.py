"""IBE's logged samples in the leaderboard's sample viewer, with each explanation's features
once ``explain-eval ibe score`` has scored its samples file."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from custom_metrics.common.files import JSONL_MAX_BYTES, find_files
from custom_metrics.common.samples import logged_response
from ibe_postprocess import features_file
from ibe_postprocess.folder import FEATURES, FeaturesFolder

LOG = logging.getLogger(__name__)
# Columns of features.jsonl shown beside each logged explanation once `ibe score` ran.
FEATURE_FIELDS = ("flag", "consistent", "depth", "drift", "coherence", "uncertainty", "proof_status")
PROOF, STEP_COHERENCE = "proof steps", "coherence per step"
# What an explanation's steps came to, shown beside it in the viewer (where the eye is).
STEP_COLUMNS = (PROOF, STEP_COHERENCE)


def sample_fields(task: str, sample: dict[str, Any]) -> dict[str, Any]:
    """IBE explanations in the sample viewer: which question and option, and whether it is right."""
    doc = sample.get("doc") or {}
    fields: dict[str, Any] = {
        "question": doc.get("qid"),
        "option": doc.get("option"),
        "split": doc.get("split"),
        "premise": doc.get("premise"),
        "conclusion": doc.get("conclusion"),
    }
    if isinstance(sample.get("well_formed"), (int, float)):  # a generation task: show its explanation
        fields["explanation"] = logged_response(sample)
    if "correct" in doc:
        fields["correct option"] = "yes" if doc.get("correct") else "no"
    if isinstance(sample.get("well_formed"), (int, float)):
        fields["well formed"] = "yes" if sample["well_formed"] else "no"
    right = next((sample[name] for name in ("answer_acc", "acc") if isinstance(sample.get(name), (int, float))), None)
    if right is not None:  # answer_acc: the chat judge's (acc in runs logged before it had its own name)
        fields["judge right"] = "yes" if right else "no"
    return fields


def sample_outcomes(task: str, sample: dict[str, Any]) -> dict[str, float | None]:
    return {
        metric: float(sample[metric])
        for metric in ("well_formed", "acc", "answer_acc")
        if isinstance(sample.get(metric), (int, float)) and not isinstance(sample.get(metric), bool)
    }


def doc_key(task: str, sample: dict[str, Any]) -> str:
    doc = sample.get("doc") or {}
    return "{}/{}".format(doc.get("qid", sample.get("doc_id")), doc.get("option", ""))


def feature_rows(roots: Sequence[Path]) -> dict[tuple[str, int], dict[str, Any]]:
    """IBE features of logged explanations, keyed by (samples file name, line).

    Each feature row records its input as (file, line); the file is matched by name (a
    samples file name carries its task and timestamp), since the path was written relative
    to wherever ``score`` ran. A features file that ``features_file.read`` refuses (cut,
    unfinished, not a regular file) is skipped with a warning: the samples still show,
    without features.
    """
    found: dict[tuple[str, int], dict[str, Any]] = {}
    # A FIFO or device named so is never opened (load_ibe_tables names it as a problem).
    paths, _ = find_files([Path(p) for p in roots if Path(p).is_dir()], FEATURES, JSONL_MAX_BYTES)
    for path in paths:
        try:
            features = features_file.read(FeaturesFolder(path.parent))
        except features_file.FeaturesError as error:
            LOG.warning("IBE features not shown: %s", error)
            continue
        for row in features.rows:
            source = row.get("source")
            if not isinstance(source, dict) or not isinstance(source.get("line"), int):
                continue
            key = (Path(str(source.get("file"))).name, source["line"])
            found[key] = {
                name if name != "flag" else "IBE flag": row.get(name) for name in FEATURE_FIELDS if name in row
            }
            found[key]["flagged"] = "yes" if row.get("flag") else "no"
            try:
                found[key].update(steps(row))
            except (KeyError, TypeError, ValueError, AttributeError) as error:  # a row of another shape
                found[key][PROOF] = f"not shown: a row of {path} holds steps of another shape ({error!r})"
    return found


def steps(row: dict[str, Any]) -> dict[str, str]:
    """What each number of a feature row is made of, one line per step (``ibe score`` keeps it
    since features schema 2)."""
    shown: dict[str, str] = {}
    if isinstance(row.get("program"), str):
        shown["formalized (premise, rules, query)"] = row["program"]
    if isinstance(row.get("proof_steps"), list):
        lines = [_unification(number, step) for number, step in enumerate(row["proof_steps"], 1)]
        shown[PROOF] = "\n".join(lines) or "no proof scores above the threshold (inconsistent, depth 0)"
    if isinstance(row.get("step_coherence"), list):
        shown[STEP_COHERENCE] = "\n".join(_verdict(n, step) for n, step in enumerate(row["step_coherence"], 1))
    if "drift_concepts" in row:
        concepts = row["drift_concepts"]
        shown["drift concepts"] = "no steps" if concepts is None else ", ".join(map(str, concepts)) or "none"
    if isinstance(row.get("hedge_cues"), list):
        shown["hedge cues"] = ", ".join(f"{cue['cue']} ({cue['category']})" for cue in row["hedge_cues"]) or "none"
    return shown


def _unification(number: int, step: dict[str, Any]) -> str:
    how = f"rule {step['rule']}" if step.get("rule") else "fact"
    return (
        f"{number}. {step['goal']} ~ {step['matched']} (similarity {float(step['similarity']):.3f}) "
        f"by {how}: {step.get('clause', '')}"
    )


def _verdict(number: int, step: dict[str, Any]) -> str:
    unparsed = " (unparsed verdict)" if step.get("unparsed") else ""
    return (
        f"{number}. IF {step['if']} THEN {step['then']}: P(entailment) {float(step['entailment']):.3f}, "
        f"P(contradiction) {float(step['contradiction']):.3f}, coherence {float(step['coherence']):+.3f}{unparsed}"
    )
