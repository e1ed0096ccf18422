"""The test fake OpenAI-compatible server (tests/fakes/openai_server.FakeOpenAI) in its own process.

In-process, the fake's HTTP handling would compete for the benchmarked process's GIL and inflate its
figures; here it runs on the other core. Control goes over a pipe: reset (with a per-call latency), stats
(calls per operation, peak concurrency, and o200k token counts per operation computed after the run), stop.
"""

from __future__ import annotations

import multiprocessing as mp
from collections import Counter
from typing import Any


def _serve(conn: Any, dim: int) -> None:
    from app.providers.tokenizer import get_tokenizer
    from tests.fakes.openai_server import FakeOpenAI

    fake = FakeOpenAI(dim=dim).start()
    conn.send(fake.url)
    tokenizer = get_tokenizer()
    while True:
        command, arg = conn.recv()
        if command == "reset":
            fake.reset()
            fake.latency = arg
            conn.send(None)
        elif command == "stats":
            calls, prompt, completion = Counter(), Counter(), Counter()
            for call in list(fake.calls):
                calls[call.operation] += 1
                prompt[call.operation] += sum(tokenizer.count(str(m.get("content", ""))) for m in call.messages)
                completion[call.operation] += tokenizer.count(call.response)
            conn.send({"calls": dict(calls), "prompt_tokens": dict(prompt), "completion_tokens": dict(completion),
                       "peak_in_flight": fake.peak_in_flight, "embedding_inputs": len(fake.embedding_inputs)})
        elif command == "stop":
            fake.stop()
            conn.send(None)
            return


class FakeProcess:
    def __init__(self, dim: int = 64) -> None:
        ctx = mp.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, dim), daemon=True)
        self._proc.start()
        self.url: str = self._conn.recv()
        self.dim = dim

    def _ask(self, command: str, arg: Any = None) -> Any:
        self._conn.send((command, arg))
        return self._conn.recv()

    def reset(self, latency: float = 0.0) -> None:
        self._ask("reset", latency)

    def stats(self) -> dict:
        return self._ask("stats")

    def stop(self) -> None:
        try:
            self._ask("stop")
        finally:
            self._proc.join(5)
            if self._proc.is_alive():
                self._proc.kill()
