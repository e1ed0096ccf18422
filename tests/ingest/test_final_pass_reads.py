"""The final pass's two statements (repositories/final_pass_reads.py), and the one they make for the merging
document, read exactly what the separate reads they replace return, on a graph with a document's own acronym
definition, another document's definition of the same letters, short forms merged into full names, an acronym
merged by its initials alone and aliases near the names."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.cross_document import Ranges, nearby_ranges
from app.domain.name_index import Nearby
from app.repositories import final_pass_reads, resolution_ledger
from app.repositories import graph as graph_repo
from app.services.ingest.absorb import _initials_keys, _readings, _short_words
from tests.ingest.test_pipeline import entity_line, ingest, relation_line
from tests.ingest.test_resolution_ingest import install

# Two of the separate reads as they stood before the final pass took two statements (no caller needs them
# any more): the oracle the statements are compared with.
_NEAR_AND_ALIASES = text(f"""
SELECT 'e' AS kind, n.key, n.name, n.entity_type, CAST(NULL AS text), CAST(NULL AS text)
  FROM ({resolution_ledger.NEARBY_SQL}) n
UNION ALL
SELECT 'a', a.alias_key, a.alias_name, a.key, a.name, a.entity_type FROM ({resolution_ledger.ALIASES_NEAR_SQL}) a
""")


async def _near_with_aliases(
    conn: AsyncConnection, project_id: str, ranges: Ranges
) -> tuple[Nearby, dict[str, resolution_ledger.NearAlias]]:
    """In one statement: the entities in `ranges` (as `entities_near`) and alias key → the alias and its entity,
    for the project-wide aliases in their exact keys and prefixes."""
    if not (ranges.prefixes or ranges.reversed_prefixes or ranges.exact):
        return {}, {}
    rows = (
        await conn.execute(_NEAR_AND_ALIASES, {"project_id": project_id, **resolution_ledger.near_params(ranges)})
    ).all()
    near = {k: (n, t) for kind, k, n, t, _, _ in rows if kind == "e"}
    return near, {k: resolution_ledger.NearAlias(n, e, en, t) for kind, k, n, e, en, t in rows if kind == "a"}


_DEFINED_HERE = text("""
SELECT split_part(a.alias_key, chr(31), 1), a.entity_key FROM entity_aliases a
 WHERE a.project_id = :project_id AND a.entity_key = ANY(CAST(:keys AS text[]))
   AND a.document_id = :document_id AND a.source = 'acronym'
""")
# the acronym's own key and its scoped keys (key, separator, document id): two index ranges per acronym
_DEFINITIONS = text("""
SELECT k.key, a.entity_key
  FROM unnest(CAST(:keys AS text[])) AS k(key)
  JOIN entity_aliases a ON a.project_id = :project_id AND a.source = 'acronym'
   AND (a.alias_key = k.key OR (a.alias_key >= k.key || chr(31) AND a.alias_key < k.key || chr(32)))
""")


async def _acronym_definitions(
    conn: AsyncConnection, project_id: str, document_id: str, keys: Sequence[str]
) -> tuple[dict[str, str], dict[str, set[str]]]:
    """The acronyms the document resolved by its own definition to one of `keys` (acronym key → entity key) and,
    for those acronyms, every entity any document of the project defines them as (acronym key → entity keys)."""
    params = {"project_id": project_id, "document_id": document_id, "keys": sorted(keys)}
    here: dict[str, str] = {k: e for k, e in (await conn.execute(_DEFINED_HERE, params)).all()}
    if not here:
        return {}, {}
    everywhere: dict[str, set[str]] = {}
    for key, entity in (await conn.execute(_DEFINITIONS, {"project_id": project_id, "keys": sorted(here)})).all():
        everywhere.setdefault(key, set()).add(entity)
    return here, everywhere


RECORDS = {
    "first doc": [
        entity_line("Ngozi Okafor", "person", "Ngozi Okafor directs the Kessara Research Institute."),
        entity_line("Kessara Research Institute", "organization", "A research institute."),
        entity_line("KRI", "organization", "The institute's short name."),
        entity_line("Morrow Valley Trust", "organization", "A trust funding the institute."),
        relation_line("Ngozi Okafor", "Kessara Research Institute", "directs", "Ngozi Okafor directs it."),
    ],
    "second doc": [
        entity_line("Dr. Okafor", "person", "Dr. Okafor gave a lecture at KRI."),
        entity_line("KRI", "organization", "The institute hosting the lecture."),
        entity_line("Siemens", "organization", "Siemens supplied the scanner."),
        relation_line("Dr. Okafor", "KRI", "lecture", "Dr. Okafor lectured at KRI."),
    ],
    "third doc": [
        entity_line("Siemens Healthineers AG", "organization", "Siemens Healthineers AG builds scanners."),
        entity_line("Kelp Reef Initiative", "organization", "A marine project."),
        entity_line("KRI", "organization", "The marine project's short name."),
        relation_line("Siemens Healthineers AG", "Kelp Reef Initiative", "funds", "Siemens funds the reef work."),
    ],
    "fourth doc": [
        entity_line("MVT", "organization", "MVT paid for the scanner."),
        entity_line("Siemens Healthineers AG", "organization", "The scanner's maker."),
        relation_line("MVT", "Siemens Healthineers AG", "buys", "MVT bought a scanner from Siemens Healthineers AG."),
    ],
}
TEXTS = [
    "first doc: Ngozi Okafor directs the Kessara Research Institute (KRI).",
    "second doc: Dr. Okafor lectured at KRI; Siemens supplied the scanner.",
    "third doc: Siemens Healthineers AG funds the Kelp Reef Initiative (KRI).",
    "fourth doc: MVT bought a scanner from Siemens Healthineers AG.",
]


async def test_the_two_statements_read_what_the_separate_reads_do(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="auto"))
    install(fake_llm, RECORDS)
    documents = [d for text in TEXTS for d in await ingest(app, [text])]
    assert all(d["status"] == "processed" for d in documents)
    seen_here = seen_merges = seen_initials = 0
    async with app.container.db.connect() as conn:
        for d in documents:
            reading = await final_pass_reads.document_reading(conn, "default", d["id"])
            mine = await resolution_ledger.document_nodes(conn, "default", d["id"])
            here, everywhere = await _acronym_definitions(conn, "default", d["id"], list(mine))
            nodes = await graph_repo.fetch_entities(conn, "default", sorted(here), with_sources=False)
            assert reading.mine == mine
            assert (reading.here, reading.everywhere) == (here, everywhere)
            assert reading.acronym_nodes == {k: (r.name, r.entity_type) for k, r in nodes.items()}
            seen_here += len(here)

            ranges, words, keys = nearby_ranges(list(mine.values())), _short_words(mine), _initials_keys(mine)
            read = await final_pass_reads.near_reading(conn, "default", ranges, words, keys)
            near, aliases = await _near_with_aliases(conn, "default", ranges)
            merges = await resolution_ledger.short_form_merges(conn, "default", words)
            stored = await graph_repo.fetch_entities(
                conn, "default", sorted({m.entity_key for m in merges}), with_sources=False
            )
            assert (read.near, read.aliases, read.merges) == (near, aliases, merges)
            assert read.targets == {k: (r.name, r.entity_type) for k, r in stored.items()}
            seen_merges += len(merges)
            by_initials = await resolution_ledger.initials_merges(conn, "default", keys)
            their = await graph_repo.fetch_entities(
                conn, "default", sorted({m.entity_key for m in by_initials}), with_sources=False
            )
            assert read.initials == by_initials
            assert read.initials_targets == {k: (r.name, r.entity_type) for k, r in their.items()}
            seen_initials += len(by_initials)
            # not asked for initials: none read
            plain = await final_pass_reads.near_reading(conn, "default", ranges, words)
            assert plain.initials is None and (plain.near, plain.merges) == (read.near, read.merges)

            # both in one statement, asked with the nodes expected; a wrong guess is read again
            assert await final_pass_reads.document_and_near(conn, "default", d["id"], ranges, words, keys) == (
                reading,
                read,
            )
            for expected in (mine, {}, {"someone else": ("Someone Else", "person")}):
                assert await _readings(conn, "default", d["id"], expected, True) == (reading, read)
    # the graph has each kind for the comparison to mean something
    assert seen_here and seen_merges and seen_initials
