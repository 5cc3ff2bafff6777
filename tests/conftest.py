"""Shared fixtures: the environment every test runs in, the embedded model (also served by
a real ``transformers serve``), the fixture mirror, a real `lm_eval` CLI runner, the
`fulldata` marker's skip, and how make test's workers share the tests (tests/work_units.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Tests never reach the Hub: a fetch must fail fast instead of hanging on retries. Set before
# the suite is imported: huggingface_hub reads the variable once, when it is first imported.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from tests.helpers import MIRROR, run_lm_eval
from tests.work_units import order_into_units, scheduler

# The fixture fifth paper's tests run in a copy of the tree that holds its package
# (tests/test_fifth_paper.py), never here.
collect_ignore = ["fixtures"]


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``--dist loadfile`` (make test) by units of work (tests/work_units.py)."""
    return scheduler(config, log) if config.getvalue("dist") == "loadfile" else None


@pytest.hookimpl(trylast=True)  # the tests -m and -k selected
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A pytest-xdist worker's tests in their units of work, the slower first (tests/work_units.py).
    Tests marked ``fulldata`` need the full mirror; on a clone without one they skip, saying so."""
    if hasattr(config, "workerinput"):
        order_into_units(items)
    if os.environ.get("EXPLAIN_EVAL_DATA"):
        return
    skip = pytest.mark.skip(reason="full-data test: EXPLAIN_EVAL_DATA is not set (CI sets it to ../shared/data)")
    for item in items:
        if "fulldata" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def full_data() -> Path:
    """The full data mirror named by EXPLAIN_EVAL_DATA (tests using it carry the fulldata marker)."""
    value = os.environ.get("EXPLAIN_EVAL_DATA")
    if not value:
        pytest.skip("EXPLAIN_EVAL_DATA is not set (full-data test)")
    return Path(value).resolve()


@pytest.fixture(scope="session")
def suite_tasks(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every task of the suite, loaded once per session on the fixture mirror (tests/suite_tasks.py)."""
    from tests.suite_tasks import load_suite_tasks

    return load_suite_tasks(tmp_path_factory)


@pytest.fixture(scope="session")
def full_suite_tasks(tmp_path_factory: pytest.TempPathFactory, full_data: Path) -> dict:
    """Every task of the suite on the full data, built as upstream builds tasks: no model, no metadata."""
    from tests.suite_tasks import load_plain_tasks

    return load_plain_tasks(tmp_path_factory, full_data)


@pytest.fixture(scope="session")
def embedded_model() -> Path:
    from custom_metrics.common.embedded_model import ensure_checkpoint

    return ensure_checkpoint()


@pytest.fixture(scope="session")
def small_model() -> Path:
    """The smaller embedded model (SmolLM2-135M-Instruct), for the end-to-end runs whose log-likelihood
    requests are their cost: its 49,152-word vocabulary against gemma's 262,144 makes each scored
    token's logits 5x smaller (GEESE's module run: 50 CPU s against 75)."""
    from custom_metrics.common.embedded_model import SMOLLM2, ensure_checkpoint

    return ensure_checkpoint(SMOLLM2)


@pytest.fixture(scope="session")
def served_model(embedded_model: Path, tmp_path_factory: pytest.TempPathFactory):
    """A real ``transformers serve`` of the embedded model, started once per session.

    Its log (``server.log`` beside the served folder) holds one access line per request,
    which tests count (``ServedModel.requests``); it is stopped when the session ends.
    """
    from tests.serving import chat_model_folder, missing_serving_modules, start_server

    missing = missing_serving_modules()
    if missing:
        pytest.skip(f"the serving extra is not installed ({', '.join(missing)} missing): pip install -e '.[serving]'")
    root = tmp_path_factory.mktemp("served")
    served = start_server(chat_model_folder(embedded_model, root / "gemma-3-270m-chat"), root / "server.log")
    yield served
    served.stop()


@pytest.fixture(scope="session")
def rejudged_reg_run(served_model, tmp_path_factory: pytest.TempPathFactory):
    """A served ``reg_chaos`` run whose judge stopped after generation, completed and judged again by
    three judges with the real ``explain-eval rejudge`` (tests/reg/rejudged_run.py): the rejudge
    tests and the browser's board read it."""
    from tests.reg.rejudged_run import rejudged_run

    run = rejudged_run(served_model, tmp_path_factory.mktemp("rejudged-reg"))
    yield run
    run.proxy.stop()


@pytest.fixture()
def lm_eval_cli(embedded_model: Path, tmp_path: Path):
    """``lm_eval_cli(tasks, limit=2, extra=[...], env={...})`` runs the CLI on the embedded model."""

    def run(tasks: str, **kwargs):
        return run_lm_eval(embedded_model, tasks, tmp_path / "out", **kwargs)

    return run


@pytest.fixture()
def fixture_mirror(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point EXPLAIN_EVAL_DATA at the small committed mirror (real or synthetic rows, few of them)."""
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))
    return MIRROR
