"""The sample viewer: one page per logged task run (``samples/<paper>-<model>-<setting>-<task>.html``)
and an index of them, so a 4,000-document run loads only the task being read.

Files are named as the pages name them everywhere (below their input folder, no machine
path), judges by their friendly spec (the paper's ``SampleView`` does that for its fields).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from custom_metrics.leaderboard import datatable
from custom_metrics.leaderboard.datatable import TableColumn
from custom_metrics.leaderboard.differences import row_label
from custom_metrics.leaderboard.display import Paths
from custom_metrics.leaderboard.samples import PROBLEM, PROMPT, LoggedTask


def page_names(logged: Sequence[LoggedTask]) -> dict[LoggedTask, str]:
    pages: dict[LoggedTask, str] = {}
    used: set[str] = set()
    for task in logged:
        stem = _slug(f"{task.spec.key}-{task.run.model}-{task.run.setting}-{task.run.task}")[:120]
        name, counter = f"{stem}.html", 1
        while name in used:
            counter += 1
            name = f"{stem}-{counter}.html"
        used.add(name)
        pages[task] = name
    return pages


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_.") or "run"


def sample_page(task: LoggedTask, head: str, paths: Paths) -> str:
    run = task.run
    title = f"{task.spec.task_label(run.task)} — {row_label(run.model, run.setting)}"
    names = task.columns
    kinds = {name: _kind([row.get(name) for row in task.rows]) for name in names}
    columns = [
        TableColumn(
            name,
            "The prompt the model saw (shown with the Columns button)." if name == PROMPT else "",
            kind=kinds[name],
            visible=name != PROMPT,
        )
        for name in names
    ]
    facets = [names.index(name) for name in task.facets]
    rows = [[row.get(name) for name in names] for row in task.rows]
    classes = ["problem" if row.get(PROBLEM) else "" for row in task.rows]
    meta = [
        ("task", f"{run.task} ({task.spec.title})"),
        ("model", row_label(run.model, run.setting)),
        ("results file", paths.show(run.path)),
        ("samples file", paths.show(task.path)),
        ("documents", f"{len(task.rows)}" + (f" (⚠ {run.subset})" if run.subset else "")),
    ]
    if task.problems:
        meta.append(("unreadable lines", f"{task.problems} (shown as rows with a problem)"))
    return "\n".join(
        [
            head,
            f'<body><header><h1>Samples: {html.escape(title)}</h1><nav aria-label="Pages">'
            f'<a href="../index.html#{task.spec.key}">← leaderboard</a> · '
            '<a href="index.html">all logged runs</a></nav></header><main>',
            "<dl class='meta'>"
            + "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in meta)
            + "</dl>",
            "<p class='lead'>The search box matches every column, the hidden prompt included; click values in "
            "the panes to filter (e.g. coherent: no, flagged: yes); the Columns button shows the prompt.</p>",
            datatable.datatable("samples", columns, rows, page_length=10, facets=facets, row_classes=classes),
            "</main></body></html>",
        ]
    )


def _kind(values: list) -> str:
    """A column sorts as numbers when every value it holds is one (cells cannot be booleans)."""
    present = [value for value in values if value is not None]
    return "number" if present and all(isinstance(value, (int, float)) for value in present) else "text"


def samples_index(logged: Sequence[LoggedTask], pages: dict[LoggedTask, str], head: str) -> str:
    parts = [
        head,
        '<body><header><h1>Sample viewer</h1><nav aria-label="Pages"><a href="../index.html">← leaderboard</a></nav>'
        "<p>One page per logged task run, loaded on its own so large runs stay usable.</p></header><main>",
    ]
    if not logged:
        parts.append("<p><em>No samples files were found beside the results files (lm_eval --log_samples).</em></p>")
    parts.append(
        "<div class='table-scroll' role='region' aria-label='Logged task runs' tabindex='0'>"
        "<table class='plain'><thead><tr><th scope='col'>paper</th><th scope='col'>model</th>"
        "<th scope='col'>task</th><th scope='col'>docs</th><th scope='col'>data</th></tr></thead><tbody>"
    )
    for task in sorted(logged, key=lambda t: (t.spec.key, t.run.model, t.run.setting, t.run.task)):
        parts.append(
            f"<tr><td>{html.escape(task.spec.key.upper())}</td>"
            f"<td>{html.escape(row_label(task.run.model, task.run.setting))}</td>"
            f'<td><a href="{pages[task]}">{html.escape(task.spec.task_label(task.run.task))}</a> '
            f"<code>{html.escape(task.run.task)}</code></td><td>{len(task.rows)}</td>"
            f"<td>{html.escape('⚠ ' + task.run.subset if task.run.subset else 'all docs')}</td></tr>"
        )
    parts.append("</tbody></table></div></main></body></html>")
    return "\n".join(parts)
