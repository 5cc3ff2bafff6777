"""A judge server on 127.0.0.1 that misbehaves on purpose: every answer is scripted raw bytes.

``GET /v1/models`` answers a proper model list (the judge's availability check passes, as it
did for the probe's servers); each ``POST`` gets the ``Reply`` that ``script(request_body)``
returns: any status and body, sent whole, chunked, cut short, after a delay, a byte at a time,
as an endless stream, or never. The server counts the bytes it managed to send, so a test can
tell how much of an endless body the client read.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK = 64 * 1024


@dataclass(frozen=True)
class Reply:
    """What one request gets. ``body`` after ``delay_s``; ``chunked`` sends it in chunks;
    ``cut_at`` stops after that many body bytes and closes (with the whole length announced);
    ``trickle_s`` sends one byte per interval (headers included); ``endless`` streams chunks of
    ``body`` until the client goes; ``silent`` reads the request and never answers."""

    body: bytes = b""
    status: int = 200
    delay_s: float = 0.0
    chunked: bool = False
    cut_at: int | None = None
    trickle_s: float = 0.0
    endless: bool = False
    silent: bool = False
    headers: dict[str, str] = field(default_factory=dict)


def completion(content: object, **extra: object) -> bytes:
    """A chat-completion body whose answer is ``content``."""
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop", **extra}
    return json.dumps({"id": "x", "object": "chat.completion", "choices": [choice]}).encode()


class EndpointServer:
    """``EndpointServer(script)``; ``url`` is its OpenAI base URL; ``close()`` ends every answer."""

    def __init__(self, script: Callable[[dict], Reply]) -> None:
        self.script = script
        self.requests = 0
        self.sent = 0  # body bytes written for POSTs, over all requests
        self.hung_up = 0  # answers the client stopped reading before their end
        self.stopping = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                body = json.dumps({"object": "list", "data": [{"id": "scripted", "object": "model"}]}).encode()
                self._raw(self._head(200, {"Content-Length": str(len(body))}) + body)

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                request = json.loads(self.rfile.read(length) or b"{}")
                owner.requests += 1
                try:
                    owner._answer(self, owner.script(request))
                except (BrokenPipeError, ConnectionResetError):  # the client stopped reading: what a bound is for
                    owner.hung_up += 1
                self.close_connection = True

            def _head(self, status: int, headers: dict[str, str]) -> bytes:
                lines = [f"HTTP/1.1 {status} Scripted", "Content-Type: application/json", "Connection: close"]
                lines += [f"{key}: {value}" for key, value in headers.items()]
                return ("\r\n".join(lines) + "\r\n\r\n").encode()

            def _raw(self, data: bytes) -> None:
                self.wfile.write(data)
                self.wfile.flush()

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_port}/v1"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def _answer(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.silent:
            self.stopping.wait()
            return
        if reply.delay_s:
            self.stopping.wait(reply.delay_s)
        headers = dict(reply.headers)
        if reply.chunked or reply.endless:
            headers["Transfer-Encoding"] = "chunked"
        else:
            headers.setdefault("Content-Length", str(len(reply.body)))
        head = handler._head(reply.status, headers)
        if reply.trickle_s:
            for byte in head + reply.body:
                if self.stopping.wait(reply.trickle_s):
                    return
                handler._raw(bytes([byte]))
                self.sent += 1
            return
        handler._raw(head)
        if reply.endless:
            piece = reply.body or b" "
            chunk = (piece * (CHUNK // len(piece) + 1))[:CHUNK]
            while not self.stopping.is_set():
                handler._raw(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.sent += len(chunk)
            return
        body = reply.body if reply.cut_at is None else reply.body[: reply.cut_at]
        if reply.chunked:
            for start in range(0, len(body), CHUNK):
                piece = body[start : start + CHUNK]
                handler._raw(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            if reply.cut_at is None:
                handler._raw(b"0\r\n\r\n")
        else:
            handler._raw(body)
        self.sent += len(body)
        if reply.cut_at is not None:
            handler.connection.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
