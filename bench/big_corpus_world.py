"""A seeded corpus at any scale for bench/big_corpus_bench.py, and its graph loaded by COPY.

Scale 1 is 40 documents of ~3,500 tokens (140k tokens), 4,000 entities and 6,000 relations; scale 25 is the
issue's 1,000 documents, 3.5M tokens, 100k entities and 150k relations. Every relation is one sentence naming
both ends, told in one document; endpoints follow a Zipf-like law, so a few hub entities recur in hundreds
of documents (hot keys for concurrent merges) and most appear once. Chunks are packed from whole sentences up
to `chunk_tokens` (the service's CHUNK_SIZE by default), so every entity and relation has exact provenance.

`load` writes documents, chunks, entities, relations and provenance with COPY, after dropping the secondary
indexes of those tables, then rebuilds each index and times it, runs ANALYZE and VACUUM (timed), and measures
the database size. Vectors sit near one of TOPICS centroids per item (uniform noise, pure Python: no numpy),
so vector searches find realistic result sets; `Vectors.query` gives a text its query vector (the same every
time the text is asked).
"""

from __future__ import annotations

import hashlib
import itertools
import random
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

import asyncpg

from app.domain.names import entity_key

DOCS_PER_SCALE = 40
TOKENS_PER_DOC = 3_500
ENTITIES_PER_SCALE = 4_000
RELATIONS_PER_SCALE = 6_000
TOPICS = 200
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "su",
    "ra",
    "to",
    "vi",
    "de",
    "ba",
    "co",
    "fu",
    "ga",
    "hi",
    "ju",
    "ke",
    "ly",
    "mo",
    "nu",
    "pe",
    "qui",
    "ro",
    "sa",
    "te",
    "ul",
    "ve",
    "wa",
    "xi",
    "yo",
    "ze",
]
VERBS = ["funded", "advised", "sued", "hired", "partnered with", "supplied", "audited", "interviewed"]
THEMES = ["port expansion", "vaccine trial", "grid upgrade", "press campaign", "mining licence", "rail link"]
FILLER = (
    "The archive keeps the letters of that season in several boxes. Observers called the mood cautious but "
    "hopeful, and the paperwork was finished before the weather turned. A later review found the figures "
    "broadly consistent with the minutes kept by the secretariat."
)
BULK_TABLES = ("documents", "chunks", "entities", "relations", "entity_sources", "relation_sources")


def _word(n: int) -> str:
    parts = []
    for _ in range(3):
        n, r = divmod(n, len(SYLLABLES))
        parts.append(SYLLABLES[r])
    return "".join(parts).capitalize()


def entity_name(i: int) -> str:
    """Unique, capitalised (the fake LLM extracts capitalised names), two words. Past the 27,000 first words
    (scale 6.75) the first word repeats, so the second shifts by the round: names below stay as they were."""
    words = len(SYLLABLES) ** 3
    return f"{_word(i)} {_word((i * 7919 + 13 + 101 * (i // words)) % words)}"


@dataclass
class Chunk:
    id: str
    document: int
    order: int
    text: str
    tokens: int
    start: int


@dataclass
class World:
    scale: float
    documents: list[str] = field(default_factory=list)
    doc_tokens: list[int] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    relations: dict[tuple[int, int], str] = field(default_factory=dict)  # (a, b) -> the chunk telling it
    entity_chunks: dict[int, list[str]] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return sum(self.doc_tokens)


def build_world(scale: float, chunk_tokens: int = 1200, seed: int = 25, count=None) -> World:  # noqa: ANN001
    """The corpus and its gold graph; `count` is a token counter (the service's tokenizer's `count`)."""
    rng = random.Random(seed)
    n_docs = max(1, round(DOCS_PER_SCALE * scale))
    n_ent = max(10, round(ENTITIES_PER_SCALE * scale))
    n_rel = max(10, round(RELATIONS_PER_SCALE * scale))
    # Zipf-like: entity 0 is the hottest hub. Cumulative weights computed once: passing plain weights made
    # every draw sum all of them again (quadratic, hours at 25x); the draws are the same.
    cumulative = list(itertools.accumulate(1.0 / (i + 1) ** 0.9 for i in range(n_ent)))
    population = range(n_ent)
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < n_rel:  # one end drawn by weight, the other in turn, so every entity has a relation
        a, b = rng.choices(population, cum_weights=cumulative)[0], len(pairs) % n_ent
        if a != b:
            pairs.add((min(a, b), max(a, b)))
    ordered = list(pairs)
    rng.shuffle(ordered)
    world = World(scale)
    per_doc = len(ordered) // n_docs
    count = count or (lambda text: len(text.split()) * 4 // 3)
    filler_tokens = count(FILLER)
    for d in range(n_docs):
        mine = ordered[d * per_doc : (d + 1) * per_doc if d < n_docs - 1 else len(ordered)]
        sentences: list[tuple[str, tuple[int, int] | None]] = []
        for a, b in mine:
            sentence = (
                f"{entity_name(a)} {rng.choice(VERBS)} {entity_name(b)} on the {rng.choice(THEMES)} "
                f"in {1950 + rng.randrange(70)}."
            )
            sentences.append((sentence, (a, b)))
        budget = TOKENS_PER_DOC - sum(count(s) + 1 for s, _ in sentences)
        while budget > 0:  # filler up to the document's size, spread through it
            sentences.insert(rng.randrange(len(sentences) + 1), (FILLER, None))
            budget -= filler_tokens + 1
        _pack(world, d, sentences, chunk_tokens, count)
    for (a, b), chunk_id in world.relations.items():
        for e in (a, b):
            world.entity_chunks.setdefault(e, []).append(chunk_id)
    return world


def _pack(world: World, d: int, sentences: list, chunk_tokens: int, count) -> None:  # noqa: ANN001
    texts: list[str] = []
    current: list[str] = []
    told: list[tuple[int, int]] = []
    used = start = 0

    def close() -> None:
        nonlocal current, told, used, start
        text = " ".join(current)
        chunk_id = f"chunk-{d}-{len(texts)}"
        world.chunks.append(Chunk(chunk_id, d, len(texts), text, used, start))
        for pair in told:
            world.relations[pair] = chunk_id
        texts.append(text)
        start += used
        current, told, used = [], [], 0

    for sentence, pair in sentences:
        tokens = count(sentence) + 1
        if current and used + tokens > chunk_tokens:
            close()
        current.append(sentence)
        used += tokens
        if pair is not None:
            told.append(pair)
    if current:
        close()
    world.documents.append(" ".join(texts))
    world.doc_tokens.append(start)


class Vectors:
    """Noisy vectors around TOPICS centroids, formatted for COPY (pgvector's text form)."""

    def __init__(self, dim: int, seed: int = 3) -> None:
        self.dim = dim
        self.rng = random.Random(seed)
        self.centroids = [[self.rng.uniform(-1, 1) for _ in range(dim)] for _ in range(TOPICS)]
        self._format = "[" + ",".join(["%.4f"] * dim) + "]"

    def near(self, topic: int, noise: float = 0.6) -> str:
        r = self.rng.random
        return self._format % tuple(c + (r() - 0.5) * noise for c in self.centroids[topic % TOPICS])

    def query(self, text: str) -> list[float]:
        """A query vector near the topic of `text`, the same for the same text: its noise is seeded by the text,
        not drawn from the shared generator, so a question asked again is the same request (drawing it from
        `self.rng` gave each asking another vector, and so another context)."""
        r = random.Random(hashlib.blake2b(text.encode(), digest_size=8).digest()).random
        return [c + (r() - 0.5) * 0.3 for c in self.centroids[topic_of(text) % TOPICS]]


def topic_of(text: str) -> int:
    return int(hashlib.blake2b(text.encode(), digest_size=4).hexdigest(), 16) % TOPICS


def _escape(value: object) -> str:
    if value is None:
        return "\\N"
    text = str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _array(values: list[str]) -> str:
    return "{" + ",".join('"' + v.replace('"', '\\"') + '"' for v in values) + "}"


async def _copy(conn: asyncpg.Connection, table: str, columns: list[str], rows: Iterator[tuple]) -> None:
    async def batches() -> AsyncIterator[bytes]:
        lines: list[str] = []
        for row in rows:
            lines.append("\t".join(map(_escape, row)))
            if len(lines) == 2000:
                yield ("\n".join(lines) + "\n").encode()
                lines = []
        if lines:
            yield ("\n".join(lines) + "\n").encode()

    await conn.copy_to_table(table, source=batches(), columns=columns, format="text")


async def _secondary_indexes(conn: asyncpg.Connection) -> list[tuple[str, str]]:
    rows = await conn.fetch(
        """SELECT i.indexname, i.indexdef FROM pg_indexes i
           JOIN pg_class c ON c.relname = i.indexname JOIN pg_index x ON x.indexrelid = c.oid
           WHERE i.schemaname = 'public' AND i.tablename = ANY($1::text[]) AND NOT x.indisprimary
             AND NOT x.indisunique""",
        list(BULK_TABLES),
    )
    return [(r["indexname"], r["indexdef"]) for r in rows]


async def load(conn: asyncpg.Connection, world: World, project: str, vectors: Vectors) -> dict:
    """COPY the world's graph into `project`; seconds per phase and per index, sizes. Drops and rebuilds the
    tables' secondary indexes (every project's), so load a big world before the small ones share them."""
    out: dict = {"index_seconds": {}}
    indexes = await _secondary_indexes(conn)
    for name, _ in indexes:
        await conn.execute(f'DROP INDEX "{name}"')
    for table in BULK_TABLES:  # autovacuum would vacuum the new rows during the index builds: VACUUM timed alone
        await conn.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")
    await conn.execute("INSERT INTO projects (id, name) VALUES ($1, $1) ON CONFLICT DO NOTHING", project)
    await conn.execute("SET session_replication_role = replica")  # no FK checks or degree triggers per row
    started = time.perf_counter()
    docs = [
        (project, f"doc-{d}", "processed", t, f"h{project}{d}", len(t), f"doc-{d}.txt", 0)
        for d, t in enumerate(world.documents)
    ]
    counts = {}
    for c in world.chunks:
        counts[c.document] = counts.get(c.document, 0) + 1
    docs = [(*row[:-1], counts.get(d, 0)) for d, row in enumerate(docs)]
    await _copy(
        conn,
        "documents",
        ["project_id", "id", "status", "content", "content_hash", "content_length", "file_path", "chunks_count"],
        iter(docs),
    )
    await _copy(
        conn,
        "chunks",
        [
            "project_id",
            "id",
            "document_id",
            "order_index",
            "tokens",
            "start_token",
            "end_token",
            "content",
            "file_path",
            "embedding",
        ],
        (
            (
                project,
                c.id,
                f"doc-{c.document}",
                c.order,
                c.tokens,
                c.start,
                c.start + c.tokens,
                c.text,
                f"doc-{c.document}.txt",
                vectors.near(topic_of(c.text)),
            )
            for c in world.chunks
        ),
    )

    def entity_rows() -> Iterator[tuple]:
        for e, sources in world.entity_chunks.items():
            name = entity_name(e)
            files = sorted({f"doc-{s.split('-')[1]}.txt" for s in sources})
            description = f"{name} is a party to {len(sources)} recorded dealings, among them " + ", ".join(
                THEMES[(e + k) % len(THEMES)] for k in range(3)
            )
            yield (
                project,
                entity_key(name),
                name,
                "organization",
                description,
                _array(sources[:200]),
                _array(files[:200]),
                vectors.near(topic_of(name)),
            )

    await _copy(
        conn,
        "entities",
        ["project_id", "key", "name", "entity_type", "description", "source_ids", "file_paths", "embedding"],
        entity_rows(),
    )

    def relation_rows() -> Iterator[tuple]:
        for (a, b), chunk_id in world.relations.items():
            ka, kb = sorted((entity_key(entity_name(a)), entity_key(entity_name(b))))
            theme = THEMES[(a * 31 + b) % len(THEMES)]
            description = f"{entity_name(a)} and {entity_name(b)} dealt with each other on the {theme}."
            yield (
                project,
                ka,
                kb,
                theme,
                description,
                1.0 + (a + b) % 5,
                _array([chunk_id]),
                _array([f"doc-{chunk_id.split('-')[1]}.txt"]),
                vectors.near(topic_of(ka + kb)),
            )

    await _copy(
        conn,
        "relations",
        [
            "project_id",
            "src_key",
            "tgt_key",
            "keywords",
            "description",
            "weight",
            "source_ids",
            "file_paths",
            "embedding",
        ],
        relation_rows(),
    )
    await _copy(
        conn,
        "entity_sources",
        ["project_id", "entity_key", "chunk_id", "document_id"],
        (
            (project, entity_key(entity_name(e)), s, f"doc-{s.split('-')[1]}")
            for e, sources in world.entity_chunks.items()
            for s in dict.fromkeys(sources)
        ),
    )
    await _copy(
        conn,
        "relation_sources",
        ["project_id", "src_key", "tgt_key", "chunk_id", "document_id"],
        (
            (project, *sorted((entity_key(entity_name(a)), entity_key(entity_name(b)))), c, f"doc-{c.split('-')[1]}")
            for (a, b), c in world.relations.items()
        ),
    )
    await conn.execute("SET session_replication_role = origin")
    await conn.execute(
        """UPDATE entities e SET degree = d.n FROM (
             SELECT k, count(*) AS n FROM (
               SELECT src_key AS k FROM relations WHERE project_id = $1
               UNION ALL SELECT tgt_key FROM relations WHERE project_id = $1) s GROUP BY k) d
           WHERE e.project_id = $1 AND e.key = d.k""",
        project,
    )
    out["copy_seconds"] = time.perf_counter() - started
    await conn.execute("SET maintenance_work_mem = '256MB'")
    for name, definition in indexes:
        t0 = time.perf_counter()
        await conn.execute(definition)
        out["index_seconds"][name] = time.perf_counter() - t0
    t0 = time.perf_counter()
    await conn.execute("ANALYZE")
    out["analyze_seconds"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    await conn.execute("VACUUM")
    out["vacuum_seconds"] = time.perf_counter() - t0
    for table in BULK_TABLES:
        await conn.execute(f"ALTER TABLE {table} RESET (autovacuum_enabled)")
    out["database_bytes"] = await conn.fetchval("SELECT pg_database_size(current_database())")
    out["table_bytes"] = {t: await conn.fetchval("SELECT pg_total_relation_size($1::regclass)", t) for t in BULK_TABLES}
    return out
