"""Every pinned public file of the suite's papers, and ``explain-eval download``, which fetches them.

Compute nodes are often offline while login nodes are not: ``explain-eval download`` on a
login node fills the suite's cache (``$EXPLAIN_EVAL_CACHE/downloads``) with verified files,
and a run on a compute node sharing that folder reads them with no network at all.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from custom_metrics.common.download import PinnedFile, cached, fetch
from custom_metrics.common.errors import DataError
from custom_metrics.common.settings import CACHE_ENV, DATA_ENV, cache_root, downloads_dir, env_value
from custom_metrics.common.sources import Source, mirror_root
from custom_metrics.leaderboard.registry import PAPERS as SPECS

# Each paper's spec names its datasets (``PaperSpec.datasets``); a paper's key names them all.
DATASETS: dict[str, tuple[Source, ...]] = {name: sources for spec in SPECS for name, sources in spec.datasets.items()}
PAPERS = {spec.key: tuple(spec.datasets) for spec in SPECS if tuple(spec.datasets) != (spec.key,)}


def pinned_files(names: Sequence[str]) -> list[tuple[str, Source]]:
    """(label, source) per distinct pinned file of ``names`` (all when empty); COPA's splits share one."""
    unknown = [name for name in names if name not in DATASETS and name not in PAPERS]
    if unknown:
        raise DataError(f"unknown dataset(s) {unknown}; choose from {sorted(DATASETS) + sorted(PAPERS)}.")
    chosen = [dataset for name in names for dataset in PAPERS.get(name, (name,))] or list(DATASETS)
    by_file: dict[PinnedFile, list[Source]] = {}
    for dataset in dict.fromkeys(chosen):
        for source in DATASETS[dataset]:
            by_file.setdefault(source.remote, []).append(source)
    return [(" + ".join(source.name for source in sources), sources[0]) for sources in by_file.values()]


def _download(files: list[tuple[str, Source]]) -> int:
    failures = 0
    for label, source in files:
        try:
            status = "cached    " if cached(source.remote, label) else "downloaded"
            path = fetch(source.remote, label, source.mirror_path, requested=True)
        except DataError as err:
            failures += 1
            print(f"FAILED     {err}", file=sys.stderr)
            continue
        remote = source.remote
        print(f"{status} {label}: {path}")
        print(f"           {remote.size:,} bytes, sha256 {remote.sha256}, from {remote.url()}")
    print(f"\n{len(files) - failures} of {len(files)} pinned file(s) verified in {downloads_dir()}.")
    for _, source in files:  # a copy chosen instead of the pinned file (a Hub dataset): filled and checked too
        try:
            verified = source.stand_in() if source.stand_in is not None else ""
        except DataError as err:
            failures += 1
            print(f"FAILED     {err}", file=sys.stderr)
            continue
        if verified:
            print(f"verified   {verified}")
    print(
        f"Nodes without network that share this folder ({CACHE_ENV}={cache_root()}) read these files with no "
        "network access; set HF_HUB_OFFLINE=1 there."
    )
    if env_value(DATA_ENV):
        print(f"Note: {DATA_ENV} is set, so tasks read that mirror instead of these files.")
    return 1 if failures else 0


def _list(files: list[tuple[str, Source]]) -> int:
    for label, source in files:
        remote = source.remote
        print(f"{label}\n  {remote.url()}\n  {remote.size:,} bytes, sha256 {remote.sha256}\n  {remote.cache_path()}")
        print(f"  here: {_here(label, remote)}")
    return 0


def _here(label: str, remote: PinnedFile) -> str:
    """Where a run on this machine reads the file from: the mirror (``EXPLAIN_EVAL_DATA``) when
    one is set, else the cache, whose copy is verified as a run verifies it."""
    root = mirror_root()
    if root is not None:
        paths = [source.mirror_path for sources in DATASETS.values() for source in sources if source.remote == remote]
        missing = [path for path in dict.fromkeys(paths) if not (root / path).is_file()]
        if missing:
            return f"not in the mirror {DATA_ENV}={root} (expected {', '.join(missing)}): its tasks stop there"
        return f"mirrored ({DATA_ENV}={root}: {', '.join(dict.fromkeys(paths))})"
    try:
        path = cached(remote, label)
    except DataError:
        return "cached, but the copy no longer matches its pin (a run refuses it): delete it and download it again"
    return "cached, verified" if path else "not cached: a run downloads it, or `explain-eval download` first"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="explain-eval download",
        description="Download and verify the pinned public data files into the suite's cache, e.g. on a login "
        "node before running on offline compute nodes.",
    )
    parser.add_argument(
        "datasets", nargs="*", metavar="DATASET", help=f"any of {', '.join([*DATASETS, *PAPERS])} (default: all)"
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="print each file's URL, size, sha256, cache path and whether it is here (mirrored or cached)",
    )
    args = parser.parse_args(argv)
    try:
        files = pinned_files(args.datasets)
    except DataError as err:
        parser.error(str(err))
    return (_list if args.list else _download)(files)


if __name__ == "__main__":
    sys.exit(main())
