"""The download layer against a real local HTTP server: verify, cache, reuse offline, reject bad bytes.

Every file here is of the test's own making (fixture rows, hashed at test time), so these
tests run on a fresh clone; tests/common/test_pinned_data.py serves the real pinned bytes.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import shutil
import stat
import tarfile
import time
from pathlib import Path

import datasets
import pytest

from custom_metrics.common.download import GITHUB_RAW, GitHubFile, HubFile, Retrying, fetch
from custom_metrics.common.errors import DataError
from custom_metrics.common.jsonl import read_jsonl
from custom_metrics.common.settings import (
    DATA_ENV,
    DOWNLOAD_DEADLINE_ENV,
    DOWNLOAD_RETRIES_ENV,
    DOWNLOAD_TIMEOUT_ENV,
    GITHUB_RAW_ENV,
)
from custom_metrics.common.sources import Source, archive_member, load_rows
from custom_metrics.ibe.data import parse_copa_xml
from tests.common.raw_github import HTML_PAGE, RawGitHub
from tests.helpers import MIRROR

GEESE_ROWS = MIRROR / "geese/explained-full-llama-3/test.jsonl"
ECARE_DEV = MIRROR / "ecare/Causal_Reasoning/dev.jsonl"


def _source(remote: GitHubFile, mirror_path: str = "ecare/Causal_Reasoning/dev.jsonl", **kwargs) -> Source:
    return Source(name="demo dataset", mirror_path=mirror_path, remote=remote, **kwargs)


def _leftovers(cache: Path) -> list[Path]:
    return [path for path in cache.rglob("*") if path.is_file()] if cache.exists() else []


def test_first_run_downloads_and_verifies_then_the_cache_works_offline(
    raw_github: RawGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = raw_github.pin(ECARE_DEV.read_bytes(), "dataset/dev.jsonl")
    source = _source(remote)
    rows = load_rows(source, required=["index"])
    assert rows == read_jsonl(ECARE_DEV)
    assert raw_github.requests == ["/someone/data/c0ffee/dataset/dev.jsonl"]
    cached = tmp_path / "cache/downloads/github/someone/data/c0ffee/dataset/dev.jsonl"
    assert cached.read_bytes() == ECARE_DEV.read_bytes() and _leftovers(tmp_path / "cache") == [cached]

    assert load_rows(source) == rows and len(raw_github.requests) == 1  # a cached file: no request at all
    raw_github.close()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert load_rows(source) == rows


def test_arrow_files_are_read_as_rows(raw_github: RawGitHub, tmp_path: Path) -> None:
    """The GEESE path: a ``save_to_disk`` shard, here written from the fixture rows."""
    expected = read_jsonl(GEESE_ROWS)
    datasets.Dataset.from_list(expected).save_to_disk(str(tmp_path / "saved"))
    shard = next((tmp_path / "saved").glob("*.arrow"))
    remote = raw_github.pin(shard.read_bytes(), "scripts/explained_data/data-00000-of-00001.arrow")
    source = _source(remote, "geese/explained-full-llama-3/test.jsonl")
    assert load_rows(source, required=["id", "label"]) == expected
    with pytest.raises(DataError, match=r"data-00000-of-00001\.arrow row 1: missing field\(s\) 'nope'"):
        load_rows(source, required=["nope"])


def test_the_mirror_wins_and_nothing_is_requested(raw_github: RawGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV, str(MIRROR))
    remote = raw_github.pin(b"{}\n", "dataset/dev.jsonl")
    assert load_rows(_source(remote)) == read_jsonl(ECARE_DEV)
    assert raw_github.requests == []


def test_truncated_response_is_retried_then_rejected_and_never_cached(raw_github: RawGitHub, tmp_path: Path) -> None:
    remote = raw_github.pin(ECARE_DEV.read_bytes(), "dataset/dev.jsonl")
    raw_github.faults = ["truncate", "truncate"]  # the first attempt and its one retry
    with pytest.raises(DataError) as err:
        load_rows(_source(remote))
    message = str(err.value)
    assert "demo dataset: could not download" in message and f"{raw_github.url}/someone/data/c0ffee" in message
    assert "in 2 attempt(s)" in message and f"transfer cut before all {remote.size} bytes arrived" in message
    assert DATA_ENV in message and "ecare/Causal_Reasoning/dev.jsonl" in message
    assert _leftovers(tmp_path / "cache") == []
    assert load_rows(_source(remote)) == read_jsonl(ECARE_DEV)  # nothing half-written was kept


def test_html_page_with_status_200_is_rejected_at_once_and_never_cached(raw_github: RawGitHub, tmp_path: Path) -> None:
    remote = raw_github.pin(ECARE_DEV.read_bytes(), "dataset/dev.jsonl")
    raw_github.faults = ["html"]
    with pytest.raises(DataError) as err:
        load_rows(_source(remote))
    message = str(err.value)
    assert f"demo dataset: {remote.url()} sent a file that is not the pinned one" in message
    got = f"got {len(HTML_PAGE)} bytes, sha256 {hashlib.sha256(HTML_PAGE).hexdigest()}"
    assert f"expected {remote.size} bytes, sha256 {remote.sha256}; {got} (an HTML page" in message
    assert "an HTML page, Content-Type text/html" in message and "It was not cached (" in message
    assert str(remote.cache_path()) in message and GITHUB_RAW_ENV in message and DATA_ENV in message
    assert len(raw_github.requests) == 1  # complete but wrong content: no retry
    assert _leftovers(tmp_path / "cache") == []


def test_stalling_server_hits_the_timeout_and_the_retry_succeeds(
    raw_github: RawGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DOWNLOAD_TIMEOUT_ENV, "0.5")
    remote = raw_github.pin(ECARE_DEV.read_bytes(), "dataset/dev.jsonl")
    raw_github.faults = ["stall"]
    start = time.monotonic()
    assert load_rows(_source(remote)) == read_jsonl(ECARE_DEV)
    assert len(raw_github.requests) == 2
    assert time.monotonic() - start < 10  # the stalled server never answers; only the timeout ends it


def test_stall_without_retries_names_the_timeout(raw_github: RawGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DOWNLOAD_TIMEOUT_ENV, "0.3")
    monkeypatch.setenv(DOWNLOAD_RETRIES_ENV, "0")
    remote = raw_github.pin(ECARE_DEV.read_bytes(), "dataset/dev.jsonl")
    raw_github.faults = ["stall"]
    with pytest.raises(DataError, match=r"in 1 attempt\(s\); last: transfer cut before all .*(?i:timed out)"):
        load_rows(_source(remote))


def test_unavailable_server_is_retried(raw_github: RawGitHub) -> None:
    remote = raw_github.pin(ECARE_DEV.read_bytes(), "dataset/dev.jsonl")
    raw_github.faults = ["unavailable"]
    assert load_rows(_source(remote)) == read_jsonl(ECARE_DEV)
    assert len(raw_github.requests) == 2


def test_a_hub_dataset_file_downloads_with_the_users_token_verifies_and_is_cached(
    raw_github: RawGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Parquet shard of a Hub dataset, pinned by revision and sha256, through the Hub's file URL
    (``HF_ENDPOINT`` names the local server) with the token huggingface_hub finds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = read_jsonl(ECARE_DEV)
    shard = tmp_path / "dev.parquet"
    pq.write_table(pa.Table.from_pylist(rows), shard)
    monkeypatch.setenv("HF_ENDPOINT", raw_github.url)
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    remote = raw_github.pin_hub(shard.read_bytes(), "data/dev-00000-of-00001.parquet", repo="someone/ecare")
    assert load_rows(_source(remote), required=["index"]) == rows
    path = f"/datasets/someone/ecare/resolve/{remote.revision}/data/dev-00000-of-00001.parquet"
    assert raw_github.requests == [path]
    assert raw_github.headers[0]["authorization"] == "Bearer hf_test_token"
    cached = tmp_path / f"cache/downloads/hub/datasets/someone/ecare/{remote.revision}/data/dev-00000-of-00001.parquet"
    assert cached.read_bytes() == shard.read_bytes()
    assert load_rows(_source(remote)) == rows and len(raw_github.requests) == 1  # cached: no request

    wrong = HubFile("someone/ecare", remote.revision, "data/missing.parquet", remote.sha256, remote.size)
    with pytest.raises(DataError, match=r"answered HTTP 404 .*HF_ENDPOINT names a mirror of the Hugging Face Hub"):
        load_rows(_source(wrong))


def test_missing_file_is_not_retried_and_names_the_layout(raw_github: RawGitHub) -> None:
    remote = GitHubFile("someone", "data", "c0ffee", "not/there.jsonl", "0" * 64, 10)
    with pytest.raises(DataError, match=r"answered HTTP 404 .*<owner>/<repo>/<commit>/<path>"):
        load_rows(_source(remote))
    assert len(raw_github.requests) == 1


def test_offline_without_a_cached_copy_fails_at_once_saying_what_to_do(
    raw_github: RawGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    remote = raw_github.pin(ECARE_DEV.read_bytes(), "dataset/dev.jsonl")
    with pytest.raises(DataError) as err:
        load_rows(_source(remote))
    message = str(err.value)
    assert "is not in the cache and HF_DATASETS_OFFLINE=1 forbids downloading" in message
    assert "explain-eval download" in message and "EXPLAIN_EVAL_CACHE" in message and DATA_ENV in message
    assert raw_github.requests == []


def test_a_cached_file_that_changed_is_an_error_naming_it(raw_github: RawGitHub) -> None:
    remote = raw_github.pin(ECARE_DEV.read_bytes(), "dataset/dev.jsonl")
    path = fetch(remote, "demo dataset", "x")
    path.write_bytes(path.read_bytes()[:-1] + b" ")
    with pytest.raises(DataError, match=rf"the cached file {path} does not match its pin .*Delete it"):
        fetch(remote, "demo dataset", "x")


def test_archive_member_from_the_pinned_tarball(raw_github: RawGitHub) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(MIRROR / "copa/copa-dev.xml", arcname="COPA-resources/datasets/copa-dev.xml")
    remote = raw_github.pin(buffer.getvalue(), "downloads/COPA-resources.tgz")
    dev = _source(remote, "copa/copa-dev.xml", member="COPA-resources/datasets/copa-dev.xml")
    payload, where = archive_member(dev)
    assert where == f"{remote.cache_path()}#COPA-resources/datasets/copa-dev.xml"
    assert len(parse_copa_xml(payload, where)) == 4
    test = _source(remote, "copa/copa-test.xml", member="COPA-resources/datasets/copa-test.xml")
    with pytest.raises(DataError, match=r"has no member 'COPA-resources/datasets/copa-test\.xml'; delete .*copa-test"):
        archive_member(test)


def test_corrupt_archive_is_a_data_error_naming_dataset_and_cache_path(raw_github: RawGitHub) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(MIRROR / "copa/copa-dev.xml", arcname="COPA-resources/datasets/copa-dev.xml")
    broken = buffer.getvalue()[: len(buffer.getvalue()) // 2]  # pinned as is: the bytes verify, the archive does not
    remote = raw_github.pin(broken, "downloads/COPA-resources.tgz")
    source = _source(remote, "copa/copa-dev.xml", member="COPA-resources/datasets/copa-dev.xml")
    with pytest.raises(DataError) as err:
        archive_member(source)
    message = str(err.value)
    assert message.startswith(f"demo dataset: {remote.cache_path()} is not a readable tar archive")
    assert f"delete {remote.cache_path()} to download it again" in message and "copa/copa-dev.xml" in message


def test_github_raw_variable_replaces_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    remote = GitHubFile("o", "r", "abc", "d/f.jsonl", "0" * 64, 1)
    monkeypatch.delenv(GITHUB_RAW_ENV, raising=False)
    assert remote.url() == f"{GITHUB_RAW}/o/r/abc/d/f.jsonl" == "https://raw.githubusercontent.com/o/r/abc/d/f.jsonl"
    monkeypatch.setenv(GITHUB_RAW_ENV, "https://mirror.example.edu/gh-raw/")
    assert remote.url() == "https://mirror.example.edu/gh-raw/o/r/abc/d/f.jsonl"


def test_timeout_and_retries_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DOWNLOAD_TIMEOUT_ENV, "2.5")
    monkeypatch.setenv(DOWNLOAD_RETRIES_ENV, "3")
    monkeypatch.delenv("EXPLAIN_EVAL_DOWNLOAD_BACKOFF", raising=False)
    policy = Retrying.from_env()
    assert (policy.timeout, policy.retries) == (2.5, 3) and [policy.wait(k) for k in (1, 2, 3)] == [2.0, 4.0, 8.0]
    monkeypatch.setenv(DOWNLOAD_TIMEOUT_ENV, "soon")
    with pytest.raises(DataError, match=r"EXPLAIN_EVAL_DOWNLOAD_TIMEOUT='soon' is not a number"):
        Retrying.from_env()


def test_download_command_lists_every_pinned_file_and_rejects_unknown_names(
    raw_github: RawGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    from custom_metrics.pinned import main

    assert main(["--list", "ibe"]) == 0
    listed = capsys.readouterr().out
    assert listed.startswith("COPA dev + COPA test\n") and listed.count(f"  {raw_github.url}/") == 3
    assert "/downloads/github/Waste-Wood/e-CARE/c3b52648adcc919303a297a377811e24d703e197/dataset/" in listed
    with pytest.raises(SystemExit) as exit_info:
        main(["geese", "squad"])
    assert exit_info.value.code == 2 and "unknown dataset(s) ['squad']" in capsys.readouterr().err


def test_download_list_says_where_a_run_here_reads_each_file(
    raw_github: RawGitHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each file's ``here:`` line: not cached, a cached copy that changed, then with a mirror set
    the mirror's files (named), or the one it lacks. (A verified copy: tests/common/test_pinned_data.py.)"""
    from custom_metrics.pinned import DATASETS, main

    ecare_dev = next(source for source in DATASETS["ecare"] if source.mirror_path.endswith("dev.jsonl"))

    def listed() -> dict[str, str]:
        assert main(["--list", "ibe"]) == 0
        here, label = {}, ""
        for line in capsys.readouterr().out.splitlines():
            label = line if not line.startswith("  ") else label
            if line.startswith("  here: "):
                here[label] = line.removeprefix("  here: ")
        return here

    assert set(listed().values()) == {"not cached: a run downloads it, or `explain-eval download` first"}
    ecare_dev.remote.cache_path().parent.mkdir(parents=True)
    ecare_dev.remote.cache_path().write_text("changed\n")
    assert listed()[ecare_dev.name].startswith("cached, but the copy no longer matches its pin")
    mirror = tmp_path / "mirror"
    shutil.copytree(MIRROR, mirror)
    (mirror / "copa" / "copa-test.xml").unlink()
    monkeypatch.setenv(DATA_ENV, str(mirror))
    here = listed()
    assert here[ecare_dev.name] == f"mirrored ({DATA_ENV}={mirror}: ecare/Causal_Reasoning/dev.jsonl)"
    assert here["COPA dev + COPA test"] == (
        f"not in the mirror {DATA_ENV}={mirror} (expected copa/copa-test.xml): its tasks stop there"
    )


def test_a_server_sending_a_byte_every_4_s_hits_the_deadline_and_nothing_stays(
    raw_github: RawGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No read waits out its timeout (5 s > 4 s between bytes): only the deadline for the whole
    file ends the transfer (without it, these 13 bytes take 48 s, a real file days)."""
    monkeypatch.setenv(DOWNLOAD_TIMEOUT_ENV, "5")
    monkeypatch.setenv(DOWNLOAD_DEADLINE_ENV, "1")
    remote = raw_github.pin(b'{"index": 1}\n', "dataset/dev.jsonl")
    raw_github.faults = ["drip", "drip"]
    start = time.monotonic()
    with pytest.raises(DataError, match=rf"took longer than the 1 s deadline \({DOWNLOAD_DEADLINE_ENV}\)"):
        load_rows(_source(remote))
    assert time.monotonic() - start < RawGitHub.DRIP_SECONDS + 3  # not the 5-s timeout per byte, for ever
    assert len(raw_github.requests) == 1  # no retry after the deadline
    assert _leftovers(tmp_path / "cache") == []


def test_a_killed_downloads_part_file_is_removed_and_the_cache_takes_the_umask(
    raw_github: RawGitHub, tmp_path: Path
) -> None:
    remote = raw_github.pin(ECARE_DEV.read_bytes(), "dataset/dev.jsonl")
    folder = remote.cache_path().parent
    folder.mkdir(parents=True)
    stale = folder / f".{remote.cache_path().name}.k1ll3d.part"  # what kill -9 mid-transfer leaves
    stale.write_bytes(b"half a file")
    alive = folder / f".{remote.cache_path().name}.al1ve.part"
    alive.write_bytes(b"being written")
    old = os.umask(0o002)  # a group-shared cache
    try:
        with open(alive, "rb") as writer:
            fcntl.flock(writer, fcntl.LOCK_EX)  # another process downloading this file now
            assert load_rows(_source(remote)) == read_jsonl(ECARE_DEV)
    finally:
        os.umask(old)
    assert sorted(p.name for p in folder.iterdir()) == sorted([remote.cache_path().name, alive.name])
    assert stat.S_IMODE(remote.cache_path().stat().st_mode) == 0o664
    load_rows(_source(remote))  # a later use, the writer gone: its part is stale now
    assert [p.name for p in folder.iterdir()] == [remote.cache_path().name]
