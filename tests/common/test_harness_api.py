"""The suite's one meeting place with what differs between harness versions
(``custom_metrics/common/harness_api.py``), and the private parts of lm-eval it relies on.

Each private part has a test here whose failure names the harness change to adapt to, so
that a new lm-eval release breaks one line of one test, not a user's run.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from lm_eval import simple_evaluate
from lm_eval.models.dummy import DummyLM
from lm_eval.tasks import TaskManager

from custom_metrics.common.harness_api import (
    filter_output,
    harness_version,
    lists_per_document,
    read_task_yaml,
    run_command_parser,
    unknown_task_names,
)
from custom_metrics.common.samples import normalised
from custom_metrics.common.task_folders import TASKS_PATH
from tests.helpers import TASKS_DIR

EXPLANATIONS = ["Il gatto dorme perché è stanco, e [MASK] lo sa.", ""]


class FixedLM(DummyLM):
    """The harness' dummy model answering every generation request with the next fixed text."""

    tokenizer = None

    def generate_until(self, requests, disable_tqdm: bool = False):
        return [EXPLANATIONS[i % len(EXPLANATIONS)] for i in range(len(requests))]


def test_a_filters_per_document_values_reach_process_results_whole(fixture_mirror: Path) -> None:
    """GEESE M1 through the installed harness: each explanation is counted as words (not as its
    characters, as 0.5 reads a bare string), and an empty one is flagged, not lost."""
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False)
    out = simple_evaluate(
        model=FixedLM(), tasks=["geese_generate_whyexp"], limit=2, task_manager=manager, log_samples=True
    )
    samples = sorted(out["samples"]["geese_generate_whyexp"], key=lambda sample: sample["doc_id"])
    assert [sample["words"] for sample in samples] == [10.0, 0.0]
    assert [sample["empty"] for sample in samples] == [0.0, 1.0]
    assert [normalised(sample)["filtered_resps"] for sample in samples] == [[text] for text in EXPLANATIONS]
    assert out["results"]["geese_generate_whyexp"]["words,anonymized"] == 5.0


def test_filter_output_has_the_shape_the_installed_harness_reads() -> None:
    assert lists_per_document() == (harness_version().release[:2] >= (0, 5))
    assert filter_output(iter(["a", ""])) == ([["a"], [""]] if lists_per_document() else ["a", ""])


@pytest.mark.parametrize(
    ("sample", "expected"),
    [
        ({"doc": {}, "filtered_resps": ["text"]}, ["text"]),  # 0.4.13, generation
        ({"doc": {}, "filtered_resps": [["text"]]}, ["text"]),  # 0.5
        ({"doc": {}, "filtered_resps": [["-1.5", "False"], ["-0.5", "True"]]}, [["-1.5", "False"], ["-0.5", "True"]]),
        (
            {"doc": {}, "filtered_resps": [[["-1.5", "False"]], [["-0.5", "True"]]]},
            [["-1.5", "False"], ["-0.5", "True"]],
        ),
        ({"doc": {}, "filtered_resps": [["a", "b"]]}, [["a", "b"]]),  # two repeats: left for the reader to refuse
        ({"doc": {}, "filtered_resps": []}, []),
    ],
)
def test_samples_of_either_version_read_the_same(sample: dict, expected: list) -> None:
    assert normalised(sample)["filtered_resps"] == expected


def test_unknown_task_names_are_found_on_either_version() -> None:
    """0.5's ``match_tasks`` returns an unmatched name unchanged."""
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False)
    names = ["geese_noexp", "rule_5shot_split*", "reg_chaos@x", "geese_noexpp"]
    assert unknown_task_names(manager, names) == ["geese_noexpp"]


# -- lm-eval's private parts the suite touches: each failure names what moved --


def test_lm_eval_run_parser_is_where_the_suite_reads_it() -> None:
    parser = run_command_parser()
    args = parser.parse_args(["--model", "hf", "--tasks", "geese_noexp", "--limit", "2"])
    assert (args.model, args.tasks, args.limit) == ("hf", ["geese_noexp"], 2.0), (
        f"lm-eval {harness_version()} changed lm_eval._cli.run.Run's parser: adapt harness_api.run_command_parser"
    )


def test_lm_eval_yaml_loader_follows_includes() -> None:
    config = read_task_yaml(Path(TASKS_PATH) / "reg" / "reg_chaos.yaml")
    assert config["task"] == "reg_chaos" and {item["metric"] for item in config["metric_list"]} >= {"success"}, (
        f"lm-eval {harness_version()} changed lm_eval.tasks._yaml_loader.load_yaml: adapt harness_api.read_task_yaml"
    )
    assert callable(config["process_results"])


def test_hflm_loglikelihood_tokens_takes_what_hf_prefix_overrides() -> None:
    """``--model hf-prefix`` overrides ``HFLM._loglikelihood_tokens`` (custom_metrics/prefix_lm.py)."""
    from lm_eval.models.huggingface import HFLM

    parameters = list(inspect.signature(HFLM._loglikelihood_tokens).parameters)
    assert parameters == ["self", "requests", "disable_tqdm", "override_bs"], (
        f"lm-eval {harness_version()} changed HFLM._loglikelihood_tokens{parameters}: adapt custom_metrics/prefix_lm.py"
    )


def test_template_api_builds_payloads_as_the_suite_probes_and_overrides_them() -> None:
    """``api_sampling.rewrites`` probes ``_create_payload`` with ``_max_gen_toks`` set, and the API
    reasoning model (custom_metrics/reg/api_model.py) overrides it."""
    from lm_eval.models.api_models import TemplateAPI

    parameters = list(inspect.signature(TemplateAPI._create_payload).parameters)
    assert parameters[:2] == ["self", "messages"] and {"generate", "gen_kwargs"} <= set(parameters), (
        f"lm-eval {harness_version()} changed TemplateAPI._create_payload{parameters}: adapt "
        "custom_metrics/common/api_sampling.py and custom_metrics/reg/api_model.py"
    )
    assert "self._max_gen_toks" in inspect.getsource(TemplateAPI.__init__), (
        f"lm-eval {harness_version()} no longer keeps TemplateAPI._max_gen_toks: adapt the same two modules"
    )


def test_a_metric_renamed_for_0_5_reads_under_its_name_now_in_runs_of_either_name(tmp_path: Path) -> None:
    """0.5 refuses ``acc`` on a generation task, so the generated judges report ``answer_acc``; a
    run logged before (``acc``) lands in the same column, its stderr with it, and the same name
    on another task (a log-likelihood judge's ``acc``) is left as it is."""
    import json

    from custom_metrics.common.results import read_results_file

    def scores(task: str, metric: str) -> dict:
        path = tmp_path / f"results_{task}_{metric}.json"
        entry = {f"{metric},none": 0.75, f"{metric}_stderr,none": 0.1, "unparsed,none": 0.25}
        path.write_text(json.dumps({"results": {task: entry}, "config": {"model": "hf"}, "model_name": "m"}))
        return {key: (score.value, score.stderr) for key, score in read_results_file(path)[0].scores.items()}

    now = {("answer_acc", "none"): (0.75, 0.1), ("unparsed", "none"): (0.25, None)}
    generated_judges = ("reg_judge_select", "reg_judge_select_reasoning_served", "ibe_judge_copa_chat")
    for task in (*generated_judges, "ibe_judge_ecare_chat"):
        assert scores(task, "acc") == scores(task, "answer_acc") == now, task
    assert ("acc", "none") in scores("ibe_judge_copa", "acc")


def test_each_declared_model_entry_point_resolves_to_the_class_registered_under_its_name() -> None:
    """What an lm-eval that reads ``lm_eval.models`` entry points finds: the suite's class, the
    one its module registers under the same name (``explain-eval lm-eval`` registers the same)."""
    from importlib.metadata import entry_points

    from lm_eval.api.registry import get_model

    from custom_metrics.lm_eval_cli import DISTRIBUTION, ENTRY_POINTS, register_models

    declared = [point for point in entry_points(group=ENTRY_POINTS) if point.dist and point.dist.name == DISTRIBUTION]
    assert {point.name for point in declared} == {"hf-prefix", "reasoning-chat-completions"}
    register_models()
    for point in declared:
        model_class = point.load()
        assert isinstance(model_class, type) and get_model(point.name) is model_class, point
