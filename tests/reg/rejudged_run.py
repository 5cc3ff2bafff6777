"""One logged REG run, its judge stopped after generation, then completed and judged again by three
judges: shared by the rejudge tests and the browser's board (``rejudged_reg_run`` in tests/conftest.py).

The generator and the run's own judge are the session's one real ``transformers serve`` (the
embedded model). The judge is reached through a forwarding proxy on its own port, which is
stopped at the first judge request after the generation requests: to the run it is exactly a
judge server going down after generation (connection refused), while the server itself stays up
for the generator and for the rerun, so the session starts one server. The server's access log
counts every request, generation and judge alike; the proxy counts the judge's, so what a
command sent the model under test is the difference.

Then ONE real ``explain-eval rejudge OUT --complete --judge A --judge B --judge C``: the run
completed in place with its own judge (back up), and judged again by two tiny random NLI
classifiers (their labels differ, so kappa and MCC are defined) and a tiny random Llama as an
``lm:`` judge (label log-likelihoods), each built here in a second, with lm-eval's request cache
pointed at an empty folder. (The embedded gemma-3-270m as the ``lm:`` judge cost 33 s of CPU in
that command, measured: its load, the shared-cache probe and its check, for the same code path.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.helpers import MIRROR, run_lm_eval
from tests.judge.conftest import tiny_llama
from tests.reg.judges import tiny_judge_metadata

CHAT = "/v1/chat/completions"
TASK = "reg_chaos_served"
DOCS = 2
# Two tiny classifiers whose random weights label the fixture's first items differently.
TINY_SEEDS = (1, 4)


class JudgeProxy:
    """Forwards the judge's requests to ``upstream``; ``stop_after_generation`` arms it to
    go down (its port closed) at the first judge request once the server has answered a
    request that did not come through it; ``start`` brings it back on the same port."""

    def __init__(self, upstream: str, server_requests):
        self.upstream, self.server_requests = upstream, server_requests
        self.forwarded = 0
        self.armed_at: tuple[int, int] | None = None
        self.server: ThreadingHTTPServer | None = None
        self.port = 0
        self.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _handler(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self, body: bytes | None) -> None:
                if body is not None and proxy._generation_seen():
                    threading.Thread(target=proxy.stop).start()  # the judge goes down now
                    self.close_connection = True
                    return
                request = urllib.request.Request(proxy.upstream + self.path, data=body, method=self.command)
                request.add_header("Content-Type", "application/json")
                with urllib.request.urlopen(request, timeout=300) as response:
                    payload, status = response.read(), response.status
                if body is not None:
                    proxy.forwarded += 1
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self):
                self._forward(None)

            def do_POST(self):
                self._forward(self.rfile.read(int(self.headers["Content-Length"])))

            def log_message(self, *args):
                pass

        return Handler

    def _generation_seen(self) -> bool:
        if self.armed_at is None:
            return False
        server0, forwarded0 = self.armed_at
        return (self.server_requests() - server0) - (self.forwarded - forwarded0) > 0

    def stop_after_generation(self) -> None:
        self.armed_at = (self.server_requests(), self.forwarded)

    def start(self) -> None:
        self.armed_at = None
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self.port = self.server.server_port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


@dataclass
class RejudgedRun:
    out: Path  # the run's --output_path
    served: object  # tests.serving.ServedModel
    proxy: JudgeProxy
    judge: str  # the run's own judge, as its --metadata named it
    env: dict[str, str]  # the data mirror and the verdict cache every command of the run used
    interrupted: tuple[dict, list[dict]]  # results and samples as lm_eval wrote them, the judge down
    generation_requests: int  # what the lm_eval run asked the generator
    judges: tuple[str, ...]  # the judges of the rejudge, as passed
    command: subprocess.CompletedProcess  # explain-eval rejudge
    server_requests: int  # requests the server answered during the rejudge, judge's included
    judge_requests: int  # of those, the run's own judge's (through the proxy)
    harness_cache: Path  # LM_HARNESS_CACHE_PATH of the rejudge (lm-eval's request cache)

    @property
    def results_file(self) -> Path:
        (path,) = self.out.glob("*/results_*.json")
        return path


def rejudged_run(served, folder: Path) -> RejudgedRun:
    """The run, its completion and its rejudge, as the module docstring says (the proxy left up)."""
    proxy = JudgeProxy(f"http://127.0.0.1:{served.port}", lambda: served.requests(CHAT))
    # greedy judge answers (mode=loglik: temperature 0), so two judgings of one output agree;
    # one request at a time, so the proxy's counts are settled whenever a request arrives
    judge = f"openai:{served.model}@{proxy.base_url}?mode=loglik&concurrency=1"
    env = {"EXPLAIN_EVAL_DATA": str(MIRROR), "EXPLAIN_EVAL_JUDGE_CACHE": str(folder / "verdicts")}
    extra = [
        "--gen_kwargs",
        "max_gen_toks=16",
        "--metadata",
        json.dumps({"judge": judge, "judge_check": "warn", "server": "transformers"}),
    ]
    out = folder / "run"
    proxy.stop_after_generation()
    before, judged_before = served.requests(CHAT), proxy.forwarded
    results, samples = run_lm_eval(served.chat_flags(), TASK, out, limit=DOCS, extra=extra, env=env)
    generated = (served.requests(CHAT) - before) - (proxy.forwarded - judged_before)
    assert proxy.server is None, "the judge should have gone down after the generation"
    interrupted = (results, samples[TASK])

    proxy.start()
    tiny = [tiny_judge_metadata(folder, seed=seed)["judge"] for seed in TINY_SEEDS]
    judges = (*tiny, f"lm:{tiny_llama(folder / 'tiny-llama')}")
    harness_cache = folder / "harness-cache"
    harness_cache.mkdir()
    command = [str(Path(sys.executable).with_name("explain-eval")), "rejudge", str(out), "--complete"]
    command += [arg for spec in judges for arg in ("--judge", spec)] + ["--judge-check", "warn"]
    before_server, before_judge = served.requests(CHAT), proxy.forwarded
    completed = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, **env, "LM_HARNESS_CACHE_PATH": str(harness_cache)}
    )
    return RejudgedRun(
        out,
        served,
        proxy,
        judge,
        env,
        interrupted,
        generated,
        judges,
        completed,
        served.requests(CHAT) - before_server,
        proxy.forwarded - before_judge,
        harness_cache,
    )
