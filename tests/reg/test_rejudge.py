"""``explain-eval rejudge`` before any judging, and what its tables and pages call each judge.

Every judge is parsed and found and every logged file read before the first judgment: a wrong
judge or a missing samples file costs seconds and writes nothing. These run the real command
in process on the demo's real REG run (``tests/fixtures/leaderboard/demo-generation``: SmolLM2,
two documents, judged by the embedded model); nothing here loads a model.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from custom_metrics.cli import main
from custom_metrics.common.results import friendly_spec
from custom_metrics.reg.rejudged import Rejudged, labels
from custom_metrics.reg.sample_view import calls_text
from tests.helpers import LEADERBOARD_FIXTURES, MIRROR
from tests.judge.endpoint_server import EndpointServer, Reply, completion
from tests.reg.judges import tiny_judge_metadata


@pytest.fixture(autouse=True)
def verdict_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPLAIN_EVAL_JUDGE_CACHE", str(tmp_path / "verdicts"))


@pytest.fixture()
def demo_run(tmp_path: Path) -> Path:
    shutil.copytree(LEADERBOARD_FIXTURES / "demo-generation", tmp_path / "run")
    return tmp_path / "run"


def _written(run: Path) -> list[Path]:
    return sorted(path for path in run.rglob("*") if "rejudge" in path.parts)


def test_every_judge_is_found_before_the_first_judgment(demo_run: Path, tmp_path: Path, capsys) -> None:
    missing = f"lm:{tmp_path / 'no-such-judge'}"  # after the embedded judge, which is there (never loaded)
    assert main(["rejudge", str(demo_run), "--judge", "embedded", "--judge", missing]) == 2
    assert f"there is no folder {tmp_path / 'no-such-judge'}" in capsys.readouterr().err
    assert _written(demo_run) == []  # the first judge judged nothing either


@pytest.mark.parametrize(
    "spec, message",
    [
        ("seqcls:some/model?temperature=0.7", "unknown option 'temperature' for seqcls"),
        ("nli:some/model", "is not understood"),
        ("openai:model-without-url", "expected 'openai:<model>@<base_url>'"),
    ],
)
def test_a_bad_spec_is_named_before_anything_is_read(demo_run: Path, spec: str, message: str, capsys) -> None:
    assert main(["rejudge", str(demo_run), "--judge", spec]) == 2
    error = capsys.readouterr().err
    assert error.startswith("explain-eval rejudge: --judge: ") and message in error
    assert _written(demo_run) == []


def test_a_missing_samples_file_is_named_before_the_first_judgment(demo_run: Path, tmp_path: Path, capsys) -> None:
    (samples,) = demo_run.glob("*/samples_reg_chaos_*.jsonl")
    samples.unlink()
    assert main(["rejudge", str(demo_run), "--judge", "embedded"]) == 2
    error = capsys.readouterr().err
    assert f"task reg_chaos has no samples file {samples.name} beside it" in error and "--log_samples" in error
    assert _written(demo_run) == []


def test_a_run_of_no_judged_task_says_where_a_judge_applies(tmp_path: Path, capsys) -> None:
    shutil.copytree(LEADERBOARD_FIXTURES / "geese-authors", tmp_path / "geese")
    assert main(["rejudge", str(tmp_path / "geese"), "--judge", "embedded"]) == 2
    error = capsys.readouterr().err
    assert "no logged run of a task a judge decides" in error and "REG: reg_chaos*" in error
    assert "The other papers' tasks have no judge to ask again" in error and "where a judge applies" in error


def test_no_judge_and_no_completion_is_a_usage_error(demo_run: Path, capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["rejudge", str(demo_run)])
    assert stopped.value.code == 2 and "--judge SPEC" in capsys.readouterr().err


def test_reg_rejudge_completes_only_what_failed_and_never_rewrites_verdicts(demo_run: Path, capsys) -> None:
    files = {path: path.read_bytes() for path in demo_run.rglob("*") if path.is_file()}
    assert main(["reg-rejudge", str(demo_run)]) == 0  # = rejudge --complete: every sample holds its verdicts
    assert "every sample holds its judge's verdicts; nothing to complete" in capsys.readouterr().out
    assert {path: path.read_bytes() for path in files} == files


def test_two_judges_that_read_alike_are_told_apart(tmp_path: Path) -> None:
    run = tmp_path / "results_x.json"
    items = [
        Rejudged(tmp_path / "a" / "r.json", "seqcls:/one/final", "seqcls:final", run, ("lm:base",)),
        Rejudged(tmp_path / "b" / "r.json", "seqcls:/two/final", "seqcls:final", run, ("lm:base",)),
        Rejudged(tmp_path / "c" / "r.json", "lm:/x/base", "lm:base", run, ("lm:base",)),  # reads as the run's own
        Rejudged(tmp_path / "d" / "r.json", "seqcls:/x/other", "seqcls:other", run, ("lm:base",)),
    ]
    named = labels(items)
    assert named[items[0].path].startswith("seqcls:final #") and named[items[0].path] != named[items[1].path]
    assert named[items[2].path].startswith("lm:base #") and named[items[3].path] == "seqcls:other"


def test_a_served_judge_reads_as_its_model_and_server() -> None:
    # transformers serve names a model by its folder: the path ends where the server's URL begins
    spec = "openai:/srv/models/gemma-3-270m-chat@http://127.0.0.1:8000/v1?mode=loglik&thinking=off"
    assert friendly_spec(spec) == "openai:gemma-3-270m-chat@http://127.0.0.1:8000/v1?mode=loglik&thinking=off"


def test_the_viewer_shows_why_a_call_was_not_made() -> None:
    doc = {"premise": "P.", "hypothesis": "H."}
    verdict = {
        "label": "neutral",
        "probs": {"entailment": 0.2, "neutral": 0.5, "contradiction": 0.3},
        "method": "scores",
    }
    outside = {"initial": verdict, "effectiveness": None, "coherence": None, "explanation": "E.", "flag": ""}
    assert calls_text(outside, doc) == (
        "call 1, J(p, h): neutral · e 0.20 n 0.50 c 0.30 · scores\n  input: «P.» → «H.»\n"
        "call 2 not made: J(p, h) is not contradiction, so the item is outside N"
    )
    said = {"label": "contradiction", "probs": {}, "method": "text", "answer": "Contradiction."}
    flagged = {**outside, "initial": {**said, "probs": {"entailment": 0, "neutral": 0, "contradiction": 1}}}
    flagged["flag"] = "cut_off"
    assert calls_text(flagged, doc).endswith("call 2 not made: the output holds no explanation (cut_off)")
    assert "answer 'Contradiction.' · text" in calls_text(flagged, doc)
    assert calls_text({"judge_error": "ConnectionError: refused"}, doc).startswith("no verdicts: the judge failed")


def _neutral_judge(folder: Path) -> str:
    """A tiny real classifier whose bias makes every verdict neutral: what the CPU's embedded
    judge did on the demo's items (no contradiction, so every judged number is NaN)."""
    import torch
    from transformers import AutoModelForSequenceClassification

    model_dir = Path(tiny_judge_metadata(folder)["judge"].removeprefix("seqcls:"))
    model = AutoModelForSequenceClassification.from_pretrained(model_dir)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([0.0, 10.0, 0.0]))  # entailment, neutral, contradiction
    model.save_pretrained(model_dir)
    return f"seqcls:{model_dir}"


def test_a_run_judged_again_with_no_judged_number_builds_its_leaderboard(
    demo_run: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))  # the judge check's gold items
    # The offline CPU case: the run's own judge (the embedded model) and the judge asked again
    # both call no item a contradiction, so neither has a coherence, effectiveness or success.
    judge = _neutral_judge(tmp_path)
    assert main(["rejudge", str(demo_run), "--judge", judge, "--judge-check", "warn"]) == 0
    capsys.readouterr()
    # the demo's run read 2 of ChaosNLI's 275 items: its agreement report says so
    agreement = next(demo_run.rglob("agreement_samples_reg_chaos_*.md"))
    assert "the run covered part of the data (2 of 275 docs): every rater's numbers are of those" in (
        agreement.read_text()
    )
    assert main(["leaderboard", str(demo_run), "--out", str(tmp_path / "board")]) == 0, capsys.readouterr().err
    from custom_metrics.leaderboard.build import build_leaderboard

    (table,) = [t for t in build_leaderboard([demo_run], tmp_path / "again").tables if t.key == "reg"]
    rows = [row for row in table.rows if row.kind == "run"]
    assert len(rows) == 2
    for row in rows:
        coherence = next(cell for key, cell in row.cells.items() if key.startswith("reg_chaos/coherence"))
        assert "other judges of these generations: " in coherence.basis and "spread" not in coherence.basis
        assert "NaN" in coherence.basis  # the other judge's number, shown as what it is


def test_a_degenerate_judges_banner_names_rejudges_own_option(
    demo_run: Path, fixture_mirror: Path, caplog: pytest.LogCaptureFixture, capsys
) -> None:
    """The judge check's banner advises what this command takes (``--judge``), not a run's
    ``--metadata judge=...``, which ``rejudge`` has no use for."""
    server = EndpointServer(lambda body: Reply(completion("Contradiction")))  # one label for every gold item
    try:
        with caplog.at_level(logging.WARNING):
            assert main(["rejudge", str(demo_run), "--judge", f"openai:scripted@{server.url}"]) == 2
    finally:
        server.close()
    assert "is degenerate" in capsys.readouterr().err
    (banner,) = [record.getMessage() for record in caplog.records if "REG JUDGE CHECK FAILED" in record.getMessage()]
    assert "Choose a stronger judge with --judge SPEC" in banner and "--metadata" not in banner, banner
    assert _written(demo_run) == []
