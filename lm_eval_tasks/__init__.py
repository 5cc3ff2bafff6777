"""The suite's lm-eval task folders (one per paper), installed with the package as data.

Pass this folder to ``lm_eval --include_path``; ``explain-eval tasks-path`` prints it
(``custom_metrics.common.task_folders.TASKS_PATH`` from Python).
"""
