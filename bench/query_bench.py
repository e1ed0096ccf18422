"""Context-building latency per query mode on a large project (no LLM: keywords given, only_need_context).

    .venv/bin/python -m bench.query_bench [--entities 10000] [--relations 20000] [--chunks 5000] [--dim 384]

Builds the graph with bulk SQL in a throw-away embedded PostgreSQL: vectors are clustered around topic
centroids (so keyword searches find realistic result sets above the cosine threshold), chunks are
~800 words, every entity/relation has provenance. The query embedder is a local stub (vectors near a
topic centroid), so the figures are database + Python time, without the embedding provider's latency.
Also prints EXPLAIN of the three vector searches (HNSW index used?) and checks that a small project
sharing the HNSW index with the big one still gets top_k rows (iterative scans).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import statistics
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert, text

from app.core.config import Settings
from app.db.engine import Database
from app.db.migrate import upgrade_to_head
from app.db.tables import chunks, documents, entities, entity_sources, projects, relation_sources, relations
from app.domain.names import entity_key
from app.repositories import retrieval as repo
from app.schemas.query import QueryRequest
from app.services.query.service import QueryService
from bench.in_process import query_service

TOPICS = 200
HNSW_TABLES = ("entities", "relations", "chunks")
VOCAB = [f"w{i}" for i in range(3000)]
rng = random.Random(7)


def unit(v: list[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / n for x in v]


class Space:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.centroids = [unit([rng.gauss(0, 1) for _ in range(dim)]) for _ in range(TOPICS)]

    def near(self, topic: int, noise: float = 0.9) -> list[float]:
        c = self.centroids[topic % TOPICS]
        return unit([x + rng.gauss(0, noise / math.sqrt(self.dim)) * 1.0 for x in c])


class StubEmbedder:
    """Query-time embeddings: a text's topic is given by its first token `tNNN`."""

    def __init__(self, space: Space) -> None:
        self.space = space

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return [self.space.near(int(t.split()[0][1:]), 0.5) for t in texts]

    async def close(self) -> None:
        return None


def words(n: int) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(n))


async def build(db: Database, space: Space, project: str, n_ent: int, n_rel: int, n_chunk: int) -> None:
    t0 = time.perf_counter()
    n_docs = max(1, n_chunk // 100)
    async with db.transaction() as conn:
        for table in HNSW_TABLES:  # bulk load first, build the indexes once afterwards (much faster)
            await conn.execute(text(f"DROP INDEX IF EXISTS ix_{table}_embedding_hnsw"))
        await conn.execute(insert(projects).values(id=project, name=project))
        await conn.execute(
            insert(documents),
            [
                {
                    "project_id": project,
                    "id": f"doc-{d}",
                    "status": "processed",
                    "content": "x",
                    "content_hash": f"h{d}",
                    "content_length": 1,
                    "file_path": f"file-{d}.txt",
                }
                for d in range(n_docs)
            ],
        )
        rows = []
        for i in range(n_chunk):
            rows.append(
                {
                    "project_id": project,
                    "id": f"chunk-{i}",
                    "document_id": f"doc-{i % n_docs}",
                    "order_index": i // n_docs,
                    "tokens": 1200,
                    "start_token": 0,
                    "end_token": 1200,
                    "content": words(800),
                    "file_path": f"file-{i % n_docs}.txt",
                    "embedding": space.near(i % TOPICS),
                }
            )
        for start in range(0, len(rows), 1000):
            await conn.execute(insert(chunks), rows[start : start + 1000])
        ents, srcs = [], []
        for i in range(n_ent):
            name = f"Entity {i}"
            own = [f"chunk-{(i * 7 + k * 13) % n_chunk}" for k in range(1 + i % 3)]
            ents.append(
                {
                    "project_id": project,
                    "key": entity_key(name),
                    "name": name,
                    "entity_type": "concept",
                    "description": words(40),
                    "source_ids": own,
                    "file_paths": [],
                    "embedding": space.near(i % TOPICS),
                }
            )
            srcs += [
                {
                    "project_id": project,
                    "entity_key": entity_key(name),
                    "chunk_id": c,
                    "document_id": f"doc-{int(c.split('-')[1]) % n_docs}",
                }
                for c in dict.fromkeys(own)
            ]
        for start in range(0, len(ents), 2000):
            await conn.execute(insert(entities), ents[start : start + 2000])
        for start in range(0, len(srcs), 5000):
            await conn.execute(insert(entity_sources), srcs[start : start + 5000])
        pairs: set[tuple[str, str]] = set()
        while len(pairs) < n_rel:
            a, b = rng.randrange(n_ent), rng.randrange(n_ent)
            if a != b:
                ka, kb = sorted((entity_key(f"Entity {a}"), entity_key(f"Entity {b}")))
                pairs.add((ka, kb))
        rels, rsrcs = [], []
        for j, (ka, kb) in enumerate(sorted(pairs)):
            c = f"chunk-{j % n_chunk}"
            rels.append(
                {
                    "project_id": project,
                    "src_key": ka,
                    "tgt_key": kb,
                    "keywords": words(3),
                    "description": words(30),
                    "weight": 1.0 + j % 5,
                    "source_ids": [c],
                    "file_paths": [],
                    "embedding": space.near(j % TOPICS),
                }
            )
            rsrcs.append(
                {
                    "project_id": project,
                    "src_key": ka,
                    "tgt_key": kb,
                    "chunk_id": c,
                    "document_id": f"doc-{(j % n_chunk) % n_docs}",
                }
            )
        for start in range(0, len(rels), 2000):
            await conn.execute(insert(relations), rels[start : start + 2000])
            await conn.execute(insert(relation_sources), rsrcs[start : start + 2000])
    async with db.transaction() as conn:
        await conn.execute(text("SET LOCAL maintenance_work_mem = '512MB'"))
        for table in HNSW_TABLES:  # same definition as migration 0001
            await conn.execute(
                text(
                    f"CREATE INDEX ix_{table}_embedding_hnsw ON {table} "
                    "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
                )
            )
    async with db.transaction() as conn:
        await conn.execute(text("ANALYZE"))
    print(f"built {project}: {n_ent} entities, {n_rel} relations, {n_chunk} chunks in {time.perf_counter() - t0:.1f}s")


async def explain(db: Database, space: Space) -> None:
    vec = "[" + ",".join(f"{x:.6f}" for x in space.near(3)) + "]"
    for table in ("entities", "relations", "chunks"):
        async with db.transaction() as conn:
            await repo.prepare_vector_search(conn, 100)
            plan = (
                (
                    await conn.execute(
                        text(
                            f"EXPLAIN SELECT * FROM {table} WHERE project_id = 'bench' AND embedding IS NOT NULL "
                            f"ORDER BY embedding <=> '{vec}'::vector LIMIT 40"
                        )
                    )
                )
                .scalars()
                .all()
            )
        verdict = "HNSW index scan" if any("hnsw" in line for line in plan) else "NO HNSW"
        print(f"EXPLAIN {table}: {verdict} — {plan[1].strip() if len(plan) > 1 else plan}")


async def filtered_search_check(db: Database, space: Space) -> None:
    """A 200-entity project shares the HNSW index with the 10,000-entity one: without iterative scans
    the index returns ef_search candidates of which few belong to the small project."""
    vec = space.near(5, 0.5)
    for iterative in ("relaxed_order", "off"):
        async with db.transaction() as conn:
            await repo.prepare_vector_search(conn, 40)
            await conn.execute(text(f"SET LOCAL hnsw.iterative_scan = {iterative}"))
            await conn.execute(text("SET LOCAL enable_sort = off"))  # make the planner use the shared HNSW index
            rows = await repo.search_entities(conn, "small", vec, 40, -1.0)
        print(
            f"small project (200 of 10,200 entities) through the shared HNSW index, top_k=40, ef_search=40, "
            f"iterative_scan={iterative}: {len(rows)} rows"
        )


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]


def request(project: str, mode: str, i: int) -> QueryRequest:
    topic = (i * 37) % TOPICS
    return QueryRequest(
        project_id=project,
        query=f"t{topic} question about things",
        mode=mode,
        ll_keywords=[f"t{topic} entity"],
        hl_keywords=[f"t{(topic + 1) % TOPICS} theme"],
        only_need_context=True,
    )


async def measure(service: QueryService, project: str, runs: int) -> None:
    """Each mode runs `runs` distinct queries twice: the first pass touches pages not read before (the
    embedded server's 128 MB shared_buffers hold only part of the project), the second is cache-warm."""
    print(f"\nonly_need_context latency, {runs} distinct queries per mode (ms)")
    print(
        f"{'mode':8} {'p50 first':>10} {'p95 first':>10} {'p50 warm':>9} {'p95 warm':>9} "
        f"{'entities':>9} {'relations':>10} {'chunks':>7}"
    )
    for mode in ("local", "global", "hybrid", "mix", "naive"):
        for i in range(3):  # connection warm-up (prepared statements), not measured
            await service.query(request(project, mode, 1000 + i))
        passes: list[list[float]] = []
        last = None
        for _ in range(2):
            times = []
            for i in range(runs):
                t0 = time.perf_counter()
                last = await service.query(request(project, mode, i))
                times.append((time.perf_counter() - t0) * 1000)
            passes.append(times)
        ctx = last.context
        first, warm = passes
        print(
            f"{mode:8} {statistics.median(first):10.1f} {pct(first, 0.95):10.1f} {statistics.median(warm):9.1f} "
            f"{pct(warm, 0.95):9.1f} {len(ctx.entities):9} {len(ctx.relations):10} {len(ctx.chunks):7}"
        )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--relations", type=int, default=20_000)
    parser.add_argument("--chunks", type=int, default=5_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()

    settings = Settings(_env_file=None, embedding_dim=args.dim, log_level="WARNING")
    db = Database.from_settings(None, Path(tempfile.mkdtemp(prefix="query-bench-")), 4)
    try:
        await upgrade_to_head(db, args.dim)
        space = Space(args.dim)
        await build(db, space, "bench", args.entities, args.relations, args.chunks)
        await build(db, space, "small", 200, 300, 100)
        await explain(db, space)
        service = query_service(settings, db, StubEmbedder(space))
        await measure(service, "bench", args.runs)
        await filtered_search_check(db, space)
    finally:
        await db.close()


if __name__ == "__main__":
    asyncio.run(main())
