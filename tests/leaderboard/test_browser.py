"""The leaderboard page in a real browser: Debian's Chromium driven by Playwright.

The page is built from a real run (``geese_run`` in conftest: the embedded model through
the ``lm_eval`` CLI with ``--log_samples``, GEESE with and without a hint on four documents,
so the page has effectiveness, paired differences and a cut-short row), plus hand-made
hostile inputs: a
model named with HTML, quotes and ``$``, a hostile generation in its samples, a results
file with a NaN sample count (skipped and named) and an IBE report holding bare NaN.
Screenshots go to each test's tmp folder.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from custom_metrics.leaderboard.build import build_leaderboard
from tests.helpers import LEADERBOARD_FIXTURES
from tests.leaderboard.test_leaderboard import modern_results

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip extra [test])")

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

CHROMIUM = os.environ.get("EXPLAIN_EVAL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",  # root in CI containers
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Chromium resolves a few Google hosts on its own even so; a file:// page needs no DNS.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost",
]
LOCAL = ("file:", "blob:", "data:", "about:")
HOSTILE = "<script>alert('name')</script> $USER$ & <b>bold</b> \"quoted\""
HOSTILE_TEXT = "</script><img src=x onerror=alert('generation')> 1 < 2 && $x$"
STAMP = "2026-02-03T04-05-06.000000"


@pytest.fixture(scope="session")
def board(geese_run: tuple[dict, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("browser-runs")
    hostile = runs / "hostile"
    hostile.mkdir()
    results = modern_results(HOSTILE, {"geese_noexp": 0.5, "geese_human": 0.25}, 1.0)
    (hostile / f"results_{STAMP}.json").write_text(json.dumps(results), encoding="utf-8")
    line = {
        "doc_id": 0,
        "doc": {"id": "42", "label": "NO", "text_t": HOSTILE_TEXT, "text_h": "h", "hint": HOSTILE_TEXT},
        "acc": 0.0,
        "filtered_resps": [["-1.5", "False"], ["-0.5", "False"], ["-2.5", "False"]],
        "arguments": {
            f"gen_args_{i}": {"arg_0": f"prompt {HOSTILE_TEXT}", "arg_1": f" {c}"} for i, c in enumerate("ABC")
        },
    }
    (hostile / f"samples_geese_noexp_{STAMP}.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    nan_count = modern_results("org/nan", {"geese_noexp": 0.5}, 1.0)
    nan_count["n-samples"]["geese_noexp"]["effective"] = float("nan")
    (runs / "bad").mkdir()
    (runs / "bad" / "results_1.json").write_text(json.dumps(nan_count), encoding="utf-8")
    shutil.copytree(LEADERBOARD_FIXTURES / "ibe-report", runs / "ibe")  # report.json holds a bare NaN
    out = tmp_path_factory.mktemp("board") / "leaderboard"
    build_leaderboard([geese_run[1], runs], out)
    return out


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (make install runs apt-get install chromium as root)")
    with playwright_api.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Recorder:
    """Everything a page did that a test must see: console messages, errors, requests, dialogs."""

    def __init__(self, page) -> None:
        self.console: list[str] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", lambda m: m.type in ("error", "warning") and self.console.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("dialog", self._dialog)

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def assert_clean(self) -> None:
        assert self.console == [] and self.errors == [] and self.dialogs == []
        assert [url for url in self.requests if not url.startswith(LOCAL)] == []


@pytest.fixture()
def open_page(browser, board: Path):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.route("http*://**/*", lambda route: route.abort())  # and recorded: assert_clean fails on it

    def open_(name: str, table: str):
        page = context.new_page()
        page.recorder = Recorder(page)
        path, _, fragment = name.partition("#")
        page.goto((board / path).as_uri() + (f"#{fragment}" if fragment else ""))
        page.wait_for_selector(f"#{table}.dataTable tbody tr")  # DataTables ran (bundle from a blob: URL)
        return page

    yield open_
    context.close()


def index(open_page, tab: str = ""):
    return open_page("index.html" + (f"#{tab}" if tab else ""), f"table-{tab or 'geese'}")


def rows(page, table: str):
    return page.locator(f"#{table} tbody tr")


def headers(page, table: str):
    """The table's header cells (with scrollX DataTables draws them in a separate table;
    the SearchPanes above it are DataTables too, with their own)."""
    return page.locator(f"#{table}_wrapper .dt-scroll-head th:not(.dtsp-searchPanes th)")


def column(page, table: str, title: str) -> list[str]:
    position = [text.strip() for text in headers(page, table).all_inner_texts()].index(title) + 1
    return rows(page, table).locator(f"td:nth-child({position})").all_inner_texts()


def header(page, table: str, title: str):
    return headers(page, table).filter(has_text=title).first


def test_page_loads_offline_and_clean(open_page, tmp_path: Path) -> None:
    page = index(open_page)
    page.wait_for_selector("#chart-geese .main-svg")
    page.wait_for_timeout(300)  # late errors surface
    page.recorder.assert_clean()
    assert page.evaluate("typeof Plotly") == "object"
    assert page.evaluate("document.querySelector('#chart-geese .main-svg').getBoundingClientRect().width") > 900
    page.screenshot(path=str(tmp_path / "index.png"), full_page=True)
    assert (tmp_path / "index.png").stat().st_size > 10_000


def test_sorting_a_column_reorders_rows(open_page) -> None:
    page = index(open_page)
    before = column(page, "table-geese", "accuracy")
    header(page, "table-geese", "accuracy").click()
    # DataTables sorts in a timeout: wait for the header state, never read rows right away.
    playwright_api.expect(header(page, "table-geese", "accuracy")).to_have_attribute("aria-sort", "ascending")
    values = [float(text.split(" ")[0]) for text in column(page, "table-geese", "accuracy") if text]
    assert values == sorted(values) and column(page, "table-geese", "accuracy") != before
    header(page, "table-geese", "accuracy").click()
    playwright_api.expect(header(page, "table-geese", "accuracy")).to_have_attribute("aria-sort", "descending")
    values = [float(text.split(" ")[0]) for text in column(page, "table-geese", "accuracy") if text]
    assert values == sorted(values, reverse=True)
    page.recorder.assert_clean()


def test_column_filter_and_search_hide_rows(open_page) -> None:
    page = index(open_page)
    total = rows(page, "table-geese").count()
    box = page.locator("#table-geese_wrapper .dt-scroll-foot input[placeholder=Row]")
    box.fill("published")
    box.press("End")  # itables' filter boxes react to keyup
    playwright_api.expect(rows(page, "table-geese")).to_have_count(4)  # Table 2's four settings
    assert set(column(page, "table-geese", "Row")) == {"published"}
    box.fill("")
    box.press("End")
    playwright_api.expect(rows(page, "table-geese")).to_have_count(total)
    page.locator("#table-geese_wrapper .dt-search input").fill("no such model")
    playwright_api.expect(page.locator("#table-geese td.dt-empty")).to_be_visible()


def test_tab_switch_shows_the_paper(open_page) -> None:
    page = index(open_page)
    playwright_api.expect(page.locator("#panel-geese")).to_be_visible()
    playwright_api.expect(page.locator("#panel-rule")).to_be_hidden()
    page.locator("label[for=tab-rule]").click()
    playwright_api.expect(page.locator("#panel-rule")).to_be_visible()
    playwright_api.expect(page.locator("#panel-geese")).to_be_hidden()
    page.locator("#table-rule_wrapper .dt-search input").fill("InstructGPT")
    playwright_api.expect(rows(page, "table-rule").first).to_contain_text("InstructGPT")
    linked = index(open_page, "reg")  # a link to index.html#reg opens that tab
    playwright_api.expect(linked.locator("#panel-reg")).to_be_visible()


def test_headers_explain_metrics_and_cut_runs_are_marked(open_page) -> None:
    page = index(open_page)
    assert "gold label" in header(page, "table-geese", "accuracy").get_attribute("title")
    limited = page.locator("#table-geese tbody tr.limited")
    playwright_api.expect(limited.first).to_contain_text("⚠ 4 of 6 docs")
    playwright_api.expect(limited.first).to_contain_text("gemma-3-270m (embedded)")
    published = page.locator("#table-geese tbody tr.published").first
    playwright_api.expect(published).to_contain_text("0.5437 ± 0.0176")


def test_hostile_names_stay_text(open_page, tmp_path: Path) -> None:
    page = index(open_page)
    page.locator("#table-geese_wrapper .dt-search input").fill("alert('name')")
    playwright_api.expect(rows(page, "table-geese")).to_have_count(2)  # two tasks of the hostile run
    assert column(page, "table-geese", "Model") == [HOSTILE, HOSTILE]
    assert page.locator("#panel-geese tbody b, #panel-geese tbody script").count() == 0
    legend = page.locator("#chart-geese .legendtext").all_text_contents()
    assert HOSTILE in legend, legend  # plotly shows it as text ($...$ not typeset)
    assert page.locator("#chart-geese .legendtext tspan[style*=bold]").count() == 0
    problems = page.locator(".problems")
    playwright_api.expect(problems).to_contain_text("bad/results_1.json")
    playwright_api.expect(problems).to_contain_text("not a finite number")
    page.screenshot(path=str(tmp_path / "hostile.png"), full_page=True)
    page.recorder.assert_clean()


def test_chart_hover_shows_value_and_source(open_page) -> None:
    page = index(open_page)
    page.locator("#chart-geese").scroll_into_view_if_needed()
    bar = page.locator("#chart-geese .point path").first.bounding_box()
    # plotly's drag layer covers the bars: hover by position
    page.mouse.move(bar["x"] + bar["width"] / 2, bar["y"] + bar["height"] / 2)
    hover = page.locator("#chart-geese .hoverlayer .hovertext")
    playwright_api.expect(hover).to_have_count(1)
    text = hover.text_content()  # SVG text: inner_text() does not apply
    assert "source: " in text and ("results_" in text or "Table 2" in text), text
    assert any(character.isdigit() for character in text.split("source:")[0]), text


def test_ibe_report_with_nan_shows_nan(open_page) -> None:
    page = index(open_page, "ibe")
    page.locator("#table-ibe_wrapper .dt-search input").fill("gemma-fp32")
    row = rows(page, "table-ibe").filter(has_text="selection")
    playwright_api.expect(row).to_contain_text("NaN")
    playwright_api.expect(row).to_contain_text("0.7500")
    page.recorder.assert_clean()


def test_paired_difference_of_the_real_run(open_page) -> None:
    page = index(open_page)
    differences = rows(page, "differences-geese").filter(has_text="gemma-3-270m (embedded)")
    playwright_api.expect(differences.first).to_contain_text("effectiveness")
    playwright_api.expect(differences.first).to_contain_text("McNemar (exact)")
    assert page.locator("#forest-geese .main-svg").count() > 0


def sample_page(open_page, board: Path, model: str, task: str):
    (name,) = [p.name for p in (board / "samples").glob(f"geese-*{model}*-{task}.html")]
    return open_page(f"samples/{name}", "samples")


def test_sample_viewer_finds_a_doc_by_search(open_page, board: Path, tmp_path: Path) -> None:
    page = sample_page(open_page, board, "gemma-3-270m_embedded", "geese_human")
    playwright_api.expect(rows(page, "samples")).to_have_count(4)
    page.locator("#samples_wrapper .dt-search input").fill("Michael Laski")  # sentence 2 of doc id 5
    playwright_api.expect(rows(page, "samples")).to_have_count(1)
    assert column(page, "samples", "id") == ["5"]
    page.locator("#samples_wrapper .dt-search input").fill("")
    playwright_api.expect(rows(page, "samples")).to_have_count(4)
    # A click filter (SearchPanes): the documents whose gold label is UNKNOWN.
    pane = page.locator(".dtsp-searchPane").filter(has=page.locator("input[placeholder=gold]"))
    pane.locator("tbody tr", has_text="UNKNOWN").click()
    playwright_api.expect(rows(page, "samples")).to_have_count(2)
    assert column(page, "samples", "gold") == ["UNKNOWN", "UNKNOWN"]
    page.screenshot(path=str(tmp_path / "samples.png"), full_page=True)
    page.recorder.assert_clean()


def test_sample_viewer_shows_hostile_generations_as_text(open_page, board: Path) -> None:
    page = sample_page(open_page, board, "script_alert", "geese_noexp")
    cells = column(page, "samples", "hint")
    assert cells == [HOSTILE_TEXT]
    assert page.locator("#samples tbody img").count() == 0
    page.wait_for_timeout(300)
    page.recorder.assert_clean()
