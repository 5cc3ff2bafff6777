"""Keep the harness' log about what matters: drop its notice for ``custom_dataset`` tasks.

lm-eval 0.4.13 logs a WARNING for every task loaded through ``custom_dataset`` ("Custom kwargs
can be passed to `--metadata` ..."), the loader every task of this suite uses: the ``geese``
group alone printed five, and a user who learns to skip warnings misses the real ones. It is
dropped for the suite's own tasks only (a name starting with a task folder's name, then ``_`` or
the end); every other warning, and this one for other tasks, stays.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

from custom_metrics.common.task_folders import paper_folders

HARNESS_TASK_LOGGER = "lm_eval.api.task"


@lru_cache(maxsize=1)
def _notice() -> re.Pattern[str]:
    keys = "|".join(re.escape(folder.name) for folder in paper_folders())
    return re.compile(rf"^({keys})(_\w+)?: Custom kwargs can be passed to `--metadata`")


class _CustomDatasetNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not _notice().match(str(record.msg))


def quiet_custom_dataset_notice() -> None:
    """Install the filter once per process (importing the suite does it)."""
    logger = logging.getLogger(HARNESS_TASK_LOGGER)
    if not any(isinstance(existing, _CustomDatasetNotice) for existing in logger.filters):
        logger.addFilter(_CustomDatasetNotice())
