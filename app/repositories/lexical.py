"""SQL of lexical and graph-shaped retrieval: exact entity keys, full-text searches over the generated
`search_vector` columns (migration 0005), and the paths of length two between named entities.

Full-text queries OR the given words: each word is matched in its 'english' form (stemmed; stop words give
nothing) and, for entities, also in its 'simple' form, which is how names are indexed. Ranking uses
`ts_rank` normalised by document length, so a long description does not win by size alone.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.hits import ChunkHit, EntityHit, RelationHit
from app.repositories.retrieval import ENDPOINT_COLUMNS, endpoint_hit, entity_hit, mapped_rows, processed, relation_hit

# A word found in more than COMMON_WORD_ROWS rows of the searched table is left out, as a stop word would be:
# it tells little about the query (its inverse document frequency is near zero) and ranking every row it
# matches would cost more than the whole rest of a query (10,000 matches: ~50 ms). Counting stops there.
COMMON_WORD_ROWS = 1000

_HAS_LEXEMES = "numnode(plainto_tsquery('english', w)) > 0"  # stop words alone give an empty query


def _words_query(word_query: str) -> str:
    """The CTE `q`: the OR of the words' queries (NULL when no word is left)."""
    return f"""
q AS (
    SELECT string_agg('(' || ({word_query})::text || ')', ' | ')::tsquery AS query
    FROM unnest(CAST(:words AS text[])) AS w
    WHERE {_HAS_LEXEMES}
)"""


def _common_words(table: str, word_query: str) -> Any:
    return text(f"""
SELECT w FROM unnest(CAST(:words AS text[])) AS w
WHERE {_HAS_LEXEMES}
  AND (SELECT count(*) FROM (SELECT 1 FROM {table} x
                             WHERE x.project_id = :project_id AND x.search_vector @@ ({word_query})
                             LIMIT :common_rows + 1) AS found) > :common_rows
""")


_STEMMED = "plainto_tsquery('english', w)"
_STEMMED_OR_NAME = "plainto_tsquery('english', w) || plainto_tsquery('simple', w)"

_COMMON_WORDS = {
    "entities": _common_words("entities", _STEMMED_OR_NAME),
    "relations": _common_words("relations", _STEMMED),
    "chunks": _common_words("chunks", _STEMMED),
}

_ENTITY_COLUMNS = "e.key, e.name, e.entity_type, e.description, e.degree, e.file_paths"

_EXACT_ENTITIES = text(f"""
SELECT {_ENTITY_COLUMNS}, k.pos
FROM unnest(CAST(:keys AS text[])) WITH ORDINALITY AS k(key, pos)
JOIN entities e ON e.project_id = :project_id AND e.key = k.key
ORDER BY k.pos
""")

# A keyword's key names an entity directly or, failing that, through a project-wide alias (migration 0006);
# it also names the entity kept apart under its qualified name, "orlin (artifact)" for "orlin", when another
# entity of another type holds the name (app/domain/resolution.py). Keys sort bytewise (collation C): the
# range scans the keys starting with "orlin (".
_NAMED_ENTITIES = text(f"""
SELECT {_ENTITY_COLUMNS}, k.pos, 0 AS qualified
FROM unnest(CAST(:keys AS text[])) WITH ORDINALITY AS k(key, pos)
LEFT JOIN entity_aliases a ON a.project_id = :project_id AND a.alias_key = k.key
JOIN LATERAL (
    SELECT * FROM entities x
    WHERE x.project_id = :project_id AND x.key IN (k.key, a.entity_key)
    ORDER BY x.key = k.key DESC
    LIMIT 1
) e ON true
UNION ALL
SELECT {_ENTITY_COLUMNS}, k.pos, 1 AS qualified
FROM unnest(CAST(:keys AS text[])) WITH ORDINALITY AS k(key, pos)
JOIN entities e ON e.project_id = :project_id AND e.key >= k.key || ' (' AND e.key < k.key || ' )'
    AND e.key = k.key || ' (' || e.entity_type || ')'
ORDER BY pos, qualified
""")

_LEXICAL_ENTITIES = text(f"""
WITH {_words_query(_STEMMED_OR_NAME)}
SELECT {_ENTITY_COLUMNS}, ts_rank(e.search_vector, q.query, 1) AS score
FROM entities e, q
WHERE e.project_id = :project_id AND e.search_vector @@ q.query
ORDER BY score DESC, e.key
LIMIT :limit
""")

# `theme`: a whole keyword phrase matches the relation's keywords (weight A), not just a word somewhere.
_LEXICAL_RELATIONS = text(f"""
WITH {_words_query(_STEMMED)},
phrases AS (
    SELECT string_agg('(' || plainto_tsquery('english', p)::text || ')', ' | ')::tsquery AS query
    FROM unnest(CAST(:phrases AS text[])) AS p
    WHERE numnode(plainto_tsquery('english', p)) > 0
),
found AS MATERIALIZED (
    SELECT r.src_key, r.tgt_key, r.keywords, r.description, r.weight, r.file_paths,
           ts_rank(r.search_vector, q.query, 1) AS score,
           coalesce(ts_filter(r.search_vector, '{{a}}') @@ phrases.query, false) AS theme
    FROM relations r, q, phrases
    WHERE r.project_id = :project_id AND r.search_vector @@ q.query
    ORDER BY theme DESC, score DESC, r.src_key, r.tgt_key
    LIMIT :limit
)
SELECT f.*, s.name AS src_name, t.name AS tgt_name,
       {ENDPOINT_COLUMNS}
FROM found f
JOIN entities s ON s.project_id = :project_id AND s.key = f.src_key
JOIN entities t ON t.project_id = :project_id AND t.key = f.tgt_key
ORDER BY f.theme DESC, f.score DESC, f.src_key, f.tgt_key
""")


def _lexical_chunks(normalization: int) -> Any:
    return text(f"""
WITH {_words_query(_STEMMED)},
found AS MATERIALIZED (
    SELECT c.id, ts_rank(c.search_vector, q.query, {normalization}) AS score
    FROM chunks c, q
    WHERE c.project_id = :project_id AND c.search_vector @@ q.query AND {processed("c")}
    ORDER BY score DESC, c.id
    LIMIT :limit
)
SELECT c.id, c.document_id, c.content, c.file_path
FROM found f JOIN chunks c ON c.project_id = :project_id AND c.id = f.id
ORDER BY f.score DESC, f.id
""")


# ts_rank normalisation 1 divides the rank by 1 + log(length), 2 by the length (see search_chunks)
_LEXICAL_CHUNKS = {False: _lexical_chunks(1), True: _lexical_chunks(2)}


# Paths a – mid – b between two named entities (mid not itself named), and direct edges between named ones.
_PATHS = text("""
WITH named AS (
    SELECT k.key, k.pos FROM unnest(CAST(:keys AS text[])) WITH ORDINALITY AS k(key, pos)
),
ends AS (
    SELECT n.pos, r.tgt_key AS mid, r.src_key, r.tgt_key FROM named n
    JOIN relations r ON r.project_id = :project_id AND r.src_key = n.key
    UNION ALL
    SELECT n.pos, r.src_key AS mid, r.src_key, r.tgt_key FROM named n
    JOIN relations r ON r.project_id = :project_id AND r.tgt_key = n.key
),
paths AS (
    SELECT x.pos AS p1, y.pos AS p2, x.mid, x.src_key AS s1, x.tgt_key AS t1, y.src_key AS s2, y.tgt_key AS t2
    FROM ends x JOIN ends y ON y.mid = x.mid AND x.pos < y.pos
    WHERE x.mid <> ALL(CAST(:keys AS text[]))
    ORDER BY x.pos, y.pos, x.mid
    LIMIT :limit
)
SELECT 0 AS hops, 0 AS p1, 0 AS p2, '' AS mid, src_key AS s1, tgt_key AS t1, '' AS s2, '' AS t2
FROM relations
WHERE project_id = :project_id AND src_key = ANY(CAST(:keys AS text[])) AND tgt_key = ANY(CAST(:keys AS text[]))
UNION ALL
SELECT 2, p1, p2, mid, s1, t1, s2, t2 FROM paths
ORDER BY 1, 2, 3, 4, 5, 6
""")

_RELATIONS_BY_PAIRS = text("""
SELECT r.src_key, r.tgt_key, s.name AS src_name, t.name AS tgt_name, r.keywords, r.description, r.weight,
       r.file_paths, p.pos
FROM unnest(CAST(:srcs AS text[]), CAST(:tgts AS text[])) WITH ORDINALITY AS p(src_key, tgt_key, pos)
JOIN relations r ON r.project_id = :project_id AND r.src_key = p.src_key AND r.tgt_key = p.tgt_key
JOIN entities s ON s.project_id = :project_id AND s.key = r.src_key
JOIN entities t ON t.project_id = :project_id AND t.key = r.tgt_key
ORDER BY p.pos
""")


async def entities_by_keys(conn: AsyncConnection, project_id: str, keys: list[str]) -> list[EntityHit]:
    """The stored entities among `keys`, in the order of `keys`."""
    if not keys:
        return []
    rows = await mapped_rows(conn, _EXACT_ENTITIES, {"project_id": project_id, "keys": keys})
    return [entity_hit(r) for r in rows]


async def named_entities(conn: AsyncConnection, project_id: str, keys: list[str]) -> list[EntityHit]:
    """The entities the `keys` name, by their own key or an alias (and the same name kept apart under its
    type), in the order of `keys`, each once."""
    if not keys:
        return []
    rows = await mapped_rows(conn, _NAMED_ENTITIES, {"project_id": project_id, "keys": keys})
    return list({r["key"]: entity_hit(r) for r in rows}.values())


async def common_words(conn: AsyncConnection, table: str, project_id: str, words: list[str]) -> set[str]:
    """Those of `words` found in more than COMMON_WORD_ROWS rows of the project's `table` (entities, relations
    or chunks), as that table's search matches them."""
    if not words:
        return set()
    result = await conn.execute(
        _COMMON_WORDS[table], {"project_id": project_id, "words": words, "common_rows": COMMON_WORD_ROWS}
    )
    return set(result.scalars())


async def search_entities(conn: AsyncConnection, project_id: str, words: list[str], limit: int) -> list[EntityHit]:
    """Entities whose name or description holds any of `words`, best ranked first."""
    if not words or limit <= 0:
        return []
    rows = await mapped_rows(conn, _LEXICAL_ENTITIES, {"project_id": project_id, "words": words, "limit": limit})
    return [entity_hit(r) for r in rows]


async def search_relations(
    conn: AsyncConnection, project_id: str, phrases: list[str], words: list[str], limit: int
) -> list[tuple[RelationHit, EntityHit, EntityHit, bool]]:
    """Relations whose keywords or description hold any of `words`: (relation, source, target, theme), where
    theme = one of `phrases` (all its words) is among the relation's keywords; themes first, then by rank."""
    if not words or limit <= 0:
        return []
    rows = await mapped_rows(
        conn, _LEXICAL_RELATIONS, {"project_id": project_id, "phrases": phrases, "words": words, "limit": limit}
    )
    return [(relation_hit(r), endpoint_hit(r, "src"), endpoint_hit(r, "tgt"), bool(r["theme"])) for r in rows]


async def search_chunks(
    conn: AsyncConnection, project_id: str, words: list[str], limit: int, by_density: bool = False
) -> list[ChunkHit]:
    """Chunks matching `words`, best first. `by_density` divides the rank by the chunk's length (ts_rank
    normalisation 2) instead of 1 + its logarithm, so that short chunks dense in the words come first."""
    if not words or limit <= 0:
        return []
    rows = await mapped_rows(
        conn, _LEXICAL_CHUNKS[by_density], {"project_id": project_id, "words": words, "limit": limit}
    )
    return [ChunkHit(r["id"], r["document_id"], r["content"], r["file_path"], "vector") for r in rows]


async def connecting_paths(
    conn: AsyncConnection, project_id: str, keys: list[str], limit: int
) -> tuple[list[tuple[str, str]], list[str]]:
    """Between the named `keys`: the direct edges, then the edges of paths key – mid – key (at most `limit`
    paths), as (relation pairs in order, connecting entity keys in order)."""
    if len(keys) < 2:
        return [], []
    rows = await mapped_rows(conn, _PATHS, {"project_id": project_id, "keys": keys, "limit": limit})
    pairs: dict[tuple[str, str], None] = {}
    mids: dict[str, None] = {}
    for r in rows:
        pairs[(r["s1"], r["t1"])] = None
        if r["hops"] == 2:
            pairs[(r["s2"], r["t2"])] = None
            mids[r["mid"]] = None
    return list(pairs), list(mids)


async def relations_by_pairs(conn: AsyncConnection, project_id: str, pairs: list[tuple[str, str]]) -> list[RelationHit]:
    if not pairs:
        return []
    rows = await mapped_rows(
        conn,
        _RELATIONS_BY_PAIRS,
        {"project_id": project_id, "srcs": [p[0] for p in pairs], "tgts": [p[1] for p in pairs]},
    )
    return [relation_hit(r) for r in rows]
