"""REG's generation modes: the task variants carry Qwen3.5's sampling sets, a run's model
arguments are checked before any generation (model kind, thinking switch, tokenizer), and
the filter counts output lengths in the run's tokens."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from custom_metrics.common.errors import DataError
from custom_metrics.reg import generation, tokens
from custom_metrics.reg import task as reg_task
from custom_metrics.reg.modes import IN_PROCESS, MODES, NON_THINKING, REASONING, SERVED, TASKS, THINKING
from tests.helpers import TASKS_DIR
from tests.reg.judges import tiny_judge_metadata
from tests.reg.thinking_model import NON_THINKING_PREFILL, THINKING_PREFILL, thinking_model_folder
from tests.tiny_models import small_tokenizer

SERVER = {"base_url": "http://127.0.0.1:9/v1/chat/completions"}


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(small_tokenizer(tmp_path_factory.mktemp("tokenizer")))


def _run_args(task: str, tokenizer: str) -> dict:
    mode, backend = next(key for key, name in TASKS.items() if name == task)
    if backend != IN_PROCESS:
        return {"model": tokenizer, **SERVER}
    return {"pretrained": tokenizer, "chat_template_args": {"enable_thinking": MODES[mode].thinking}}


def test_the_modes_are_qwen35s_general_task_sets():
    """Section 4.4 via the Qwen3.5 cards' Best Practices (Appendix G is not in our text)."""
    assert (THINKING.temperature, THINKING.top_p, THINKING.top_k, THINKING.min_p) == (1.0, 0.95, 20, 0.0)
    assert (NON_THINKING.temperature, NON_THINKING.top_p, NON_THINKING.top_k, NON_THINKING.min_p) == (0.7, 0.8, 20, 0.0)
    assert THINKING.presence_penalty == NON_THINKING.presence_penalty == 1.5
    assert THINKING.max_gen_toks == 32768 and NON_THINKING.max_gen_toks == 2048


@pytest.mark.parametrize("task", sorted(TASKS.values()))
def test_each_variant_carries_its_modes_parameters(task, tokenizer, fixture_mirror):
    from lm_eval.tasks import TaskManager

    mode, backend = next(key for key, name in TASKS.items() if name == task)
    metadata = _run_args(task, tokenizer) | tiny_judge_metadata(Path(tokenizer).parent)
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata)
    loaded = manager.load([task])["tasks"][task]
    expected = MODES[mode].generation_kwargs(backend)
    assert {key: value for key, value in loaded.config.generation_kwargs.items() if key != "until"} == expected
    assert ("top_k" in expected) == (backend != REASONING)  # the paper's top_k and min_p, served too
    assert ("presence_penalty" in expected) == (backend == SERVED)  # vLLM applies it; transformers has none
    doc = next(iter(loaded.test_docs()))
    # an API reasoning model's lengths come from its usage: no tokenizer
    assert (doc["mode"], doc["backend"], doc["length_tokenizer"]) == (
        mode,
        backend,
        "" if backend == REASONING else tokenizer,
    )


def test_a_transformers_serve_run_gets_top_k_and_min_p_in_its_generation_config(tokenizer, fixture_mirror):
    """transformers serve answers HTTP 422 to top_k and min_p as request fields and reads its own
    generation_config field: with --metadata server=transformers they go there (with do_sample,
    which it otherwise takes from the served folder); an unknown server is refused."""
    import json

    from lm_eval.tasks import TaskManager

    task = "reg_chaos_thinking_served"
    metadata = _run_args(task, tokenizer) | tiny_judge_metadata(Path(tokenizer).parent) | {"server": "transformers"}
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata)
    sent = manager.load([task])["tasks"][task].config.generation_kwargs
    assert "top_k" not in sent and "min_p" not in sent and sent["temperature"] == 1.0
    assert json.loads(sent["generation_config"]) == {"do_sample": True, "top_k": 20, "min_p": 0.0}
    kwargs = THINKING.generation_kwargs(SERVED)
    assert (
        reg_task.served_sampling(task, kwargs, {"server": "vllm"})
        == kwargs
        == reg_task.served_sampling(task, kwargs, {})
    )
    with pytest.raises(DataError, match=r"--metadata server is 'tgi', expected one of vllm, transformers"):
        reg_task.served_sampling(task, kwargs, {"server": "tgi"})


@pytest.mark.parametrize(
    "mode, backend, run_args, message",
    [
        ("thinking", IN_PROCESS, {"chat_template_args": {"enable_thinking": True}, "think_end_token": "</think>"},
         "think_end_token makes the harness drop the thinking trace"),
        ("non-thinking", IN_PROCESS, {"chat_template_args": {"enable_thinking": True}},
         "reg_chaos runs the non-thinking mode, but model argument chat_template_args.enable_thinking is True; run "
         "reg_chaos_thinking"),
        ("thinking", IN_PROCESS, {"enable_thinking": "False", "chat_template_args": {"enable_thinking": True}},
         "reg_chaos_thinking runs the thinking mode, but model argument enable_thinking is 'False'"),
        ("thinking", IN_PROCESS, {}, "reg_chaos_thinking: the chat template's thinking switch is not set"),
        ("thinking", IN_PROCESS, {"chat_template_args": "{not json"}, "chat_template_args is not a JSON object"),
        ("thinking", IN_PROCESS, SERVER, "is for in-process models .* run reg_chaos_thinking_served"),
        ("non-thinking", SERVED, {}, "reg_chaos_served is for OpenAI-compatible chat endpoints; .* run reg_chaos"),
        ("chatty", IN_PROCESS, {}, "dataset_kwargs mode is 'chatty'"),
        ("thinking", "remote", {}, "dataset_kwargs backend is 'remote'"),
    ],
)  # fmt: skip
def test_a_run_that_cannot_do_what_the_task_says_fails_before_generation(mode, backend, run_args, message, tokenizer):
    with pytest.raises(DataError, match=message):
        generation.generation_columns(mode, backend, {"pretrained": tokenizer, **run_args})


def test_the_tokenizer_is_named_and_loaded_before_generation(tokenizer, tmp_path):
    with pytest.raises(DataError, match="reg_chaos_served counts output lengths in the generator's tokens"):
        generation.generation_columns("non-thinking", SERVED, {"base_url": "http://x/v1"})
    with pytest.raises(DataError, match=f"reg_chaos: cannot load tokenizer '{tmp_path}/missing'"):
        generation.generation_columns("non-thinking", IN_PROCESS, {"pretrained": str(tmp_path / "missing")})
    # --metadata tokenizer=... names it for a served model whose name is no tokenizer
    columns = generation.generation_columns(
        "non-thinking", SERVED, {"model": "gpt-x", "tokenizer": tokenizer, **SERVER}
    )
    assert columns["length_tokenizer"] == tokenizer


def test_the_sampling_seed_is_the_one_generation_uses(tokenizer):
    import torch

    served = {"model": tokenizer, **SERVER}
    assert generation.generation_columns("thinking", SERVED, served)["sampling_seed"] == 1234  # lm-eval's default
    assert generation.generation_columns("thinking", SERVED, {**served, "seed": 7})["sampling_seed"] == 7
    torch.manual_seed(77)  # what `lm_eval --seed` does before the task's data loads
    assert generation.generation_columns("non-thinking", IN_PROCESS, {"pretrained": tokenizer})["sampling_seed"] == 77


def test_outputs_are_counted_in_the_runs_tokens(tokenizer, caplog):
    docs = [{"mode": "thinking", "length_tokenizer": tokenizer}] * 3
    raws = ["Tom left.</think>He read.", "Tom never left his home town", ""]
    with caplog.at_level(logging.WARNING):
        outputs = generation.split_outputs([[raw] for raw in raws], docs)
    assert [out.flag for out in outputs] == ["", "cut_off", "no_explanation"]
    assert [out.output_tokens for out in outputs] == tokens.count_tokens(tokenizer, raws)
    assert outputs[0].thinking_tokens == tokens.count_tokens(tokenizer, ["Tom left."])[0]
    assert "ended a thinking trace" not in caplog.text  # one trace ended: the mode is working
    with caplog.at_level(logging.WARNING):
        generation.split_outputs([[raws[1]]], docs[:1])
    assert "none of the 1 outputs ended a thinking trace" in caplog.text
    with caplog.at_level(logging.WARNING):
        generation.split_outputs([[raws[0]]], [{"mode": "non-thinking", "length_tokenizer": tokenizer}])
    assert "non-thinking mode: 1 of 1 outputs hold a thinking trace" in caplog.text
    with pytest.raises(ValueError, match="expected one \\(mode, length_tokenizer, backend\\)"):
        generation.split_outputs([[""]], [{"mode": "thinking"}])


def test_the_test_template_renders_each_switch_and_refuses_none(embedded_model: Path, tmp_path):
    from jinja2.exceptions import TemplateError
    from transformers import AutoTokenizer

    loaded = AutoTokenizer.from_pretrained(thinking_model_folder(embedded_model, tmp_path / "m"))
    messages = [{"role": "user", "content": "Premise: P."}]
    render = lambda **kw: loaded.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, **kw)
    assert render(enable_thinking=True).endswith(THINKING_PREFILL)
    assert render(enable_thinking=False).endswith(NON_THINKING_PREFILL)
    with pytest.raises(TemplateError, match="needs the thinking switch"):
        render()


def test_an_api_reasoning_models_effort_and_mode_come_from_the_metadata(tokenizer, fixture_mirror):
    """Section 4.4: gpt-5.6 thinks at reasoning effort "medium"; "none" is its non-thinking mode."""
    from lm_eval.tasks import TaskManager

    served = {"model": "gpt-x", **SERVER}
    for effort, mode in ((None, "thinking"), ("none", "non-thinking"), ("HIGH", "thinking")):
        run_args = served if effort is None else {**served, "reasoning_effort": effort}
        columns = generation.generation_columns("thinking", REASONING, run_args)
        assert (columns["mode"], columns["length_tokenizer"], columns["sampling_seed"]) == (mode, "", None)
    with pytest.raises(DataError, match="reasoning_effort is 'extreme', expected one of none, minimal"):
        generation.generation_columns("thinking", REASONING, {**served, "reasoning_effort": "extreme"})
    with pytest.raises(DataError, match="reg_chaos_reasoning_served is for OpenAI-compatible chat endpoints"):
        generation.generation_columns("thinking", REASONING, {"pretrained": tokenizer})
    metadata = {**served, "reasoning_effort": "none"} | tiny_judge_metadata(Path(tokenizer).parent)
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata)
    task = manager.load(["reg_chaos_reasoning_served"])["tasks"]["reg_chaos_reasoning_served"]
    assert task.config.generation_kwargs == {"until": [], "reasoning_effort": "none", "max_gen_toks": 32768}
    assert next(iter(task.test_docs()))["mode"] == "non-thinking"


def test_the_leaderboard_reads_an_api_reasoning_runs_mode_from_its_effort(tmp_path):
    from custom_metrics.common.results import TaskRun
    from custom_metrics.reg.leaderboard import mode_rows

    def run(task: str, effort: str | None) -> TaskRun:
        config = {"generation_kwargs": {"reasoning_effort": effort}} if effort else None
        return TaskRun("gpt-x", task, {}, 3, None, tmp_path / "results.json", 0.0, "0.4.13", task_config=config)

    notes: list[str] = []
    rows = mode_rows(
        [run("reg_chaos_reasoning_served", "medium"), run("reg_chaos_reasoning_served", "none"),
         run("reg_judge_select_reasoning_served", None)],
        notes,
    )  # fmt: skip
    assert [(row.task, row.setting) for row in rows] == [
        ("reg_chaos", "thinking"), ("reg_chaos", "non-thinking"), ("reg_judge_select", "non-thinking"),
    ]  # fmt: skip
    assert "reg_judge_select read from reg_judge_select_reasoning_served" in notes[-1]
