"""Benchmarks: where a suite run spends its time (``python -m bench.run_all``; see bench/README.md).

Not part of the installed package and not collected by pytest: speed is measured here,
never asserted in tests.
"""
