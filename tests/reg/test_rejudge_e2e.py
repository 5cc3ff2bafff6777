"""A served judge that stops after generation loses no generation: ``explain-eval reg-rejudge``.

The generator and the judge are the session's one real ``transformers serve`` (the embedded
model). The judge is reached through a forwarding proxy on its own port, which the test
stops at the first judge request after the generation requests: to the run it is exactly
a judge server going down after generation (connection refused), while the server itself
stays up for the generator and for the rerun, so the session starts one server. The
server's access log counts every request, generation and judge alike; the proxy counts
the judge's, so what the rerun sent the model under test is the difference.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from custom_metrics.reg.judging import read_record
from tests.helpers import MIRROR, run_lm_eval

CHAT = "/v1/chat/completions"
TASK = "reg_chaos_served"


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


@pytest.mark.e2e
def test_a_judge_stopped_after_generation_loses_no_generation(served_model, tmp_path):
    proxy = JudgeProxy(f"http://127.0.0.1:{served_model.port}", lambda: served_model.requests(CHAT))
    try:
        # greedy judge answers (mode=loglik: temperature 0), so two judgings of one output agree;
        # one request at a time, so the proxy's counts are settled whenever a request arrives
        judge = f"openai:{served_model.model}@{proxy.base_url}?mode=loglik&concurrency=1"
        extra = ["--gen_kwargs", "max_gen_toks=16", "--metadata", json.dumps({"judge": judge, "judge_check": "warn"})]

        def run(name: str) -> tuple[dict, list[dict], dict[str, str]]:
            env = {"EXPLAIN_EVAL_DATA": str(MIRROR), "EXPLAIN_EVAL_JUDGE_CACHE": str(tmp_path / f"verdicts-{name}")}
            results, samples = run_lm_eval(served_model.chat_flags(), TASK, tmp_path / name, extra=extra, env=env)
            return results, samples[TASK], env

        uninterrupted, expected, _ = run("uninterrupted")

        proxy.stop_after_generation()
        before, judged_before = served_model.requests(CHAT), proxy.forwarded
        failed, failed_samples, env = run("interrupted")
        assert proxy.server is None  # the judge went down after the generation
        records = [read_record(sample["filtered_resps"][0]) for sample in failed_samples]
        assert all(record["judge_error"] and record["initial"] is None for record in records)
        assert math.isnan(failed["results"][TASK]["n,judged"])
        assert [s["resps"] for s in failed_samples] == [s["resps"] for s in expected]  # the generations are kept
        generated = (served_model.requests(CHAT) - before) - (proxy.forwarded - judged_before)
        assert generated == len(failed_samples)  # one generation request per doc, then the judge died

        proxy.start()
        before_server, before_judge = served_model.requests(CHAT), proxy.forwarded
        command = [str(Path(sys.executable).with_name("explain-eval")), "reg-rejudge", str(tmp_path / "interrupted")]
        completed = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **env})
        assert completed.returncode == 0, completed.stderr[-3000:]
        judge_requests = proxy.forwarded - before_judge
        assert judge_requests > 0  # the judge answered the rerun ...
        assert served_model.requests(CHAT) - before_server == judge_requests  # ... and nothing else was asked

        (results_file,) = (tmp_path / "interrupted").glob("*/results_*.json")
        rejudged = json.loads(results_file.read_text())
        (samples_file,) = (tmp_path / "interrupted").glob(f"*/samples_{TASK}_*.jsonl")
        samples = [json.loads(line) for line in samples_file.read_text().splitlines()]
        assert [s["filtered_resps"] for s in samples] == [s["filtered_resps"] for s in expected]
        metrics = expected[0]["metrics"]
        assert json.dumps([[s[m] for m in metrics] for s in samples]) == json.dumps(
            [[s[m] for m in metrics] for s in expected]
        )
        assert json.dumps(rejudged["results"][TASK], sort_keys=True) == json.dumps(
            uninterrupted["results"][TASK], sort_keys=True
        )
    finally:
        proxy.stop()
