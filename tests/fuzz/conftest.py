"""Hypothesis profiles for the property-based tests in tests/fuzz (issue 17).

``fast`` (the default, what ``make test`` and CI run) tries a few dozen inputs per
property with a per-input deadline, so the folder adds seconds, not minutes; it is
derandomized, so a CI run is reproducible and never red by the luck of the draw (an input
found by a long run is pinned as an ``@example``). ``long``
(``HYPOTHESIS_PROFILE=long``, or ``make fuzz``) tries thousands, without a deadline, to
dig out rarer failures before a release. A failure prints the input that broke the
property and a ``@reproduce_failure`` blob that replays it.
"""

from __future__ import annotations

import os
from datetime import timedelta

from hypothesis import HealthCheck, settings

PROFILE_ENV = "HYPOTHESIS_PROFILE"

# Inputs here are whole files and long texts: generating them is slow on a busy 2-core box.
_SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile(
    "fast",
    max_examples=30,
    deadline=timedelta(seconds=5),
    suppress_health_check=_SLOW_DATA,
    print_blob=True,
    derandomize=True,
)
settings.register_profile("long", max_examples=2_000, deadline=None, suppress_health_check=_SLOW_DATA, print_blob=True)
settings.load_profile(os.environ.get(PROFILE_ENV, "fast"))
