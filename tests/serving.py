"""A real OpenAI-compatible server for the tests: ``transformers serve`` on the embedded model.

Researchers evaluate models, and put REG's judge, behind such servers (vLLM, TGI,
``transformers serve``); the tests talk to a real one rather than a hand-written stub, so
what they check is what a user's run does: the harness' ``local-completions`` and
``local-chat-completions`` clients, the judge's endpoint backend, HTTP and JSON as the
server really sends them.

The embedded gemma-3-270m checkpoint is a base model converted from a GGUF that carries no
chat template, and ``/v1/chat/completions`` needs one. The served folder is therefore the
checkpoint (its files linked, not copied) plus Gemma 3's own chat template and its
end-of-turn stop token, as google/gemma-3-270m ships them.

Requests are counted from the server's access log (uvicorn writes one line per request at
``--log-level info``), so a test can prove that a rerun sent nothing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

# What the `serving` extra adds: `transformers serve`'s server, and lm-eval's API clients.
SERVING_MODULES = ("fastapi", "uvicorn", "openai", "tenacity")
STARTUP_TIMEOUT_S = 300

# Gemma 3's chat template (text turns; the model's own, as in google/gemma-3-270m).
GEMMA_CHAT_TEMPLATE = """{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = "" -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}
    {%- endif -%}
    {%- set role = "model" if message['role'] == 'assistant' else message['role'] -%}
    {{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else "") }}
    {{- message['content'] | trim -}}
    {{ '<end_of_turn>\\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{ '<start_of_turn>model\\n' }}
{%- endif -%}
"""
END_OF_TURN_ID = 106  # <end_of_turn>, a stop token of Gemma 3's generation config
_ACCESS_LINE = re.compile(r'"(?P<method>[A-Z]+) (?P<path>\S+) HTTP/[\d.]+" (?P<status>\d{3})')


def missing_serving_modules() -> list[str]:
    return [name for name in SERVING_MODULES if importlib.util.find_spec(name) is None]


def chat_model_folder(
    checkpoint: Path, folder: Path, template: str = GEMMA_CHAT_TEMPLATE, generation_settings: dict | None = None
) -> Path:
    """The checkpoint as a chat model: its files linked, plus a chat template (Gemma 3's unless
    told), its stop token and any ``generation_settings`` for a server to sample with."""
    folder.mkdir(parents=True, exist_ok=True)
    for source in checkpoint.iterdir():
        if source.name not in ("generation_config.json", "tokenizer_config.json"):
            target = folder / source.name
            if not target.exists():
                target.symlink_to(source.resolve())
    tokenizer_config = json.loads((checkpoint / "tokenizer_config.json").read_text())
    tokenizer_config["chat_template"] = template
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2))
    generation = json.loads((checkpoint / "generation_config.json").read_text())
    eos = generation.get("eos_token_id")
    eos = eos if isinstance(eos, list) else [eos]
    generation["eos_token_id"] = [*eos, END_OF_TURN_ID] if END_OF_TURN_ID not in eos else eos
    (folder / "generation_config.json").write_text(json.dumps(generation | (generation_settings or {}), indent=2))
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_command(model: Path, port: int) -> list[str]:
    """The README's command: ``transformers serve <model folder> --port N --device cpu``."""
    executable = shutil.which("transformers", path=str(Path(sys.executable).parent)) or "transformers"
    return [
        executable, "serve", str(model),
        "--host", "127.0.0.1", "--port", str(port), "--device", "cpu", "--log-level", "info",
    ]  # fmt: skip


@dataclass
class ServedModel:
    """A running ``transformers serve``: where it answers, what it serves, its log."""

    process: subprocess.Popen
    model: str  # the model name requests must carry (the served folder)
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chat_flags(self) -> list[str]:
        """``lm_eval`` flags for the served model through chat completions (the README's command)."""
        args = f"model={self.model},base_url={self.base_url}/chat/completions,num_concurrent=1,max_retries=1"
        return ["--model", "local-chat-completions", "--model_args", args, "--apply_chat_template"]

    def completion_flags(self) -> list[str]:
        """``lm_eval`` flags for the served model through text completions (the README's command).

        The prompt goes as text (``tokenized_requests=False``: ``transformers serve`` takes no
        token ids) and the tokenizer is named outright, so the client sends the server
        nothing but completions (the ``auto`` backend would probe it first).
        """
        args = (
            f"model={self.model},base_url={self.base_url}/completions,tokenizer_backend=huggingface,"
            "tokenized_requests=False,num_concurrent=1,max_retries=1"
        )
        return ["--model", "local-completions", "--model_args", args]

    def requests(self, path: str | None = None) -> int:
        """Requests answered so far (all, or to one path such as /v1/chat/completions)."""
        lines = self.log.read_text(errors="replace").splitlines()
        hits = [m for m in map(_ACCESS_LINE.search, lines) if m]
        return sum(path is None or m["path"] == path for m in hits if m["path"] != "/health")

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_server(model: Path, log: Path, timeout_s: float = STARTUP_TIMEOUT_S) -> ServedModel:
    """Start ``transformers serve`` on a free port and wait until ``/health`` answers."""
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    with open(log, "w") as handle:  # the child keeps its own descriptor; ours can close now
        process = subprocess.Popen(
            serve_command(model, port), stdout=handle, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    served = ServedModel(process, str(model), port, log)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"transformers serve exited ({process.returncode}):\n{served.log_tail()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
                if response.status == 200:
                    return served
        except OSError:
            pass
        time.sleep(1)
    served.stop()
    raise RuntimeError(f"transformers serve did not answer /health within {timeout_s:.0f} s:\n{served.log_tail()}")
