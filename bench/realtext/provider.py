"""The deterministic fake provider of the real-text bench, in its own process: the test fake OpenAI server
(tests/support/fakes/openai_server.py) with answers from the NLP pipeline and MiniLM embeddings.

Both systems reach it over HTTP. The service names each call's operation in a header; official LightRAG
does not, so its prompts are recognised by their content. Extraction answers depend only on the chunk text
(the last fenced block of the prompt), so the same chunk gets the same records from either system.
Gleaning finds nothing new. Keyword answers come from the query's parse, summaries join the fragments.

Before serving, it parses the corpus's chunks as both systems will cut them (the service's chunker, same
size and overlap) in one batch, so ingestion does not wait on one parse per call; a chunk cut otherwise
is parsed when asked. NLP and embeddings each run in a worker thread of their own, off the server's loop.
Embeddings: MiniLM, or (`hashed`) the test fake's hashed bag of words, for quick runs on a loaded machine.
It also serves `/v1/rerank` (bench/realtext/rerank.py, with MiniLM), the reranker of `--rerank` for both systems.

    python -m bench.realtext.provider CACHE_DIR CHUNK_SIZE CHUNK_OVERLAP minilm|hashed [module:corpus_function
                                      [rerank|plain]]
    (prints its URL; stops when stdin closes)
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO

from bench.fake_process import ROOT, FakeProcess, _stats
from bench.realtext import records
from bench.realtext.embed import DIM

_OPERATION: contextvars.ContextVar[str | None] = contextvars.ContextVar("operation", default=None)
MEDICAL = "bench.realtext.data:corpus"
_QUERY = re.compile(r"Query:\s*(.*?)\s*(?:\n---|\Z)", re.DOTALL)


def classify(messages: list[dict]) -> str:
    """The operation of an official LightRAG prompt (it sends no operation header)."""
    if any(m.get("role") == "assistant" for m in messages):
        return "glean"  # the follow-up pass carries the first answer as history
    text = "\n".join(str(m.get("content", "")) for m in messages)
    if "high_level_keywords" in text:
        return "keywords"
    if "Description List" in text:
        return "summary"
    if "extracting entities and relationships" in text or "---Input Text---" in text:
        return "extract"
    return "query"


def query_of(messages: list[dict]) -> str:
    """The question of a keyword prompt: after its last "Query:" (the examples before it have their own), up to
    a "---" section line or the end."""
    text = str(messages[-1].get("content", ""))
    start = text.rfind("Query:")
    found = _QUERY.match(text, start) if start != -1 else None
    return found.group(1).strip() if found else text.strip()


def fragments_of(messages: list[dict]) -> list[str]:
    """The descriptions listed in a summary prompt, one JSON object a line, whatever the key's case."""
    out = []
    for line in str(messages[-1].get("content", "")).splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out += [v for k, v in value.items() if k.lower() == "description" and isinstance(v, str)]
    return out


class NlpModel:
    def __init__(self, cache_dir: Path) -> None:
        from bench.realtext.nlp import Parser

        self.parser = Parser(cache_dir)
        self._thread = ThreadPoolExecutor(1, "nlp")  # spaCy one call at a time, never queued behind embeddings

    def prepare(self, chunk_size: int, chunk_overlap: int, corpus: str = MEDICAL) -> int:
        """Parse, in one batch, the chunks the corpus is cut into; returns their number. `corpus` names the
        function that loads the documents, as "module:function"."""
        import importlib

        from app.domain.chunking import chunk_text
        from app.providers.tokenizer import get_tokenizer

        module, function = corpus.split(":")
        documents = getattr(importlib.import_module(module), function)()
        tokenizer = get_tokenizer("o200k_base")
        texts = [
            c.content.strip()
            for doc in documents
            for c in chunk_text(tokenizer, doc, size=chunk_size, overlap=chunk_overlap)
        ]
        self.parser.parse_many(texts)
        self.prepared = texts
        return len(texts)

    async def answer_async(self, messages: list[dict]) -> str:
        operation = _OPERATION.get() or classify(messages)
        return await asyncio.get_running_loop().run_in_executor(self._thread, self.answer, messages, operation)

    def answer(self, messages: list[dict], operation: str) -> str:
        from tests.support.fakes.openai_server import chunk_text

        if operation in ("extract", "extract_retry"):
            entities, relations = records.extraction(self.parser.parse(chunk_text(messages).strip()))
            return records.format_records(entities, relations)
        if operation == "glean":
            return records.COMPLETE
        if operation == "keywords":
            high, low = records.keywords(self.parser.parse(query_of(messages)))
            return json.dumps({"high_level_keywords": high, "low_level_keywords": low})
        if operation == "summary":
            return records.summary(fragments_of(messages))
        return "The bench asks for context only."


def _server(
    cache_dir: Path, chunk_size: int, chunk_overlap: int, embeddings: str, corpus: str, rerank: bool = False
) -> Any:
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response

    from bench.realtext.embed import Embedder
    from tests.support.fakes.openai_server import DEFAULT_HANDLERS, FakeOpenAI

    class RealTextFake(FakeOpenAI):
        embedder: Any = None
        rerank_requests = 0
        embed_thread = ThreadPoolExecutor(1, "embed")

        async def chat(self, request: Request) -> Response:
            _OPERATION.set(request.headers.get("x-lightrag-operation"))
            return await super().chat(request)

        async def embeddings(self, request: Request) -> Response:
            if self.embedder is None:  # hashed bag of words
                return await super().embeddings(request)
            body = await request.json()
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            texts = [str(t) for t in inputs]
            vectors = await asyncio.get_running_loop().run_in_executor(self.embed_thread, self.embedder.embed, texts)
            with self._lock:
                self.embedding_requests += 1
            if body.get("encoding_format") == "base64":
                encoded: list[Any] = [base64.b64encode(v.tobytes()).decode() for v in vectors]
            else:
                encoded = [v.tolist() for v in vectors]
            tokens = sum(len(str(t).split()) for t in inputs)
            return JSONResponse(
                {
                    "object": "list",
                    "data": [{"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(encoded)],
                    "model": body.get("model", "minilm"),
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                }
            )

        async def rerank(self, request: Request) -> Response:
            """The Jina/Cohere rerank shape, scored by bench/realtext/rerank.py (MiniLM embeddings only)."""
            from bench.realtext import rerank

            if self.embedder is None:
                return JSONResponse({"error": "rerank needs MiniLM embeddings"}, status_code=400)
            body = await request.json()
            answer = await asyncio.get_running_loop().run_in_executor(
                self.embed_thread, rerank.response, self.embedder, body
            )
            with self._lock:
                self.rerank_requests += 1
            return JSONResponse(answer)

        def routes(self) -> list[Any]:
            from starlette.routing import Route

            return [*super().routes(), Route("/v1/rerank", self.rerank, methods=["POST"])]

    model = NlpModel(cache_dir)
    print(f"provider: {model.prepare(chunk_size, chunk_overlap, corpus)} chunks parsed", file=sys.stderr, flush=True)
    fake = RealTextFake(dim=DIM)
    if embeddings == "minilm":
        fake.embedder = Embedder(cache_dir)
        if rerank:  # every window embedded now, so that no timed query waits for a chunk's first embedding
            from bench.realtext.rerank import warm

            print(f"provider: {warm(fake.embedder, model.prepared)} rerank windows", file=sys.stderr, flush=True)
    for operation in [*DEFAULT_HANDLERS, "extract_retry", "unknown"]:
        fake.handlers[operation] = model.answer_async
    return fake


def _serve(args: list[str], commands: TextIO, replies: TextIO) -> None:
    def reply(value: Any) -> None:
        replies.write(json.dumps(value) + "\n")
        replies.flush()

    corpus = args[4] if len(args) > 4 else MEDICAL
    rerank = len(args) > 5 and args[5] == "rerank"
    fake = _server(Path(args[0]), int(args[1]), int(args[2]), args[3], corpus, rerank).start(loop="uvloop")
    reply(fake.url)
    try:
        for line in commands:  # ends when the parent closes the pipe (or dies)
            command, _ = json.loads(line)
            if command == "stats":
                reply(_stats(fake))
            elif command == "reset":
                fake.calls.clear()
                reply(None)
            elif command == "stop":
                break
    finally:
        fake.stop()
    reply(None)


class ProviderProcess(FakeProcess):
    def __init__(  # noqa: D107
        self,
        cache_dir: Path,
        chunk_size: int,
        chunk_overlap: int,
        embeddings: str,
        corpus: str = MEDICAL,
        *,
        rerank: bool = False,
    ) -> None:
        self._proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.realtext.provider",
                str(cache_dir),
                str(chunk_size),
                str(chunk_overlap),
                embeddings,
                corpus,
                "rerank" if rerank else "plain",
            ],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.dim = DIM
        self.url = self._read()


if __name__ == "__main__":
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _serve(sys.argv[1:], sys.stdin, replies)
