"""The ``report`` stage: fit the selector on a features folder, write report.md, report.json and PNGs."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from custom_metrics.ibe.leaderboard import IBE_COLUMNS, ibe_table_1
from ibe_postprocess.provenance import read_provenance
from ibe_postprocess.selector import FEATURES, LABELS, ablation, feature_regressions, select, split_frames

# The paper's Table 1 (rows by name, columns IBE_COLUMNS), printed beside this run's numbers.
PAPER_TABLE1 = ibe_table_1()


def load_rows(features_dir: Path) -> pd.DataFrame:
    path = features_dir / "features.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: run `explain-eval ibe score ... --out {features_dir}` first.")
    return pd.read_json(path, lines=True, dtype={"qid": str})


def judge_accuracy(features_dir: Path) -> tuple[float, int] | None:
    path = features_dir / "judge.jsonl"
    if not path.is_file():
        return None
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not records:
        return None
    return sum(r["choice"] == r["gold"] for r in records) / len(records), len(records)


def _fmt(value: float) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.2f}"


def _figures(features_dir: Path, table: pd.DataFrame, regressions, rows: pd.DataFrame) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = []
    fig, ax = plt.subplots(figsize=(7, 4))
    labels = [f"{r.row}" for r in table.itertuples()]
    ax.barh(labels[::-1], table["accuracy"].fillna(0).to_numpy()[::-1], color="tab:blue")
    ax.axvline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.set_xlim(0, 1)
    ax.set_xlabel("test accuracy (best explanation = correct option)")
    ax.set_title("Table 1: IBE features and composed model")
    fig.tight_layout()
    fig.savefig(features_dir / "table1.png", dpi=120)
    plt.close(fig)
    names.append("table1.png")

    fig, ax = plt.subplots(figsize=(7, 3.5))
    zs = [0.0 if math.isnan(r.z) else r.z for r in regressions]
    bars = ax.bar(
        [LABELS[r.feature] for r in regressions], zs, color=["tab:green" if z >= 0 else "tab:red" for z in zs]
    )
    for bar, r in zip(bars, regressions):
        ax.annotate(
            f"{_fmt(r.z)}{r.stars}",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom" if bar.get_height() >= 0 else "top",
            fontsize=8,
        )
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel("z (logistic regression)")
    ax.set_title("Figure 2: correctness regressed on each IBE feature")
    ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    fig.savefig(features_dir / "figure2.png", dpi=120)
    plt.close(fig)
    names.append("figure2.png")

    fig, axes = plt.subplots(1, len(FEATURES), figsize=(12, 3))
    for ax, feature in zip(axes, FEATURES):
        means = rows.groupby("correct")[feature].mean()
        ax.bar(
            ["incorrect", "correct"], [means.get(0, math.nan), means.get(1, math.nan)], color=["tab:red", "tab:green"]
        )
        ax.set_title(LABELS[feature], fontsize=9)
    fig.suptitle("Mean feature by option correctness")
    fig.tight_layout()
    fig.savefig(features_dir / "features_by_correctness.png", dpi=120)
    plt.close(fig)
    names.append("features_by_correctness.png")
    return names


def write_report(features_dir: Path, fig2_split: str = "test") -> Path:
    rows = load_rows(features_dir)
    train, test = split_frames(rows)
    table = ablation(rows)
    full = select(train, test, FEATURES)
    regression_rows = rows if fig2_split == "all" else rows[rows["split"] == fig2_split]
    regressions = feature_regressions(regression_rows)
    judge = judge_accuracy(features_dir)
    figures = _figures(features_dir, table, regressions, rows)
    flagged = rows[rows["flag"].fillna("") != ""]
    reasons = Counter(
        reason.split(":")[0].split("(")[0].strip()
        for flag in flagged["flag"]
        for reason in str(flag).split("; ")
        if reason
    )
    imputed = {f: int(rows[f].isna().sum()) for f in FEATURES}
    sources = sorted(rows["uncertainty_source"].dropna().unique())

    lines = [
        "# IBE-Eval report",
        "",
        f"Explanations: {len(rows)} ({len(train)} train, {len(test)} test); questions: "
        f"{train['qid'].nunique()} train, {test['qid'].nunique()} test.",
        "",
        f"Coherence judge: {', '.join(sorted(rows['coherence_judge'].dropna().unique()))}. "
        f"Formalization: {', '.join(sorted(rows['formalization'].dropna().unique()))}.",
        "",
    ]
    if any(source.startswith("lexicon") for source in sources):
        lines += [
            "**Uncertainty is the lexicon-based estimate, not the certainty model of Pei & Jurgens** "
            f"(source: {'; '.join(sources)}). See the task README for its definition.",
            "",
        ]
    else:
        lines += [f"Uncertainty model: {', '.join(sources)}.", ""]
    lines += [
        f"Flagged explanations: {len(flagged)} of {len(rows)}."
        + (
            " Reasons: " + ", ".join(f"{reason} ({count})" for reason, count in reasons.most_common()) + "."
            if reasons
            else ""
        ),
        "Missing feature values replaced by training means: " + ", ".join(f"{f} {n}" for f, n in imputed.items()) + ".",
        "",
        "## Table 1: accuracy of selecting the correct option's explanation (test questions)",
        "",
        "| Block | Row | This run | " + " | ".join(IBE_COLUMNS) + " |",
        "|---|---|---|" + "---|" * len(IBE_COLUMNS),
    ]
    judge_value = _fmt(judge[0]) + f" (n={judge[1]})" if judge else "not run"
    lines.append(
        f"| Baselines | LLM judge | {judge_value} | " + " | ".join(_fmt(v) for v in PAPER_TABLE1["GPT3.5 Judge"]) + " |"
    )
    for record in table.itertuples():
        paper = PAPER_TABLE1.get(record.row, (math.nan,) * len(IBE_COLUMNS))
        lines.append(
            f"| {record.block} | {record.row} | {_fmt(record.accuracy)} | " + " | ".join(_fmt(v) for v in paper) + " |"
        )
    lines += [
        "",
        "Ties between options earn 1/k credit (expected accuracy of a random tie-break).",
        "",
        "Composed model: "
        + ", ".join(f"{LABELS[f]} {c:+.3f}" for f, c in full.coefficients.items())
        + f", intercept {full.intercept:+.3f}.",
        "",
        f"## Figure 2: correctness regressed on each feature ({fig2_split} explanations, logistic GLM)",
        "",
        "| Feature | coef | z | p | n | note |",
        "|---|---|---|---|---|---|",
    ]
    for r in regressions:
        p = "n/a" if math.isnan(r.p) else f"{r.p:.3g}"
        lines.append(f"| {LABELS[r.feature]} | {_fmt(r.coefficient)} | {_fmt(r.z)}{r.stars} | {p} | {r.n} | {r.note} |")
    lines += [
        "",
        "Significance: *** p < 0.001, ** p < 0.01, * p < 0.05.",
        "",
        "## Mean features by option correctness",
        "",
        "| Feature | correct | incorrect |",
        "|---|---|---|",
    ]
    for feature in FEATURES:
        means = rows.groupby("correct")[feature].mean()
        lines.append(f"| {LABELS[feature]} | {_fmt(means.get(1, math.nan))} | {_fmt(means.get(0, math.nan))} |")
    lines += ["", *(f"![{name}]({name})" for name in figures), ""]
    report = features_dir / "report.md"
    report.write_text("\n".join(lines), encoding="utf-8")

    summary: dict[str, Any] = {
        **read_provenance(features_dir),
        "table1": table.to_dict(orient="records"),
        "judge_accuracy": judge[0] if judge else None,
        "judge_questions": judge[1] if judge else None,
        "figure2": [
            {"feature": r.feature, "coefficient": r.coefficient, "z": r.z, "p": r.p, "n": r.n, "note": r.note}
            for r in regressions
        ],
        "coefficients": full.coefficients,
        "intercept": full.intercept,
        "test_questions": full.questions,
        "flagged": len(flagged),
        "uncertainty_sources": sources,
        "imputed": imputed,
    }
    text = json.dumps(_json_safe(summary), indent=2, allow_nan=False)
    (features_dir / "report.json").write_text(text, encoding="utf-8")
    return report


def _json_safe(value: Any) -> Any:
    """``value`` with numpy numbers as Python ones and NaN / infinity as None: browsers' JSON has no NaN."""
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
