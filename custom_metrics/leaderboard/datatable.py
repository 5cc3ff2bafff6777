"""Sortable, filterable tables that work from disk: DataTables through itables' offline bundle.

itables ships DataTables 2 with its extensions (SearchPanes, Buttons, ...) as one bundle
and a loader that imports it from a ``blob:`` URL, which works on ``file://`` pages with
no network. The loader is written once per output folder (``assets/datatables.js``) and
every page includes it, so a hundred sample pages do not carry a hundred copies.

itables' own DataFrame formatting is meant for notebooks (it turns a newline in a cell
into a literal ``\\n`` and pads text), so the rows are built here and handed to its
``ITable`` class: text cells stay raw text in the data (search and filters see what the
model wrote) and are HTML-escaped when drawn (``explainEvalText`` in
``assets/leaderboard.js``); number cells are ``[shown, sort value]`` pairs as itables
itself sends floats, so "0.5513 ± 0.0176" sorts as 0.5513 and NaN sorts as missing.
The JSON goes inside a ``<script>``, so ``<``, ``>`` and ``&`` in it are written as
``\\u003c`` etc.: no text in a cell can close the script.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from custom_metrics.leaderboard.numbers import finite, format_number

ASSET = "datatables.js"
TEXT_RENDER = "explainEvalText"  # defined in assets/leaderboard.js
NUMBER_RENDER = "explainEvalNumber"
LINK_RENDER = "explainEvalLink"


@dataclass(frozen=True)
class TableColumn:
    title: str
    tooltip: str = ""
    kind: str = "text"  # text | number | link ([text, relative href] pairs)
    visible: bool = True


def loader_script() -> str:
    """itables' offline loader (the DataTables bundle, base64) as a classic script file."""
    import itables.options  # itables imports pandas (a second or more): pages need it, a --help never
    from itables.javascript import generate_init_offline_itables_html

    snippet = generate_init_offline_itables_html(itables.options.dt_bundle)
    start = snippet.index("<script>") + len("<script>")
    return snippet[start : snippet.index("</script>", start)]


def number_cell(value: float | None, shown: str | None = None) -> list[Any]:
    """A number as ``[shown, sort value]``: NaN shows as "NaN" and sorts as missing."""
    if not finite(value):
        return [shown or format_number(value), None]
    return [shown if shown is not None else format_number(value), value]


def datatable(
    table_id: str,
    columns: Sequence[TableColumn],
    rows: Sequence[Sequence[Any]],
    *,
    page_length: int = 25,
    facets: Sequence[int] = (),
    row_classes: Sequence[str] | None = None,
    columns_button: bool = False,
) -> str:
    """The HTML of one DataTable; ``rows`` hold text, None, or ``number_cell`` pairs; ``facets``
    are columns offered as click filters (SearchPanes). No ``scrollX``: DataTables would draw the
    header and the filter boxes twice (a hidden copy still focusable); the page's CSS scrolls the
    table in its own box instead."""
    show_columns_button = columns_button or any(not column.visible for column in columns)
    all_columns = list(columns)
    data = [[_cell(value, column.kind) for value, column in zip(row, columns)] for row in rows]
    if row_classes is not None:  # a hidden last column read by createdRow
        all_columns.append(TableColumn("", visible=False))
        data = [[*row, cls] for row, cls in zip(data, row_classes)]
    column_defs: list[dict[str, Any]] = [{"targets": "_all", "defaultContent": ""}]
    for kind, render in (("number", NUMBER_RENDER), ("link", LINK_RENDER), ("text", TEXT_RENDER)):
        targets = [i for i, column in enumerate(all_columns) if column.kind == kind]
        if targets:
            right = {"className": "dt-right"} if kind == "number" else {}
            column_defs.append({"targets": targets, "render": render, **right})
    hidden = [i for i, column in enumerate(all_columns) if not column.visible]
    if hidden:
        column_defs.append({"targets": hidden, "visible": False})
    evaluated = [["columnDefs", i, "render"] for i, d in enumerate(column_defs) if "render" in d]
    layout: dict[str, Any] = {
        "topStart": "pageLength",
        "topEnd": "search",
        "bottomStart": "info",
        "bottomEnd": "paging",
    }
    args: dict[str, Any] = {
        "classes": ["display", "compact", "cell-border"],
        "style": {"width": "100%", "margin": "0", "caption-side": "top"},
        "table_html": _header(all_columns),
        "data_json": safe_json(data),
        "columnDefs": column_defs,
        "order": [],
        "pageLength": page_length,
        "lengthMenu": [10, 25, 50, 100, -1],
        "deferRender": True,
        "text_in_header_can_be_selected": False,  # a click anywhere in the header sorts
        "column_filters": "footer",
    }
    if facets:
        # A pane shows even when its column has one value or many: the filters a reader
        # expects (coherent: no) must not vanish on a small run.
        column_defs.append({"targets": list(facets), "searchPanes": {"show": True}})
        layout["top1"] = "searchPanes"
        args["searchPanes"] = {
            "columns": list(facets),
            "layout": f"columns-{min(len(facets), 4)}",
            "cascadePanes": True,
            "initCollapsed": False,
            "orderable": False,
            "dtOpts": {"scrollY": "8em", "scrollCollapse": True},
        }
    if show_columns_button:
        layout["topStart"] = {"pageLength": {}, "buttons": [{"extend": "colvis", "text": "Columns"}]}
    if row_classes is not None:
        args["createdRow"] = (
            f"function (row, data) {{ if (data[{len(all_columns) - 1}]) "
            f"row.classList.add(...data[{len(all_columns) - 1}].split(' ')); }}"
        )
        evaluated.append(["createdRow"])
    args["layout"] = layout
    args["keys_to_be_evaluated"] = evaluated
    from itables.javascript import html_table_from_template

    return html_table_from_template(
        table_id=table_id, dt_url="", connected=False, display_logo_when_loading=False, kwargs=args
    )


def _cell(value: Any, kind: str) -> Any:
    if kind == "link":
        return value if isinstance(value, list) else [value, None]
    if kind == "number":
        if isinstance(value, list):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return number_cell(float(value), str(value)) if abs(value) < 2**53 else [str(value), None]
        if value is None or isinstance(value, float):
            return number_cell(value)
        return [str(value), None]
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float):
        return number_cell(value)[0]
    return str(value)


def _header(columns: Sequence[TableColumn]) -> str:
    titles = [f' title="{html.escape(c.tooltip)}"' if c.tooltip else "" for c in columns]
    cells = "".join(f"<th{title}>{html.escape(c.title)}</th>" for c, title in zip(columns, titles))
    # itables turns each footer cell into a filter box named by its text
    footer = "".join(f"<th>{html.escape(c.title)}</th>" for c in columns)
    return f"<table><thead><tr>{cells}</tr></thead><tfoot><tr>{footer}</tr></tfoot></table>"


def safe_json(value: Any) -> str:
    """JSON for inside a ``<script>``: no character in it can end the script element."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
