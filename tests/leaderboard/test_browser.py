"""The leaderboard page in a real browser: Debian's Chromium driven by Playwright.

One page is built once per session from real runs: ``geese_run`` in conftest (the embedded
model through the ``lm_eval`` CLI with ``--log_samples``, GEESE with and without a hint on
four documents: effectiveness, paired differences, a cut-short row), the GEESE authors'
own results files (their 800-document Llama-3-8B run and their early 24-document runs,
``tests/fixtures/leaderboard/geese-authors``), the demo's real ``--samples`` run of
SmolLM2 (GEESE M1, REG, IBE with ``explain-eval ibe score``/``report``:
``tests/fixtures/leaderboard/demo-generation``), a served REG run judged again by three judges
(``rejudged_reg_run`` in tests/conftest.py, shared with tests/reg/test_rejudge_e2e.py), plus
hand-made hostile inputs: a model
named with HTML, quotes and ``$``, a hostile generation in its samples, a results file with
a NaN sample count (skipped and named) and an IBE report holding bare NaN.
Screenshots go to each test's tmp folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest

from custom_metrics.leaderboard.build import build_leaderboard
from tests.helpers import LEADERBOARD_FIXTURES, PAPER_KEYS
from tests.leaderboard.test_leaderboard import modern_results

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip extra [test])")
expect = playwright_api.expect

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
DESKTOP = {"width": 1400, "height": 1000}
PHONE = {"width": 390, "height": 844}
AUTHORS_FULL = "meta-llama/Meta-Llama-3-8B (authors' GEESE tasks)"
COPY = "org/gemma-copy"
SMOLLM = "SmolLM2-135M-Instruct (embedded)"


def copy_run(source: Path, folder: Path, model: str) -> None:
    """The real run's results and samples files under another model name, its first document's
    outcome flipped in every task (so the two runs differ where a reader can see it)."""
    for path in source.glob("*/*"):
        target = folder / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.name.startswith("results_"):
            data = json.loads(path.read_text(encoding="utf-8"))
            data["model_name"] = model
            data["config"]["model_args"] = f"pretrained={model}"
            target.write_text(json.dumps(data), encoding="utf-8")
        elif path.name.startswith("samples_"):
            lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            lines[0]["acc"] = 1.0 - lines[0]["acc"]
            target.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


@pytest.fixture(scope="session")
def board_inputs(
    geese_run: tuple[dict, Path], rejudged_reg_run, tmp_path_factory: pytest.TempPathFactory
) -> list[Path]:
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
    copy_run(geese_run[1], runs / "copy", COPY)  # the real run under a second name: a document two runs logged
    shutil.copytree(LEADERBOARD_FIXTURES / "ibe-report", runs / "ibe")  # report.json holds a bare NaN
    shutil.copytree(LEADERBOARD_FIXTURES / "geese-authors", runs / "geese-authors")
    shutil.copytree(LEADERBOARD_FIXTURES / "demo-generation", runs / "demo-generation")
    return [geese_run[1], runs, rejudged_reg_run.out]


@pytest.fixture(scope="session")
def board(board_inputs: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("board") / "leaderboard"
    build_leaderboard(board_inputs, out, papers=PAPER_KEYS)  # RULE has no run here: its tab asked for
    return out


# Module scope, not session: Playwright's sync API keeps its event loop marked as running in this
# thread while it is open, so every later test in the worker that calls asyncio.run (lm-eval's API
# models do) would fail with "cannot be called from a running event loop".
@pytest.fixture(scope="module")
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


def _opener(browser, board: Path, viewport: dict):
    context = browser.new_context(viewport=viewport)
    context.route("http*://**/*", lambda route: route.abort())  # and recorded: assert_clean fails on it

    def open_(name: str, ready: str):
        page = context.new_page()
        page.recorder = Recorder(page)
        path, _, fragment = name.partition("#")
        page.goto((board / path).as_uri() + (f"#{fragment}" if fragment else ""))
        page.wait_for_selector(ready, state="attached")  # DataTables drew it (maybe in a hidden view)
        page.wait_for_function("typeof explainEval === 'object'")  # the deferred script ran
        return page

    return context, open_


@pytest.fixture()
def open_page(browser, board: Path):
    context, open_ = _opener(browser, board, DESKTOP)
    yield open_
    context.close()


@pytest.fixture()
def open_phone(browser, board: Path):
    context, open_ = _opener(browser, board, PHONE)
    yield open_
    context.close()


def index(open_page, fragment: str = ""):
    """The index, its summary drawn (and, for a long view in the URL, the long table it loads)."""
    ready = "#summary-geese tbody tr"
    if "view=long" in fragment:
        tab = fragment.split("&", 1)[0] or "geese"
        ready = f"#table-{tab}.dataTable tbody tr"
    return open_page("index.html" + (f"#{fragment}" if fragment else ""), ready)


def rows(page, table: str):
    return page.locator(f"#{table} tbody tr")


def headers(page, table: str):
    return page.locator(f"#{table} thead th")


def column(page, table: str, title: str) -> list[str]:
    position = [text.strip() for text in headers(page, table).all_inner_texts()].index(title) + 1
    return rows(page, table).locator(f"td:nth-child({position})").all_inner_texts()


def header(page, table: str, title: str):
    return headers(page, table).filter(has_text=title).first


def summary_rows(page, key: str, group: str):
    return page.locator(f"#summary-{key} tbody.{group} tr:not(.group)")


def main_values(page, key: str, group: str) -> list[float]:
    cells = summary_rows(page, key, group).locator("td.main")
    return [float(value) for value in cells.evaluate_all("cells => cells.map(c => c.dataset.sort)") if value]


def show_long(page, key: str) -> None:
    page.locator(f"label[for=view-{key}-long]").click()
    expect(page.locator(f"#table-{key}")).to_be_visible()


# --- the summary: who is best, how far from the paper, is it significant -----------------


def test_page_loads_offline_and_clean(open_page, tmp_path: Path) -> None:
    page = index(open_page)
    page.wait_for_selector("#chart-geese-0 .main-svg")
    page.wait_for_timeout(300)  # late errors surface
    page.recorder.assert_clean()
    assert page.evaluate("typeof Plotly") == "object"
    assert page.evaluate("document.querySelector('#chart-geese-0 .main-svg').getBoundingClientRect().width") > 900
    page.screenshot(path=str(tmp_path / "index.png"), full_page=True)
    assert (tmp_path / "index.png").stat().st_size > 10_000


def test_summary_ranks_rows_and_keeps_limited_runs_apart(open_page) -> None:
    page = index(open_page)
    ranked = summary_rows(page, "geese", "ranked")
    # The full runs first: their 800-doc results file read as a run, the one contender on the main
    # metric, then the hostile run, which has no Llama-3 explanation number (ranked on the columns
    # it has). Below the runs, the published rows as references: the authors' repository run
    # (named so, never "paper"), Table 2, then CALAMITA's four harness rows, which publish no
    # document count: shown, never ranked.
    expect(ranked).to_have_count(2)
    texts = ranked.locator("td.rank").all_inner_texts()
    assert texts[0] == "1" and re.fullmatch(r"1=? \(no hint\)", texts[1]), texts
    expect(ranked.nth(0).locator("th.model")).to_contain_text(AUTHORS_FULL)
    expect(ranked.nth(1).locator("td.h1 .col-rank")).to_have_text(re.compile(r"^#1=?$"))
    published = summary_rows(page, "geese", "published")
    expect(published).to_have_count(6)
    assert published.locator("td.rank").all_inner_texts() == ["ref", "ref"] + ["–"] * 4
    for calamita in range(2, 6):
        expect(published.nth(calamita).locator("th.model")).to_contain_text("CALAMITA harness")
    expect(published.nth(0).locator("th.model")).to_contain_text("authors' repository run")
    expect(published.nth(0).locator(".badge.origin")).to_have_text("authors' repository run")
    assert published.nth(0).locator(".badge.paper").count() == 0
    expect(published.nth(1).locator("th.model")).to_contain_text("Llama-3-8B")
    expect(published.nth(1).locator(".badge.paper")).to_be_visible()
    assert main_values(page, "geese", "ranked") == [0.78125]
    assert main_values(page, "geese", "published") == [0.78375, 0.7812]
    # Every number with its 95% interval on the page: the run's 625 of 800 documents.
    expect(ranked.nth(0).locator("td.main .ci")).to_have_text("[0.7510, 0.8094]")
    # Runs on part of the data: their own group, hidden while full runs exist, one click away.
    limited = summary_rows(page, "geese", "limited")
    expect(limited.first).to_be_hidden()
    toggle = page.locator("#panel-geese input.hide-limited")
    expect(toggle).to_be_checked()
    toggle.uncheck()
    expect(limited.first).to_be_visible()
    names = " ".join(limited.locator("th.model").all_inner_texts())
    assert "gemma-3-270m (embedded)" in names and "meta-llama/Meta-Llama-3-8B" in names
    expect(limited.locator(".badge.limited").first).to_contain_text("part of the data")
    assert "limited=shown" in page.evaluate("location.hash")
    # Sorting by another column keeps the groups apart, and the Rank column follows that column.
    page.locator("#summary-geese thead th[data-col=h1] button.sort").click()
    expect(page.locator("#summary-geese thead th[data-col=h1]")).to_have_attribute("aria-sort", "descending")
    expect(page.locator("#summary-geese thead th.rank button.sort")).to_have_text("Rank (no hint)")
    groups = page.locator("#summary-geese tbody").evaluate_all("bodies => bodies.map(b => b.dataset.group)")
    assert groups.index("ranked") < groups.index("limited") < groups.index("published")
    ranks = limited.locator("td.rank").all_inner_texts()
    assert ranks == limited.locator("td.h1").evaluate_all("cells => cells.map(c => c.dataset.rank || '–')")
    # The sanity check (hint = gold label) is a column, never the ranking one.
    sanity = page.locator("#summary-geese thead th.sanity")
    expect(sanity).to_contain_text("sanity check")
    assert "main" not in (sanity.get_attribute("class") or "")
    page.recorder.assert_clean()


@pytest.fixture(scope="module")
def newcomer_board(geese_run: tuple[dict, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A newcomer's page: the real embedded-model GEESE run (four documents) and a Mistral-7B
    results file of RULE and REG (``harness-0.4.0``), beside every paper's published rows."""
    runs = tmp_path_factory.mktemp("newcomer")
    shutil.copytree(LEADERBOARD_FIXTURES / "harness-0.4.0", runs / "mistral")
    out = runs / "leaderboard"
    build_leaderboard([geese_run[1], runs / "mistral"], out, papers=PAPER_KEYS)
    return out


@pytest.mark.parametrize(("tab", "published"), [("geese", 6), ("reg", 20), ("rule", 100)])
def test_your_run_is_on_the_first_screen_of_its_tab(browser, newcomer_board: Path, tab: str, published: int) -> None:
    """A newcomer's row sat below 6 published rows (GEESE), 35 (REG), 134 (RULE), none of its
    numbers on the first 1400x1000 screen: now the runs come first, the published rows below."""
    context, open_ = _opener(browser, newcomer_board, DESKTOP)
    page = open_(f"index.html#{tab}", f"#summary-{tab} tbody tr")
    expect(page.locator(f"#panel-{tab}")).to_be_visible()
    first = page.locator(f"#summary-{tab} tbody tr:not(.group)").first
    expect(first).to_have_class(re.compile(r"\brun\b"))
    expect(first).to_be_visible()
    box = first.bounding_box()
    assert box is not None and box["y"] + box["height"] <= DESKTOP["height"], box
    assert page.evaluate("window.scrollY") == 0
    below = summary_rows(page, tab, "published")
    assert below.count() >= published
    expect(page.locator(f"#summary-{tab} tbody.published tr.group")).to_contain_text("Published rows")
    page.recorder.assert_clean()
    context.close()


def test_delta_vs_paper_says_its_test_and_another_models_row_is_a_reference(open_page) -> None:
    page = index(open_page, "geese&limited=shown")
    full = summary_rows(page, "geese", "ranked").filter(has_text=AUTHORS_FULL)
    delta = full.locator("td.main .delta")
    expect(delta.locator(".test")).to_contain_text("Fisher p = 1.00")  # their file's 625/800 vs the paper's 625/800
    expect(delta).to_contain_text("Δ +0.0000 vs paper")
    assert "Fisher's exact test, central (conditional exact interval of the odds ratio)" in delta.get_attribute("title")
    early = summary_rows(page, "geese", "limited").filter(has_text="--limit 24")
    expect(early.locator("td.main .delta")).to_contain_text("Δ -0.1562 vs paper")
    expect(early.locator("td.main .delta .test")).to_contain_text("Fisher p = 0.13")  # 15 of 24 vs 625 of 800
    # A model the paper lacks: the reference model's number, named, as a reference line: no Δ.
    hostile = page.locator("#summary-geese tbody tr").filter(has_text="alert('name')")
    line = hostile.locator("td.h1 .delta.reference")  # its no-hint accuracy
    expect(line.locator(".versus")).to_have_text("reference: Llama-3-8B 0.5437")
    expect(line.locator(".test")).to_have_text("another model: no Δ")
    assert "Δ" not in line.inner_text().replace("no Δ", "")
    assert hostile.locator(".delta.sig, td.significant").count() == 0
    # The tab says how many tests it shows; the paired verdicts sit under the summary.
    expect(page.locator("#panel-geese p.meta")).to_contain_text("Δ vs paper (Holm-adjusted within each run row's")
    verdicts = page.locator("#panel-geese .view-summary .verdicts")
    expect(verdicts).to_be_visible()
    expect(verdicts).to_contain_text("McNemar's exact test")
    expect(verdicts).to_contain_text(f"{COPY}")  # two runs of one model's data: each line names its models


def test_every_tab_chart_shows_a_paper_row_and_none_is_empty(open_page) -> None:
    page = index(open_page)
    for key in PAPER_KEYS:
        page.locator(f"label[for=tab-{key}]").click()
        plots = page.locator(f"#panel-{key} .view-summary .plot")
        assert plots.count() >= 1, key
        for i in range(plots.count()):
            plot = plots.nth(i)
            plot.locator(".main-svg").first.wait_for()
            legend = " ".join(plot.locator(".legendtext").all_text_contents())
            assert "(paper)" in legend, (key, i, legend)
            heights = plot.locator(".point path").evaluate_all(
                "paths => paths.map(p => p.getBoundingClientRect().height)"
            )
            assert any(height > 1 for height in heights), (key, i)  # bars drawn, not an empty axis
    # REG's run has no score (|N| = 0 with the embedded judge): "n/a", beside the paper's bars.
    reg = page.locator("#panel-reg .view-summary .plot").first
    assert "n/a" in reg.locator(".bartext, .textpoint").all_text_contents() or "n/a" in reg.inner_text()
    page.recorder.assert_clean()


def test_ibe_selection_of_a_samples_run_is_marked_limited(open_page) -> None:
    page = index(open_page, "ibe&limited=shown")
    row = summary_rows(page, "ibe", "limited").filter(has_text=SMOLLM)
    expect(row).to_have_count(1)
    expect(row.locator(".badge.limited")).to_be_visible()
    expect(row.locator("td.notes")).to_contain_text("from a run cut short: ibe_copa: 8 of 2,000 docs (--samples)")
    assert summary_rows(page, "ibe", "ranked").filter(has_text=SMOLLM).count() == 0
    show_long(page, "ibe")
    page.locator("#table-ibe_wrapper .dt-search input").fill(SMOLLM)
    selection = rows(page, "table-ibe").filter(has_text="best-explanation selection")
    expect(selection).to_have_class(re.compile("limited"))
    expect(selection).to_contain_text("⚠ from a run cut short")
    expect(selection).to_contain_text("selector fitted on")


def test_url_restores_tab_view_and_sort(open_page) -> None:
    page = index(open_page, "rule&sort=h1:asc")
    expect(page.locator("#panel-rule")).to_be_visible()
    expect(page.locator("#panel-geese")).to_be_hidden()
    head = page.locator("#summary-rule thead th[data-col=h1]")
    expect(head).to_have_attribute("aria-sort", "ascending")
    cells = summary_rows(page, "rule", "published").locator("td.h1")
    values = [float(v) for v in cells.evaluate_all("cells => cells.map(c => c.dataset.sort)") if v]
    assert values == sorted(values) and len(values) > 10
    # Sorting and switching write the state into the URL; opening that URL restores it.
    page.locator("#summary-rule thead th[data-col=h0] button.sort").click()
    page.locator("label[for=view-rule-long]").click()
    state = page.evaluate("location.hash")
    assert state == "#rule&sort=h0:desc&view=long", state
    again = index(open_page, state[1:])
    expect(again.locator("#panel-rule")).to_be_visible()
    expect(again.locator("#table-rule")).to_be_visible()
    expect(again.locator("#summary-rule thead th[data-col=h0]")).to_have_attribute("aria-sort", "descending")
    filtered = index(open_page, "reg&q=gemma-4-31b")
    expect(filtered.locator("#filter-reg")).to_have_value("gemma-4-31b")
    shown = summary_rows(filtered, "reg", "published").locator("th.model:visible").all_inner_texts()
    assert shown and all("Gemma-4-31B-it" in name for name in shown)


def test_links_downloads_and_config_differences(open_page, board: Path) -> None:
    page = index(open_page, "geese&limited=shown")
    full = summary_rows(page, "geese", "ranked").filter(has_text=AUTHORS_FULL)
    expect(full.locator("th.model a")).to_have_attribute("href", "https://huggingface.co/meta-llama/Meta-Llama-3-8B")
    gemma = summary_rows(page, "geese", "limited").filter(has_text="gemma-3-270m (embedded)")
    assert gemma.locator("th.model a").count() == 0  # a local checkpoint links nowhere
    link = gemma.locator("td.h1 a")  # its no-hint accuracy: the samples behind it
    href = link.get_attribute("href")
    assert href.startswith("samples/") and (board / href).is_file()
    for name in ("geese.csv", "geese.md", "geese.json", "geese_differences.csv"):
        assert (board / page.locator(f"#panel-geese a[href='{name}']").get_attribute("href")).is_file()
    early = summary_rows(page, "geese", "limited").filter(has_text="--limit 24")
    expect(early.locator(".badge.config")).to_be_visible()
    early.locator("details.rests-on summary").click()
    expect(early.locator("details.rests-on")).to_contain_text(
        "geese_human: not this suite's task config: prompt template \"Sentence 1:"
    )
    expect(early.locator("details.rests-on")).to_contain_text("dataset azaninello/explained-llama-3")


def test_column_picker_and_definitions_by_keyboard(open_page) -> None:
    page = index(open_page)
    page.locator("#panel-geese details.picker summary").click()
    page.locator("#panel-geese .picker-list label", has_text="dummy hint").locator("input").uncheck()
    expect(page.locator("#summary-geese th[data-col=h2]")).to_be_hidden()
    define = page.locator("#summary-geese thead th[data-col=h0] button.define")
    define.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#define-geese")).to_contain_text("gold label")
    expect(define).to_have_attribute("aria-expanded", "true")
    page.locator("#panel-geese details.definitions summary").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#panel-geese details.definitions dl")).to_contain_text("Fisher's exact test")
    # The picked columns are in the URL, and opening it restores them.
    assert "cols=h2" in page.evaluate("location.hash")
    again = index(open_page, page.evaluate("location.hash")[1:])
    expect(again.locator("#summary-geese th[data-col=h2]")).to_be_hidden()
    expect(again.locator("#panel-geese .picker-list input[value=h2]")).not_to_be_checked()


def test_phone_width_nothing_overflows_and_the_model_column_stays(open_phone, board: Path, tmp_path: Path) -> None:
    page = open_phone("index.html", "#summary-geese")
    for fragment in (*PAPER_KEYS, "geese&view=long"):
        page.evaluate(f"location.hash = '{fragment}'")
        page.wait_for_timeout(150)
        width = page.evaluate("Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")
        assert width <= PHONE["width"], (fragment, width)
    page.evaluate("location.hash = 'geese'")
    model = page.locator("#summary-geese tbody.ranked th.model").first
    assert model.evaluate("cell => getComputedStyle(cell).position") == "sticky"
    expect(page.locator("#summary-geese thead th.main")).to_be_visible()
    secondary = page.locator("#summary-geese thead th.secondary").first
    expect(secondary).to_be_hidden()  # collapsed on a phone, one button away
    page.locator("#panel-geese button.more-columns").click()
    expect(secondary).to_be_visible()
    page.locator("#panel-geese button.more-columns").click()
    page.screenshot(path=str(tmp_path / "phone.png"))
    for name in (
        "samples/index.html",
        next(p.relative_to(board).as_posix() for p in (board / "samples").glob("reg-*")),
    ):
        sample = open_phone(name, "main")
        sample.wait_for_timeout(300)
        width = sample.evaluate("Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")
        assert width <= PHONE["width"], (name, width)


# Landmarks are asked for too: one main, all content in a landmark, landmarks told apart.
LANDMARK_RULES = ("landmark-one-main", "region", "landmark-unique")


def _serious(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    violations = Axe().run(page).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {[node['target'] for node in v['nodes']][:3]}"
        for v in violations
        if v["impact"] in ("serious", "critical") or v["id"] in LANDMARK_RULES
    ]


def test_axe_finds_no_serious_issue_on_the_index_and_a_sample_page(open_page, board: Path) -> None:
    pytest.importorskip("axe_playwright_python", reason="axe-playwright-python is not installed (pip extra [test])")
    page = index(open_page)
    page.wait_for_selector("#chart-geese-0 .main-svg")
    assert _serious(page) == []
    show_long(page, "geese")
    page.wait_for_selector("#table-geese tfoot input[aria-label]")
    assert _serious(page) == []
    # No invisible focusable copies: each column filter box exists once.
    assert page.locator("#panel-geese input[placeholder=Model]").count() == 1
    for name in ("geese-gemma-3-270m_embedded_-zero-shot-geese_human.html", "index.html"):
        sample = open_page(f"samples/{name}", "main table")
        sample.wait_for_timeout(200)
        assert _serious(sample) == [], name


def test_no_machine_path_on_any_page(board: Path, board_inputs: list[Path]) -> None:
    """Pages, the files they load, and the downloads (CSV, markdown, JSON) alike."""
    files = [
        board / "index.html",
        *sorted((board / "samples").rglob("*.html")),
        *sorted(p for p in (board / "panels").rglob("*") if p.is_file()),
    ]
    files += [*sorted((board / "samples" / "docs").glob("*.js")), *sorted(board.glob("*.csv")), *board.glob("*.md")]
    files += sorted(board.glob("*.json"))
    forbidden = [str(Path(p).resolve().parent) for p in board_inputs] + [str(Path.home()) + "/", "/tmp/"]
    for path in files:
        text = path.read_text(encoding="utf-8")
        found = [item for item in forbidden if item in text]
        assert found == [], (path.name, found)
    (judge,) = (board / "samples").glob("reg-SmolLM2*")  # the demo's run, judged by the embedded model
    assert "lm:gemma-3-270m (embedded)" in judge.read_text(encoding="utf-8")


# --- the long table, the sample viewer, hostile inputs ---------------------------------------


def test_long_table_loads_on_demand_sorts_and_filters(open_page) -> None:
    page = index(open_page)
    # Nothing that grows with every pair of runs is in the index: the long view loads when opened.
    assert page.locator("#table-geese, #differences-geese").count() == 0
    show_long(page, "geese")
    page.wait_for_selector("#table-geese.dataTable tbody tr")
    before = column(page, "table-geese", "accuracy")
    header(page, "table-geese", "accuracy").click()
    # DataTables sorts in a timeout: wait for the header state, never read rows right away.
    expect(header(page, "table-geese", "accuracy")).to_have_attribute("aria-sort", "ascending")
    values = [float(text.split(" ")[0]) for text in column(page, "table-geese", "accuracy") if text]
    assert values == sorted(values) and column(page, "table-geese", "accuracy") != before
    # The long table's sort is in the URL, and restored from it.
    state = page.evaluate("location.hash")
    assert "view=long" in state and "lsort=" in state and state.endswith(":asc"), state
    again = index(open_page, state[1:])
    expect(header(again, "table-geese", "accuracy")).to_have_attribute("aria-sort", "ascending")
    assert all(text.isdigit() or text == "" for text in column(page, "table-geese", "docs"))  # whole numbers
    box = page.locator("#table-geese tfoot input[placeholder=Row]")
    box.fill("published")
    box.press("End")  # itables' filter boxes react to keyup
    # Table 2: four hints; the authors' repository run: six; CALAMITA's harness: four models x five tasks
    expect(rows(page, "table-geese")).to_have_count(30)
    assert set(column(page, "table-geese", "Row")) == {"published"}
    page.locator("#table-geese_wrapper .dt-search input").fill("no such model")
    expect(page.locator("#table-geese td.dt-empty")).to_be_visible()
    page.recorder.assert_clean()


def test_hostile_names_stay_text(open_page, tmp_path: Path) -> None:
    page = index(open_page, "geese&view=long")
    page.locator("#table-geese_wrapper .dt-search input").fill("alert('name')")
    expect(rows(page, "table-geese")).to_have_count(2)  # two tasks of the hostile run
    assert column(page, "table-geese", "Model") == [HOSTILE, HOSTILE]
    assert page.locator("#panel-geese tbody b, #panel-geese tbody script").count() == 0
    page.locator("label[for=view-geese-summary]").click()
    summary = page.locator("#summary-geese th.model").filter(has_text="alert('name')")
    expect(summary).to_contain_text(HOSTILE)
    page.wait_for_selector("#chart-geese-0 .main-svg")
    legend = page.locator("#chart-geese-0 .legendtext").all_text_contents()
    assert any(HOSTILE in text for text in legend), legend  # plotly shows it as text ($...$ not typeset)
    assert page.locator("#chart-geese-0 .legendtext tspan[style*=bold]").count() == 0
    problems = page.locator(".problems")
    expect(problems).to_contain_text("bad/results_1.json")
    expect(problems).to_contain_text("not a finite number")
    page.screenshot(path=str(tmp_path / "hostile.png"), full_page=True)
    page.recorder.assert_clean()


def test_chart_hover_shows_value_delta_and_source(open_page) -> None:
    page = index(open_page)
    page.locator("#chart-geese-0").scroll_into_view_if_needed()
    bar = page.locator("#chart-geese-0 .point path").first.bounding_box()
    # plotly's drag layer covers the bars: hover by position
    page.mouse.move(bar["x"] + bar["width"] / 2, bar["y"] + bar["height"] / 2)
    hover = page.locator("#chart-geese-0 .hoverlayer .hovertext")
    expect(hover).to_have_count(1)
    text = hover.text_content()  # SVG text: inner_text() does not apply
    assert "source: " in text and ("results_" in text or "Table 2" in text), text
    assert any(character.isdigit() for character in text.split("source:")[0]), text


def test_ibe_report_with_nan_shows_nan(open_page) -> None:
    page = index(open_page, "ibe&view=long")
    page.locator("#table-ibe_wrapper .dt-search input").fill("gemma-fp32")
    row = rows(page, "table-ibe").filter(has_text="selection")
    expect(row).to_contain_text("NaN")
    expect(row).to_contain_text("0.7500")
    page.recorder.assert_clean()


def test_paired_difference_of_the_real_run(open_page) -> None:
    page = index(open_page, "geese&view=long")
    differences = rows(page, "differences-geese").filter(has_text="gemma-3-270m (embedded)")
    expect(differences.first).to_contain_text("effectiveness")
    expect(differences.first).to_contain_text("McNemar's exact test")
    page.wait_for_selector("#forest-geese .main-svg")


def _negated(signed: str) -> str:
    """A difference as ``numbers.signed`` prints it, of the opposite sign (zero reads +0.0000)."""
    return signed if signed == "+0.0000" else ("-" if signed[0] == "+" else "+") + signed[1:]


def test_the_pair_picker_shows_two_runs_tests_either_way_round(open_page, board: Path) -> None:
    """The tests between the embedded run and its copy come from the earlier row's file; picked
    the other way round, mean A and mean B swap and the difference and interval change sign."""
    page = index(open_page, "geese&view=long")
    picker = page.locator("#panel-geese .pair-picker")
    labels = picker.locator(".pair-a option").all_text_contents()
    gemma = next(i for i, label in enumerate(labels) if label.startswith("gemma-3-270m (embedded)"))
    copy = next(i for i, label in enumerate(labels) if label.startswith(COPY))
    first, second = sorted((gemma, copy))
    text = (board / "panels" / "geese.pairs" / f"{first}.js").read_text(encoding="utf-8")
    shard = json.loads(text.split(", ", 1)[1].rsplit(");", 1)[0])
    stored = shard["pairs"][str(second)]
    assert stored, "the two runs logged the same documents"

    def shown(a: int, b: int) -> list[list[str]]:
        picker.locator(".pair-a").select_option(str(a))
        picker.locator(".pair-b").select_option(str(b))
        expect(picker.locator(".pair-table tbody tr")).to_have_count(len(stored))
        return [row.locator("td").all_inner_texts() for row in picker.locator(".pair-table tbody tr").all()]

    forward, backward = shown(first, second), shown(second, first)
    for test, ahead, behind in zip(stored, forward, backward, strict=True):
        _, docs, mean_a, mean_b, difference, interval, _, p_value, p_holm, *_ = test
        assert ahead[2:7] == [str(docs), mean_a, mean_b, difference, interval] and ahead[8:10] == [p_value, p_holm]
        assert behind[3:5] == [mean_b, mean_a] and behind[8:10] == [p_value, p_holm]
        low, high = interval[1:-1].split(", ")
        assert behind[5] == _negated(difference) and behind[6] == f"[{_negated(high)}, {_negated(low)}]"
    picker.locator(".pair-b").select_option(str(second))  # A is the second row now: the same row twice
    expect(picker.locator(".pair-table")).to_have_text("Pick two different rows.")
    page.recorder.assert_clean()


def sample_page(open_page, board: Path, model: str, task: str):
    (name,) = [p.name for p in (board / "samples").glob(f"geese-*{model}*-{task}.html")]
    return open_page(f"samples/{name}", "#samples.dataTable tbody tr")


def test_sample_viewer_finds_a_doc_by_search(open_page, board: Path, tmp_path: Path) -> None:
    page = sample_page(open_page, board, "gemma-3-270m_embedded", "geese_human")
    expect(rows(page, "samples")).to_have_count(4)
    page.locator("#samples_wrapper .dt-search input").fill("Michael Laski")  # sentence 2 of doc id 5
    expect(rows(page, "samples")).to_have_count(1)
    assert column(page, "samples", "id") == ["5"]
    # The search is in the page's address: opening it finds the same document.
    state = page.evaluate("location.hash")
    assert state == "#q=Michael%20Laski", state
    again = open_page("samples/" + page.url.split("/samples/", 1)[1], "#samples.dataTable tbody tr")
    expect(rows(again, "samples")).to_have_count(1)
    page.locator("#samples_wrapper .dt-search input").fill("")
    expect(rows(page, "samples")).to_have_count(4)
    # A click filter (SearchPanes): the documents whose gold label is UNKNOWN.
    pane = page.locator(".dtsp-searchPane").filter(has=page.locator("input[placeholder=gold]"))
    pane.locator("tbody tr", has_text="UNKNOWN").click()
    expect(rows(page, "samples")).to_have_count(2)
    assert column(page, "samples", "gold") == ["UNKNOWN", "UNKNOWN"]
    assert "results file" in page.locator("dl.meta").inner_text()
    page.screenshot(path=str(tmp_path / "samples.png"), full_page=True)
    page.recorder.assert_clean()


def test_a_document_across_every_run_that_logged_it(open_page, board: Path) -> None:
    """HELM's instance view: from a sample, the document as both runs of it saw and answered it."""
    page = sample_page(open_page, board, "gemma-3-270m_embedded", "geese_noexp")
    first = rows(page, "samples").first
    doc = first.locator("td").first.inner_text()
    first.locator("a", has_text="across runs").click()
    page.wait_for_selector("#document table.document tbody tr")
    assert page.url.split("#", 1)[1].startswith("geese-geese_noexp&doc=")
    names = page.locator("#document table.document tbody th").all_inner_texts()
    assert len(names) == 2 and any("gemma-3-270m (embedded)" in n for n in names) and any(COPY in n for n in names)
    shared = page.locator("#document dl.meta")  # what both runs logged alike, once
    expect(shared).to_contain_text("sentence 1")
    expect(shared).to_contain_text("gold")
    heads = page.locator("#document table.document thead th").all_inner_texts()
    assert "correct" in heads  # the copy's first document was flipped: scores differ, one line per run
    expect(page.locator("#document details pre").first).to_contain_text("Hint")  # the prompt, once
    # Each run's line opens its sample page on that document.
    page.locator("#document table.document tbody th a").first.click()
    page.wait_for_selector("#samples.dataTable tbody tr")
    expect(rows(page, "samples")).to_have_count(1)
    assert column(page, "samples", "#") == [doc]
    page.recorder.assert_clean()


def test_charts_hatch_over_each_models_own_colour(open_page) -> None:
    page = index(open_page, "geese&limited=shown")
    page.wait_for_selector("#chart-geese-0 .main-svg")
    traces = page.evaluate(
        "Array.from(document.getElementById('chart-geese-0').data)"
        ".map(t => [t.name, t.marker.color, t.marker.pattern.shape || '', t.marker.pattern.fillmode || ''])"
    )
    limited = [trace for trace in traces if "part of the data" in trace[0]]
    assert len(limited) >= 3 and all(shape == "/" and mode == "overlay" for _, _, shape, mode in limited)
    assert len({colour for _, colour, _, _ in limited}) == len(limited)  # never one grey for all
    # The legend's swatches of runs on part of the data: each its own fill, hatched over it.
    swatches = page.locator("#chart-geese-0 .legend .traces").filter(has_text="part of the data")
    fills = swatches.locator(".legendpoints path").evaluate_all("paths => paths.map(p => getComputedStyle(p).fill)")
    assert len(set(fills)) == len(limited) and all(fill.startswith("url(") for fill in fills), fills


def test_charts_on_a_phone_turn_horizontal_and_keep_labels_apart(open_phone) -> None:
    page = open_phone("index.html#geese", "#summary-geese")
    page.wait_for_selector("#chart-geese-0 .main-svg")
    assert page.evaluate("document.getElementById('chart-geese-0').data[0].orientation") == "h"
    boxes = page.locator("#chart-geese-0 .ytick text").evaluate_all(
        "els => els.map(e => { const b = e.getBoundingClientRect(); return [b.top, b.bottom]; })"
    )
    boxes.sort()
    assert len(boxes) >= 4 and all(a[1] <= b[0] + 0.5 for a, b in pairwise(boxes)), boxes  # no overlap
    svg = page.locator("#chart-geese-0 .main-svg").first.bounding_box()
    legend = page.locator("#chart-geese-0 .legend").bounding_box()
    assert svg["width"] <= PHONE["width"] and legend["y"] + legend["height"] <= svg["y"] + svg["height"] + 1
    assert legend["x"] >= svg["x"] - 1 and legend["x"] + legend["width"] <= svg["x"] + svg["width"] + 1


def test_sample_viewer_shows_hostile_generations_as_text(open_page, board: Path) -> None:
    page = sample_page(open_page, board, "script_alert", "geese_noexp")
    cells = column(page, "samples", "hint")
    assert cells == [HOSTILE_TEXT]
    assert page.locator("#samples tbody img").count() == 0
    page.wait_for_timeout(300)
    page.recorder.assert_clean()


def test_a_reg_number_links_to_its_samples_with_every_judges_calls(open_page, board: Path) -> None:
    page = index(open_page, "reg&limited=shown")
    again = summary_rows(page, "reg", "limited").filter(has_text="judged again by seqcls:tiny-nli,")
    expect(again).to_have_count(1)
    again.locator("details.rests-on summary").click()
    notes = again.locator("details.rests-on")
    expect(notes).to_contain_text("success: judge seqcls:tiny-nli; other judges of these generations: ")
    expect(notes).to_contain_text("openai:gemma-3-270m-chat@")  # the run's own judge, with its number
    href = again.locator("td.main a").get_attribute("href")  # the number links to the samples behind it
    assert "judged_again_by_seqcls_tiny-nli-" in href and (board / href).is_file()
    samples = open_page(href, "#samples.dataTable tbody tr")
    titles = [text.strip() for text in headers(samples, "samples").all_inner_texts()]
    calls = [title for title in titles if title.startswith("judge calls: ")]
    assert len(calls) == 4, titles  # the run's own judge and the three judges asked again
    texts = [text for title in calls for text in column(samples, "samples", title)]
    assert texts and all(text.startswith("call 1, J(p, h): ") and "input: «" in text for text in texts)
    tiny = column(samples, "samples", "judge calls: seqcls:tiny-nli")
    # both calls of an item in N: the input pair (p;e, h) and (p, e), the label, the probabilities
    assert any("call 2, J(p;e, h): " in text and "call 2, J(p, e): " in text for text in tiny), tiny
    assert all(re.search(r"e \d\.\d\d n \d\.\d\d c \d\.\d\d · scores", text) for text in tiny)
    served = next(title for title in calls if title.startswith("judge calls: openai:"))
    assert all("answer '" in text for text in column(samples, "samples", served))  # answered in words
    samples.recorder.assert_clean()


def test_geese_tab_shows_leakage_beside_effectiveness_with_its_test(open_page) -> None:
    page = index(open_page, "geese&limited=shown")
    columns = {}
    for label in ("effectiveness, human", "leakage, human", "LAS, human"):
        head = page.locator("#summary-geese thead th[data-col]").filter(has_text=label).first
        columns[label] = head.get_attribute("data-col")
    order = [int(column[1:]) for column in columns.values()]
    assert order == sorted(order), columns  # leakage and LAS follow effectiveness
    gemma = summary_rows(page, "geese", "limited").filter(has_text="gemma-3-270m (embedded)")
    assert gemma.locator(f"td.{columns['LAS, human']}").inner_text().strip() not in ("", "–")
    gemma.locator("details.rests-on summary").click()
    rests_on = gemma.locator("details.rests-on")
    expect(rests_on).to_contain_text("LAS, human: LAS over 4 docs; leaking ")
    test = r"exact sign-flip test \(McNemar's null in each leakage bin\): p = |undefined: no "
    assert re.search(test, rests_on.inner_text())
    page.recorder.assert_clean()


def test_ibe_sample_shows_its_proof_steps(open_page, board: Path) -> None:
    (name,) = [p.name for p in (board / "samples").glob("ibe-*SmolLM2*-ibe_copa.html")]
    page = open_page(f"samples/{name}", "#samples.dataTable tbody tr")
    proofs = [text for text in column(page, "samples", "proof steps") if "by rule" in text]
    assert proofs, "no explanation of the demo run with a proof"
    first = proofs[0].splitlines()
    assert re.match(r"1\. \w+ ~ \w+ \(similarity [01]\.\d{3}\) by rule \d+: \w+\(X\) :- \w+\(X\)\.$", first[0]), first
    assert re.search(r"by fact: \w+\(x\)\.$", first[-1]), first
    steps = [text for text in column(page, "samples", "coherence per step") if text]
    assert steps and all(
        re.match(r"1\. IF .+ THEN .+: P\(entailment\) \d\.\d{3}, P\(contradiction\)", text) for text in steps
    )
    for name in ("formalized (premise, rules, query)", "drift concepts", "hedge cues"):
        assert any(column(page, "samples", name)), name
    page.recorder.assert_clean()
