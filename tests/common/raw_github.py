"""A local web server laid out like raw.githubusercontent.com and the Hugging Face Hub's file
URLs, with the faults real networks have.

Tests point ``EXPLAIN_EVAL_GITHUB_RAW`` (and ``HF_ENDPOINT``) at it, so the suite's real download
code runs against real HTTP: ``GET /<owner>/<repo>/<commit>/<path>`` and
``GET /datasets/<repo>/resolve/<revision>/<path>`` answer the registered bytes, unless the next
planned fault says otherwise.
"""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from custom_metrics.common.download import GitHubFile, HubFile

HTML_PAGE = b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Proxy login</body></html>\n"


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a stalled handler must not keep the test process alive
    block_on_close = False


class RawGitHub:
    """``faults`` lists what the next requests meet, one entry per request, in order:

    truncate: the Content-Length of the whole file, then half the bytes and a closed connection;
    stall: half the bytes, then silence until the server closes; drip: the whole file, one byte
    every ``DRIP_SECONDS`` (no read ever times out); html: a login page with status 200;
    unavailable: HTTP 503. ``requests`` records every path asked for.
    """

    DRIP_SECONDS = 4.0

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.faults: list[str] = []
        self.requests: list[str] = []
        self.headers: list[dict[str, str]] = []  # each request's headers (names in lower case), in order
        self._closing = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests.append(self.path)
                owner.headers.append({key.lower(): value for key, value in self.headers.items()})
                fault = owner.faults.pop(0) if owner.faults else None
                payload = owner.files.get(self.path)
                if fault == "unavailable":
                    self.send_error(503)
                elif fault == "html":
                    self._send(HTML_PAGE, "text/html; charset=utf-8")
                elif payload is None:
                    self.send_error(404)
                elif fault == "drip":
                    self._send(b"", "application/octet-stream", length=len(payload))
                    for index in range(len(payload)):
                        if index and owner._closing.wait(owner.DRIP_SECONDS):
                            return
                        try:
                            self.wfile.write(payload[index : index + 1])
                            self.wfile.flush()
                        except OSError:
                            return  # the client gave up
                elif fault in ("truncate", "stall"):
                    self._send(payload[: len(payload) // 2], "application/octet-stream", length=len(payload))
                    if fault == "stall":
                        owner._closing.wait(30)
                else:
                    self._send(payload, "application/octet-stream")

            def _send(self, body: bytes, kind: str, length: int | None = None) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body) if length is None else length))
                self.end_headers()
                try:
                    self.wfile.write(body)
                    self.wfile.flush()
                except OSError:
                    pass  # the client gave up first

            def log_message(self, *args: object) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def serve(self, file: GitHubFile, payload: bytes) -> None:
        self.files[f"/{file.owner}/{file.repo}/{file.commit}/{file.path}"] = payload

    def pin(
        self, payload: bytes, path: str, owner: str = "someone", repo: str = "data", commit: str = "c0ffee"
    ) -> GitHubFile:
        """Serve ``payload`` and return its pin, hashed here: files of the test's own making."""
        file = GitHubFile(owner, repo, commit, path, hashlib.sha256(payload).hexdigest(), len(payload))
        self.serve(file, payload)
        return file

    def serve_file(self, file: GitHubFile | HubFile, local: Path) -> None:
        (self.serve_hub if isinstance(file, HubFile) else self.serve)(file, local.read_bytes())

    def serve_hub(self, file: HubFile, payload: bytes) -> None:
        self.files[f"/{file.repo_type}s/{file.repo}/resolve/{file.revision}/{file.path}"] = payload

    def pin_hub(
        self, payload: bytes, path: str, repo: str = "someone/data", revision: str = "c0ffee" * 6 + "beef"
    ) -> HubFile:
        """Serve ``payload`` at the Hub's file URL and return its pin (point ``HF_ENDPOINT`` here)."""
        file = HubFile(repo, revision, path, hashlib.sha256(payload).hexdigest(), len(payload))
        self.serve_hub(file, payload)
        return file

    def close(self) -> None:
        self._closing.set()
        self.server.shutdown()
        self.server.server_close()
