"""Keep the harness' log about what matters: drop its notice for ``custom_dataset`` tasks.

lm-eval 0.4.13 logs a WARNING for every task loaded through ``custom_dataset`` ("Custom
kwargs can be passed to `--metadata` ..."), the loader every task of this suite uses so
that it can read the local mirror and pass run settings in the docs. A run of the ``geese``
group alone printed five; a user learns to skip warnings, and then misses the real ones.
The notice is dropped for the suite's own tasks only (their READMEs document
``--metadata``); every other harness warning, and this one for any other task, stays.
"""

from __future__ import annotations

import logging
import re

HARNESS_TASK_LOGGER = "lm_eval.api.task"
_NOTICE = re.compile(r"^(geese|rule|reg|ibe)(_\w+)?: Custom kwargs can be passed to `--metadata`")


class _CustomDatasetNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not _NOTICE.match(str(record.msg))


def quiet_custom_dataset_notice() -> None:
    """Install the filter once per process (importing the suite does it)."""
    logger = logging.getLogger(HARNESS_TASK_LOGGER)
    if not any(isinstance(existing, _CustomDatasetNotice) for existing in logger.filters):
        logger.addFilter(_CustomDatasetNotice())
