"""``--metadata`` keys: a misspelled suite key is refused; lm-eval's own keys and other tasks' never are."""

from __future__ import annotations

import importlib.util
import inspect
import re

import pytest
import yaml

from custom_metrics.common.errors import DataError
from custom_metrics.common.metadata import HARNESS_KEYS, check_metadata_keys, suite_keys
from tests.helpers import TASKS_DIR


@pytest.mark.parametrize(
    "key, meant", [("jugde", "judge"), ("judge_cahce", "judge_cache"), ("hnt", "hint"), ("explanation", "explanations")]
)
def test_a_misspelled_suite_key_is_refused_naming_the_key_meant(key, meant):
    with pytest.raises(DataError, match=rf"reg_chaos: --metadata key '{key}' .* did you mean '{meant}'\?"):
        check_metadata_keys("reg_chaos", ["judge", key])


def test_model_arguments_other_tasks_keys_and_unrelated_keys_pass():
    # ``model`` is close to REG's ``mode`` and ``seed`` to nothing: model arguments are never typos
    check_metadata_keys("reg_chaos", [*HARNESS_KEYS, *suite_keys(), "my_note", "run_label"])


def _loaders() -> list:
    """Every ``custom_dataset`` function of the suite's task YAMLs."""
    found = {}
    for path in sorted(TASKS_DIR.rglob("*")):
        if path.suffix != ".yaml" and not path.name.startswith("_"):
            continue
        match = re.search(r"custom_dataset: !function utils\.(\w+)", path.read_text())
        if match:
            found[(path.parent, match.group(1))] = None
    loaders = []
    for folder, name in found:
        spec = importlib.util.spec_from_file_location(f"suite_utils_{folder.name}", folder / "utils.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        loaders.append(getattr(module, name))
    return loaders


def test_every_key_a_loader_reads_is_a_suite_key():
    loaders = _loaders()
    assert len(loaders) >= 7
    for loader in loaders:
        named = [
            name
            for name, parameter in inspect.signature(loader).parameters.items()
            if parameter.kind is not inspect.Parameter.VAR_KEYWORD
        ]
        unknown = sorted(set(named) - suite_keys())
        assert not unknown, (
            f"{loader.__module__}.{loader.__qualname__} reads the --metadata key(s) {unknown}, which no paper's "
            "METADATA_KEYS lists: add them to METADATA_KEYS in its package's __init__.py"
        )
    for path in TASKS_DIR.rglob("*.yaml"):
        text = re.sub(r"!function \S+", "fn", path.read_text())
        kwargs = (yaml.safe_load(text) or {}).get("dataset_kwargs") or {}
        unknown = sorted(set(kwargs) - suite_keys())
        assert not unknown, (
            f"{path.relative_to(TASKS_DIR)}: dataset_kwargs {unknown} are in no paper's METADATA_KEYS: add them to "
            "METADATA_KEYS in its package's __init__.py"
        )


@pytest.mark.parametrize(
    "load, args, typo, meant",
    [
        ("custom_metrics.geese.data:load_m2", {"hint": "human"}, "explanatons", "explanations"),
        ("custom_metrics.geese.data:load_m1", {"explanation_type": "whyexp"}, "geese_sorce", "geese_source"),
        ("custom_metrics.rule.variants:load", {"variant": "main"}, "demo", "demos"),
        ("custom_metrics.ibe.data:load_explain", {"dataset": "ecare"}, "ecare_train_sise", "ecare_train_size"),
        ("custom_metrics.ibe.data:load_judge", {"dataset": "copa"}, "explanation", "explanations"),
    ],
)
def test_every_papers_loader_refuses_a_misspelled_key_before_reading_data(load, args, typo, meant, monkeypatch):
    """Not only REG's: a typo in an e-CARE sample size would otherwise change the data silently."""
    import importlib

    monkeypatch.setenv("EXPLAIN_EVAL_DATA", "/nonexistent")  # reading any data would fail differently
    module, name = load.split(":")
    loader = getattr(importlib.import_module(module), name)
    with pytest.raises(DataError, match=rf"--metadata key '{typo}' .* did you mean '{meant}'\?"):
        loader(**args, **{typo: 1}, pretrained="some/model")
