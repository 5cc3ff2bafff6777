"""``--metadata`` keys: a misspelled suite key is an error, before any model is asked.

lm-eval hands every task loader one merged mapping (YAML ``metadata``, model arguments and
``--metadata``, shared by every task of a run), so a loader cannot refuse keys it does not know,
and a typo such as ``jugde`` was silently ignored. The rule: a key that no task of the suite
reads, that lm-eval does not put there itself, and that is close to a suite key (``difflib``) is
an error naming the key it resembles.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from functools import lru_cache

from custom_metrics.common.errors import DataError
from custom_metrics.common.task_folders import paper_packages


@lru_cache(maxsize=1)
def suite_keys() -> frozenset[str]:
    """Every key a loader or task of the suite reads from its metadata: each paper's own
    ``METADATA_KEYS`` (in its package's ``__init__.py``), the papers being the suite's task
    folders, so this module names none of them (tests check the loaders' parameters against it)."""
    return frozenset(key for package in paper_packages() for key in getattr(package, "METADATA_KEYS", ()))


# What lm-eval itself merges into the metadata: the YAML's own keys and the model arguments
# of its model classes (hf, vllm, sglang, the API clients, ...). Generous on purpose: a
# model argument must never be taken for a typo of a suite key (``model`` is close to ``mode``).
HARNESS_KEYS = frozenset(
    {
        "version", "config_source", "num_fewshot", "description",
        # model arguments
        "pretrained", "model", "tokenizer", "base_url", "seed", "chat_template_args", "enable_thinking",
        "think_end_token", "dtype", "device", "batch_size", "max_batch_size", "max_length", "max_gen_toks",
        "revision", "subfolder", "trust_remote_code", "use_fast_tokenizer", "add_bos_token", "prefix_token_id",
        "parallelize", "device_map", "max_memory_per_gpu", "max_cpu_memory", "offload_folder", "peft", "delta",
        "autogptq", "gptqmodel", "gguf_file", "backend", "logits_cache", "truncation", "softmax_dtype",
        "mixed_precision_dtype", "load_in_8bit", "load_in_4bit", "bnb_4bit_quant_type", "bnb_4bit_compute_dtype",
        "attn_implementation", "quantization_config", "tokenizer_backend", "tokenized_requests",
        "num_concurrent", "max_retries", "timeout", "verify_certificate", "ca_cert_path", "auth_token",
        "header", "eos_string", "max_images", "tensor_parallel_size", "data_parallel_size",
        "gpu_memory_utilization", "swap_space", "quantization", "tokenizer_mode", "tokenizer_revision",
        "lora_local_path", "max_model_len", "enforce_eager", "dp_size", "tp_size", "context_length",
        "interleave", "maybe_truncate", "trust_remote_code_tokenizer", "use_chat_template",
    }
)  # fmt: skip
CUTOFF = 0.75  # "jugde" -> "judge" is 0.8; "seeds" -> "seed" 0.89; unrelated words stay below


def check_metadata_keys(task: str, keys: Iterable[str]) -> None:
    """Refuse a key that looks like a misspelled suite key: ``did you mean 'judge'?``."""
    for key in keys:
        if key in suite_keys() or key in HARNESS_KEYS:
            continue
        close = difflib.get_close_matches(key, sorted(suite_keys()), n=1, cutoff=CUTOFF)
        if close:
            raise DataError(
                f"{task}: --metadata key {key!r} is read by no task of the suite: did you mean {close[0]!r}? "
                f"(keys the suite reads: {', '.join(sorted(suite_keys()))})"
            )
