"""Pinned public files: downloaded once into the suite's cache, verified, then used offline.

A file of a GitHub repository at a commit (``GitHubFile``) or of a Hugging Face Hub repository at
a revision (``HubFile``), fixed by size and sha256.

Why not ``datasets``' downloader: it asks the server before trusting its cache (a warm cache
fails on an offline compute node), checks no content (an HTML page with status 200 is cached as
data) and its "Unable to find" hides the connection error. Here a download goes to a temporary
file with timeouts, retries and an overall deadline per file (a server sending a byte every few
seconds never trips a per-read timeout), and is moved into place only once verified, readable by
the group. A cached file is hashed again on each use and never causes a network request.

HTTP is ``requests`` (it honours the clusters' proxy and CA-bundle variables). Retries are one
loop around the whole transfer, not urllib3's ``Retry``, which stops at the response headers: a
stall in the middle of the body, the usual failure, would not be retried.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import requests
import urllib3

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import file_mode
from custom_metrics.common.settings import (
    CACHE_ENV,
    DATA_ENV,
    DOWNLOAD_BACKOFF_ENV,
    DOWNLOAD_DEADLINE_ENV,
    DOWNLOAD_RETRIES_ENV,
    DOWNLOAD_TIMEOUT_ENV,
    GITHUB_RAW_ENV,
    downloads_dir,
    env_number,
    env_value,
    offline_variable,
)

logger = logging.getLogger(__name__)

GITHUB_RAW = "https://raw.githubusercontent.com"
_CHUNK = 1 << 16
_RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})  # the server may answer later


@dataclass(frozen=True)
class GitHubFile:
    """One file of a public GitHub repository at a fixed commit, and the content it must have."""

    owner: str
    repo: str
    commit: str
    path: str
    sha256: str
    size: int

    def url(self) -> str:
        """The raw URL; ``EXPLAIN_EVAL_GITHUB_RAW`` swaps the host for a mirror with the same layout."""
        base = (env_value(GITHUB_RAW_ENV) or GITHUB_RAW).rstrip("/")
        return f"{base}/{self.owner}/{self.repo}/{self.commit}/{self.path}"

    def cache_path(self) -> Path:
        """Independent of the host: the content is verified, so any mirror fills the same cache."""
        return downloads_dir() / "github" / self.owner / self.repo / self.commit / self.path

    def headers(self) -> dict[str, str]:
        return {}

    @property
    def host_hint(self) -> str:
        """How to point the download at another host, for errors."""
        return f"{GITHUB_RAW_ENV} names a mirror of raw.githubusercontent.com (layout <owner>/<repo>/<commit>/<path>)"


@dataclass(frozen=True)
class HubFile:
    """One file of a Hugging Face Hub repository (a dataset's, by default) at a fixed revision,
    and the content it must have: a Hub dataset pinned like a GitHub file.

    The URL and the request headers (the user's token for gated datasets, ``HF_TOKEN`` or
    ``huggingface-cli login``) are huggingface_hub's own; ``HF_ENDPOINT`` names a mirror of the Hub.
    """

    repo: str  # "owner/name"
    revision: str  # a commit of the repository, never a branch
    path: str
    sha256: str
    size: int
    repo_type: str = "dataset"

    def url(self) -> str:
        from huggingface_hub import hf_hub_url

        endpoint = (env_value("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
        return hf_hub_url(self.repo, self.path, repo_type=self.repo_type, revision=self.revision, endpoint=endpoint)

    def cache_path(self) -> Path:
        return downloads_dir() / "hub" / f"{self.repo_type}s" / self.repo / self.revision / self.path

    def headers(self) -> dict[str, str]:
        from huggingface_hub.utils import build_hf_headers

        return dict(build_hf_headers())

    @property
    def host_hint(self) -> str:
        return "HF_ENDPOINT names a mirror of the Hugging Face Hub (and HF_TOKEN the token of a gated dataset)"


PinnedFile = GitHubFile | HubFile


@dataclass(frozen=True)
class Retrying:
    """How long to wait for a server, how often to try again, and how long one file may take
    in all (env-configurable)."""

    timeout: float = 30.0
    retries: int = 4
    backoff: float = 2.0
    deadline: float = 900.0

    @classmethod
    def from_env(cls) -> Retrying:
        return cls(
            timeout=env_number(DOWNLOAD_TIMEOUT_ENV, cls.timeout, minimum=0.001),
            retries=int(env_number(DOWNLOAD_RETRIES_ENV, cls.retries)),
            backoff=env_number(DOWNLOAD_BACKOFF_ENV, cls.backoff),
            deadline=env_number(DOWNLOAD_DEADLINE_ENV, cls.deadline, minimum=0.001),
        )

    def wait(self, attempt: int) -> float:
        """Seconds to sleep before attempt ``attempt`` (1-based retries): backoff, 2x backoff, ..."""
        return self.backoff * 2 ** (attempt - 1)

    def left(self, deadline: float) -> float:
        """Seconds before ``deadline`` (a ``time.monotonic()``); a _Transient once it has passed (no
        further attempt follows)."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Transient(f"the file took longer than the {self.deadline:g} s deadline ({DOWNLOAD_DEADLINE_ENV})")
        return left


class _Transient(Exception):
    """A failure worth another attempt: no connection, a timeout, a cut transfer, a 5xx."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _mirror_hint(mirror_path: str) -> str:
    return f"or set {DATA_ENV} to a local mirror holding '{mirror_path}'"


def cached(file: PinnedFile, dataset: str) -> Path | None:
    """The verified cached copy of ``file``, or None when it has not been downloaded yet."""
    path = file.cache_path()
    if not path.is_file():
        return None
    size, digest = path.stat().st_size, sha256_of(path)
    if size != file.size or digest != file.sha256:
        raise DataError(
            f"{dataset}: the cached file {path} does not match its pin (expected {file.size} bytes, "
            f"sha256 {file.sha256}; got {size} bytes, sha256 {digest}): it changed after it was verified. "
            f"Delete it and download again (`explain-eval download`; source {file.url()})."
        )
    return path


def fetch(file: PinnedFile, dataset: str, mirror_path: str, requested: bool = False) -> Path:
    """A verified local copy of ``file``: the cache when it holds one (no network), else a download.
    ``dataset`` and ``mirror_path`` word the errors; ``requested`` (``explain-eval download``): the
    user asked for the network, so the offline switches do not apply.
    """
    policy = Retrying.from_env()
    _remove_stale_parts(file.cache_path(), policy.deadline)
    path = cached(file, dataset)
    if path is not None:
        return path
    url, target = file.url(), file.cache_path()
    blocker = None if requested else offline_variable()
    if blocker:
        raise DataError(
            f"{dataset}: {target} is not in the cache and {blocker}=1 forbids downloading {url}. Run "
            f"`explain-eval download` where the network is reachable (a login node) with the same {CACHE_ENV}, "
            f"{_mirror_hint(mirror_path)}."
        )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise DataError(f"{dataset}: cannot create the cache folder {target.parent} ({err}); set {CACHE_ENV}.") from err
    deadline = time.monotonic() + policy.deadline
    failures: list[str] = []
    for attempt in range(policy.retries + 1):
        if attempt:
            pause = policy.wait(attempt)
            if time.monotonic() + pause >= deadline:
                break
            logger.warning(
                "%s: download attempt %d failed (%s); retrying in %.1f s", dataset, attempt, failures[-1], pause
            )
            time.sleep(pause)
        try:
            _download_once(file, url, target, policy, deadline, dataset, mirror_path)
            return target
        except _Transient as err:
            failures.append(str(err))
    raise DataError(
        f"{dataset}: could not download {url} in {len(failures)} attempt(s); last: {failures[-1]}. Nothing was "
        f"cached. Check the network or proxy ({file.host_hint}; "
        f"{DOWNLOAD_TIMEOUT_ENV}, {DOWNLOAD_RETRIES_ENV} and {DOWNLOAD_DEADLINE_ENV} set the timeout, the retries "
        f"and the time one file may take), fill the cache from a machine with network (`explain-eval download` "
        f"with the same {CACHE_ENV}), {_mirror_hint(mirror_path)}."
    )


def _remove_stale_parts(target: Path, deadline: float) -> None:
    """Delete temporary files of ``target`` that no download is writing any more: one a live
    download holds locked; where the file system has no locks, one older than the deadline."""
    for part in target.parent.glob(f".{target.name}.*.part") if target.parent.is_dir() else ():
        # one gone already, or not ours to delete, is never a reason to fail a run
        with contextlib.suppress(OSError), open(part, "rb") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a download in progress
            except OSError:  # no locks here (some network file systems): judge by age
                if time.time() - os.fstat(handle.fileno()).st_mtime < deadline:
                    continue
            part.unlink()


def _download_once(
    file: PinnedFile, url: str, target: Path, policy: Retrying, deadline: float, dataset: str, mirror_path: str
) -> None:
    """One transfer into a temporary file, moved to ``target`` only if size and sha256 match, by
    ``deadline`` (a ``time.monotonic()``)."""
    try:
        # identity: the body's length is then the file's, and Content-Length can be checked
        timeout = min(policy.timeout, policy.left(deadline))
        headers = {**file.headers(), "Accept-Encoding": "identity"}
        response = requests.get(url, stream=True, timeout=timeout, headers=headers)
    except requests.RequestException as err:
        raise _Transient(f"{type(err).__name__}: {err}") from err
    with response:
        if response.status_code in _RETRY_STATUS:
            raise _Transient(f"HTTP {response.status_code} {response.reason}")
        if response.status_code != 200:
            raise DataError(
                f"{dataset}: {url} answered HTTP {response.status_code} {response.reason}: the pinned file is not "
                f"there (or needs a token). {file.host_hint}; {_mirror_hint(mirror_path)}."
            )
        try:
            descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
        except OSError as err:
            raise DataError(f"{dataset}: cannot write in {target.parent} ({err}); set {CACHE_ENV}.") from err
        digest, received, head = hashlib.sha256(), 0, b""
        try:
            with os.fdopen(descriptor, "wb") as out:
                fcntl.flock(out, fcntl.LOCK_EX)  # alive: _remove_stale_parts leaves it alone
                for chunk in _chunks(response, policy, deadline):
                    received += len(chunk)
                    head = head or chunk[:256]
                    if received > file.size:
                        break  # not the pinned file; an endless stream must not fill the disk
                    digest.update(chunk)
                    out.write(chunk)
            got = digest.hexdigest()
            if received != file.size or got != file.sha256:
                got_text = (
                    f"more than {file.size} bytes (reading stopped there)"
                    if received > file.size
                    else f"{received} bytes, sha256 {got}"
                )
                kind = response.headers.get("Content-Type", "")
                if "html" in kind.lower() or head.lstrip().lower().startswith((b"<!doctype html", b"<html")):
                    got_text += f" (an HTML page, Content-Type {kind or 'not given'})"
                raise DataError(
                    f"{dataset}: {url} sent a file that is not the pinned one: expected {file.size} bytes, sha256 "
                    f"{file.sha256}; got {got_text}. It was not cached ({target}). "
                    f"A proxy or login page in between, or a wrong mirror ({file.host_hint})? Fix the network path, "
                    f"{_mirror_hint(mirror_path)}."
                )
            os.chmod(temporary, file_mode())  # mkstemp's 0600 would hide a shared cache from the group
            os.replace(temporary, target)
        except (requests.RequestException, urllib3.exceptions.HTTPError) as err:
            policy.left(deadline)  # a read that timed out at the deadline: say so
            raise _Transient(
                f"transfer cut before all {file.size} bytes arrived ({type(err).__name__}: {err})"
            ) from err
        except OSError as err:
            raise DataError(f"{dataset}: cannot write {target} ({err}); free space or set {CACHE_ENV}.") from err
        finally:
            Path(temporary).unlink(missing_ok=True)
    logger.info("%s: downloaded and verified %s -> %s", dataset, url, target)


def _chunks(response: requests.Response, policy: Retrying, deadline: float) -> Iterator[bytes]:
    """The body as it arrives, stopping at the deadline. ``read1`` returns whatever bytes are
    there (``iter_content`` waits for a full chunk, which a trickling server never sends), so
    the deadline is checked at least once per read timeout."""
    read1 = getattr(response.raw, "read1", None)
    if read1 is None:  # urllib3 before 2.0
        for chunk in response.iter_content(_CHUNK):
            policy.left(deadline)
            yield chunk
        return
    while True:
        policy.left(deadline)
        chunk = read1(_CHUNK, decode_content=True)
        if not chunk:
            return
        yield chunk
