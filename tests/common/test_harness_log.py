"""The harness' custom_dataset notice is dropped for the suite's tasks, and only for them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import custom_metrics  # noqa: F401  (importing the suite installs the filter)
from custom_metrics.common import harness_log
from custom_metrics.common.harness_log import HARNESS_TASK_LOGGER, quiet_custom_dataset_notice

NOTICE = "{}: Custom kwargs can be passed to `--metadata` in console (as json string) or to the TaskManager."


def test_notice_dropped_for_suite_tasks_only(caplog: pytest.LogCaptureFixture) -> None:
    quiet_custom_dataset_notice()  # a second call adds no second filter
    logger = logging.getLogger(HARNESS_TASK_LOGGER)
    assert sum(type(f).__name__ == "_CustomDatasetNotice" for f in logger.filters) == 1
    with caplog.at_level(logging.WARNING, logger=HARNESS_TASK_LOGGER):
        for task in ("geese_noexp", "rule", "reg_chaos", "ibe_copa", "rule_5shot_split1", "hellaswag"):
            logger.warning(NOTICE.format(task))
        logger.warning("geese_noexp: a real problem")
    assert [record.getMessage() for record in caplog.records] == [
        NOTICE.format("hellaswag"),
        "geese_noexp: a real problem",
    ]


def test_a_new_papers_task_folder_is_covered_without_naming_it(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The suite's tasks are those of its task folders: a fifth folder's notice is dropped too."""
    folders = [*harness_log.paper_folders(), Path("esnli")]
    monkeypatch.setattr(harness_log, "paper_folders", lambda: folders)
    harness_log._notice.cache_clear()
    logger = logging.getLogger(HARNESS_TASK_LOGGER)
    try:
        with caplog.at_level(logging.WARNING, logger=HARNESS_TASK_LOGGER):
            for task in ("esnli", "esnli_dev", "esnlix", "geese_noexp"):
                logger.warning(NOTICE.format(task))
    finally:
        harness_log._notice.cache_clear()
    assert [record.getMessage() for record in caplog.records] == [NOTICE.format("esnlix")]
