"""IBE's part of ``explain-eval rejudge``: the coherence feature of an ``ibe score`` folder judged again.

Coherence (Algorithm 3) is the one IBE feature a judge decides: the mean over an explanation's
IF-THEN steps of P(entailment) - P(contradiction) from an NLI model. The features file keeps
every step's pair and verdict (``step_coherence``), so judging again needs no parsing,
formalizing or proving: each judge named decides the logged pairs in ``ibe score``'s own
canonical chunks (``ibe_postprocess.coherence``: the folder's chunk cache, so a judge asked
here and later in ``ibe score --nli-judge`` is asked nothing twice, and an interrupted rejudge
keeps every chunk judged), and the coherence of every explanation is computed again. The
features file is never rewritten: each judge's coherence goes to
``<features folder>/rejudge/<judge>-<hash>/coherence.jsonl`` (a header naming the judge and the
features' digest, then one line per row).

Then each judge, the folder's own one and every judge it was judged again by (this time or
before, for the same rows), is a rater of three decisions (``DECISIONS``: each step's label,
each question's most coherent option, each test question's five-feature selector pick), as the
task's DETAILS.md defines them. A tie is not a correct pick in the metrics (``METRICS``); the
notes give ``ibe report``'s accuracies, which credit a tie 1/k, per judge.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import JSONL_MAX_BYTES, atomic_write_bytes, iter_regular_lines
from custom_metrics.common.rejudging import (
    AGAIN,
    FOLDER,
    GOLD,
    RUN_JUDGE,
    Rater,
    RejudgedTask,
    RejudgeRequest,
    cut_notes,
    judge_folder_name,
)
from custom_metrics.common.results import friendly_spec
from ibe_postprocess import features_file
from ibe_postprocess.folder import CACHE_FILES, FEATURES, FeaturesFolder
from ibe_postprocess.report_file import GenerationRun

DECISIONS = ("step", "coherence pick", "selector pick")
METRICS = ("steps entailed", "unparsed", "coherence picks correct", "selector correct")
HEADLINE = "selector correct"
LABELS = ("entailment", "neutral", "contradiction", "unparsed", "tie")
FILE = CACHE_FILES["coherence"]  # named as the folder's coherence cache: the same rows, one judge
HEADER_KEY = "ibe_rejudge"
Verdicts = list[list[tuple[float, float, bool]]]  # per row, per step: P(entailment), P(contradiction), unparsed


def find(path: Path) -> list[Path]:
    """The features files of ``ibe score`` folders under ``path`` (or ``path`` itself), not the rejudges'."""
    if path.is_file():
        return [path] if path.name == FEATURES else []
    return sorted(file for file in path.rglob(FEATURES) if FOLDER not in file.relative_to(path).parts)


def check(path: Path, request: RejudgeRequest) -> features_file.Features:
    """Before any judging: the features file complete, fresh and of the schema that keeps the steps."""
    features = features_file.read(FeaturesFolder(path.parent))  # refuses a cut, unfinished or stale file
    if not any("step_coherence" in row for row in features.rows):
        raise DataError(f"{path}: its rows keep no step verdicts (field 'step_coherence'); score it again")
    return features


def _own_verdicts(rows: Sequence[dict[str, Any]]) -> Verdicts:
    return [
        [(float(s["entailment"]), float(s["contradiction"]), bool(s["unparsed"])) for s in row["step_coherence"]]
        for row in rows
    ]


def _judge(rows: Sequence[dict[str, Any]], spec: Any, folder: Path, request: RejudgeRequest) -> Verdicts:
    """Every logged step judged by ``spec`` in ``ibe score``'s canonical chunks (the folder's chunk cache)."""
    from ibe_postprocess.cache import JsonlCache
    from ibe_postprocess.coherence import Coherence, valid_chunk

    features = FeaturesFolder(folder)
    coherence = Coherence(spec, request.judge_cache or features.cache("nli_verdicts"))
    pairs = [[(step["if"], step["then"]) for step in row["step_coherence"]] for row in rows]
    verdicts = coherence.verdicts(
        (pair for steps in pairs for pair in steps), JsonlCache(features.cache("coherence"), valid_chunk)
    )
    return [[verdicts[pair] for pair in steps] for steps in pairs]


def _write(path: Path, features: Any, spec: Any, verdicts: Verdicts) -> None:
    from ibe_postprocess.coherence import coherence_of

    header = {"judge": spec.name, "judge_display": spec.display_name, "features_sha256": features.header.rows_sha256}
    lines = [{HEADER_KEY: header}]
    for row, steps in zip(features.rows, verdicts):
        value, unparsed = coherence_of(steps)
        lines.append(
            {
                "qid": row["qid"],
                "option": row["option"],
                "coherence": value,
                "unparsed": unparsed,
                "steps": [list(step) for step in steps],
            }
        )
    atomic_write_bytes(path, "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8"))


def _read(path: Path, features: Any) -> tuple[str, str, Verdicts] | None:
    """(judge, display name, verdicts) of a judge's file for these rows; None when it is for other rows."""
    try:
        lines = [json.loads(line) for line in iter_regular_lines(path, JSONL_MAX_BYTES, "judged coherence file")]
    except (OSError, ValueError, DataError) as error:
        print(f"skipped {path}: {error}", file=sys.stderr)
        return None
    header = lines[0].get(HEADER_KEY) if lines and isinstance(lines[0], dict) else None
    if not isinstance(header, dict) or header.get("features_sha256") != features.header.rows_sha256:
        return None
    rows = lines[1:]
    if [(r["qid"], r["option"]) for r in rows] != [(r["qid"], r["option"]) for r in features.rows]:
        return None
    return header["judge"], header["judge_display"], [[tuple(step) for step in row["steps"]] for row in rows]


def _label(entailment: float, contradiction: float, unparsed: bool) -> str:
    if unparsed:
        return "unparsed"
    probs = {"entailment": entailment, "neutral": 1.0 - entailment - contradiction, "contradiction": contradiction}
    return max(probs, key=probs.__getitem__)


def _picks(frame: Any, scores: Any) -> dict[str, str]:
    """Per question of ``frame``, the option with the highest score ('tie' where several share it)."""
    from ibe_postprocess.selector import picked

    scored = frame.assign(_score=scores).dropna(subset=["_score"])
    best = scored[picked(scored, scored["_score"].to_numpy())].groupby("qid", sort=False)["option"]
    return {str(qid): str(options.iloc[0]) if len(options) == 1 else "tie" for qid, options in best}


def _selector(frame: Any) -> tuple[dict[str, str], list[str]]:
    """The five-feature selector's picks on the test questions, and the paper's numbers as notes."""
    from ibe_postprocess.selector import by_dataset, evaluate, fit_selectors, split_frames

    try:
        _, test = split_frames(frame)
        selectors = fit_selectors(frame, features_file.FEATURES)
    except ValueError as error:
        return {}, [f"no selector: {str(error).split(';')[0]}"]
    picks = {}
    for name, rows in by_dataset(test).items():
        picks.update(_picks(rows, selectors[name].scores(rows)))
    alone = evaluate(frame, ["coherence"])
    every = evaluate(frame, features_file.FEATURES)
    notes = [f"Table 1 Coherence alone: {', '.join(f'{d} {a:.3f} ({n} questions)' for d, (a, n) in alone.items())}"]
    notes.append(f"all five criteria (IBE-Eval): {', '.join(f'{d} {a:.3f}' for d, (a, _) in every.items())}")
    coefficients = sorted({round(s.coefficients["coherence"], 4) for s in selectors.values()})
    notes.append(f"the selector's coherence coefficient {', '.join(map(str, coefficients))}")
    return picks, notes


def rater(name: str, role: str, rows: Sequence[dict[str, Any]], verdicts: Verdicts, path: Path | None):
    """A judge's decisions, metrics and per-item outcomes, and its paper numbers (notes)."""
    import pandas as pd

    from ibe_postprocess.coherence import coherence_of

    steps = {
        f"{row['qid']}/{row['option']}/{index}": _label(*verdict)
        for row, row_verdicts in zip(rows, verdicts)
        for index, verdict in enumerate(row_verdicts, 1)
    }
    values = [coherence_of(row_verdicts)[0] for row_verdicts in verdicts]
    frame = pd.DataFrame.from_records(rows).astype({"qid": str}).assign(coherence=values)
    coherence_picks = _picks(frame, frame["coherence"].astype(float).to_numpy())
    selector_picks, notes = _selector(frame)
    correct = {str(r["qid"]): str(r["option"]) for r in rows if r["correct"]}
    scores = {
        "steps entailed": {item: label == "entailment" for item, label in steps.items()},
        "coherence picks correct": {q: pick == correct.get(q) for q, pick in coherence_picks.items()},
        "selector correct": {q: pick == correct.get(q) for q, pick in selector_picks.items()},
    }
    metrics = {metric: (sum(outcomes.values()), len(outcomes)) for metric, outcomes in scores.items() if outcomes}
    if steps:
        metrics["unparsed"] = (sum(label == "unparsed" for label in steps.values()), len(steps))
    scored = [value for value in values if value is not None]
    mean = f"mean coherence {sum(scored) / len(scored):.3f} over {len(scored)} explanations; " if scored else ""
    decisions = {"step": steps, "coherence pick": coherence_picks, "selector pick": selector_picks}
    rater = Rater(name, role, {d: v for d, v in decisions.items() if v}, metrics, path, scores)
    return rater, f"{name}: {mean}{'; '.join(notes)}"


def run(path: Path, request: RejudgeRequest) -> list[RejudgedTask]:
    """Judge the coherence again with each judge, and return the folder's raters."""
    if not request.judges:  # --complete alone: a features file is complete or refused, never half judged
        return []
    features = check(path, request)
    rows, folder = features.rows, path.parent
    own = sorted({str(row.get("coherence_judge")) for row in rows if row.get("coherence_judge")})
    for spec in request.judges:
        if own == [spec.name]:
            print(f"{path}: {spec.display_name} is the folder's own coherence judge; its verdicts are the folder's")
            continue
        again = folder / FOLDER / judge_folder_name(spec.name, spec.display_name) / FILE
        _write(again, features, spec, _judge(rows, spec, folder, request))
        print(f"{again}: the coherence of {len(rows)} explanations judged again by {spec.display_name}")
    own_name = friendly_spec(own[0]) if len(own) == 1 else "the folder's judges"
    judged = [rater(own_name, RUN_JUDGE, rows, _own_verdicts(rows), path)]
    for file in sorted((folder / FOLDER).glob(f"*/{FILE}")):
        read = _read(file, features)
        if read is None:
            print(f"skipped {file}: judged other rows than {path}'s", file=sys.stderr)
            continue
        judge, display, verdicts = read
        if own != [judge]:
            judged.append(rater(display, AGAIN, rows, verdicts, file))
    correct = {str(r["qid"]): str(r["option"]) for r in rows if r["correct"]}
    test = {str(r["qid"]) for r in rows if r["split"] == "test"}
    gold = {"coherence pick": correct, "selector pick": {q: o for q, o in correct.items() if q in test}}
    raters = [found for found, _ in judged] + [Rater("gold: the correct option", GOLD, gold)]
    notes = [note for _, note in judged]
    runs = features.header.origin.provenance.get("runs") or ()
    notes += cut_notes("; ".join(subset for run in runs if (subset := GenerationRun(**run).subset)))
    notes.append(
        "A tie is not a correct pick in the metrics table; ibe report credits a tie 1/k (the accuracies in these "
        "notes). Coherence pick: the option whose explanation is most coherent, every question with a value."
    )
    tasks = "+".join(sorted(map(str, features.header.origin.provenance.get("tasks") or ["ibe"])))
    return [
        RejudgedTask(
            f"{tasks}_coherence",
            path,
            folder / FOLDER,
            tuple(raters),
            DECISIONS,
            METRICS,
            LABELS,
            tuple(notes),
            HEADLINE,
        )
    ]
