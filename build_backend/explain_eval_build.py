"""The package's build backend: setuptools' own, leaving the source folder as it found it.

``pip install file://<clone>`` (and ``pip wheel``) build in the clone, and setuptools leaves
``build/lib`` (a copy of every package, the task YAMLs included) and ``*.egg-info`` behind.
``lm_eval --include_path .`` from that clone then indexes the stale ``build/lib`` copy of the
tasks, and lm-eval may run it instead of the installed one. Every hook here is setuptools'
``build_meta`` hook of the same name; the wheel and sdist hooks remove the folders they
created when they return (ones that were there before are left alone). Editable installs
are setuptools' own: a strict editable install keeps its links under ``build/``.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools

LEFT_BEHIND = ("build", "explain_eval.egg-info")  # what setuptools writes into the source folder


def _clean(hook: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(hook)
    def run(*args: Any, **kwargs: Any) -> Any:
        source = Path.cwd()  # PEP 517: hooks run in the source tree
        before = {name for name in LEFT_BEHIND if (source / name).exists()}
        try:
            return hook(*args, **kwargs)
        finally:
            for name in LEFT_BEHIND:
                if name not in before:
                    shutil.rmtree(source / name, ignore_errors=True)

    return run


get_requires_for_build_wheel = _clean(_setuptools.get_requires_for_build_wheel)  # it runs egg_info
get_requires_for_build_sdist = _clean(_setuptools.get_requires_for_build_sdist)
get_requires_for_build_editable = _setuptools.get_requires_for_build_editable
build_wheel = _clean(_setuptools.build_wheel)
build_sdist = _clean(_setuptools.build_sdist)
prepare_metadata_for_build_wheel = _clean(_setuptools.prepare_metadata_for_build_wheel)
build_editable = _setuptools.build_editable
prepare_metadata_for_build_editable = _setuptools.prepare_metadata_for_build_editable
