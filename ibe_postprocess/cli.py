"""``explain-eval ibe``: ``score`` explanations into features, ``report`` the selector."""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter
from dataclasses import fields
from pathlib import Path

from custom_metrics.common.arguments import positive_int
from custom_metrics.common.errors import DataError
from ibe_postprocess.folder import CACHE, FEATURES, FEATURES_CSV, JUDGE, REPORT, REPORT_MD, FeaturesFolder
from ibe_postprocess.uncertainty import AGGREGATIONS, DEFAULT_AGGREGATION, DEFAULT_INVERSION, INVERSIONS
from ibe_postprocess.workers import usable_cores


def _score(args: argparse.Namespace) -> None:
    from ibe_postprocess.features import ScoreSettings, score
    from ibe_postprocess.inputs import read_inputs
    from ibe_postprocess.provenance import provenance_of

    for path in args.inputs:
        if not path.exists() and set(str(path)) & set("*?["):  # a shell glob that matched no file
            raise DataError(
                f"{path}: no file matches this pattern. lm_eval writes samples_<task>_<time>.jsonl only when it "
                "runs with --log_samples (beside the results under --output_path): check that the run had "
                "--log_samples and that the pattern names its --output_path."
            )
    records, judged = read_inputs(args.inputs)
    settings = ScoreSettings(**{field.name: getattr(args, field.name) for field in fields(ScoreSettings)})
    rows = score(records, args.out, settings, judged, provenance_of(args.inputs))
    folder = FeaturesFolder(args.out)
    flags = Counter(reason for row in rows for reason in str(row["flag"] or "").split("; ") if reason)
    flagged = sum(bool(row["flag"]) for row in rows)
    print(f"{len(rows)} explanations scored ({flagged} flagged) -> {folder.features} ({folder.features_csv.name})")
    if flagged:
        common = "; ".join(f"{reason} ({count})" for reason, count in flags.most_common(3))
        print(
            f"flagged: scored, but something was off, said in the row's 'flag' field (an explanation cut at the caps "
            f"or not in IF-THEN steps, a proof search stopped, an NLI verdict unparsed); most often: {common}"
        )
    if judged:
        print(f"{len(judged)} judge decisions -> {folder.judge}")


def _report(args: argparse.Namespace) -> None:
    from ibe_postprocess.report import write_report

    print(write_report(args.features_dir, args.fig2_split, args.selector))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="explain-eval ibe", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    score = commands.add_parser("score", help="compute IBE features for logged explanations")
    score.add_argument(
        "inputs", nargs="+", type=Path, help="lm-eval samples_ibe_*.jsonl (generation and judge tasks) or plain JSONL"
    )
    score.add_argument(
        "--out", type=Path, required=True, help=f"output folder ({FEATURES}, {FEATURES_CSV}, {JUDGE}, {CACHE}/)"
    )
    score.add_argument(
        "--nli-judge",
        default=None,
        help="NLI judge spec for coherence (default: the paper's "
        "seqcls:ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli, or the embedded LM where it cannot "
        "be loaded, as every row records; 'embedded' forces the embedded LM)",
    )
    score.add_argument(
        "--certainty-model",
        default=None,
        help="sentence-level certainty model (hub id or path), or 'lexicon' (default: the paper's "
        "pedropei/sentence-level-certainty, or the lexicon estimate where it cannot be loaded, as every row "
        "records; a model named here is loaded before anything is scored, or the run stops)",
    )
    score.add_argument(
        "--uncertainty-aggregation",
        choices=AGGREGATIONS,
        default=DEFAULT_AGGREGATION,
        help="how an explanation's sentence uncertainties combine: 'sum' (default: the paper's Section 4 "
        "equation, the assumptions summed plus the summary), 'mean' (its Algorithm 4: the assumptions' mean plus "
        "the summary) or 'mean-all' (its Appendix A.8: the mean of every sentence, summary included); recorded in "
        "the features file's header",
    )
    score.add_argument(
        "--uncertainty-inversion",
        choices=tuple(INVERSIONS),
        default=DEFAULT_INVERSION,
        help="how a sentence's certainty c (1-6) becomes its uncertainty: '6-c' (default: 0-5, as the authors' "
        "PEIRCE code) or '7-c' (1-6, the scale reversed); the paper says only that it inverts the scale; "
        "recorded in the features file's header",
    )
    score.add_argument(
        "--formalizer",
        default="deterministic",
        help="'deterministic' (from the parsed steps), or autoformalization with the paper's prompt by "
        "'lm:<hf id or path>' (in process) or 'openai:<model>@<base_url>' (an OpenAI-compatible chat endpoint; "
        "options ?max_tokens=N&concurrency=N&key_env=NAME, key from OPENAI_API_KEY); outputs are cached in "
        "--out, so a rerun sends no request",
    )
    score.add_argument(
        "--encoder",
        default=None,
        help="sentence-transformers model for predicate similarity (default: all-MiniLM-L6-v2, offline)",
    )
    score.add_argument("--batch-size", type=positive_int, default=32, help="explanations per cached batch")
    score.add_argument(
        "--processes",
        type=positive_int,
        default=usable_cores(),
        help="processes for spaCy and the sentence encoder (default: the usable cores, here "
        f"{usable_cores()}); the features are the same bytes on any number",
    )
    score.set_defaults(run=_score)

    report = commands.add_parser("report", help=f"fit the selector; write {REPORT_MD}, {REPORT} and figures")
    report.add_argument("features_dir", type=Path, help="the --out folder of `explain-eval ibe score`")
    report.add_argument(
        "--fig2-split",
        choices=("test", "train", "all"),
        default="test",
        help="explanations used for the Figure 2 regressions",
    )
    report.add_argument(
        "--selector",
        choices=("a9", "per-dataset"),
        default="a9",
        help="a9 (default, the paper's Appendix A.9): one selector fitted on the training explanations of "
        "every dataset scored into the folder (COPA and e-CARE), evaluated on each test set; "
        "per-dataset: one selector per dataset",
    )
    report.set_defaults(run=_report)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except (DataError, ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0
