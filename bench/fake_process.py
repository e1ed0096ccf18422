"""The test fake OpenAI-compatible server (tests/support/fakes/openai_server.FakeOpenAI) in its own process.

In-process, the fake's HTTP handling would compete for the benchmarked process's GIL and inflate its
figures; here it runs on the other core. The child is a plain `python -m bench.fake_process DIM`, not a
multiprocessing spawn: spawn re-imports the parent's main module (a benchmark importing the whole app,
~1 s of start-up and memory) before running anything. Control is one JSON line each way over the child's
stdin/stdout: reset (with a per-call latency), rate_limit and rate (a provider's limit and what met it),
stats (calls per operation, peak concurrency, and o200k token counts per operation computed after the run),
requests (the chat calls' bodies), stop. The child stops when its stdin closes, so it never outlives the
benchmark.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parents[1]


def _stats(fake: Any) -> dict:
    from app.providers.tokenizer import get_tokenizer

    tokenizer = get_tokenizer()
    calls, prompt, completion = Counter(), Counter(), Counter()
    for call in list(fake.calls):
        calls[call.operation] += 1
        prompt[call.operation] += sum(tokenizer.count(str(m.get("content", ""))) for m in call.messages)
        completion[call.operation] += tokenizer.count(call.response)
    return {
        "calls": dict(calls),
        "prompt_tokens": dict(prompt),
        "completion_tokens": dict(completion),
        "peak_in_flight": fake.peak_in_flight,
        "embedding_inputs": len(fake.embedding_inputs),
    }


def _serve(dim: int, commands: TextIO, replies: TextIO) -> None:
    from tests.support.fakes.openai_server import FakeOpenAI

    def reply(value: Any) -> None:
        replies.write(json.dumps(value) + "\n")
        replies.flush()

    fake = FakeOpenAI(dim=dim).start(loop="uvloop")
    reply(fake.url)
    asked_to_stop = False
    try:
        for line in commands:  # ends when the parent closes the pipe (or dies)
            command, arg = json.loads(line)
            if command == "reset":
                fake.reset()
                fake.latency = arg
                reply(None)
            elif command == "stats":
                reply(_stats(fake))
            elif command == "rate_limit":  # [requests, window seconds]: more answer 429 (a provider's limit)
                fake.rate_limit, fake.rate_window = arg
                reply(None)
            elif command == "rate":
                reply(
                    {
                        "requests": len(fake.arrivals["chat"]),
                        "over_limit": fake.over_limit,
                        "most_in_window": fake.most_in_window(fake.rate_window),
                    }
                )
            elif command == "requests":  # the chat calls' bodies since the last reset, to replay them
                reply([{"operation": call.operation, "body": call.body} for call in list(fake.calls)])
            elif command == "stop":
                asked_to_stop = True
                break
    finally:
        fake.stop()
    if asked_to_stop:
        reply(None)


class FakeProcess:
    def __init__(self, dim: int = 64) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "bench.fake_process", str(dim)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.dim = dim
        self.url: str = self._read()

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _read(self) -> Any:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"fake server process exited (code {self._proc.poll()})")
        return json.loads(line)

    def _ask(self, command: str, arg: Any = None) -> Any:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps([command, arg]) + "\n")
        self._proc.stdin.flush()
        return self._read()

    def reset(self, latency: float = 0.0) -> None:
        self._ask("reset", latency)

    def stats(self) -> dict:
        return self._ask("stats")

    def rate_limit(self, requests: int, window: float) -> None:
        """Answer 429 (Retry-After: 1) to a chat or embeddings request past `requests` in `window` seconds."""
        self._ask("rate_limit", [requests, window])

    def rate(self) -> dict:
        """Chat requests since the last reset, the 429s answered for the limit, the most in any window."""
        return self._ask("rate")

    def requests(self) -> list[dict]:
        """{"operation", "body"} of every chat call since the last reset."""
        return self._ask("requests")

    def stop(self) -> None:
        try:
            if self._proc.poll() is None:
                self._ask("stop")
        except (BrokenPipeError, RuntimeError):
            pass
        finally:
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            for pipe in (self._proc.stdin, self._proc.stdout):
                if pipe is not None:
                    pipe.close()


if __name__ == "__main__":
    # replies go to a private copy of stdout; anything else printed in the child goes to stderr
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _serve(int(sys.argv[1]), sys.stdin, replies)
