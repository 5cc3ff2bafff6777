"""``explain-eval rejudge`` through the real commands, on one shared run (``rejudged_reg_run``).

The run (tests/reg/rejudged_run.py): ONE real ``lm_eval`` of ``reg_chaos_served`` on the served
embedded model whose judge (the same server, through a proxy) goes down after generation, then
ONE real ``explain-eval rejudge OUT --complete --judge A --judge B --judge C``: completed in
place with its own judge (back up), and judged again by two tiny NLI classifiers and a tiny LM
judge. What the rejudge asked the model under test is counted on the server (its access
log) minus the judge's requests (the proxy's count), and lm-eval's request cache
(``LM_HARNESS_CACHE_PATH``) is an empty folder that must stay empty.

The uninterrupted run the completion must equal is the harness' own: ``simple_evaluate`` in
process on the same served model, judge and documents, written by lm-eval's
``EvaluationTracker`` in the CLI's layout (the CLI itself is what the shared run checks).
"""

from __future__ import annotations

import json
import math
import warnings
from collections import Counter
from pathlib import Path

import pytest

from custom_metrics.reg.judging import read_record
from custom_metrics.reg.rejudged import find_rejudged
from tests.helpers import TASKS_DIR, read_samples_files
from tests.reg.rejudged_run import DOCS, TASK

pytestmark = pytest.mark.e2e


def _samples(folder: Path) -> list[dict]:
    (path,) = folder.glob(f"samples_{TASK}_*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def uninterrupted(rejudged_reg_run, tmp_path_factory) -> tuple[dict, list[dict]]:
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager
    from lm_eval.utils import simple_parse_args_string

    run = rejudged_reg_run
    out = tmp_path_factory.mktemp("uninterrupted")
    model_args = run.served.chat_flags()[3]
    # what the CLI hands the task loaders: the model arguments merged under --metadata
    metadata = simple_parse_args_string(model_args) | {
        "judge": run.judge,
        "judge_check": "warn",
        "server": "transformers",
    }
    tracker = EvaluationTracker(output_path=str(out))
    with pytest.MonkeyPatch.context() as patch:
        for key, value in run.env.items():
            patch.setenv(key, value)
        results = simple_evaluate(
            model="local-chat-completions",
            model_args=model_args,
            tasks=[TASK],
            limit=DOCS,
            gen_kwargs="max_gen_toks=16",
            apply_chat_template=True,
            log_samples=True,
            evaluation_tracker=tracker,
            task_manager=TaskManager(include_path=[str(TASKS_DIR)], include_defaults=False, metadata=metadata),
        )
        samples = results.pop("samples")
        tracker.save_results_aggregated(results=results, samples=samples)
        tracker.save_results_samples(task_name=TASK, samples=samples[TASK])
    (results_file,) = out.glob("*/results_*.json")
    return json.loads(results_file.read_text()), read_samples_files(out)[TASK]


def test_a_judge_stopped_after_generation_loses_no_generation(rejudged_reg_run, uninterrupted) -> None:
    run = rejudged_reg_run
    failed, failed_samples = run.interrupted
    records = [read_record(sample["filtered_resps"][0]) for sample in failed_samples]
    assert all(record["judge_error"] and record["initial"] is None for record in records)
    assert math.isnan(failed["results"][TASK]["n,judged"])
    assert run.generation_requests == len(failed_samples) == DOCS  # one per doc, then the judge died

    assert run.command.returncode == 0, run.command.stderr[-3000:]
    assert run.judge_requests > 0  # the run's own judge answered the completion ...
    assert run.server_requests == run.judge_requests  # ... and the model under test was asked nothing
    assert list(run.harness_cache.iterdir()) == []  # lm-eval built no request either

    expected_results, expected = uninterrupted
    assert [s["resps"] for s in failed_samples] == [s["resps"] for s in expected]  # the generations kept
    samples = _samples(run.results_file.parent)
    assert [s["filtered_resps"] for s in samples] == [s["filtered_resps"] for s in expected]
    metrics = expected[0]["metrics"]
    assert json.dumps([[s[m] for m in metrics] for s in samples]) == json.dumps(
        [[s[m] for m in metrics] for s in expected]
    )
    completed = json.loads(run.results_file.read_text())
    assert json.dumps(completed["results"][TASK], sort_keys=True) == json.dumps(
        expected_results["results"][TASK], sort_keys=True
    )


# What a judge's record holds that another judge replaces (custom_metrics/reg/rejudge.py).
VERDICTS = ("judge", "initial", "effectiveness", "coherence", "judge_check")


def _records(samples: list[dict]) -> list[dict]:
    return [read_record(sample["filtered_resps"][0]) for sample in samples]


def test_each_judge_writes_its_verdicts_and_metrics_beside_the_run(rejudged_reg_run) -> None:
    run = rejudged_reg_run
    found, problems = find_rejudged([run.out])
    assert problems == [] and len(found) == len(run.judges) == 3
    logged = _records(_samples(run.results_file.parent))
    own = {record["judge"] for record in logged}
    assert own == {logged[0]["judge"]} and own.isdisjoint(item.judge for item in found)  # the run keeps its judge
    generation = [{k: v for k, v in record.items() if k not in VERDICTS} for record in logged]
    for item in found:
        assert item.original == run.results_file and item.path.parent.parent == run.results_file.parent / "rejudge"
        samples = _samples(item.path.parent)
        records = _records(samples)
        assert {r["judge"] for r in records} == {s["doc"]["judge"] for s in samples} == {item.judge}
        # the same generations, explanations, flags and lengths: only the verdicts are this judge's
        assert [{k: v for k, v in r.items() if k not in VERDICTS} for r in records] == generation
        assert all(r["judge_check"]["items"] > 0 for r in records)  # checked on the gold items first
        entry = json.loads(item.path.read_text())["results"][TASK]
        assert entry["n,judged"] == sum(r["initial"]["label"] == "contradiction" for r in records)
        in_n = [s["success"] for s in samples if s["success"][0]]
        values = [value for _, value in in_n if value is not None]
        expected = sum(values) / len(values) if values else None
        assert (entry["success,judged"] == expected) if expected is not None else math.isnan(entry["success,judged"])
    assert "### Metrics per judge" in run.command.stdout and "### Agreement" in run.command.stdout


def _labels(samples: list[dict]) -> dict[str, dict[str, str]]:
    """Each decision's labels by item, read straight from the logged records (not through the command)."""
    decisions: dict[str, dict[str, str]] = {"J(p, h)": {}, "J(p;e, h)": {}, "J(p, e)": {}, "success": {}}
    for sample in samples:
        record, uid = read_record(sample["filtered_resps"][0]), sample["doc"]["uid"]
        decisions["J(p, h)"][uid] = record["initial"]["label"]
        if record["effectiveness"] and record["coherence"]:
            effect, cohere = record["effectiveness"]["label"], record["coherence"]["label"]
            decisions["J(p;e, h)"][uid], decisions["J(p, e)"][uid] = effect, cohere
            if "unparsed" not in (effect, cohere):
                decisions["success"][uid] = "yes" if effect == "entailment" and cohere != "contradiction" else "no"
    return decisions


def test_kappa_and_mcc_are_scikit_learns_on_the_same_verdicts(rejudged_reg_run) -> None:
    from scipy.stats import binomtest
    from sklearn.metrics import cohen_kappa_score, confusion_matrix, matthews_corrcoef

    run = rejudged_reg_run
    (table,) = (run.results_file.parent / "rejudge").glob("agreement_*.json")
    report = json.loads(table.read_text())
    files = {rater["name"]: rater["file"] for rater in report["raters"] if rater["file"]}
    assert len(files) == 4  # the run's own judge and the three judged again
    labels = {
        name: _labels([json.loads(line) for line in Path(path).read_text().splitlines()])
        for name, path in files.items()
    }
    labels["gold"] = {
        "J(p, h)": {s["doc"]["uid"]: s["doc"]["majority_label"] for s in _samples(run.results_file.parent)}
    }
    # the vote of the four judges, counted here: the most given label among the judges that decided an item
    (vote,) = [rater["name"] for rater in report["raters"] if rater["role"] == "vote of the judges"]
    labels[vote] = {decision: {} for decision in ("J(p, h)", "J(p;e, h)", "J(p, e)", "success")}
    for decision, voted in labels[vote].items():
        for item in {item for name in files for item in labels[name][decision]}:
            given = Counter(labels[name][decision][item] for name in files if item in labels[name][decision])
            ranked = given.most_common()
            if sum(given.values()) > 1 and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]):
                voted[item] = ranked[0][0]
    defined = 0
    for row in report["agreement"]:
        a, b = (labels["gold" if name.startswith("gold") else name] for name in (row["a"], row["b"]))
        if row["decision"] not in a or row["decision"] not in b:
            continue
        items = sorted(set(a[row["decision"]]) & set(b[row["decision"]]))
        first, second = [a[row["decision"]][i] for i in items], [b[row["decision"]][i] for i in items]
        assert row["n"] == len(items)
        if not items:
            continue
        with warnings.catch_warnings():  # one label in all: the labels given make the shape right
            warnings.filterwarnings("ignore", message="A single label was found")
            matrix = confusion_matrix(first, second, labels=row["labels"]).tolist()
        assert row["confusion_matrix"] == matrix
        agreed = sum(x == y for x, y in zip(first, second))
        assert row["raw_agreement"] == agreed / len(items)
        exact = binomtest(agreed, len(items)).proportion_ci(method="exact")
        assert row["raw_agreement_interval"] == pytest.approx([exact.low, exact.high])
        if row["kappa"] is None:  # scikit-learn's undefined kappa is NaN: both raters one and the same label
            assert len(set(first) | set(second)) == 1 and "kappa" in row["undefined"]
        else:
            assert row["kappa"] == pytest.approx(cohen_kappa_score(first, second), abs=1e-12)
        if row["mcc"] is None:  # scikit-learn returns 0.0 here; the table says undefined, and why
            assert (len(set(first)) == 1 or len(set(second)) == 1) and "MCC" in row["undefined"]
        else:
            assert row["mcc"] == pytest.approx(matthews_corrcoef(first, second), abs=1e-12)
            if row["mcc_interval"] is None:  # a bootstrap with no spread gives no interval, and says so
                assert "MCC: no interval" in row["undefined"]
            else:
                low, high = row["mcc_interval"]
                assert -1 <= low < high <= 1
        defined += row["kappa"] is not None and row["mcc"] is not None and row["kappa"] != 0
    assert defined > 0, "no pair of judges with a defined, non-zero kappa and MCC: the check would prove little"


def test_the_leaderboard_shows_every_judge_its_numbers_and_the_spread(rejudged_reg_run, tmp_path) -> None:
    from custom_metrics.leaderboard.build import build_leaderboard

    run = rejudged_reg_run
    board = build_leaderboard([run.out], tmp_path / "board")
    (table,) = [table for table in board.tables if table.key == "reg"]
    rows = [row for row in table.rows if row.kind == "run"]
    found, _ = find_rejudged([run.out])
    judged = {f"judged again by {item.display}" for item in found}
    assert len(rows) == 4 and {row.setting.removesuffix(", non-thinking").split(", ")[-1] for row in rows} >= judged
    own = next(row for row in rows if "judged again" not in row.setting)
    for row in rows:
        basis = row.cells["reg_chaos/n"].basis
        # every number names its judge, then the three other judges' numbers of the same generations
        assert basis.startswith("judge ") and "; other judges of these generations: " in basis, basis
        assert "spread over 4 judges" in basis
    assert own.cells["reg_chaos/n"].basis.startswith("judge openai:gemma-3-270m-chat@")
    for item in found:
        (again,) = [row for row in rows if row.setting.endswith(f"judged again by {item.display}, non-thinking")]
        assert again.cells["reg_chaos/n"].basis.startswith(f"judge {item.display}; ")
        assert f"{item.display} {again.cells['reg_chaos/n'].value:.0f}" in own.cells["reg_chaos/n"].basis
    # the sample viewer: each logged item shows every judge's calls, the run's page and each judge's
    pages = [task for task in board.logged if task.run.task == TASK]
    assert len(pages) == 4
    for task in pages:
        calls = [name for name in task.columns if name.startswith("judge calls: ")]
        assert len(calls) == 4, calls
        for row in task.rows:
            assert all(row[name].startswith("call 1, J(p, h): ") for name in calls)
    texts = [
        row[name] for task in pages for row in task.rows for name in task.columns if name.startswith("judge calls")
    ]
    assert any("call 2, J(p;e, h): " in text and "call 2, J(p, e): " in text for text in texts)
    assert any("input: «" in text for text in texts)
