"""Shared hooks of the explain-eval task suite: data, prompts, metrics, judges, reports."""
