"""A small OpenAI-compatible chat server on 127.0.0.1 that records every request.

Where a test must see the request fields a client sends (the prompt, ``temperature``,
``max_tokens``, the key) and choose the answers (a well-formed program wrapped in markdown, a
pathological judge answer), it starts this server instead of ``transformers serve``, whose
answers are the embedded model's and whose log holds no bodies. It speaks what the clients
read: ``GET /v1/models`` and ``POST /v1/chat/completions`` with an OpenAI chat completion.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: dict | None
    authorization: str | None


class RecordingServer:
    """Answers each chat request with ``answer(body)``; ``requests`` holds what was asked, in order.
    With ``key``, a request without ``Authorization: Bearer <key>`` is refused (HTTP 401), as
    OpenAI's API refuses it."""

    def __init__(self, answer: Callable[[dict], str], model: str = "recorded-model", key: str | None = None):
        self.requests: list[Request] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, payload: dict) -> None:
                status = 200
                if key is not None and self.headers.get("Authorization") != f"Bearer {key}":
                    status, payload = (
                        401,
                        {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}},
                    )
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                owner.requests.append(Request("GET", self.path, None, self.headers.get("Authorization")))
                self._send({"object": "list", "data": [{"id": model, "object": "model", "owned_by": "tests"}]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append(Request("POST", self.path, body, self.headers.get("Authorization")))
                self._send(
                    {
                        "id": f"chatcmpl-{len(owner.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", model),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": answer(body)},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                )

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_port}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def posts(self) -> list[Request]:
        return [request for request in self.requests if request.method == "POST"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
