"""The files of an IBE features folder, named once.

``explain-eval ibe score`` and ``ibe report`` write them, the leaderboard and the sweep's
post-run step find them; every module asks this one for a name, so a renamed file cannot
leave a reader looking for the old one.
"""

from __future__ import annotations

import re
from pathlib import Path

from custom_metrics.common.files import atomic_write_bytes

FEATURES = "features.jsonl"  # the rows the report is computed from (features_file)
FEATURES_CSV = "features.csv"  # the same rows for a spreadsheet; nothing reads it back
JUDGE = "judge.jsonl"  # the LLM judge's choices, when judge samples were scored
REPORT = "report.json"  # what the leaderboard reads (report_file)
REPORT_MD = "report.md"
FIGURES = ("table1.png", "figure2.png", "features_by_correctness.png")
CACHE = "cache"  # costly results of ``score``, batch by batch (resumable)
CACHE_FILES = {
    "embeddings": "predicate-embeddings.jsonl",  # float32 vectors; older runs' embeddings.jsonl is not read
    "proofs": "proofs.jsonl",
    "coherence": "coherence.jsonl",
    "uncertainty": "uncertainty.jsonl",
    "autoformalized": "autoformalized.jsonl",
    "nli_verdicts": "nli-verdicts",  # a folder: the NLI judge's own verdict cache
}
# What a command handed one of these files instead of its input is told it got.
FILE_KINDS = {
    REPORT: ("ibe_report", f"the report of `explain-eval ibe report` ({REPORT})"),
    JUDGE: ("ibe_judge", f"the judge decisions of `explain-eval ibe score` ({JUDGE})"),
}
# What a sweep pair folder holds beside the harness output: the features folder of its samples.
PAIR_SUBFOLDER = "ibe"
# lm-eval's samples files of the IBE tasks: samples_<task>_<timestamp>.jsonl.
SAMPLES_NAME = re.compile(
    r"^samples_(?P<task>ibe_(?:(?P<judge>judge_)(?:copa|ecare)(?:_chat)?|copa|ecare))_(?P<stamp>.+)\.jsonl$"
)


class FeaturesFolder:
    """An ``ibe score --out`` folder and the paths of what lives in it."""

    def __init__(self, root: Path):
        self.root = root
        self.features = root / FEATURES
        self.features_csv = root / FEATURES_CSV
        self.judge = root / JUDGE
        self.report = root / REPORT
        self.report_md = root / REPORT_MD

    def cache(self, kind: str) -> Path:
        return self.root / CACHE / CACHE_FILES[kind]


def write_file(path: Path, data: bytes | str) -> None:
    """``path`` written whole or not at all (``common.files``); an error names ``path`` itself,
    not the temporary file beside it, nor nothing (a full disk fails a write, which names no file)."""
    try:
        atomic_write_bytes(path, data.encode("utf-8") if isinstance(data, str) else data)
    except OSError as err:
        named = Path(err.filename) if err.filename is not None else None
        if named is not None and not (named.parent == path.parent and named.name.startswith(f".{path.name}.")):
            raise  # the system named the culprit (the folder it could not make, say)
        raise OSError(err.errno, err.strerror, str(path)) from err
