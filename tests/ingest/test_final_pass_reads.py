"""The final pass's two statements (repositories/final_pass_reads.py) read exactly what the five separate reads
they replace return, on a graph with a document's own acronym definition, another document's definition of the
same letters, short forms merged into full names and aliases near the names."""

from __future__ import annotations

from app.domain.cross_document import nearby_ranges
from app.repositories import final_pass_reads, resolution_ledger
from app.repositories import graph as graph_repo
from app.services.ingest.absorb import _short_words
from tests.ingest.test_pipeline import entity_line, ingest, relation_line
from tests.ingest.test_resolution_ingest import install

RECORDS = {
    "first doc": [
        entity_line("Ngozi Okafor", "person", "Ngozi Okafor directs the Kessara Research Institute."),
        entity_line("Kessara Research Institute", "organization", "A research institute."),
        entity_line("KRI", "organization", "The institute's short name."),
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
}
TEXTS = [
    "first doc: Ngozi Okafor directs the Kessara Research Institute (KRI).",
    "second doc: Dr. Okafor lectured at KRI; Siemens supplied the scanner.",
    "third doc: Siemens Healthineers AG funds the Kelp Reef Initiative (KRI).",
]


async def test_the_two_statements_read_what_the_separate_reads_do(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="auto"))
    install(fake_llm, RECORDS)
    documents = [d for text in TEXTS for d in await ingest(app, [text])]
    assert all(d["status"] == "processed" for d in documents)
    seen_here = seen_merges = 0
    async with app.container.db.connect() as conn:
        for d in documents:
            reading = await final_pass_reads.document_reading(conn, "default", d["id"])
            mine = await resolution_ledger.document_nodes(conn, "default", d["id"])
            here, everywhere = await resolution_ledger.acronym_definitions(conn, "default", d["id"], list(mine))
            nodes = await graph_repo.fetch_entities(conn, "default", sorted(here), with_sources=False)
            assert reading.mine == mine
            assert (reading.here, reading.everywhere) == (here, everywhere)
            assert reading.acronym_nodes == {k: (r.name, r.entity_type) for k, r in nodes.items()}
            seen_here += len(here)

            ranges, words = nearby_ranges(list(mine.values())), _short_words(mine)
            read = await final_pass_reads.near_reading(conn, "default", ranges, words)
            near, aliases = await resolution_ledger.near_with_aliases(conn, "default", ranges)
            merges = await resolution_ledger.short_form_merges(conn, "default", words)
            stored = await graph_repo.fetch_entities(
                conn, "default", sorted({m.entity_key for m in merges}), with_sources=False
            )
            assert (read.near, read.aliases, read.merges) == (near, aliases, merges)
            assert read.targets == {k: (r.name, r.entity_type) for k, r in stored.items()}
            seen_merges += len(merges)
    assert seen_here and seen_merges  # the graph has both kinds for the comparison to mean something
