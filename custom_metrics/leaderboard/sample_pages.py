"""The sample viewer: the logged samples of each task run, paged
(``samples/<paper>-<model>-<setting>-<task>.html``, then ``….page2.html`` ...), an index of
them, and the document view (``samples/document.html``): one document across every run that
logged it, HELM-style (docs/leaderboard.md, "Sample pages").

A page holds at most ``ROWS_PER_PAGE`` rows and about ``PAGE_BYTES`` of them, whatever the
rows hold, so a huge run opens as fast as a small one. The document view reads its data from
small script files (``samples/docs/``), loaded when asked for. Files are named as the pages
name them everywhere (below their input folder, no machine path).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from custom_metrics.leaderboard import datatable
from custom_metrics.leaderboard.datatable import TableColumn
from custom_metrics.leaderboard.differences import row_label
from custom_metrics.leaderboard.display import Paths
from custom_metrics.leaderboard.samples import PROBLEM, PROMPT, LoggedTask
from custom_metrics.leaderboard.script_data import write_script_data

ROWS_PER_PAGE = 1000
PAGE_BYTES = 2_000_000  # of row data (JSON) per page
DOCS_PER_FILE = 200  # documents per data file of the document view
DOCUMENT_PAGE = "document.html"
ACROSS = "across runs"  # the link column to a row's document view


@dataclass(frozen=True)
class Pages:
    """The page files of one task run, and which rows each holds."""

    names: tuple[str, ...]
    bounds: tuple[tuple[int, int], ...]  # (first row, end) per page


def page_names(logged: Sequence[LoggedTask]) -> dict[LoggedTask, Pages]:
    """Every task run's pages: the first named after the run, the others numbered after it."""
    pages: dict[LoggedTask, Pages] = {}
    used: set[str] = set()
    for task in logged:
        stem = _slug(f"{task.spec.key}-{task.run.model}-{task.run.setting}-{task.run.task}")[:120]
        name, counter = stem, 1
        while name in used:
            counter += 1
            name = f"{stem}-{counter}"
        used.add(name)
        bounds = tuple(_bounds(task.rows))
        names = tuple(f"{name}.html" if i == 0 else f"{name}.page{i + 1}.html" for i in range(len(bounds)))
        pages[task] = Pages(names, bounds)
    return pages


def _bounds(rows: Sequence[dict[str, Any]]) -> Iterator[tuple[int, int]]:
    """Row ranges of at most ``ROWS_PER_PAGE`` rows and about ``PAGE_BYTES`` each (one row at least)."""
    start, size = 0, 0
    for index, row in enumerate(rows):
        weight = len(json.dumps(row, ensure_ascii=False, default=str))
        if index > start and (index - start >= ROWS_PER_PAGE or size + weight > PAGE_BYTES):
            yield start, index
            start, size = index, 0
        size += weight
    yield start, len(rows)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_.") or "run"


def document_slug(task: LoggedTask) -> str:
    """The name of a task's documents in the document view: one per paper and task."""
    return _slug(f"{task.spec.key}-{task.run.task}")


def sample_pages(task: LoggedTask, pages: Pages, head: str, paths: Paths) -> list[tuple[str, str]]:
    """(file name, HTML) of each page of one task run's samples."""
    run = task.run
    title = f"{task.spec.board.task_label(run.task)} — {row_label(run.model, run.setting)}"
    names = task.columns
    columns = [
        TableColumn(
            name,
            "The prompt the model saw (shown with the Columns button)." if name == PROMPT else "",
            kind=_kind([row.get(name) for row in task.rows]),
            visible=name != PROMPT,
        )
        for name in names
    ]
    columns.append(TableColumn(ACROSS, "This document as every run that logged it answered it.", kind="link"))
    facets = [names.index(name) for name in task.facets]
    slug = document_slug(task)
    meta = [
        ("task", f"{run.task} ({task.spec.title})"),
        ("model", row_label(run.model, run.setting)),
        ("results file", paths.show(run.path)),
        ("samples file", paths.show(task.path)),
        ("documents", f"{len(task.rows):,}" + (f" (⚠ {run.subset})" if run.subset else "")),
    ]
    if task.problems:
        meta.append(("unreadable lines", f"{task.problems} (shown as rows with a problem)"))
    found = []
    for number, (name, (start, end)) in enumerate(zip(pages.names, pages.bounds), start=1):
        rows = [
            [*(row.get(column) for column in names), _across(slug, key)]
            for row, key in zip(task.rows[start:end], task.keys[start:end])
        ]
        classes = ["problem" if row.get(PROBLEM) else "" for row in task.rows[start:end]]
        text = "\n".join(
            [
                head,
                f'<body data-view="samples"><header><h1>Samples: {html.escape(title)}</h1>'
                f'<nav aria-label="Pages"><a href="../index.html#{task.spec.key}">← leaderboard</a> · '
                '<a href="index.html">all logged runs</a></nav></header><main>',
                "<dl class='meta'>"
                + "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in meta)
                + "</dl>",
                _pager(pages, number, len(task.rows)),
                "<p class='lead'>The search box matches every column of this page, the hidden prompt included; click "
                "values in the panes to filter (e.g. coherent: no, flagged: yes); the Columns button shows the "
                f"prompt; “{ACROSS}” opens the document as every run answered it. The search is kept in the "
                "page's address.</p>",
                datatable.datatable("samples", columns, rows, page_length=10, facets=facets, row_classes=classes),
                _pager(pages, number, len(task.rows)) if len(pages.names) > 1 else "",
                "</main></body></html>",
            ]
        )
        found.append((name, text))
    return found


def _across(slug: str, key: str | None) -> list[str | None] | None:
    return [ACROSS, f"{DOCUMENT_PAGE}#{slug}&doc={_fragment(key)}"] if key is not None else None


def _fragment(text: str) -> str:
    """A URL fragment value: only what would break the fragment is encoded."""
    return re.sub(r"[%&=#\s\"<>]", lambda match: "".join(f"%{b:02X}" for b in match.group().encode()), text)


def _pager(pages: Pages, number: int, total: int) -> str:
    """Where this page sits among the run's pages, with a link to each of them."""
    if len(pages.names) == 1:
        return ""
    start, end = pages.bounds[number - 1]
    links = [
        f'<span aria-current="page">{index}</span>' if index == number else f'<a href="{html.escape(name)}">{index}</a>'
        for index, name in enumerate(pages.names, start=1)
    ]
    previous = f'<a href="{html.escape(pages.names[number - 2])}" rel="prev">‹ previous</a> · ' if number > 1 else ""
    following = (
        f' · <a href="{html.escape(pages.names[number])}" rel="next">next ›</a>' if number < len(pages.names) else ""
    )
    return (
        f'<nav class="pager" aria-label="Pages of this run">Rows {start + 1:,}–{end:,} of {total:,} '
        f"(page {number} of {len(pages.names)}): {previous}{' '.join(links)}{following}</nav>"
    )


def _kind(values: list) -> str:
    """A column sorts as numbers when every value it holds is one (cells cannot be booleans)."""
    present = [value for value in values if value is not None]
    return "number" if present and all(isinstance(value, (int, float)) for value in present) else "text"


def samples_index(logged: Sequence[LoggedTask], pages: dict[LoggedTask, Pages], head: str) -> str:
    parts = [
        head,
        '<body><header><h1>Sample viewer</h1><nav aria-label="Pages"><a href="../index.html">← leaderboard</a></nav>'
        "<p>One page per logged task run (a long run over several pages), loaded on its own so large runs stay "
        "usable; each sample links to its document across every run.</p></header><main>",
    ]
    if not logged:
        parts.append("<p><em>No samples files were found beside the results files (lm_eval --log_samples).</em></p>")
    parts.append(
        "<div class='table-scroll' role='region' aria-label='Logged task runs' tabindex='0'>"
        "<table class='plain'><thead><tr><th scope='col'>paper</th><th scope='col'>model</th>"
        "<th scope='col'>task</th><th scope='col'>docs</th><th scope='col'>pages</th><th scope='col'>data</th>"
        "</tr></thead><tbody>"
    )
    for task in sorted(logged, key=lambda t: (t.spec.key, t.run.model, t.run.setting, t.run.task)):
        parts.append(
            f"<tr><td>{html.escape(task.spec.key.upper())}</td>"
            f"<td>{html.escape(row_label(task.run.model, task.run.setting))}</td>"
            f'<td><a href="{pages[task].names[0]}">{html.escape(task.spec.board.task_label(task.run.task))}</a> '
            f"<code>{html.escape(task.run.task)}</code></td><td>{len(task.rows):,}</td>"
            f"<td>{len(pages[task].names)}</td>"
            f"<td>{html.escape('⚠ ' + task.run.subset if task.run.subset else 'all docs')}</td></tr>"
        )
    parts.append("</tbody></table></div></main></body></html>")
    return "\n".join(parts)


def document_page(head: str) -> str:
    """The document view: filled by ``assets/leaderboard.js`` from ``docs/`` for the document in the URL."""
    return "\n".join(
        [
            head,
            '<body data-view="document"><header><h1>Document across runs</h1><nav aria-label="Pages">'
            '<a href="../index.html">← leaderboard</a> · <a href="index.html">all logged runs</a></nav>'
            "<p>One document as every run that logged it saw and answered it: what all runs share once, then one "
            "line per run with its output and scores. The address names the task and the document.</p></header>",
            '<main><div id="document" aria-live="polite"><p>Loading the document…</p></div></main></body></html>',
        ]
    )


def write_document_data(folder: Path, logged: Sequence[LoggedTask], pages: dict[LoggedTask, Pages]) -> None:
    """The document view's data, per paper and task: an index (runs, and which file holds each
    document) and files of ``DOCS_PER_FILE`` documents, each run's row of that document in it."""
    by_slug: dict[str, list[LoggedTask]] = {}
    for task in logged:
        by_slug.setdefault(document_slug(task), []).append(task)
    folder.mkdir(parents=True, exist_ok=True)
    for slug, tasks in by_slug.items():
        tasks.sort(key=lambda t: row_label(t.run.model, t.run.setting))
        docs: dict[str, list[tuple[int, dict[str, Any], str]]] = {}
        for run_index, task in enumerate(tasks):
            for page, (start, end) in zip(pages[task].names, pages[task].bounds):
                for row, key in zip(task.rows[start:end], task.keys[start:end]):
                    if key is not None:
                        docs.setdefault(key, []).append((run_index, row, page))
        keys = sorted(docs, key=_natural)
        files = [keys[i : i + DOCS_PER_FILE] for i in range(0, len(keys), DOCS_PER_FILE)]
        first = tasks[0]
        index = {
            "title": f"{first.spec.board.task_label(first.run.task)} ({first.run.task}, {first.spec.key.upper()})",
            "runs": [{"label": row_label(t.run.model, t.run.setting), "limited": t.run.subset or ""} for t in tasks],
            "docs": {key: number for number, chunk in enumerate(files) for key in chunk},
            "order": keys,
        }
        write_script_data(folder / f"{slug}.js", f"index:{slug}", index)
        for number, chunk in enumerate(files):
            write_script_data(
                folder / f"{slug}.{number}.js", f"docs:{slug}:{number}", {key: _document(docs[key]) for key in chunk}
            )


def _document(entries: list[tuple[int, dict[str, Any], str]]) -> dict[str, Any]:
    """One document: the fields every run logged alike, its distinct prompts, and per run the rest."""
    names = list(dict.fromkeys(name for _, row, _ in entries for name in row if name != PROMPT))
    shared = {
        name: entries[0][1].get(name)
        for name in names
        if len(entries) > 1 and all(row.get(name) == entries[0][1].get(name) for _, row, _ in entries)
    }
    prompts = list(dict.fromkeys(row.get(PROMPT) for _, row, _ in entries if row.get(PROMPT) is not None))
    runs = [
        {
            "run": run_index,
            "page": page,
            "prompt": prompts.index(row[PROMPT]) if row.get(PROMPT) is not None else None,
            "fields": {name: row.get(name) for name in names if name not in shared and name in row},
        }
        for run_index, row, page in entries
    ]
    return {"shared": shared, "prompts": prompts, "runs": runs}


def _natural(key: str) -> tuple:
    """Document keys in reading order: "2" before "10"."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", key))
