"""REG's published rows, read from the tables as printed (``tables/*.csv``): Tables 1 (judge
accuracy), 2 (explanation quality, judge Gemma-4-31B-it) and 3 (output lengths) as a row per
model and mode, and ChaosNLI's own model rows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from custom_metrics.common.published import PublishedCell, PublishedRow, read_table

TABLES = Path(__file__).with_name("tables")
SOURCE = "REG (Chan, Zhao & Gaizauskas, arXiv 2603.22735) Tables 1-3"
# ChaosNLI's own model rows (Nie et al., EMNLP 2020; all 1,599 ChaosNLI-MNLI items), the
# authors' predictions scored by their script (easonnie/ChaosNLI README, "How to reproduce the
# results"): JSD, KL and accuracy against the 100-annotator majority. Fine-tuned MNLI
# classifiers, not prompted judges: references beside reg_judge_humans, never REG's numbers.
CHAOSNLI_N = 1599
CHAOSNLI_SOURCE = "Nie et al. (2020), ChaosNLI-MNLI; easonnie/ChaosNLI model_pref.py"
CHAOSNLI_ORIGIN = "ChaosNLI (Nie et al., 2020)"
CHAOSNLI_METRICS = ("jsd", "kl", "acc")
# Every Table 2 percentage is k/195 and every Table 1 one k/289: the paper's |N| (items its
# judge called contradictions) and judge items, the documents behind each number; Table 3's
# are mean token counts, no shares.
_PUBLISHED_N = {"reg_chaos": 195, "reg_judge_select": 289, "reg_judge_humans": CHAOSNLI_N}
TABLE_3_KEYS = ("reg_chaos/output_tokens_successful", "reg_chaos/output_tokens_unsuccessful")


def chaosnli_rows() -> dict[str, tuple[float, ...]]:
    """ChaosNLI's model rows: model -> (JSD, KL, accuracy)."""
    rows = read_table(TABLES / "chaosnli.csv")
    return {row["model"]: tuple(float(row.number(metric)) for metric in CHAOSNLI_METRICS) for row in rows}


def _stated(cells: dict[str, PublishedCell]) -> dict[str, PublishedCell]:
    """The cells with the items the paper states behind each share."""
    return {
        key: replace(cell, n=None if key in TABLE_3_KEYS else _PUBLISHED_N.get(key.split("/")[0]))
        for key, cell in cells.items()
    }


def published_rows() -> list[PublishedRow]:
    """Table 2's models in both modes, with Table 1's judge accuracy (every judge tested non-thinking)
    on the non-thinking row and Table 3's mean output tokens on the thinking one; then ChaosNLI's."""
    judge = {row["model"]: row.cell("acc", percent=True) for row in read_table(TABLES / "table_1.csv")}
    lengths = {
        row["model"]: {f"reg_chaos/{column}": row.cell(column) for column in list(row.cells)[1:]}
        for row in read_table(TABLES / "table_3.csv")
    }
    rows = []
    for line in read_table(TABLES / "table_2.csv"):
        for mode in ("non-thinking", "thinking"):
            cells = {
                f"reg_chaos/{metric}": line.cell(f"{metric} {mode}", percent=True)
                for metric in ("coherence", "effectiveness", "success")
            }
            if mode == "non-thinking":
                cells["reg_judge_select/answer_acc"] = judge[line["model"]]
            else:
                cells |= lengths[line["model"]]
            source = f"{SOURCE}, {mode}; judge Gemma-4-31B-it"
            rows.append(PublishedRow("reg", line["model"], source, _stated(cells), setting=mode))
    for line in read_table(TABLES / "chaosnli.csv"):
        cells = {f"reg_judge_humans/{metric}": line.cell(metric) for metric in CHAOSNLI_METRICS}
        setting = "fine-tuned on MNLI; ChaosNLI's paper, not REG's"
        source = f"{CHAOSNLI_SOURCE}, all {CHAOSNLI_N:,} items"
        rows.append(PublishedRow("reg", line["model"], source, _stated(cells), setting=setting, origin=CHAOSNLI_ORIGIN))
    return rows
