"""Shared hooks of the explain-eval task suite: data, prompts, metrics, judges, reports."""

from custom_metrics.common.harness_log import quiet_custom_dataset_notice

quiet_custom_dataset_notice()
