"""The constructor a model class's source says, read without importing it, is the one the
imported class has: for every model lm-eval registers, and for the suite's own."""

from __future__ import annotations

import inspect

import pytest
from lm_eval.models import MODEL_MAPPING

from custom_metrics.common.errors import DataError
from custom_metrics.common.harness_args import check_model
from custom_metrics.common.model_signature import read_constructor
from custom_metrics.lm_eval_cli import suite_model_classes

# lm-eval 0.4.13's own mapping names a class its module does not define (the module
# registers the name under another class), so importing it fails as reading it does.
_BROKEN_IN_LM_EVAL = {"hf-audiolm-qwen", "ipex", "neuronx"}


# The constructors the checks must read without importing torch: the suite's own and ``hf``'s.
_READ_WITHOUT_IMPORT = {MODEL_MAPPING["hf"], *suite_model_classes().values()}


def _shape(parameters) -> list[tuple[str, object, bool]]:
    return [(p.name, p.kind, p.default is p.empty) for p in parameters]


@pytest.mark.parametrize("target", sorted({*MODEL_MAPPING.values(), *suite_model_classes().values()}))
def test_the_source_says_the_imported_constructor(target: str) -> None:
    import importlib

    module_name, class_name = target.split(":")
    read = read_constructor(target)
    if any(MODEL_MAPPING.get(name) == target for name in _BROKEN_IN_LM_EVAL):
        assert read is None
        with pytest.raises((AttributeError, ImportError, ValueError)):
            getattr(importlib.import_module(module_name), class_name)
        return
    if read is None:  # the source does not say (a base the reader cannot follow): the check imports the class
        assert target.split(":")[0].startswith("lm_eval.models.") and target not in _READ_WITHOUT_IMPORT, target
        return
    try:
        model_class = getattr(importlib.import_module(module_name), class_name)
    except ImportError as err:  # e.g. vllm, not installed here: the source names what is missing
        assert err.name is not None and err.name.split(".")[0] in read.missing, (err, read.missing)
        return
    assert read.missing == ()
    assert _shape(read.parameters) == _shape(list(inspect.signature(model_class.__init__).parameters.values())[1:])


def test_the_hf_check_reads_its_arguments_without_importing_torch(tmp_path) -> None:
    """In a fresh process: the ``hf`` model's required arguments refused and accepted as the
    imported class would, with torch never imported."""
    import subprocess
    import sys

    script = f"""
import sys
from custom_metrics.common.errors import DataError
from custom_metrics.common.harness_args import check_model
try:
    check_model("hf", {{"dtype": "float32"}})
except DataError as err:
    print(err)
check_model("hf", {{"pretrained": {str(tmp_path)!r}}})
check_model("vllm", {{"pretrained": {str(tmp_path)!r}}}, here=False)
print("torch" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    refused, torch_imported = done.stdout.splitlines()
    assert "--model hf needs 'pretrained' in --model_args" in refused
    assert torch_imported == "False", done.stdout


def test_a_model_whose_module_cannot_import_here_is_named() -> None:
    # the first module the class's file imports that is missing (vllm on 0.4.13, ray on 0.5)
    missing = r"--model vllm: lm-eval cannot import it here \(No module named '(vllm|ray)'\)"
    with pytest.raises(DataError, match=missing):
        check_model("vllm", {"pretrained": "org/name"})
    check_model("vllm", {"pretrained": "org/name"}, here=False)  # a Slurm job's machine may have it
