"""The report a person reads: ``report.md`` and its three figures, drawn from a ``Summary``.

Everything is shown per dataset (COPA, e-CARE), as the columns of the paper's Table 1,
with the paper's numbers beside this run's. The LLM-as-a-judge baseline is labelled by who
judged: the paper's is always GPT 3.5, this run's is the model of the ``ibe_judge_*`` run.
"""

from __future__ import annotations

import math

from ibe_postprocess.coherence import PAPER_NLI_MODEL
from ibe_postprocess.folder import FIGURES, FeaturesFolder
from ibe_postprocess.paper import IBE_COLUMNS, JUDGE_ROW, PAPER_JUDGE, SECTION_6, figure_19, table_1
from ibe_postprocess.report_file import DIRECTIONS, GenerationRun, JudgeScore
from ibe_postprocess.selector import FEATURES, LABELS, Selector
from ibe_postprocess.summary import Summary
from ibe_postprocess.uncertainty import AGGREGATION_NAMES, HEDGE_CUES, INVERSION_NAMES

DATASET_NAMES = {"copa": "COPA", "ecare": "e-CARE"}
UNKNOWN_MODEL = "unknown model"  # samples without their results file beside them: no name recorded


def _fmt(value: float | None, spec: str = ".2f") -> str:
    missing = value is None or (isinstance(value, float) and math.isnan(value))
    return "n/a" if missing else format(value, spec)


def _pct(value: float | None) -> str:
    return _fmt(value, ".1%")


def _row(*cells: object) -> str:
    """A line of a markdown table."""
    return "| " + " | ".join(map(str, cells)) + " |"


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


def _by_correctness(summary: Summary, feature: str) -> dict[str, list[float]]:
    """Per dataset: the feature's mean over the incorrect, then the correct options' explanations."""
    means = {d: summary.per_dataset[d].groupby("correct")[feature].mean() for d in summary.datasets}
    return {d: [found.get(0, math.nan), found.get(1, math.nan)] for d, found in means.items()}


def figures(folder: FeaturesFolder, summary: Summary) -> list[str]:
    """table1.png, figure2.png and features_by_correctness.png; their names, in that order."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    accuracy = summary.table.pivot_table(index="row", columns="dataset", values="accuracy", sort=False, dropna=False)
    table1, ax = plt.subplots(figsize=(7, 5))
    _bars(ax, list(accuracy.index), {d: accuracy[d].tolist() for d in accuracy.columns}, horizontal=True)
    ax.invert_yaxis()
    ax.axvline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.set_xlim(0, 1)
    ax.set_xlabel("test accuracy (best explanation = correct option)")
    ax.set_title("Table 1: IBE features and composed model")

    figure2, ax = plt.subplots(figsize=(7, 3.5))
    zs = {d: [r.z for r in summary.reports[d].figure2] for d in summary.datasets}
    _bars(ax, [LABELS[f] for f in FEATURES], zs, horizontal=False)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel("z (logistic regression)")
    ax.set_title("Figure 2: correctness regressed on each IBE feature")
    ax.tick_params(axis="x", labelsize=7)

    by_correctness, axes = plt.subplots(1, len(FEATURES), figsize=(12, 3))
    for ax, feature in zip(axes, FEATURES):
        _bars(ax, ["incorrect", "correct"], _by_correctness(summary, feature), horizontal=False)
        ax.set_title(LABELS[feature], fontsize=9)
    by_correctness.suptitle("Mean feature by option correctness")
    for fig, name in zip((table1, figure2, by_correctness), FIGURES):
        fig.tight_layout()
        fig.savefig(folder.root / name, dpi=120)
        plt.close(fig)
    return list(FIGURES)


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


def _head(summary: Summary) -> list[str]:
    provenance, rows = summary.provenance, summary.rows
    splits = rows["split"].value_counts()
    counts = "; ".join(
        f"{_name(d)}: {len(frame)} explanations, {frame[frame['split'] == 'train']['qid'].nunique()} train and "
        f"{frame[frame['split'] == 'test']['qid'].nunique()} test questions"
        for d, frame in summary.per_dataset.items()
    )
    lines = [
        "# IBE-Eval report",
        "",
        f"Explanations: {len(rows)} ({splits.get('train', 0)} train, {splits.get('test', 0)} test). {counts}.",
        "",
        f"Explanations by: {provenance.get('model') or UNKNOWN_MODEL}. "
        f"Coherence judge: {'; '.join(summary.coherence_judges)}. "
        f"Formalization: {', '.join(summary.formalizations)}.",
        "",
        *_selector_lines(summary.protocol, summary.selectors, summary.datasets),
        "",
        *cut_lines(provenance),
    ]
    if summary.coherence_judges != [PAPER_NLI_MODEL]:
        lines += [f"**Coherence is not judged by the paper's NLI model** ({PAPER_NLI_MODEL}).", ""]
    sources = summary.uncertainty_sources
    if any(source.startswith("lexicon") for source in sources):
        lines += [
            "**Uncertainty is the lexicon-based estimate, not the certainty model of Pei & Jurgens** "
            f"(source: {'; '.join(sources)}). See the task README for its definition.",
            "",
        ]
    else:
        lines += [f"Uncertainty model: {', '.join(sources)}.", ""]
    settings = summary.features.header.origin.settings
    aggregation = AGGREGATION_NAMES.get(settings.get("uncertainty_aggregation"), "mean (Algorithm 4; not recorded)")
    # Files written before the inversion was a setting were computed with 6 - c.
    inversion = INVERSION_NAMES.get(settings.get("uncertainty_inversion"), "6 − certainty (not recorded)")
    lines += [f"Uncertainty over sentences: {aggregation}; a sentence's uncertainty: {inversion}.", ""]
    reasons = ", ".join(f"{reason} ({count})" for reason, count in summary.reasons.most_common())
    lines += [
        f"Flagged explanations: {summary.flagged} of {len(rows)}." + (f" Reasons: {reasons}." if reasons else ""),
        "Missing feature values replaced by training means: "
        + ", ".join(f"{f} {n}" for f, n in summary.imputed.items())
        + ".",
        "",
    ]
    return lines


def cut_lines(provenance: dict) -> list[str]:
    """What the report says of generation runs on part of their task (``--limit``, ``--samples``):
    its numbers are not comparable with a full run's or the paper's ([] when every run was whole)."""
    cut = [subset for run in provenance.get("runs") or () if (subset := GenerationRun(**run).subset)]
    if not cut:
        return []
    return [
        f"**Explanations of runs on part of the data** ({'; '.join(cut)}): not comparable with a full run's "
        "numbers or the paper's.",
        "",
    ]


def _judge_cell(judged: JudgeScore) -> str:
    unparsed = f", {judged.unparsed} unparsed" if judged.method == "generated" else ""
    return f"{_fmt(judged.accuracy)} (n={judged.questions}{unparsed})"


def _table_1(summary: Summary) -> list[str]:
    names = [_name(d) for d in summary.datasets]
    paper = table_1()
    lines = [
        "## Table 1: accuracy of selecting the correct option's explanation (test questions)",
        "",
        "The paper's columns are the explanation generators; its LLM-judge baseline is GPT 3.5 judging "
        "each generator's explanations. This run's judge row is the model of the `ibe_judge_*` run.",
        "",
        _row("Block", "Row", *(f"This run: {n}" for n in names), *IBE_COLUMNS),
        "|---|---|" + "---|" * (len(names) + len(IBE_COLUMNS)),
    ]
    judged = summary.judged
    if judged:
        judge_model = summary.provenance.get("judge_model") or UNKNOWN_MODEL
        generated = any(j.method == "generated" for j in judged.values())
        how = ", generated answers" if generated else ""
        cells = [_judge_cell(judged[d]) if d in judged else "not run" for d in summary.datasets]
        lines.append(_row("Baselines", f"LLM judge: {judge_model} (this run{how})", *cells, *[""] * len(IBE_COLUMNS)))
    paper_judge = map(_fmt, paper[JUDGE_ROW])
    lines.append(_row("Baselines", f"LLM judge: {PAPER_JUDGE} (paper)", *[""] * len(names), *paper_judge))
    for (block, row), group in summary.table.groupby(["block", "row"], sort=False):
        ours = group.set_index("dataset")["accuracy"]
        published = paper.get(row, (math.nan,) * len(IBE_COLUMNS))
        lines.append(_row(block, row, *(_fmt(ours.get(d)) for d in summary.datasets), *map(_fmt, published)))
    lines += ["", "Ties between options earn 1/k credit (expected accuracy of a random tie-break).", ""]
    return lines


def _figure_2(summary: Summary) -> list[str]:
    lines = [
        f"## Figure 2: correctness regressed on each feature ({summary.fig2_split} explanations, logistic GLM)",
        "",
        "| Dataset | Feature | coef | z | p | n | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for dataset in summary.datasets:
        for r in summary.reports[dataset].figure2:
            z = f"{_fmt(r.z)}{r.stars}"
            lines.append(_row(_name(dataset), LABELS[r.feature], _fmt(r.coefficient), z, _fmt(r.p, ".3g"), r.n, r.note))
    lines += ["", "Significance: *** p < 0.001, ** p < 0.01, * p < 0.05.", ""]
    return lines


def _means(summary: Summary) -> list[str]:
    names = [_name(d) for d in summary.datasets]
    lines = [
        "## Mean features by option correctness",
        "",
        _row("Feature", *(f"{n} correct | {n} incorrect" for n in names)),
        "|---|" + "---|---|" * len(names),
    ]
    for feature in FEATURES:
        means = _by_correctness(summary, feature).values()  # correct first in this table
        lines.append(_row(LABELS[feature], *(_fmt(mean) for pair in means for mean in reversed(pair))))
    return lines


def _self_evident(summary: Summary) -> list[str]:
    paper = SECTION_6
    lines = [
        "## Section 6: self-evident explanations (proof depth 1 and concept drift 0)",
        "",
        "Shares of all explanations; errors: the composed model's wrong picks on the test questions "
        "(a tie among k explanations counts 1/k each).",
        "",
        "| Dataset | Explanations | Drift 0 | Depth 1 | Self-evident | Errors picking a self-evident explanation |",
        "|---|---|---|---|---|---|",
    ]
    for dataset in summary.datasets:
        found = summary.reports[dataset].self_evident
        errors = f"{found.self_evident_errors:g} of {found.errors:g} ({_pct(found.error_share)})"
        shares = (_pct(share) for share in (found.drift_zero, found.depth_one, found.self_evident))
        lines.append(_row(_name(dataset), found.explanations, *shares, errors))
    lines.append(
        f"| Paper (all three LLMs) | | {paper['drift_zero']} | {paper['depth_one']} | {paper['self_evident']} "
        f"| {paper['error_share']} |"
    )
    return [*lines, ""]


def _figure_19(summary: Summary) -> list[str]:
    lines = [
        "## Figure 19: accuracy on cause and on effect questions (composed model, test questions)",
        "",
        "| | " + " | ".join(f"{d.capitalize()}: accuracy (questions)" for d in DIRECTIONS) + " | Direction unknown |",
        "|---|" + "---|" * (len(DIRECTIONS) + 1),
    ]
    for dataset in summary.datasets:
        found = summary.reports[dataset].directions
        cells = [f"{_pct(found.accuracy[d])} ({found.questions[d]})" for d in DIRECTIONS]
        lines.append(_row(f"This run: {_name(dataset)}", *cells, found.unknown))
    for model, values in figure_19().items():
        printed = " | ".join(f"{value:.0%}" for value in values)  # as the figure prints them
        lines.append(f"| Paper: COPA, {model}'s explanations | {printed} | |")
    return [*lines, ""]


def _hedges(summary: Summary) -> list[str]:
    names = [_name(d) for d in summary.datasets]
    lines = [
        "## Hedge cues (Figures 6, 17, 18; counted with the suite's lexicon)",
        "",
        "| | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    hedges = [summary.reports[d].hedges for d in summary.datasets]
    for name in ("correct", "incorrect"):
        ratios = (_fmt(getattr(h, f"ratio_{name}"), ".3f") for h in hedges)
        lines.append(_row(f"Hedge-cue ratio, {name} options", *ratios))
    for category in HEDGE_CUES:
        lines.append(
            _row(f"Share of {category} cues, incorrect options", *(_pct(h.incorrect_shares[category]) for h in hedges))
        )
    return [*lines, ""]


def markdown(summary: Summary, figure_names: list[str]) -> str:
    lines = [*_head(summary), *_table_1(summary), *_figure_2(summary), *_self_evident(summary), *_figure_19(summary)]
    lines += [*_means(summary), "", *_hedges(summary), *(f"![{name}]({name})" for name in figure_names), ""]
    return "\n".join(lines)
