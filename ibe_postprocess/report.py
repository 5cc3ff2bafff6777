"""The ``report`` stage: read a features folder, fit the selector, write report.md, its
figures and report.json.

Three steps, each in its own module: ``features_file.read`` refuses rows that are cut,
unfinished or stale; ``summary`` computes every number (Table 1 per dataset, the selector
fits, the Figure 2 regressions, the judge baseline); ``render`` draws the markdown and the
figures and ``report_file`` writes the JSON the leaderboard reads. Both files are written
through a temporary file and a rename, report.json last.
"""

from __future__ import annotations

from pathlib import Path

from ibe_postprocess import features_file, render, report_file
from ibe_postprocess.folder import FeaturesFolder, write_file
from ibe_postprocess.summary import summarize, to_report


def write_report(features_dir: Path, fig2_split: str = "test", protocol: str = "a9") -> Path:
    """Write the report of ``features_dir``; returns the path of report.md."""
    folder = FeaturesFolder(Path(features_dir))
    summary = summarize(features_file.read(folder), fig2_split, protocol)
    names = render.figures(folder, summary)
    write_file(folder.report_md, render.markdown(summary, names))
    report_file.write(folder, to_report(summary))
    return folder.report_md
