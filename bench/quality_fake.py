"""The world-aware fake model (tests/support/fakes/world_model.py) served in its own process.

Same control protocol as bench/fake_process.py (one JSON line each way: reset, stats, stop); the child
rebuilds the world from the same parameters as the benchmark, so nothing large crosses the pipe.

    python -m bench.quality_fake DIM SEED ENTITIES DOCS ALIASES(0|1)
    python -m bench.quality_fake DIM alias SEED STYLE KINDS(comma-separated) PER_KIND   (bench/alias_world.py)
    python -m bench.quality_fake DIM blind SEED PER_HABIT   (bench/alias_world_blind.py)
    python -m bench.quality_fake DIM holdout SEED PER_KIND   (bench/alias_world_holdout.py)

The entity-resolution judge (ENTITY_RESOLUTION=llm) answers from the world's truth by default (`gold`: an
oracle, so what it merges is an upper bound, never a claim about a real model); the control command
`["judge", "never" | "always" | "gold"]` swaps it, and `["shown", null]` returns, per pair the judge was shown,
the real entities each side stands for (which aliases reached the judge at all).

Embeddings are the test fake's hashed bag of words (64 dimensions; digits are not words), or MiniLM
(bench/realtext/embed.py, 384 dimensions; the bench extra) when BENCH_FAKE_EMBEDDINGS=minilm is set.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any, TextIO

from bench.fake_process import ROOT, FakeProcess, _stats

EMBEDDINGS = "BENCH_FAKE_EMBEDDINGS"  # "minilm": real sentence embeddings instead of the hashed bag of words
MINILM_DIM = 384


class WorldFakeProcess(FakeProcess):
    def __init__(  # noqa: PLR0913
        self, dim: int, seed: int, entities: int, docs: int, aliases: bool, warm_seed: int | None = None
    ) -> None:
        """`warm_seed`: the fake also answers the documents of the world of that seed (the same sizes)."""
        warm = [] if warm_seed is None else [str(warm_seed)]
        self._start(dim, [str(seed), str(entities), str(docs), str(int(aliases)), *warm])

    @classmethod
    def for_alias_world(cls, dim: int, seed: int, style: str, kinds: tuple[str, ...], per_kind: int) -> FakeProcess:
        fake = cls.__new__(cls)
        fake._start(dim, ["alias", str(seed), style, ",".join(kinds), str(per_kind)])
        return fake

    @classmethod
    def for_blind_world(cls, dim: int, seed: int, per_habit: int) -> FakeProcess:
        fake = cls.__new__(cls)
        fake._start(dim, ["blind", str(seed), str(per_habit)])
        return fake

    @classmethod
    def for_holdout_world(cls, dim: int, seed: int, per_kind: int) -> FakeProcess:
        fake = cls.__new__(cls)
        fake._start(dim, ["holdout", str(seed), str(per_kind)])
        return fake

    def judge(self, kind: str) -> None:
        """How the judge answers: "gold" (the world's truth), "never" or "always" (same for every pair)."""
        self._ask("judge", kind)

    def shown(self) -> list[list[list[str]]]:
        """Per pair shown to the judge since the last reset, the real entities of each side (sorted ids)."""
        return self._ask("shown")

    def _start(self, dim: int, world_args: list[str]) -> None:
        dim = MINILM_DIM if os.environ.get(EMBEDDINGS) == "minilm" else dim
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "bench.quality_fake", str(dim), *world_args],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.dim = dim
        self.url = self._read()


def gold_judge(
    world: Any, kind: str = "gold", shown: list[list[list[str]]] | None = None
) -> Callable[[list[dict]], str]:
    """The entity-resolution judge (ENTITY_RESOLUTION=llm) answering from the world's truth: "same" when both
    names (read with their descriptions, as the bench scores nodes) stand for one and the same entity; with
    `kind` "never" or "always", that answer for every pair. Each pair's real entities go to `shown`."""
    from bench.quality_metrics import EntityMatcher
    from tests.support.fakes.judge_prompt import judge_pairs

    matcher = EntityMatcher(world)

    def one(side: dict) -> set[str]:
        return matcher.ids(str(side.get("name", "")), str(side.get("description", "")))

    def answer(messages: list[dict]) -> str:
        verdicts = []
        for item in judge_pairs(messages[-1]["content"]):
            a, b = one(item["a"]), one(item["b"])
            if shown is not None:
                shown.append([sorted(a), sorted(b)])
            same = {"gold": len(a) == 1 and a == b, "never": False, "always": True}[kind]
            verdicts.append({"pair": item["pair"], "same": same, "reason": "gold" if same else "other entity"})
        return json.dumps({"verdicts": verdicts})

    return answer


def _minilm_fake(dim: int, cache_dir: str) -> Any:
    """The test fake with MiniLM answering its embeddings calls (on a worker thread, off the server's loop)."""
    import asyncio
    from pathlib import Path

    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response

    from bench.realtext.embed import Embedder
    from tests.support.fakes.openai_server import FakeOpenAI

    embedder = Embedder(Path(cache_dir))

    class MiniLMFake(FakeOpenAI):
        async def embeddings(self, request: Request) -> Response:
            body = await request.json()
            texts = [str(t) for t in (body["input"] if isinstance(body["input"], list) else [body["input"]])]
            vectors = await asyncio.get_running_loop().run_in_executor(None, embedder.embed, texts)
            with self._lock:
                self.embedding_requests += 1
                self.embedding_inputs.extend(texts)
            tokens = sum(len(t.split()) for t in texts)
            data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
            usage = {"prompt_tokens": tokens, "total_tokens": tokens}
            return JSONResponse({"object": "list", "data": data, "model": "minilm", "usage": usage})

    return MiniLMFake(dim=dim)


class _Either:
    """Two worlds' models as one: each chunk is answered by the model whose world holds its document (the
    measured world's first), questions by the measured world's."""

    def __init__(self, first: Any, second: Any) -> None:
        self.first, self.second = first, second

    def extract(self, messages: list[dict]) -> str:
        from tests.support.fakes.openai_server import chunk_text

        chunk = chunk_text(messages)
        return (self.first if self.first.document_of(chunk) is not None else self.second).extract(messages)

    def install(self, fake: Any) -> None:
        self.first.install(fake)
        fake.handlers["extract"] = self.extract


def _serve(args: list[str], commands: TextIO, replies: TextIO) -> None:
    from bench.quality_world import build_world
    from tests.support.fakes.openai_server import FakeOpenAI
    from tests.support.fakes.world_model import WorldModel

    warm: WorldModel | None = None
    if args[1] == "alias":
        from bench.alias_world import build_alias_world

        world = build_alias_world(int(args[2]), args[3], tuple(args[4].split(",")), int(args[5])).world
    elif args[1] == "blind":
        from bench.alias_world_blind import build_blind_world

        world = build_blind_world(int(args[2]), int(args[3]))
    elif args[1] == "holdout":
        from bench.alias_world_holdout import build_holdout_world

        world = build_holdout_world(int(args[2]), int(args[3]))
    else:
        sizes = (int(args[2]), int(args[3]), bool(int(args[4])))
        world = build_world(int(args[1]), *sizes)
        if len(args) > 5:  # a warm-up world's documents too
            warm = WorldModel(build_world(int(args[5]), *sizes))
    dim = int(args[0])
    model: Any = WorldModel(world) if warm is None else _Either(WorldModel(world), warm)
    shown: list[list[list[str]]] = []
    judge = gold_judge(world, "gold", shown)

    def reply(value: Any) -> None:
        replies.write(json.dumps(value) + "\n")
        replies.flush()

    cache_dir = tempfile.mkdtemp(prefix="quality-fake-embeddings-")
    minilm = os.environ.get(EMBEDDINGS) == "minilm"
    fake = (_minilm_fake(dim, cache_dir) if minilm else FakeOpenAI(dim=dim)).start(loop="uvloop")
    model.install(fake)
    fake.handlers["judge"] = judge
    reply(fake.url)
    try:
        for line in commands:  # ends when the parent closes the pipe (or dies)
            command, arg = json.loads(line)
            if command == "reset":
                fake.reset()
                fake.latency = arg
                model.install(fake)
                fake.handlers["judge"] = judge
                shown.clear()
                reply(None)
            elif command == "judge":
                judge = gold_judge(world, arg, shown)
                fake.handlers["judge"] = judge
                reply(None)
            elif command == "shown":
                reply(shown)
            elif command == "stats":
                reply(_stats(fake))
            elif command == "stop":
                break
    finally:
        fake.stop()
        shutil.rmtree(cache_dir, ignore_errors=True)
    reply(None)


if __name__ == "__main__":
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _serve(sys.argv[1:], sys.stdin, replies)
