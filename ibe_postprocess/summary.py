"""What ``ibe report`` computes from a features folder: the Table 1 ablation, the selector
fits, the Figure 2 regressions, the judge's accuracy, §6's self-evident explanations, Figure
19's cause vs effect accuracy, the hedge cues and the counts the report states.

Computing is kept apart from writing (``render`` draws the markdown and figures,
``report_file`` the JSON) so that each can be read, and tested, on its own.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ibe_postprocess import report_file
from ibe_postprocess.analyses import direction_accuracy, hedge_cues, self_evident
from ibe_postprocess.features_file import Features
from ibe_postprocess.questions import dataset_of
from ibe_postprocess.selector import (
    FEATURES,
    Selector,
    ablation,
    by_dataset,
    feature_regressions,
    fit_selectors,
    split_frames,
)


@dataclass(frozen=True)
class Summary:
    features: Features
    rows: pd.DataFrame
    protocol: str
    fig2_split: str
    table: pd.DataFrame  # Table 1: block, row, dataset, accuracy
    selectors: dict[str, Selector]  # the fit answering each dataset's test questions
    datasets: list[str]  # datasets with test questions, in name order
    per_dataset: dict[str, pd.DataFrame]  # every row, per dataset
    judged: dict[str, report_file.JudgeScore]  # the LLM judge on each judged dataset's test questions
    reports: dict[str, report_file.DatasetReport]  # per dataset with test questions: what report.json holds
    flagged: int
    reasons: Counter
    imputed: dict[str, int]
    uncertainty_sources: list[str]
    coherence_judges: list[str]
    formalizations: list[str]

    @property
    def provenance(self) -> dict[str, Any]:
        return self.features.header.origin.provenance


def judge_accuracy(decisions: list[dict[str, Any]], model: str | None = None) -> dict[str, report_file.JudgeScore]:
    """Per dataset: the share of test questions the judge (``model``) answered correctly, how
    many, and how many of its answers named no explanation (counted as wrong)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for record in decisions:
        found.setdefault(dataset_of(str(record["qid"])), []).append(record)
    return {
        name: report_file.JudgeScore(
            model,
            sum(r["choice"] == r["gold"] for r in records) / len(records),
            len(records),
            sum(r["choice"] is None for r in records),
            records[0].get("method", "loglik"),  # ``inputs.read_inputs`` refuses a mix
        )
        for name, records in sorted(found.items())
    }


def _reason(flag: str) -> str:
    """A flag without its particulars: "step 2 has no assumption" and "step 3 ..." stay apart,
    "step without IF-THEN: '...'" are counted together."""
    return flag.split(":")[0].split("(")[0].strip()


def summarize(features: Features, fig2_split: str = "test", protocol: str = "a9") -> Summary:
    rows = features.frame()
    test = split_frames(rows)[1]
    tests = by_dataset(test)
    datasets = list(tests)
    per_dataset = by_dataset(rows)
    regression_rows = per_dataset if fig2_split == "all" else by_dataset(rows[rows["split"] == fig2_split])
    flagged = rows[rows["flag"].fillna("") != ""]
    selectors = fit_selectors(rows, FEATURES, protocol)
    table = ablation(rows, protocol)
    judged = judge_accuracy(features.judged, features.header.origin.provenance.get("judge_model"))
    reports = {
        d: report_file.DatasetReport(
            tuple(
                report_file.TableRow(r.block, r.row, float(r.accuracy))
                for r in table[table["dataset"] == d].itertuples()
            ),
            int(tests[d]["qid"].nunique()),
            judged.get(d),
            tuple(feature_regressions(regression_rows.get(d, rows.iloc[0:0]))),
            self_evident(per_dataset[d], tests[d], selectors[d]),
            direction_accuracy(tests[d], selectors[d]),
            hedge_cues(per_dataset[d]),
        )
        for d in datasets
    }
    return Summary(
        features=features,
        rows=rows,
        protocol=protocol,
        fig2_split=fig2_split,
        table=table,
        selectors=selectors,
        datasets=datasets,
        per_dataset=per_dataset,
        judged=judged,
        reports=reports,
        flagged=len(flagged),
        reasons=Counter(_reason(reason) for flag in flagged["flag"] for reason in str(flag).split("; ") if reason),
        imputed={f: int(rows[f].isna().sum()) for f in FEATURES},
        uncertainty_sources=sorted(rows["uncertainty_source"].dropna().unique()),
        coherence_judges=sorted(rows["coherence_judge"].dropna().unique()),
        formalizations=sorted(rows["formalization"].dropna().unique()),
    )


def to_report(summary: Summary) -> report_file.Report:
    """The schema object written as report.json."""
    header = summary.features.header
    provenance = summary.provenance
    return report_file.Report(
        features=report_file.FeaturesRef(header.rows or 0, header.rows_sha256 or "", header.origin.inputs_sha256),
        datasets=summary.reports,
        model=provenance.get("model"),
        tasks=tuple(provenance.get("tasks") or ()),
        judge_model=provenance.get("judge_model"),
        runs=tuple(report_file.GenerationRun(**run) for run in provenance.get("runs") or ()),
        selector={
            "protocol": summary.protocol,
            "fits": {
                dataset: {
                    "trained_on": list(selector.trained_on),
                    "train_explanations": selector.train_explanations,
                    "coefficients": selector.coefficients,
                    "intercept": selector.intercept,
                }
                for dataset, selector in summary.selectors.items()
            },
        },
        flagged=summary.flagged,
        imputed=summary.imputed,
        uncertainty_sources=tuple(summary.uncertainty_sources),
        coherence_judges=tuple(summary.coherence_judges),
    )
