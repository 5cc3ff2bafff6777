"""The suite's lm-eval task folders (one per paper), installed with the package as data.

Pass this folder to ``lm_eval --include_path``; ``explain-eval tasks-path`` prints it. No
module of the suite imports this package: ``custom_metrics.common.task_folders`` finds it
through the import system. ``TASKS_PATH`` is re-exported here for scripts that import it.
"""

from custom_metrics.common.task_folders import TASKS_PATH

__all__ = ["TASKS_PATH"]
