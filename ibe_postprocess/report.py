"""The ``report`` stage: read a features folder (``features_file`` refuses cut, unfinished or
stale rows), compute every number (``summary``), draw report.md and its figures (``render``) and
write report.json (``report_file``) last, each file through a temporary file and a rename.
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
