"""Shared hooks of the explain-eval task suite: data, prompts, metrics, judges, reports."""

from custom_metrics.common.harness_log import quiet_custom_dataset_notice

# The one place the version is written: pyproject.toml reads it, `explain-eval --version`
# prints it, and every file the suite writes for another command records it.
__version__ = "0.3.0"

quiet_custom_dataset_notice()
