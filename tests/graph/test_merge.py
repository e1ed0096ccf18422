"""Pure merge rules: fragments, type vote, source limits, file paths, weights, keywords."""

from __future__ import annotations

from types import SimpleNamespace

from app.domain.merge_rules import endpoint_records, merge_entity, merge_relation
from app.domain.names import entity_key
from app.domain.records import EntityRecord, RelationRecord
from app.domain.rows import EntityRow, RelationRow
from app.domain.texts import SEP


def _settings(**overrides):
    values = {
        "max_source_ids_per_entity": 200,
        "max_source_ids_per_relation": 200,
        "source_ids_limit_method": "KEEP",
        "max_file_paths": 75,
    }
    values.update(overrides)
    return SimpleNamespace(**values)


def stored_entity(**values) -> EntityRow:
    """An entity as the repository reads it; the fields a test leaves out empty."""
    blank = {"description": "", "entity_type": "", "source_ids": [], "file_paths": [], "embedded_hash": None}
    return EntityRow(**{**blank, "curated": False, **values})


def stored_relation(**values) -> RelationRow:
    blank = {"src_name": "", "tgt_name": "", "keywords": "", "description": "", "source_ids": [], "file_paths": []}
    return RelationRow(**{**blank, "weight": 1.0, "embedded_hash": None, "curated": False, **values})


def ent(name, desc, chunk, etype="person", path="a.txt"):
    return EntityRecord(
        name=name, key=entity_key(name), entity_type=etype, description=desc, chunk_id=chunk, file_path=path
    )


def rel(a, b, desc, chunk, keywords=("knows",), weight=1.0, path="a.txt"):
    ka, kb = entity_key(a), entity_key(b)
    if ka > kb:
        a, b, ka, kb = b, a, kb, ka
    return RelationRecord(
        src_name=a,
        tgt_name=b,
        src_key=ka,
        tgt_key=kb,
        keywords=list(keywords),
        description=desc,
        weight=weight,
        chunk_id=chunk,
        file_path=path,
    )


def test_new_entity_accumulates_fragments_in_order_and_dedups():
    m = merge_entity(None, [ent("Alice", "A", "c1"), ent("Alice", "B", "c2"), ent("ALICE", "A", "c3")], [], _settings())
    assert m.name == "Alice" and m.key == "alice"
    assert m.fragments == ["A", "B"]
    assert m.description == f"A{SEP}B"
    assert m.source_ids == ["c1", "c2", "c3"] and m.new_sources == ["c1", "c2", "c3"]
    assert m.file_paths == ["a.txt"] and m.truncate == "" and not m.skipped


def test_existing_fragments_come_first_and_name_is_kept():
    existing = stored_entity(
        key="alice",
        name="alice",
        entity_type="person",
        description=f"old{SEP}B",
        source_ids=["c0"],
        file_paths=["old.txt"],
        truncate="",
    )
    m = merge_entity(existing, [ent("Alice", "B", "c1"), ent("Alice", "new", "c1")], ["c0"], _settings())
    assert m.name == "alice"
    assert m.fragments == ["old", "B", "new"]
    assert m.source_ids == ["c0", "c1"] and m.new_sources == ["c1"]
    assert m.file_paths == ["old.txt", "a.txt"]


def test_type_is_most_frequent_ties_go_to_first_new_record():
    existing = stored_entity(key="x", name="X", entity_type="organization", description="d")
    records = [ent("X", "1", "c1", "person"), ent("X", "2", "c2", "location"), ent("X", "3", "c3", "location")]
    assert merge_entity(existing, records, [], _settings()).entity_type == "location"
    tie = [ent("X", "1", "c1", "person"), ent("X", "2", "c2", "location")]
    assert merge_entity(None, tie, [], _settings()).entity_type == "person"
    assert merge_entity(existing, [ent("X", "1", "c1", "person")], [], _settings()).entity_type == "person"


def test_keep_limits_sources_to_oldest_and_drops_records_outside():
    settings = _settings(max_source_ids_per_entity=3)
    existing = stored_entity(key="x", name="X", entity_type="t", description="old")
    records = [ent("X", "n1", "c3"), ent("X", "n2", "c4")]
    m = merge_entity(existing, records, ["c1", "c2"], settings)
    assert m.source_ids == ["c1", "c2", "c3"]
    assert m.all_sources == ["c1", "c2", "c3", "c4"]
    assert m.fragments == ["old", "n1"]  # c4 is outside the kept list: its description is dropped
    assert m.truncate == "KEEP Old"


def test_keep_skips_update_when_full_and_nothing_survives():
    settings = _settings(max_source_ids_per_entity=2)
    existing = stored_entity(
        key="x", name="X", entity_type="t", description="old", source_ids=["c1", "c2"], file_paths=["f"], truncate=""
    )
    m = merge_entity(existing, [ent("X", "new", "c9")], ["c1", "c2"], settings)
    assert m.skipped
    assert m.description == "old" and m.new_sources == ["c9"]  # provenance still recorded


def test_fifo_keeps_newest_sources():
    settings = _settings(max_source_ids_per_entity=2, source_ids_limit_method="FIFO")
    m = merge_entity(None, [ent("X", "1", "c1"), ent("X", "2", "c2"), ent("X", "3", "c3")], [], settings)
    assert m.source_ids == ["c2", "c3"]
    assert m.fragments == ["1", "2", "3"]
    assert m.truncate == "FIFO 2/3"


def test_file_paths_capped_with_placeholder():
    settings = _settings(max_file_paths=2)
    records = [ent("X", str(i), f"c{i}", path=f"f{i}") for i in range(4)]
    assert merge_entity(None, records, [], settings).file_paths == ["f0", "f1", "...truncated...(KEEP Old)"]
    fifo = _settings(max_file_paths=2, source_ids_limit_method="FIFO")
    assert merge_entity(None, records, [], fifo).file_paths == ["f2", "f3", "...truncated...(FIFO)"]
    existing = stored_entity(key="x", name="X", description="d", file_paths=["f0", "f1", "...truncated...(KEEP Old)"])
    again = merge_entity(existing, [ent("X", "y", "c9", path="f0")], [], settings)
    assert again.file_paths == ["f0", "f1"]


def test_relation_weight_counts_only_new_chunks_and_is_floored():
    existing = stored_relation(src_key="a", tgt_key="b", keywords="zeta,alpha", description="old", weight=2.0)
    records = [rel("A", "B", "x", "c1", weight=5.0), rel("A", "B", "y", "c3", keywords=("beta", "alpha"))]
    m = merge_relation(existing, records, ["c1", "c2"], _settings())
    assert m.weight == 3.0  # 2 existing + 1 from c3; c1 was already counted
    assert m.keywords == "alpha,beta,knows,zeta"
    assert m.fragments == ["old", "x", "y"]
    assert m.source_ids == ["c1", "c2", "c3"] and m.new_sources == ["c3"]
    floored = merge_relation(
        None, [rel("A", "B", "x", "c1", weight=0.1), rel("A", "B", "y", "c2", weight=0.1)], [], _settings()
    )
    assert floored.weight == 2.0


def test_relation_reprocessing_same_chunk_does_not_inflate_weight():
    first = merge_relation(None, [rel("A", "B", "x", "c1", weight=3.0)], [], _settings())
    row = stored_relation(**first.row(), src_name="A", tgt_name="B")
    again = merge_relation(row, [rel("A", "B", "x", "c1", weight=3.0)], first.all_sources, _settings())
    assert again.weight == first.weight == 3.0
    assert again.fragments == ["x"] and again.new_sources == []


def test_merge_is_deterministic():
    records = [ent("X", f"d{i % 5}", f"c{i}", path=f"p{i % 7}") for i in range(50)]
    results = {
        tuple(merge_entity(None, records, [], _settings(max_source_ids_per_entity=10)).source_ids) for _ in range(5)
    }
    assert len(results) == 1


def test_extra_sources_count_as_provenance_only():
    m = merge_entity(None, [ent("X", "d", "c1")], [], _settings(), extra_sources=["c2", "c1"])
    assert m.all_sources == ["c1", "c2"] and m.fragments == ["d"]


def test_endpoint_records_for_missing_entities():
    rels = [rel("A", "B", "A met B", "c1"), rel("B", "C", "B saw C", "c2")]
    out = endpoint_records(rels, {"b", "c"})
    assert [r.description for r in out["b"]] == ["A met B", "B saw C"]
    assert out["c"][0].entity_type == "UNKNOWN" and out["c"][0].name == "C"
    assert "a" not in out
