"""The world-aware fake model (tests/support/fakes/world_model.py) served in its own process.

Same control protocol as bench/fake_process.py (one JSON line each way: reset, stats, stop); the child
rebuilds the world from the same parameters as the benchmark, so nothing large crosses the pipe.

    python -m bench.quality_fake DIM SEED ENTITIES DOCS ALIASES(0|1)
    python -m bench.quality_fake DIM alias SEED STYLE KINDS(comma-separated) PER_KIND   (bench/alias_world.py)
    python -m bench.quality_fake DIM blind SEED PER_HABIT   (bench/alias_world_blind.py)
    python -m bench.quality_fake DIM holdout SEED PER_KIND   (bench/alias_world_holdout.py)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any, TextIO

from bench.fake_process import ROOT, FakeProcess, _stats


class WorldFakeProcess(FakeProcess):
    def __init__(self, dim: int, seed: int, entities: int, docs: int, aliases: bool) -> None:  # noqa: PLR0913
        self._start(dim, [str(seed), str(entities), str(docs), str(int(aliases))])

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

    def _start(self, dim: int, world_args: list[str]) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "bench.quality_fake", str(dim), *world_args],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.dim = dim
        self.url = self._read()


def gold_judge(world: Any) -> Callable[[list[dict]], str]:
    """The entity-resolution judge (ENTITY_RESOLUTION=llm) answering from the world's truth: "same" when both
    names (read with their descriptions, as the bench scores nodes) stand for one and the same entity."""
    from bench.quality_metrics import EntityMatcher

    matcher = EntityMatcher(world)

    def one(side: dict) -> set[str]:
        return matcher.ids(str(side.get("name", "")), str(side.get("description", "")))

    def answer(messages: list[dict]) -> str:
        verdicts = []
        for item in json.loads(messages[-1]["content"]):
            a, b = one(item["a"]), one(item["b"])
            same = len(a) == 1 and a == b
            verdicts.append({"pair": item["pair"], "same": same, "reason": "gold" if same else "other entity"})
        return json.dumps({"verdicts": verdicts})

    return answer


def _serve(args: list[str], commands: TextIO, replies: TextIO) -> None:
    from bench.quality_world import build_world
    from tests.support.fakes.openai_server import FakeOpenAI
    from tests.support.fakes.world_model import WorldModel

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
        world = build_world(*(int(a) for a in args[1:4]), bool(int(args[4])))
    dim = int(args[0])
    model = WorldModel(world)
    judge = gold_judge(world)

    def reply(value: Any) -> None:
        replies.write(json.dumps(value) + "\n")
        replies.flush()

    fake = FakeOpenAI(dim=dim).start(loop="uvloop")
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
                reply(None)
            elif command == "stats":
                reply(_stats(fake))
            elif command == "stop":
                break
    finally:
        fake.stop()
    reply(None)


if __name__ == "__main__":
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _serve(sys.argv[1:], sys.stdin, replies)
