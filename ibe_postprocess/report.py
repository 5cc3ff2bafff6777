"""The ``report`` stage: fit the selector on a features folder, write report.md, report.json and PNGs.

Everything is reported per dataset (COPA, e-CARE), as the columns of the paper's Table 1.
With both datasets present the selector follows Appendix A.9 by default: one fit on all
training explanations, evaluated on each test set (``--selector per-dataset`` fits each
dataset's own). The LLM-as-a-judge baseline is labelled by who judged: the paper's is
always GPT 3.5, this run's is the model of the ``ibe_judge_*`` run.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from custom_metrics.ibe.data import dataset_of
from custom_metrics.ibe.leaderboard import IBE_COLUMNS, PAPER_JUDGE, ibe_table_1
from ibe_postprocess.coherence import PAPER_NLI_MODEL
from ibe_postprocess.provenance import read_provenance
from ibe_postprocess.selector import (
    FEATURES,
    LABELS,
    Selector,
    ablation,
    by_dataset,
    feature_regressions,
    fit_selectors,
    split_frames,
)

# The paper's Table 1 (rows by name, columns IBE_COLUMNS), printed beside this run's numbers.
PAPER_TABLE1 = ibe_table_1()
DATASET_NAMES = {"copa": "COPA", "ecare": "e-CARE"}
UNKNOWN_JUDGE = "unknown model"  # judge samples without their results file beside them: no name in report.json


def load_rows(features_dir: Path) -> pd.DataFrame:
    path = features_dir / "features.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: run `explain-eval ibe score ... --out {features_dir}` first.")
    return pd.read_json(path, lines=True, dtype={"qid": str})


def judge_accuracy(features_dir: Path) -> dict[str, tuple[float, int]]:
    """Per dataset: the share of test questions the judge answered correctly, and how many."""
    path = features_dir / "judge.jsonl"
    if not path.is_file():
        return {}
    decisions: dict[str, list[bool]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            decisions.setdefault(dataset_of(str(record["qid"])), []).append(record["choice"] == record["gold"])
    return {name: (sum(hits) / len(hits), len(hits)) for name, hits in sorted(decisions.items())}


def _fmt(value: float | None) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.2f}"


def _name(dataset: str) -> str:
    return DATASET_NAMES.get(dataset, dataset)


def _bars(ax, labels: list[str], values: dict[str, list[float]], horizontal: bool) -> None:
    """Grouped bars: one group per label, one bar per dataset."""
    width = 0.8 / max(len(values), 1)
    for index, (dataset, heights) in enumerate(values.items()):
        positions = [i + index * width for i in range(len(labels))]
        clean = [0.0 if math.isnan(v) else v for v in heights]
        (ax.barh if horizontal else ax.bar)(positions, clean, width, label=_name(dataset))
    ticks = [i + 0.4 - width / 2 for i in range(len(labels))]
    (ax.set_yticks if horizontal else ax.set_xticks)(ticks, labels)
    ax.legend(fontsize=8)


def _figures(features_dir: Path, table: pd.DataFrame, regressions: dict, rows: dict[str, pd.DataFrame]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    accuracy = table.pivot_table(index="row", columns="dataset", values="accuracy", sort=False, dropna=False)
    fig, ax = plt.subplots(figsize=(7, 5))
    _bars(ax, list(accuracy.index), {d: accuracy[d].tolist() for d in accuracy.columns}, horizontal=True)
    ax.invert_yaxis()
    ax.axvline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.set_xlim(0, 1)
    ax.set_xlabel("test accuracy (best explanation = correct option)")
    ax.set_title("Table 1: IBE features and composed model")
    fig.tight_layout()
    fig.savefig(features_dir / "table1.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 3.5))
    zs = {d: [r.z for r in found] for d, found in regressions.items()}
    _bars(ax, [LABELS[f] for f in FEATURES], zs, horizontal=False)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel("z (logistic regression)")
    ax.set_title("Figure 2: correctness regressed on each IBE feature")
    ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    fig.savefig(features_dir / "figure2.png", dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(1, len(FEATURES), figsize=(12, 3))
    for ax, feature in zip(axes, FEATURES):
        means = {d: frame.groupby("correct")[feature].mean() for d, frame in rows.items()}
        _bars(
            ax, ["incorrect", "correct"], {d: [m.get(0, math.nan), m.get(1, math.nan)] for d, m in means.items()}, False
        )
        ax.set_title(LABELS[feature], fontsize=9)
    fig.suptitle("Mean feature by option correctness")
    fig.tight_layout()
    fig.savefig(features_dir / "features_by_correctness.png", dpi=120)
    plt.close(fig)
    return ["table1.png", "figure2.png", "features_by_correctness.png"]


def _selector_lines(protocol: str, selectors: dict[str, Selector], datasets: list[str]) -> list[str]:
    fits = {id(s): s for s in selectors.values()}.values()
    if protocol == "a9" and len(datasets) > 1:
        head = "Selector: Appendix A.9, one linear regression fitted on the training explanations of all datasets"
    elif protocol == "a9":
        head = (
            f"Selector: fitted on {_name(datasets[0])}'s training explanations only "
            "(the paper's A.9 selector is fitted on COPA and e-CARE together; score both datasets into one folder)"
        )
    else:
        head = "Selector: one linear regression per dataset, fitted on that dataset's training explanations"
    lines = [head + ", evaluated on each test set.", ""]
    for selector in fits:
        trained = " + ".join(_name(d) for d in selector.trained_on)
        weights = ", ".join(f"{LABELS[f]} {c:+.3f}" for f, c in selector.coefficients.items())
        lines.append(
            f"Composed model fitted on {trained} ({selector.train_explanations} explanations): "
            f"{weights}, intercept {selector.intercept:+.3f}."
        )
    return lines


def write_report(features_dir: Path, fig2_split: str = "test", protocol: str = "a9") -> Path:
    rows = load_rows(features_dir)
    train, test = split_frames(rows)
    table = ablation(rows, protocol)
    selectors = fit_selectors(rows, FEATURES, protocol)
    tests = by_dataset(test)
    datasets = list(tests)
    per_dataset = by_dataset(rows)
    regression_rows = per_dataset if fig2_split == "all" else by_dataset(rows[rows["split"] == fig2_split])
    regressions = {d: feature_regressions(regression_rows.get(d, rows.iloc[0:0])) for d in datasets}
    provenance = read_provenance(features_dir)
    judged = judge_accuracy(features_dir)
    judge_model = provenance.get("judge_model")
    figures = _figures(features_dir, table, regressions, {d: per_dataset[d] for d in datasets})
    flagged = rows[rows["flag"].fillna("") != ""]
    reasons = Counter(
        reason.split(":")[0].split("(")[0].strip()
        for flag in flagged["flag"]
        for reason in str(flag).split("; ")
        if reason
    )
    imputed = {f: int(rows[f].isna().sum()) for f in FEATURES}
    sources = sorted(rows["uncertainty_source"].dropna().unique())
    names = [_name(d) for d in datasets]
    coherence_judges = sorted(rows["coherence_judge"].dropna().unique())

    counts = "; ".join(
        f"{_name(d)}: {len(frame)} explanations, {frame[frame['split'] == 'train']['qid'].nunique()} train and "
        f"{frame[frame['split'] == 'test']['qid'].nunique()} test questions"
        for d, frame in per_dataset.items()
    )
    lines = [
        "# IBE-Eval report",
        "",
        f"Explanations: {len(rows)} ({len(train)} train, {len(test)} test). {counts}.",
        "",
        f"Explanations by: {provenance.get('model', 'unknown model')}. "
        f"Coherence judge: {'; '.join(coherence_judges)}. "
        f"Formalization: {', '.join(sorted(rows['formalization'].dropna().unique()))}.",
        "",
        *_selector_lines(protocol, selectors, datasets),
        "",
    ]
    if coherence_judges != [PAPER_NLI_MODEL]:
        lines += [f"**Coherence is not judged by the paper's NLI model** ({PAPER_NLI_MODEL}).", ""]
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
        "The paper's columns are the explanation generators; its LLM-judge baseline is GPT 3.5 judging "
        "each generator's explanations. This run's judge row is the model of the `ibe_judge_*` run.",
        "",
        "| Block | Row | " + " | ".join(f"This run: {n}" for n in names) + " | " + " | ".join(IBE_COLUMNS) + " |",
        "|---|---|" + "---|" * (len(names) + len(IBE_COLUMNS)),
    ]
    paper_blank = " | ".join("" for _ in IBE_COLUMNS)
    if judged:
        cells = [f"{_fmt(judged[d][0])} (n={judged[d][1]})" if d in judged else "not run" for d in datasets]
        lines.append(
            f"| Baselines | LLM judge: {judge_model or UNKNOWN_JUDGE} (this run) | "
            + " | ".join(cells)
            + f" | {paper_blank} |"
        )
    paper_judge = " | ".join(_fmt(v) for v in PAPER_TABLE1["GPT3.5 Judge"])
    lines.append(
        f"| Baselines | LLM judge: {PAPER_JUDGE} (paper) | " + " | ".join("" for _ in names) + f" | {paper_judge} |"
    )
    for (block, row), group in table.groupby(["block", "row"], sort=False):
        ours = group.set_index("dataset")["accuracy"]
        paper = PAPER_TABLE1.get(row, (math.nan,) * len(IBE_COLUMNS))
        lines.append(
            f"| {block} | {row} | "
            + " | ".join(_fmt(ours.get(d)) for d in datasets)
            + " | "
            + " | ".join(_fmt(v) for v in paper)
            + " |"
        )
    lines += [
        "",
        "Ties between options earn 1/k credit (expected accuracy of a random tie-break).",
        "",
        f"## Figure 2: correctness regressed on each feature ({fig2_split} explanations, logistic GLM)",
        "",
        "| Dataset | Feature | coef | z | p | n | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for dataset, found in regressions.items():
        for r in found:
            p = "n/a" if math.isnan(r.p) else f"{r.p:.3g}"
            lines.append(
                f"| {_name(dataset)} | {LABELS[r.feature]} | {_fmt(r.coefficient)} | {_fmt(r.z)}{r.stars} | {p} "
                f"| {r.n} | {r.note} |"
            )
    lines += [
        "",
        "Significance: *** p < 0.001, ** p < 0.01, * p < 0.05.",
        "",
        "## Mean features by option correctness",
        "",
        "| Feature | " + " | ".join(f"{n} correct | {n} incorrect" for n in names) + " |",
        "|---|" + "---|---|" * len(names),
    ]
    for feature in FEATURES:
        cells = []
        for dataset in datasets:
            means = per_dataset[dataset].groupby("correct")[feature].mean()
            cells += [_fmt(means.get(1, math.nan)), _fmt(means.get(0, math.nan))]
        lines.append(f"| {LABELS[feature]} | " + " | ".join(cells) + " |")
    lines += ["", *(f"![{name}]({name})" for name in figures), ""]
    report = features_dir / "report.md"
    report.write_text("\n".join(lines), encoding="utf-8")

    summary: dict[str, Any] = {
        **provenance,
        "selector": {
            "protocol": protocol,
            "fits": {
                dataset: {
                    "trained_on": list(selector.trained_on),
                    "train_explanations": selector.train_explanations,
                    "coefficients": selector.coefficients,
                    "intercept": selector.intercept,
                }
                for dataset, selector in selectors.items()
            },
        },
        "datasets": {
            dataset: {
                "table1": table[table["dataset"] == dataset][["block", "row", "accuracy"]].to_dict(orient="records"),
                "test_questions": int(tests[dataset]["qid"].nunique()),
                "judge": (
                    {"model": judge_model, "accuracy": judged[dataset][0], "questions": judged[dataset][1]}
                    if dataset in judged
                    else None
                ),
                "figure2": [
                    {"feature": r.feature, "coefficient": r.coefficient, "z": r.z, "p": r.p, "n": r.n, "note": r.note}
                    for r in regressions[dataset]
                ],
            }
            for dataset in datasets
        },
        "flagged": len(flagged),
        "uncertainty_sources": sources,
        "coherence_judges": coherence_judges,
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
