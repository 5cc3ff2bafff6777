"""The embedded model with a chat template that has a thinking switch, for REG's two modes.

Neither embedded model's template has one (gemma-3-270m ships none, SmolLM2's ignores it),
so this folder links the gemma checkpoint's files and adds a minimal template in the way
Qwen3.5's works: with ``enable_thinking`` true the assistant turn opens ``<think>\\n`` (the
model writes the trace and closes it), with false it holds an empty, closed trace. The
template refuses to render without the switch, so a run whose prompts rendered at all
passed it, in process or on a server.

The generation config samples (``do_sample``, which ``transformers serve`` takes from the
model, not from a request's temperature) with Qwen3.5's top_k and min_p, which a server
speaking only the OpenAI fields cannot receive in a request.
"""

from __future__ import annotations

from pathlib import Path

from tests.serving import chat_model_folder

THINKING_TEMPLATE = """{%- if enable_thinking is not defined -%}
    {{ raise_exception("this template needs the thinking switch: enable_thinking true or false") }}
{%- endif -%}
{{ bos_token }}
{%- for message in messages -%}
    {{ '<start_of_turn>' + ('model' if message['role'] == 'assistant' else message['role']) + '\\n' }}
    {{- message['content'] | trim -}}
    {{ '<end_of_turn>\\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{ '<start_of_turn>model\\n' }}
    {{- '<think>\\n' if enable_thinking else '<think>\\n\\n</think>\\n\\n' -}}
{%- endif -%}
"""
THINKING_PREFILL = "<start_of_turn>model\n<think>\n"
NON_THINKING_PREFILL = "<start_of_turn>model\n<think>\n\n</think>\n\n"
SERVER_SAMPLING = {"do_sample": True, "top_k": 20, "min_p": 0.0}


def thinking_model_folder(checkpoint: Path, folder: Path) -> Path:
    """The checkpoint with the switchable template and a sampling generation config."""
    return chat_model_folder(checkpoint, folder, THINKING_TEMPLATE, SERVER_SAMPLING)
