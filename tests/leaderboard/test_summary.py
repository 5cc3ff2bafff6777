"""The summary view's logic, without a browser: ranking, limited runs apart, Δ vs paper and its
test, the papers' rows a run compares with, intervals and ranks, task configs that are not the suite's, paths and
links, derived rows' inputs, and the charts' rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from scipy import stats
from scipy.stats.contingency import odds_ratio

from custom_metrics.common.leaderboard_types import Cell, Row
from custom_metrics.common.results import friendly_spec, load_runs
from custom_metrics.geese import data as geese_data
from custom_metrics.geese.leaderboard import SPEC as GEESE
from custom_metrics.ibe.data import ECARE_TEST_SIZE
from custom_metrics.ibe.selection import FULL_TEST_QUESTIONS, load_ibe_tables, note_scorers
from custom_metrics.leaderboard import charts
from custom_metrics.leaderboard.display import Paths, hub_id, hub_url
from custom_metrics.leaderboard.evidence import run_evidence
from custom_metrics.leaderboard.numbers import cell_text, signed
from custom_metrics.leaderboard.procedures import FISHER, share_interval
from custom_metrics.leaderboard.registry import OTHER
from custom_metrics.leaderboard.render import headline_fields
from custom_metrics.leaderboard.summary import LIMITED, RANKED, UNRANKED, build_summary
from custom_metrics.leaderboard.summary_html import SummaryContext, _delta
from custom_metrics.leaderboard.tables import build_tables
from custom_metrics.leaderboard.task_configs import config_difference, suite_configs
from custom_metrics.leaderboard.versus_paper import REFERENCE, model_key, paper_delta
from custom_metrics.leaderboard.wording import delta_words, row_flags
from custom_metrics.reg.leaderboard import SPEC as REG
from custom_metrics.rule.answers import asked_question
from custom_metrics.rule.leaderboard import SPEC as RULE
from custom_metrics.rule.published import published_rows
from tests.helpers import LEADERBOARD_FIXTURES
from tests.leaderboard.test_leaderboard import modern_results

AUTHORS = LEADERBOARD_FIXTURES / "geese-authors"  # andreazaninello/calamita-geese@de12d08, see README


def tables_of(*paths: Path) -> dict:
    runs, problems = load_runs(paths)
    assert problems == []
    return {table.key: table for table in build_tables(runs)}


def test_authors_full_run_ranks_with_the_paper_and_their_24_doc_runs_apart() -> None:
    geese = tables_of(AUTHORS)["geese"]
    summary = build_summary(geese, GEESE)
    assert summary.main.keys == ("geese_llama3/acc",) and summary.full_runs
    by_group = {group: [e for e in summary.rows if e.group == group] for group in (RANKED, LIMITED, UNRANKED)}
    ranked = [(e.row.model, e.row.origin or e.row.kind, e.rank, e.cells[0].value) for e in by_group[RANKED]]
    # their batch-24 file (0.78125, read as a run) is the one contender, first; the paper's rows are
    # references below it, the batch-size-1 repository run named as such, never "paper"
    calamita = [entry for entry in ranked if entry[1] == "CALAMITA harness"]  # references: no Llama-3 column
    assert [entry for entry in ranked if entry not in calamita] == [
        ("meta-llama/Meta-Llama-3-8B (authors' GEESE tasks)", "run", 1, 0.78125),
        ("Llama-3-8B", "authors' repository run", None, 0.78375),
        ("Llama-3-8B", "paper", None, 0.7812),
    ]
    assert len(calamita) == 4 and all(value is None and rank is None for _, _, rank, value in calamita)
    assert [e.contender for e in by_group[RANKED] if e.row.origin != "CALAMITA harness"] == [True, False, False]
    (early,) = by_group[LIMITED]  # their --limit 24 runs under our task names
    assert early.row.model == "meta-llama/Meta-Llama-3-8B" and early.rank == 1
    assert early.cells[0].limited == "--limit 24, 24 docs"
    # every number with its interval: the run's from its 625 of 800 documents, the paper's from its 800
    full = by_group[RANKED][0].cells[0]
    assert (full.evidence.k, full.evidence.n) == (625, 800)
    assert full.interval == share_interval(625, 800)
    # the sanity check (hint = gold label) is shown and never the ranking metric
    sanity = next(h for h in summary.headlines if h.sanity)
    assert sanity.keys[0] == "geese_prediction_obvious/acc" and summary.main is not sanity
    assert full.rank == 1 and by_group[RANKED][0].cells[-1].rank is None


def test_delta_vs_paper_for_llama_3_8b_is_fishers_exact_test() -> None:
    geese = tables_of(AUTHORS)["geese"]
    summary = build_summary(geese, GEESE)
    early = next(e for e in summary.rows if e.group == LIMITED)
    delta = early.cells[0].delta  # geese_llama3 acc 15 of 24 docs vs Table 2's 0.7812 of 800 (625)
    assert delta.same_model and delta.paper.model == "Llama-3-8B" and delta.test == FISHER
    assert delta.difference == pytest.approx(0.625 - 0.7812) and delta.paper_items == 800
    table = [[15, 9], [625, 175]]
    lower = stats.fisher_exact(table, alternative="less").pvalue
    assert delta.p_value == pytest.approx(min(1, 2 * lower))  # twice the smaller one-sided p
    ci = odds_ratio(table, kind="conditional").confidence_interval()
    assert (delta.low, delta.high) == pytest.approx((ci.low, ci.high)) and delta.interval_of == "odds ratio"
    assert not delta.significant and delta.low < 1 < delta.high  # 24 docs cannot tell 0.625 from 0.78
    effectiveness = next(c for c in early.cells if c.key == "geese_llama3/effectiveness")
    assert effectiveness.delta.p_value is None and "needs both tasks' logged samples" in effectiveness.delta.test
    # Holm within the row's own tests: the adjusted p is never below the raw one, the family is named
    assert delta.p_adjusted >= delta.p_value and 1 < delta.family < summary.tests
    assert delta.family_name == "Δ vs paper of meta-llama/Meta-Llama-3-8B · zero-shot"


def test_a_model_the_paper_lacks_gets_a_reference_line_without_delta(tmp_path: Path) -> None:
    """The legend defines Δ against the same model's number: another model's row is its number as a
    reference line, with no Δ (the cell read "Δ -0.2812 vs Llama-3-8B (reference) reference line,
    not tested"), in words, on the page and in the exports."""
    (tmp_path / "results_x.json").write_text(json.dumps(modern_results("org/other", {"geese_llama3": 0.5}, 1.0)))
    summary = build_summary(tables_of(tmp_path)["geese"], GEESE)
    run = next(e for e in summary.rows if e.row.kind == "run")
    delta = run.cells[0].delta
    assert not delta.same_model and delta.paper.model == "Llama-3-8B"
    assert delta.difference is None and delta.test == REFERENCE and delta.p_value is None and not delta.significant
    assert summary.tests == 0
    assert delta_words(delta) == f"reference line: Llama-3-8B · zero-shot, M2 (reference), 0.7812; {REFERENCE}"
    html = _delta(run.cells[0], SummaryContext(Paths([]), {}))
    assert "Δ" not in html.replace("no Δ", "") and "reference: Llama-3-8B 0.7812" in html
    assert headline_fields(run.cells[0], run)["delta"] == ""


@pytest.mark.parametrize(
    ("ours", "paper"),
    [
        ("meta-llama/Meta-Llama-3-8B", "Llama-3-8B"),
        ("meta-llama/Llama-2-13b-hf", "LLaMA2 13B"),
        ("meta-llama/Llama-2-7b-hf", "LLaMA 2 7B"),
        ("mistralai/Mistral-7B-v0.1", "Mistral 7B"),
        ("google/gemma-4-31b-it", "Gemma-4-31B-it"),
    ],
)
def test_model_names_match_the_papers_loosely(ours: str, paper: str) -> None:
    assert model_key(ours) == model_key(paper)


def test_rule_runs_compare_with_the_same_setting_and_the_paper_states_its_items(tmp_path: Path) -> None:
    data = modern_results("org/x", {}, 1.0)
    data["results"] = {"rule": {"alias": "rule", "consistency,none": 0.1, "mainq_acc,none": 0.6}}
    data["n-samples"] = {"rule": {"original": 3946, "effective": 3946}}
    data["n-shot"] = {"rule": 0}
    (tmp_path / "results_x.json").write_text(json.dumps(data))
    summary = build_summary(tables_of(tmp_path)["rule"], RULE)
    run = next(e for e in summary.rows if e.row.kind == "run")
    consistency = run.cells[0]
    # InstructGPT zero-shot (the reference), not its five-shot row: a reference line
    assert consistency.delta.paper.setting == "zero-shot" and consistency.delta.paper.model == "InstructGPT"
    assert consistency.delta.test == REFERENCE
    # the combined `rule` task mixes question kinds: without samples no count of its main questions
    assert consistency.interval is None and "neither logged samples" in consistency.evidence.reason
    paper = next(e for e in summary.rows if e.row.model == "InstructGPT" and e.row.setting == "zero-shot")
    assert (paper.cells[0].evidence.k, paper.cells[0].evidence.n) == (146, 943)  # 15.5% of 943
    # RULE's zero-shot MainQ "±0.00" is 0 by construction: no ± on the page
    instruct = next(r for r in published_rows() if r.model == "InstructGPT" and r.setting == "zero-shot")
    assert instruct.cells["rule/mainq_acc"].pm is None


def test_the_count_comes_from_the_logged_outcomes(tmp_path: Path) -> None:
    data = modern_results("google/gemma-4-31b-it", {}, 1.0)
    data["results"] = {"reg_chaos": {"alias": "reg_chaos", "success,judged": 0.5, "n,judged": 4}}
    data["n-samples"] = {"reg_chaos": {"original": 275, "effective": 275}}
    (tmp_path / "results_2026-01-01T00-00-00.json").write_text(json.dumps(data))
    (tmp_path / "samples_reg_chaos_2026-01-01T00-00-00.jsonl").write_text("")
    reg = tables_of(tmp_path)["reg"]
    run = next(row for row in reg.rows if row.kind == "run")
    samples = run.samples["reg_chaos"]
    outcomes = {samples: {"success": {"a": 1.0, "b": 0.0, "c": 1.0, "d": 0.0}}}
    evidence = run_evidence(REG, run, "reg_chaos/success", run.cells["reg_chaos/success"], outcomes)
    assert (evidence.k, evidence.n, evidence.basis) == (2, 4, "logged samples")
    # without samples, REG's share_of names |N| (the run's n), not its 275 documents
    evidence = run_evidence(REG, run, "reg_chaos/success", run.cells["reg_chaos/success"], {})
    assert (evidence.k, evidence.n, evidence.basis) == (2, 4, "results file")
    delta = paper_delta(REG, REG.board.headlines[0], run, "reg_chaos/success", reg.rows[1:], evidence)
    assert delta.same_model and delta.test.startswith("no test: 4 item(s) are too few")  # vs 0.4564


def test_reg_thinking_runs_compare_with_the_papers_thinking_rows(tmp_path: Path) -> None:
    data = modern_results("google/gemma-4-31b-it", {}, 1.0)
    data["results"] = {
        task: {"alias": task, "success,judged": value, "n,judged": 195}
        for task, value in (("reg_chaos", 0.45), ("reg_chaos_thinking_served", 0.5))
    }
    data["n-samples"] = {task: {"original": 275, "effective": 275} for task in data["results"]}
    # logged as the harness logs it: functions by their source
    logged = {
        "doc_to_text": "def generation_prompt(doc):\n    ...",
        "custom_dataset": "def load_reg(**kwargs):\n    ...",
        "dataset_kwargs": {"mode": "thinking", "backend": "served"},
    }
    data["configs"] = {"reg_chaos_thinking_served": logged}
    data["versions"] = {
        "reg_chaos_thinking_served": suite_configs()["reg_chaos_thinking_served"]["metadata"]["version"]
    }
    (tmp_path / "results_x.json").write_text(json.dumps(data))
    reg = tables_of(tmp_path)["reg"]
    summary = build_summary(reg, REG)
    runs = {e.row.setting: e for e in summary.rows if e.row.kind == "run"}
    assert set(runs) == {"non-thinking", "thinking"}
    thinking = runs["thinking"].cells[0]
    assert thinking.value == 0.5 and thinking.delta.paper.setting == "thinking" and thinking.delta.same_model
    assert thinking.delta.difference == pytest.approx(0.5 - 0.4718)
    assert runs["non-thinking"].cells[0].delta.paper.setting == "non-thinking"
    # checked as the suite's reg_chaos_thinking_served, whose config it logged: no difference
    assert runs["thinking"].row.config_differences == {}
    assert any("reg_chaos read from reg_chaos_thinking_served" in note for note in reg.notes)


def test_zero_stderr_shows_no_plus_minus_and_no_minus_zero() -> None:
    assert cell_text(Cell(1.0, 0.0)) == "1.0000"
    assert cell_text(Cell(0.5, 0.01)) == "0.5000 ± 0.0100"
    # a paper's digits as printed, a stderr copied whole from a results file rounded for reading
    assert cell_text(Cell(0.78375, 0.014564428416311686, "0.78375", "0.014564428416311686")) == "0.78375 ± 0.0146"
    assert signed(0.21375 - 0.2138) == "+0.0000" and signed(-0.15625) == "-0.1562"


def test_config_differences_name_prompt_dataset_and_version(tmp_path: Path) -> None:
    geese = tables_of(AUTHORS)["geese"]
    rows = {row.model: row for row in geese.rows if row.kind == "run"}
    early = rows["meta-llama/Meta-Llama-3-8B"].config_differences
    assert set(early) == {"geese_noexp", "geese_dummy", "geese_human", "geese_llama3"}
    assert early["geese_human"].startswith('prompt template "Sentence 1:{{text_t}}Sentence 2')
    assert (
        "dataset azaninello/explained-llama-3 (the suite reads azaninello/explained-full-llama-3)"
        in early["geese_human"]
    )
    # their 800-doc files: the template is ours once their hint field reads {{hint}}, the data ours
    assert rows["meta-llama/Meta-Llama-3-8B (authors' GEESE tasks)"].config_differences == {}
    assert GEESE.board.suite_datasets == (geese_data.HUB_ID,)
    assert any("not this suite's task config" in note for note in geese.notes)
    ours = dict(suite_configs()["geese_noexp"])
    logged = {**ours, "custom_dataset": "def load_m2(...)", "doc_to_text": ours["doc_to_text"]}
    assert config_difference(GEESE, "geese_noexp", logged, 1.0) == "version 1 (the suite: 2)"
    assert config_difference(GEESE, "geese_noexp", logged, 2.0) == ""
    assert config_difference(GEESE, "geese_noexp", None, 1.0) == ""  # nothing logged: not checked
    function = {"doc_to_text": "def generation_prompt(doc):\n ...", "custom_dataset": "def load(...)"}
    assert config_difference(REG, "reg_chaos", function, None) == ""
    other = {**function, "doc_to_text": "Explain: {{premise}}"}
    assert config_difference(REG, "reg_chaos", other, None) == "prompt: not the suite's generation_prompt()"


def test_effectiveness_from_two_results_files_names_both(tmp_path: Path) -> None:
    for name, task, acc in (("a", "geese_noexp", 0.5), ("b", "geese_human", 0.75)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results_1.json").write_text(json.dumps(modern_results("org/x", {task: acc}, 1.0)))
    geese = tables_of(tmp_path)["geese"]
    run = next(row for row in geese.rows if row.kind == "run")
    basis = run.cells["geese_human/effectiveness"].basis
    assert basis.startswith("acc of geese_human (800 docs) − acc of geese_noexp (800 docs), from two results files")
    assert str(tmp_path / "a" / "results_1.json") in basis and str(tmp_path / "b" / "results_1.json") in basis
    shown = Paths([tmp_path]).text(basis)
    assert f"{tmp_path.name}/b/results_1.json and {tmp_path.name}/a/results_1.json" in shown  # hint, then baseline


def test_ibe_selection_of_a_cut_short_run_is_limited_and_says_what_it_rests_on(tmp_path: Path) -> None:
    shutil.copytree(LEADERBOARD_FIXTURES / "ibe-report", tmp_path / "ibe")
    runs, problems = load_ibe_tables([tmp_path / "ibe"])
    assert problems == []
    notes: list[str] = []
    selection = next(r for r in note_scorers(runs, notes) if r.task == "ibe_copa_selection")
    assert FULL_TEST_QUESTIONS["ecare"] == ECARE_TEST_SIZE
    # a report that records no generation run: cut short by its count of test questions
    assert selection.subset == "from a run cut short: 8 of 500 test questions"
    assert selection.derived.startswith("selector fitted on 16 explanations; tested on 8 questions")
    # the demo's real --samples run: the report names the run and how much of ibe_copa it covered
    runs, problems = load_ibe_tables([LEADERBOARD_FIXTURES / "demo-generation"])
    assert problems == []
    (selection,) = [r for r in runs if r.task == "ibe_copa_selection"]
    assert selection.subset == "from a run cut short: ibe_copa: 8 of 2,000 docs (--samples)"
    assert selection.derived == (
        "selector fitted on 4 explanations; tested on 2 questions; "
        "explanations scored from samples_ibe_copa_2026-12-01T01-15-05.988826.jsonl"
    )


def test_pages_name_files_below_their_input_and_judges_without_paths(tmp_path: Path) -> None:
    paths = Paths([tmp_path / "runs"])
    inside = tmp_path / "runs" / "__home__me__ckpt" / "results_1.json"
    assert paths.show(inside) == "runs/…/results_1.json"
    assert (
        paths.text(f"using the newest, {inside}; ignoring x") == "using the newest, runs/…/results_1.json; ignoring x"
    )
    assert paths.show(tmp_path / "elsewhere" / "results_2.json") == "results_2.json"
    assert friendly_spec("lm:/root/.cache/explain-eval/gemma-3-270m-hf?mode=loglik") == (
        "lm:gemma-3-270m (embedded)?mode=loglik"
    )
    assert friendly_spec("openai:gemma-4-31b-it@http://localhost:8000/v1") == (
        "openai:gemma-4-31b-it@http://localhost:8000/v1"
    )
    assert hub_url("meta-llama/Meta-Llama-3-8B") == "https://huggingface.co/meta-llama/Meta-Llama-3-8B"
    assert hub_id("/root/.cache/explain-eval/gemma-3-270m-hf") is None and hub_id("gpt-4o") is None
    assert hub_id("/data/hub/models--Qwen--Qwen3.5-9B/snapshots/0123abcd") == "Qwen/Qwen3.5-9B"


def test_rule_sample_rows_show_the_question_asked() -> None:
    line = " \n "
    demo = line.join(["Context: c", "Question: Which one is a demo?", "Option0: a", "Answer: The answer is Option0"])
    asked = line.join(["Context: d", "Question: Which option weakens the argument?", "Option0: x", "Option1: y"])
    assert asked_question(f"{demo}\n\n{asked}{line}Answer: The answer is Option") == (
        "Which option weakens the argument?"
    )
    assert asked_question(None) is None


def test_charts_keep_a_paper_row_and_mark_missing_values(tmp_path: Path) -> None:
    data = modern_results("org/x", {}, 1.0)
    data["results"] = {"reg_chaos": {"alias": "reg_chaos", "success,judged": float("nan"), "n,judged": 0}}
    data["n-samples"] = {"reg_chaos": {"original": 275, "effective": 2}}
    (tmp_path / "results_x.json").write_text(json.dumps(data))
    reg = tables_of(tmp_path)["reg"]
    summary = build_summary(reg, REG)
    found = charts.family_charts(summary, REG, Paths([tmp_path]), "chart-reg")
    assert found[0][1].startswith("Reconciling explanations")
    figure = found[0][2]
    names = [trace["name"] for trace in figure["data"]]
    papers = [name for name in names if name.endswith("(paper)")]
    # 26 paper rows: the best 4 on success plus the reference model the run is compared with
    assert len(papers) == 5 and "Gemma-4-31B-it · non-thinking (paper)" in papers
    run = next(trace for trace in figure["data"] if trace["name"].startswith("org/x"))
    assert run["text"][0] == "n/a" and run["marker"]["pattern"]["shape"] == "/"  # NaN, on part of the data
    assert run["y"][0] is None  # drawn as missing: no bar, not one of height 0
    # A row's colour is a function of its names alone (its place on the chart, the other rows: nothing).
    paper = reg.rows[1]
    assert charts.colour(Row(paper.model, "published", [], setting=paper.setting)) == charts.colour(paper)
    assert charts.colour(paper).startswith("hsl(215, 8%")  # the paper's rows: greys
    # Models on one page get distinct hues of the palette, 30° apart, even where names collide.
    names = [f"org/model-{i}" for i in range(12)]
    hues = charts.model_hues(names)
    assert sorted(hues.values()) == list(charts.HUES)
    assert len({charts._hash(name) % len(charts.HUES) for name in names}) < 12  # some names wanted one slot
    alone = charts.model_hues(["org/model-0"])["org/model-0"]
    assert alone == charts.HUES[charts._hash("org/model-0") % 12]
    run_colour = charts.colour(Row("org/x", "run", [], setting="zero-shot"))
    assert run_colour == charts.colour(Row("org/x", "run", ["other"], setting="zero-shot"))
    assert run_colour.split(",")[0] == charts.colour(Row("org/x", "run", [], setting="five-shot")).split(",")[0]
    assert run["marker"]["color"] == charts.colour(next(r for r in reg.rows if r.kind == "run"))
    assert run["marker"]["pattern"]["fillmode"] == "overlay"  # the hatch drawn over the model's colour


def test_other_tasks_get_a_summary_too(tmp_path: Path) -> None:
    (tmp_path / "results_x.json").write_text(json.dumps(modern_results("org/x", {"arc_easy": 0.5}, 1.0)))
    other = tables_of(tmp_path)["other"]
    summary = build_summary(other, OTHER)
    assert [h.keys for h in summary.headlines] == [("arc_easy/acc",)]
    assert summary.rows[0].rank == 1


def test_a_file_passed_over_for_several_tasks_is_named_once() -> None:
    row = Row("m", "run", [], passed_over=["runs/a.json", "runs/a.json", "runs/b.json", "runs/a.json"])
    assert row_flags(row) == ["newer run used; passed over: runs/a.json, runs/b.json"]
