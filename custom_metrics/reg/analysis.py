"""Section 6 analysis of REG runs: does longer output go with less success?

From the logged samples of one or more ``reg_chaos`` runs (one per model; the paper uses
thinking-mode runs, ``reg_chaos_thinking``), fit a logistic GLM of explanation success on
log2(output length), the contradiction weight w_con and the model, with standard errors
clustered by premise-hypothesis pair, and report odds ratios with 95% intervals: per
doubling of the output length and per 0.1 of w_con, as the paper states them.

A file's model is its output folder's name unless given after '='. Only items in N enter.
Output length is the whole output, thinking included, in the generator's tokens as the run
recorded them (``--tokenizer`` recounts them), at least 1 (log2). One fit takes one mode (a mix
would compare traces with answers). Every field the fit uses is checked on its line first
(statsmodels would report a NaN or a string only as a failed fit), and a file or item read twice
is refused (doubled rows would narrow every interval without a word).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.file_kinds import file_kind, wrong_kind
from custom_metrics.common.samples import numbered_samples
from custom_metrics.judge.types import NLI_LABELS
from custom_metrics.reg.judging import read_record
from custom_metrics.reg.metrics import record_scores


def _raw_output(sample: dict[str, Any], where: str) -> str:
    """The unfiltered generation (thinking included); missing, an error, not an output of length 1."""
    response = sample.get("resps")
    nested = isinstance(response, list) and response and isinstance(response[0], list) and response[0]
    text = response[0][0] if nested else None
    if isinstance(text, str):
        return text
    raise DataError(f"{where}: field 'resps' holds no generated text (expected [[text]]).")


def _field(container: Any, path: str, where: str, within: str = "") -> Any:
    value = container
    for name in path.split("."):
        if not isinstance(value, dict) or name not in value:
            raise DataError(f"{where}: field {within + path!r} missing; is this a reg_chaos samples file?")
        value = value[name]
    return value


def _record(sample: dict[str, Any], where: str, recorded_length: bool) -> dict[str, Any]:
    """The judged record the reg_chaos filter logged, checked for every field the analysis
    reads (``output_tokens`` unless the lengths are recounted)."""
    filtered = _field(sample, "filtered_resps", where)
    try:
        record = read_record(filtered[0]) if isinstance(filtered, list) and filtered else None
    except (TypeError, ValueError, RecursionError) as err:
        raise DataError(f"{where}: field 'filtered_resps' is not a reg_chaos record ({err}).") from err
    if not isinstance(record, dict):
        raise DataError(f"{where}: field 'filtered_resps' holds no reg_chaos record (a JSON object).")
    inside = "filtered_resps."
    if not isinstance(_field(record, "flag", where, inside), str):
        raise DataError(f"{where}: field 'filtered_resps.flag' must be a string.")
    if recorded_length:
        tokens = _field(record, "output_tokens", where, inside)
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise DataError(
                f"{where}: field 'filtered_resps.output_tokens' is {tokens!r}, not a token count (samples from before "
                "lengths were recorded: recount them with --tokenizer)."
            )
    mode = record.get("mode", "")
    if mode not in ("", "thinking", "non-thinking"):
        raise DataError(f"{where}: field 'filtered_resps.mode' is {mode!r}, expected thinking or non-thinking.")
    if record.get("judge_error"):
        raise DataError(
            f"{where}: the judge failed after generation ({record['judge_error']}); judge the run's samples "
            "first: explain-eval reg-rejudge <its --output_path>."
        )
    for verdict in ("initial", "coherence", "effectiveness"):
        label = _field(record, f"{verdict}.label", where, inside)
        if label not in NLI_LABELS:
            raise DataError(f"{where}: field 'filtered_resps.{verdict}.label' is {label!r}, not one of {NLI_LABELS}.")
        if verdict == "initial" and (label != "contradiction" or record["flag"]):
            break  # outside N, or no explanation to judge: nothing else was judged
    return record


def read_samples(path: Path, model: str, count: Callable[[str], int] | None = None) -> list[dict[str, Any]]:
    """Rows (items in N only) of one reg_chaos samples file; bad lines name file, line and field.

    Lengths are the recorded ``output_tokens``, or ``count`` of each raw generation when given.
    """
    rows = []
    for line, sample in numbered_samples(path):
        where = f"{path}:{line}"
        record = _record(sample, where, recorded_length=count is None)
        uid = _field(sample, "doc.uid", where)
        if isinstance(uid, bool) or not isinstance(uid, (str, int)):
            raise DataError(f"{where}: field 'doc.uid' is {uid!r}, expected a string.")
        w_con = _field(sample, "doc.w_con", where)  # a share of annotator votes
        if isinstance(w_con, bool) or not isinstance(w_con, (int, float)) or not 0 <= w_con <= 1:
            raise DataError(f"{where}: field 'doc.w_con' is {w_con!r}, expected a number in [0, 1].")
        success = record_scores(record)["success"]
        if success is None:
            continue
        rows.append(
            {
                "model": model,
                "uid": str(uid),
                "w_con": float(w_con),
                "success": int(success),
                "length": record["output_tokens"] if count is None else count(_raw_output(sample, where)),
                "mode": record.get("mode", ""),
                "flag": record["flag"],
                "source": where,
            }
        )
    return rows


def length_counter(tokenizer: str | None) -> Callable[[str], int] | None:
    """None: the recorded lengths; else a recount of each raw generation in this tokenizer."""
    if not tokenizer:
        return None
    from custom_metrics.reg.tokens import count_tokens, load_tokenizer

    try:
        load_tokenizer(tokenizer)
    except Exception as err:  # whatever the loader raises, the command names the tokenizer
        raise DataError(f"--tokenizer: cannot load tokenizer {tokenizer!r} ({type(err).__name__}: {err})") from err
    return lambda text: count_tokens(tokenizer, [text])[0]


def fit_glm(rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """Logistic GLM, errors clustered by item; odds ratios per doubling and per 0.1 w_con."""
    import numpy as np
    import pandas as pd
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    frame = pd.DataFrame(rows)
    if frame.empty or frame["success"].nunique() < 2:
        raise ValueError(
            "the GLM needs both successful and unsuccessful explanations in N; got "
            f"{int(frame['success'].sum()) if not frame.empty else 0} successes of {len(frame)}"
        )
    frame["log2_length"] = np.log2(frame["length"].clip(lower=1))
    frame["w_con_per_0.1"] = frame["w_con"] * 10
    # A covariate that never varies is the intercept again: the design is singular and no
    # odds ratio exists for it, so it leaves the model, said in the summary.
    constant = [column for column in ("log2_length", "w_con_per_0.1") if frame[column].nunique() < 2]
    if "log2_length" in constant:
        raise ValueError("every explanation in N has the same output length: the GLM has no length effect to fit")
    terms = ["log2_length"] + ([] if constant else ["Q('w_con_per_0.1')"])
    terms += ["C(model)"] if frame["model"].nunique() > 1 else []
    groups = pd.factorize(frame["uid"])[0]
    model = smf.glm("success ~ " + " + ".join(terms), data=frame, family=sm.families.Binomial())
    try:
        result = model.fit(cov_type="cluster", cov_kwds={"groups": groups})
    except np.linalg.LinAlgError as err:
        raise ValueError(f"the GLM cannot be fitted on these {len(frame)} explanations ({err})") from err
    ci = result.conf_int(alpha=0.05)
    names = {"Q('w_con_per_0.1')": "w_con (per 0.1)", "log2_length": "log2(output length) (per doubling)"}
    table = [
        {
            "term": names.get(term, term),
            "odds_ratio": math.exp(result.params[term]),
            "ci_low": math.exp(ci.loc[term, 0]),
            "ci_high": math.exp(ci.loc[term, 1]),
            "p_value": float(result.pvalues[term]),
        }
        for term in result.params.index
        if term != "Intercept"
    ]
    dropped = "; w_con left out: the same for every explanation" if constant else ""
    summary = (
        f"{result.summary()}\n\nrows: {len(frame)}, clusters (items): {len(set(groups))}, "
        f"models: {frame['model'].nunique()}{dropped}\n"
    )
    return table, summary


def length_table(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Table 3: mean output length of successful and unsuccessful explanations per model."""
    table = []
    for model in sorted({row["model"] for row in rows}):
        mine = [row for row in rows if row["model"] == model]
        mean = lambda values: sum(values) / len(values) if values else float("nan")
        table.append(
            {
                "model": model,
                "mode": mine[0]["mode"],
                "n": len(mine),
                "success_rate": mean([row["success"] for row in mine]),
                "mean_length_successful": mean([row["length"] for row in mine if row["success"]]),
                "mean_length_unsuccessful": mean([row["length"] for row in mine if not row["success"]]),
            }
        )
    return table


def _write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


NEEDS = (
    "reg-analysis needs the samples file of a reg_chaos run (samples_reg_chaos_thinking_<time>.jsonl; "
    "the paper fits thinking-mode runs)"
)
MAKES = (
    "lm_eval --model hf --model_args pretrained=MODEL --apply_chat_template --tasks reg_chaos_thinking "
    '--include_path $(explain-eval tasks-path) --metadata \'{"judge": "JUDGE"}\' --log_samples '
    "--output_path runs/reg"
)


def parse_inputs(items: Sequence[str]) -> list[tuple[Path, str]]:
    inputs: list[tuple[Path, str]] = []
    for item in items:
        path_text, _, model = item.partition("=")
        path = Path(path_text).expanduser()
        if not path.is_file():
            raise DataError(f"{path}: no such samples file")
        # A results file, another task's samples or a features file is named as what it is, with the
        # file reg-analysis needs and the command that makes it, before any line is read.
        kind = file_kind(path)
        reg_samples = kind.kind == "samples" and (kind.task or "").startswith("reg_chaos")
        if not reg_samples and kind.kind not in ("jsonl", "other"):
            raise wrong_kind(path, kind, NEEDS, MAKES, tasks=("reg_chaos",))
        twice = next((earlier for earlier, _ in inputs if earlier.samefile(path)), None)
        if twice is not None:
            raise DataError(f"{path}: given twice ({twice}); each samples file counts once.")
        inputs.append((path, model or path.resolve().parent.name))
    return inputs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="explain-eval reg-analysis", description=__doc__.split("\n\n")[0])
    parser.add_argument("samples", nargs="+", help="samples_reg_chaos_*.jsonl, optionally PATH=MODEL")
    parser.add_argument("--out", required=True, type=Path, help="folder for glm.csv, table3.csv, rows.csv, summary.txt")
    parser.add_argument(
        "--tokenizer",
        help="recount output tokens with this tokenizer (HF id or path) instead of the recorded output_tokens",
    )
    args = parser.parse_args(argv)
    count = length_counter(args.tokenizer)
    rows = [row for path, model in parse_inputs(args.samples) for row in read_samples(path, model, count)]
    # One row per model and item: a file given twice (or two runs of one model under one name)
    # would double rows and shrink the clustered errors without any warning.
    seen: dict[tuple[str, str], str] = {}
    for row in rows:
        key = (row["model"], row["uid"])
        if key in seen:
            raise DataError(
                f"{row['source']}: item {row['uid']!r} of model {row['model']!r} was already read at {seen[key]}; "
                "give each model's samples file once (PATH=MODEL names a model)."
            )
        seen[key] = row["source"]
    modes = {row["mode"] for row in rows} - {""}  # "": samples from before modes were recorded
    if len(modes) > 1:
        first = {mode: next(row["source"] for row in rows if row["mode"] == mode) for mode in sorted(modes)}
        raise DataError(
            "the samples mix modes (" + ", ".join(f"{mode} at {where}" for mode, where in first.items()) + "); fit "
            "one mode at a time (the paper fits thinking-mode runs only)."
        )
    mode = modes.pop() if modes else ""
    if mode == "non-thinking":
        print("reg_analysis: these are non-thinking runs; the paper fits thinking-mode runs only", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    if rows:
        _write_csv(args.out / "rows.csv", rows)
        _write_csv(args.out / "table3.csv", length_table(rows))
    try:
        table, summary = fit_glm(rows)
    except ValueError as err:
        print(f"reg_analysis: {err}", file=sys.stderr)
        return 2
    _write_csv(args.out / "glm.csv", table)
    (args.out / "summary.txt").write_text(summary, encoding="utf-8")
    unit = f"tokens recounted with {args.tokenizer}" if args.tokenizer else "tokens as recorded"
    print(
        f"logistic GLM of success, {len(rows)} explanations in N ({mode or 'mode not recorded'}), output length in "
        f"{unit}, errors clustered by item"
    )
    for line in table:
        print(
            f"  {line['term']}: OR = {line['odds_ratio']:.3f}, "
            f"95% CI [{line['ci_low']:.3f}, {line['ci_high']:.3f}], p = {line['p_value']:.3g}"
        )
    return 0
