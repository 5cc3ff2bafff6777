"""``hf-prefix`` against the harness' own ``HFLM`` on the embedded model (float32, CPU).

One load of gemma-3-270m serves every test: the prefix model wraps it, and the reference
``HFLM`` is handed the same loaded model. For each log-likelihood task kind of the suite
(RULE five-shot, ``rule_sub``, GEESE M2, ``ibe_judge_*``) a few documents' requests, as the
harness builds them on the fixture mirror, must give the same log-likelihoods (|Δ| <= 1e-4),
the same ``is_greedy`` and the same chosen option, while each distinct context runs once.
Left truncation, empty contexts and rolling log-likelihoods are checked on the same load, and
one real ``explain-eval lm-eval --model hf-prefix`` run proves the CLI registers the class.
Tiny random models (a Llama, a Gemma 3 whose 24-token window is shorter than every prompt)
check the same in seconds on multi-token options that share some of their tokens, with
``--batch_size auto``.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import pytest
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM
from lm_eval.tasks import TaskManager

from custom_metrics.common.harness_api import new_instance
from custom_metrics.judge.prompt import LABEL_WORDS, nli_prompt
from custom_metrics.judge.shared_kv import cache_of
from custom_metrics.prefix_lm import MODEL_NAME, PrefixHFLM, group_by_context
from tests.helpers import MIRROR, TASKS_DIR, run_lm_eval
from tests.judge.conftest import PAIRS, _tiny_gemma, tiny_llama
from tests.suite_tasks import reading_tasks, small_data

TOLERANCE = 1e-4
# task -> documents: RULE's five-shot prompts are ~600 tokens on the fixture mirror
TASKS = {"rule_5shot_split1": 2, "rule_sub": 2, "geese_noexp": 2, "ibe_judge_copa": 2}
BATCH = 2  # two contexts per pass: left padding between contexts of different lengths is exercised


@pytest.fixture(scope="module")
def models(embedded_model: Path) -> tuple[PrefixHFLM, HFLM]:
    prefix = PrefixHFLM(pretrained=str(embedded_model), dtype="float32", device="cpu", batch_size=BATCH)
    return prefix, HFLM(pretrained=prefix.model, tokenizer=prefix.tokenizer, device="cpu", batch_size=BATCH)


@pytest.fixture(scope="module")
def requests(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Instance]]:
    """Each task's log-likelihood requests for its first documents, as the harness builds them."""
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))
    try:
        data = small_data()
        metadata = {**data, **reading_tasks(tmp_path_factory.mktemp("explanations"), data)["ibe_judge_copa"]}
        manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata)
        tasks = manager.load(list(TASKS))["tasks"]
        built = {}
        for name, docs in TASKS.items():
            tasks[name].build_all_requests(limit=docs, rank=0, world_size=1)
            built[name] = tasks[name].instances
        return built
    finally:
        monkeypatch.undo()


Answers = list[tuple[float, bool]]


@pytest.fixture(scope="module")
def answers(models, requests) -> dict[str, tuple[Answers, Answers, int]]:
    """Per task, each computed once: hf-prefix's answers, HFLM's, and the context tokens hf-prefix ran."""
    prefix, reference = models
    computed = {}
    for task, instances in requests.items():
        before = prefix.token_counts.contexts
        ours = prefix.loglikelihood(instances)
        computed[task] = ours, reference.loglikelihood(instances), prefix.token_counts.contexts - before
    return computed


def chosen(instances: list[Instance], answers: list[tuple[float, bool]]) -> dict[int, int]:
    """The option each document picks (the harness' acc: argmax of the log-likelihoods)."""
    options: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for instance, (loglik, _) in zip(instances, answers, strict=True):
        options[instance.doc_id].append((loglik, instance.idx))
    return {doc: max(scores)[1] for doc, scores in options.items()}


def assert_equal(ours: list[tuple[float, bool]], theirs: list[tuple[float, bool]]) -> None:
    assert len(ours) == len(theirs)
    for (loglik, greedy), (ref_loglik, ref_greedy) in zip(ours, theirs):
        assert abs(loglik - ref_loglik) <= TOLERANCE, (loglik, ref_loglik)
        assert greedy == ref_greedy


@pytest.mark.slow
@pytest.mark.parametrize("task", list(TASKS))
def test_each_task_kind_equals_hflm_with_each_context_once(models, requests, answers, task: str) -> None:
    prefix, _ = models
    instances = requests[task]
    ours, theirs, context_tokens = answers[task]
    assert_equal(ours, theirs)
    assert chosen(instances, ours) == chosen(instances, theirs)
    encoded = [(i.args, *prefix._encode_pair(*i.args)) for i in instances]
    groups = group_by_context(encoded, range(len(encoded)), prefix.max_length)
    assert len(groups) == TASKS[task]  # one context per document: its options share it
    assert context_tokens == sum(len(group.context) for group in groups)


@pytest.mark.slow
def test_left_truncated_requests_equal_hflm(models, requests) -> None:
    """Contexts longer than max_length are cut from the left as HFLM cuts them; requests whose
    continuations differ in length then feed different contexts and must not share a cache."""
    loaded, _ = models
    short = {"pretrained": loaded.model, "tokenizer": loaded.tokenizer, "device": "cpu", "batch_size": BATCH}
    prefix, reference = PrefixHFLM(**short, max_length=48), HFLM(**short, max_length=48)
    instances = requests["geese_noexp"][:3] + requests["ibe_judge_copa"][:2]  # " UNKNOWN" is 2 tokens, " YES" 1
    assert_equal(prefix.loglikelihood(instances), reference.loglikelihood(instances))


@pytest.mark.slow
def test_empty_contexts_and_rolling_loglikelihoods_take_hflms_path(models, requests) -> None:
    prefix, reference = models
    text = "The cat sat on the mat because it was warm."
    empty = [new_instance("loglikelihood", ("", text), 0)]
    mixed = requests["geese_noexp"][:2] + empty + requests["geese_noexp"][2:3]  # answers stay in request order
    assert_equal(prefix.loglikelihood(mixed), reference.loglikelihood(mixed))
    rolling = [new_instance("loglikelihood_rolling", (text,), 0)]
    expected = reference.loglikelihood_rolling(rolling)
    assert prefix.loglikelihood_rolling(rolling) == pytest.approx(expected, abs=TOLERANCE)


@pytest.mark.slow
def test_the_cli_registers_hf_prefix(answers, requests, embedded_model: Path, tmp_path: Path) -> None:
    """A real ``explain-eval lm-eval --model hf-prefix`` run: its logged answers are HFLM's on the same requests."""
    flags = ["--model", MODEL_NAME, "--model_args", f"pretrained={embedded_model},dtype=float32"]
    results, samples = run_lm_eval(
        [*flags, "--device", "cpu", "--batch_size", str(BATCH)],
        "geese_noexp",
        tmp_path / "out",
        limit=TASKS["geese_noexp"],
        env={"EXPLAIN_EVAL_DATA": str(MIRROR)},
        entry=[str(Path(sys.executable).with_name("explain-eval")), "lm-eval"],
    )
    assert results["config"]["model"] == MODEL_NAME
    assert results["results"]["geese_noexp"]["acc,none"] >= 0
    rows = sorted(samples["geese_noexp"], key=lambda row: row["doc_id"])
    logged_args = [(a["arg_0"], a["arg_1"]) for row in rows for a in row["arguments"].values()]
    assert logged_args == [instance.args for instance in requests["geese_noexp"]]
    logged = [(float(resp[0][0]), str(resp[0][1]) == "True") for row in rows for resp in row["resps"]]
    assert_equal(logged, answers["geese_noexp"][1])


@pytest.mark.parametrize("build", [tiny_llama, lambda path: _tiny_gemma(path, 24)], ids=["llama", "gemma-window-24"])
def test_tiny_models_with_multi_token_options_equal_hflm(build, tmp_path: Path) -> None:
    """Every prompt with every label word (several tokens each under the tiny tokenizer, some
    shared), a context with a trailing space, and HFLM's own batch-size detection."""
    path = build(tmp_path / "model")
    prefix = PrefixHFLM(pretrained=str(path), dtype="float32", device="cpu", batch_size="auto", max_batch_size=4)
    reference = HFLM(pretrained=prefix.model, tokenizer=prefix.tokenizer, device="cpu", batch_size=3)
    contexts = [nli_prompt(p, h) for p, h in PAIRS] + [nli_prompt(*PAIRS[0]) + " "]
    options = [f"{word}{tail}" for word in LABEL_WORDS for tail in ("", " is the label", ".")]
    arguments = [(c, f" {option}") for c in contexts[:3] for option in options]
    arguments += [(contexts[3], option) for option in options]
    assert max(len(prefix.tok_encode(c)) for c in contexts) > 24 and prefix.tok_encode(contexts[0])
    assert len({len(prefix._encode_pair(*a)[1]) for a in arguments}) > 1  # options of several lengths
    instances = [new_instance("loglikelihood", a, i) for i, a in enumerate(arguments)]
    assert_equal(prefix.loglikelihood(instances), reference.loglikelihood(instances))


def cache_rows_per_pass(prefix: PrefixHFLM, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The KV-cache rows (batch rows x positions, the widest layer) each forward pass of ``prefix`` holds."""
    held: list[int] = []
    forward = prefix._forward

    def counted(**inputs):
        out = forward(**inputs)
        held.append(max(layer.keys.shape[0] * layer.keys.shape[-2] for layer in cache_of(out).layers))
        return out

    monkeypatch.setattr(prefix, "_forward", counted)
    return held


@pytest.fixture(scope="module")
def tiny_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[PrefixHFLM, HFLM]:
    path = tiny_llama(tmp_path_factory.mktemp("tiny-llama"))
    prefix = PrefixHFLM(pretrained=str(path), dtype="float32", device="cpu", batch_size=BATCH)
    return prefix, HFLM(pretrained=prefix.model, tokenizer=prefix.tokenizer, device="cpu", batch_size=BATCH)


@pytest.mark.parametrize("options", [10, 100])
def test_cache_rows_per_pass_do_not_grow_with_the_options(tiny_pair, monkeypatch, options: int) -> None:
    """Every option holds its context's whole cache in a pass, so a pass may take only as many
    as HFLM's own batch of these requests holds: BATCH x (context + option but its last token)."""
    prefix, reference = tiny_pair
    context = nli_prompt(*PAIRS[0])
    arguments = [(context, f" {LABEL_WORDS[i % 3]} {i}") for i in range(options)]
    encoded = [prefix._encode_pair(*a) for a in arguments]
    assert len({tuple(ctx) for ctx, _ in encoded}) == 1  # one context shared by every option
    assert min(len(cont) for _, cont in encoded) > 1  # every option runs a pass on the cache
    budget = BATCH * (len(encoded[0][0]) + max(len(cont) for _, cont in encoded) - 1)
    held = cache_rows_per_pass(prefix, monkeypatch)
    instances = [new_instance("loglikelihood", a, i) for i, a in enumerate(arguments)]
    assert_equal(prefix.loglikelihood(instances), reference.loglikelihood(instances))
    assert len(held) > 1 and max(held) <= budget, (max(held), budget)


def test_an_option_that_adds_no_token_is_refused_naming_its_request(tiny_pair) -> None:
    """HFLM scores such an option 0.0 and greedy: it would win its question unseen."""
    prefix, _ = tiny_pair
    context = nli_prompt(*PAIRS[1])
    instances = [
        new_instance("loglikelihood", (context, option), i, task_name="broken_task", doc_id=7)
        for i, option in enumerate([" Entailment", ""])
    ]
    with pytest.raises(ValueError, match=r"^task broken_task, document 7: hf-prefix: the option '' adds no token") as e:
        prefix.loglikelihood(instances)
    assert repr(context[-60:]) in str(e.value) and "\n" not in str(e.value)
