"""Oversized request lists: how fast each route refuses a ~42 MB body of tiny list items, and what /health
does meanwhile. The real app under uvicorn (a subprocess) on loopback, an embedded PostgreSQL, the fake LLM.

    .venv/bin/python -m bench.input_caps_bench [--mb 42] [--routes chat,ollama,...]

Per route it sends one JSON body of about --mb megabytes (under the default 50 MB request limit) whose list
holds as many tiny items as fit: chat messages, /query and /lightrag/query history, POST /documents
documents, /lightrag/documents/texts texts, POST /documents/delete ids. The body goes over a plain socket;
while it is in flight (and 100 ms after the answer), /health is asked every 20 ms on a second connection from
another thread. Printed per route: the status, the milliseconds until the answer's first bytes arrive,
/health p95 and max latency meanwhile, and how much the app's resident memory peak grew.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path

import httpx

from bench.load_bench import free_port, percentile, start_app, start_database, wait_healthy
from tests.support.fakes.openai_server import FakeOpenAI

MESSAGE = {"role": "user", "content": "hi"}


def _bodies(megabytes: float) -> dict[str, tuple[str, str, dict]]:
    def fill(item: object) -> list:
        return [item] * int(megabytes * 1_000_000 / (len(json.dumps(item)) + 2))

    return {
        "chat": ("POST", "/v1/chat/completions", {"model": "lightrag", "messages": fill(MESSAGE)}),
        "ollama": ("POST", "/api/chat", {"model": "lightrag", "stream": False, "messages": fill(MESSAGE)}),
        "query": ("POST", "/query", {"query": "Who?", "conversation_history": fill(MESSAGE)}),
        "lightrag-query": ("POST", "/lightrag/query", {"query": "Who?", "conversation_history": fill(MESSAGE)}),
        "documents": ("POST", "/documents", {"documents": fill({"text": "a"})}),
        "lightrag-texts": ("POST", "/lightrag/documents/texts", {"texts": fill("a")}),
        "delete": ("POST", "/documents/delete", {"document_ids": fill("a")}),
    }


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def probe_health(base: str, done: threading.Event, latencies: list[float]) -> None:
    with httpx.Client(base_url=base, timeout=300) as client:
        while not done.is_set():
            started = time.perf_counter()
            client.get("/health")
            latencies.append(1000 * (time.perf_counter() - started))
            time.sleep(0.02)


def send_raw(port: int, method: str, path: str, body: bytes) -> tuple[float, bytes]:
    """Milliseconds until the first bytes of the answer arrive (the client may still be sending), and the
    answer. A plain socket, so that the time is not that of a client finishing its upload first."""
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        answer: list[bytes] = []
        first: list[float] = []

        def read() -> None:
            with contextlib.suppress(OSError):  # reset once the server closes on the unread rest of the body
                while chunk := sock.recv(65536):
                    first.append(first[0] if first else time.perf_counter())
                    answer.append(chunk)

        reader = threading.Thread(target=read)
        started = time.perf_counter()
        reader.start()
        with contextlib.suppress(OSError):  # the server may close once it has answered
            sock.sendall(head + body)
        reader.join()
    return 1000 * (first[0] - started), b"".join(answer)


def one(base: str, port: int, pid: int, method: str, path: str, body: bytes) -> str:
    httpx.get(base + "/health")
    done, latencies = threading.Event(), []
    rss_before = peak_rss_mb(pid)
    prober = threading.Thread(target=probe_health, args=(base, done, latencies))
    prober.start()
    elapsed, answer = send_raw(port, method, path, body)
    time.sleep(0.1)  # what the server still does after answering (reading the rest of the body) counts too
    done.set()
    prober.join()
    status = int(answer.split(b" ", 2)[1])
    code = re.search(rb'"code":\s*"([a-z_]+)"', answer)
    return (
        f"{status:6d} {(code[1].decode() if code else '')[:22]:22} {elapsed:10.0f} "
        f"{percentile(latencies, 95):9.0f} {max(latencies):9.0f} {peak_rss_mb(pid) - rss_before:9.0f}"
    )


async def main(args: argparse.Namespace) -> None:
    root = Path(tempfile.mkdtemp(prefix="lrs-caps-"))
    fake = FakeOpenAI(dim=64).start()
    server, database_url = start_database(root)
    port = free_port()
    proc = start_app(database_url, fake, port, root / "app.log")
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            await wait_healthy(client, proc)
        bodies = _bodies(args.mb)
        print(
            f"{'route':16} {'items':>9} {'MB':>5} {'status':>6} {'code':22} {'answer ms':>10} "
            f"{'health p95':>9} {'max':>9} {'+RSS MB':>9}"
        )
        for name in args.routes.split(","):
            method, path, payload = bodies[name]
            body = json.dumps(payload).encode()
            items = max(len(v) for v in payload.values() if isinstance(v, list))
            row = await asyncio.to_thread(one, base, port, proc.pid, method, path, body)
            print(f"{name:16} {items:9d} {len(body) / 1e6:5.1f} {row}", flush=True)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except Exception:
            proc.kill()
        fake.stop()
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=42.0)
    parser.add_argument("--routes", default="chat,ollama,query,lightrag-query,documents,lightrag-texts,delete")
    asyncio.run(main(parser.parse_args()))
