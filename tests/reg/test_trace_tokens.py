"""Thinking-trace markers that are special tokens (Gemma 4's ``<|channel>``/``<channel|>`` may be).

Two tokenizers built here differ only there: one adds the markers as ordinary added tokens,
the other as special tokens, which a decoder with ``skip_special_tokens=True`` (``--model hf``,
a server's default) drops. Decoded as the task asks the backend to (``skip_special_tokens:
false`` on a served vLLM), the special-token tokenizer's outputs give the same flags and
token counts as the plain one's; decoded the default way they would all be cut off, which the
task refuses in process before any generation.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from custom_metrics.common.errors import DataError
from custom_metrics.reg import generation, tokens
from custom_metrics.reg.generation import split_outputs
from custom_metrics.reg.modes import IN_PROCESS
from custom_metrics.reg.outputs import CUT_OFF
from tests.helpers import TASKS_DIR
from tests.reg.judges import tiny_judge_metadata
from tests.tiny_models import bpe_tokenizer

MARKERS = ["<|channel>", "<channel|>"]
OUTPUTS = [
    "<|channel>thought The premise and the hypothesis clash.<channel|>Tom studied maps of Paris.",
    "<|channel>thought The premise says Tom never left his home town, so",  # the budget ran out
]
THINKING = {"chat_template_args": {"enable_thinking": True}}


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tokenizers import AddedToken

    corpus = [text.replace(MARKERS[0], " ").replace(MARKERS[1], " ") for text in OUTPUTS] * 4
    folders = {}
    for kind in ("plain", "special"):
        tokenizer = bpe_tokenizer(corpus, vocab_size=300, specials=["<pad>", "<s>", "</s>"])
        tokenizer.add_tokens(
            [AddedToken(marker, normalized=False) for marker in MARKERS], special_tokens=kind == "special"
        )
        folders[kind] = tmp_path_factory.mktemp(kind)
        tokenizer.save_pretrained(folders[kind])
    return folders


def _split(folder: Path, texts: list[str]) -> list[tuple]:
    docs = [{"mode": "thinking", "length_tokenizer": str(folder)}] * len(texts)
    return [
        (o.flag, o.explanation, o.output_tokens, o.thinking_tokens) for o in split_outputs([[t] for t in texts], docs)
    ]


def test_special_token_markers_count_as_plain_ones_when_kept(tokenizers: dict[str, Path]) -> None:
    from transformers import AutoTokenizer

    split = {}
    for kind, folder in tokenizers.items():
        tokenizer = AutoTokenizer.from_pretrained(folder)
        generated = [tokenizer.encode(text, add_special_tokens=False) for text in OUTPUTS]
        kept = [tokenizer.decode(ids, skip_special_tokens=False) for ids in generated]
        split[kind] = _split(folder, kept)
        assert [tokens for *_, tokens, _ in split[kind]] == [len(ids) for ids in generated]  # as generated
        assert tokens.special_trace_markers(str(folder)) == (MARKERS if kind == "special" else [])
    assert split["special"] == split["plain"]
    assert [(flag, explanation) for flag, explanation, *_ in split["special"]] == [
        ("", "Tom studied maps of Paris."),
        (CUT_OFF, ""),
    ]
    # the default decode drops the special markers: the finished trace would count as cut off
    special = AutoTokenizer.from_pretrained(tokenizers["special"])
    dropped = special.decode(special.encode(OUTPUTS[0], add_special_tokens=False), skip_special_tokens=True)
    assert MARKERS[0] not in dropped and _split(tokenizers["special"], [dropped])[0][0] == CUT_OFF


def test_the_task_keeps_special_markers_where_the_backend_can(tokenizers, fixture_mirror, tmp_path) -> None:
    from lm_eval.tasks import TaskManager

    judge = tiny_judge_metadata(tmp_path)
    for kind, folder in tokenizers.items():
        metadata = {"model": str(folder), "base_url": "http://127.0.0.1:9/v1/chat/completions", **judge}
        manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata)
        sent = manager.load(["reg_chaos_thinking_served"])["tasks"][
            "reg_chaos_thinking_served"
        ].config.generation_kwargs
        # vLLM's request field; asked for only where the markers are special (transformers serve refuses it)
        assert sent.get("skip_special_tokens", "not sent") is (False if kind == "special" else "not sent")
    special = {"pretrained": str(tokenizers["special"]), **THINKING}
    with pytest.raises(
        DataError, match=r"writes the thinking-trace markers \['<\|channel>', '<channel\|>'\] as special"
    ):
        generation.generation_columns("thinking", IN_PROCESS, special)
    # a backend that keeps special tokens (lm-eval's --model vllm) says so
    kept = generation.generation_columns("thinking", IN_PROCESS, {**special, "trace_markers": "kept"})
    assert kept["length_tokenizer"] == str(tokenizers["special"])
    plain = generation.generation_columns("thinking", IN_PROCESS, {"pretrained": str(tokenizers["plain"]), **THINKING})
    assert plain["length_tokenizer"] == str(tokenizers["plain"])
