"""The split of an entity's provenance between it and the names merged into it (app/domain/unmerge.py)."""

from __future__ import annotations

from app.domain.records import ChunkExtraction, EntityRecord, RelationRecord
from app.domain.unmerge import split_provenance


def _entity(name: str, etype: str = "person") -> EntityRecord:
    return EntityRecord(name=name, key=name.lower(), entity_type=etype, description=f"{name} is mentioned.")


def _relation(a: str, b: str) -> RelationRecord:
    (sk, sn), (tk, tn) = sorted([(a.lower(), a), (b.lower(), b)])
    return RelationRecord(src_name=sn, tgt_name=tn, src_key=sk, tgt_key=tk, keywords=["k"], description="d")


def test_chunks_go_to_the_names_their_records_use():
    extractions = {
        "c1": ChunkExtraction("c1", [_entity("Ngozi Okafor")], [_relation("Ngozi Okafor", "Marta Quell")]),
        "c2": ChunkExtraction("c2", [_entity("Dr. Okafor")], [_relation("Dr. Okafor", "Harbour Office")]),
        "c3": ChunkExtraction(
            "c3", [_entity("Ngozi Okafor"), _entity("Dr. Okafor")], [_relation("Dr. Okafor", "Ngozi Okafor")]
        ),
    }
    split = split_provenance(
        "ngozi okafor",
        {"dr. okafor"},
        ["c1", "c2", "c3", "c4"],  # c4: no readable records
        {("harbour office", "ngozi okafor"): ["c2", "c4"], ("marta quell", "ngozi okafor"): ["c1"]},
        extractions,
    )
    assert split.kept == ["c1", "c3", "c4"]
    assert split.restored == {"dr. okafor": ["c2", "c3"]}
    assert split.names == {"dr. okafor": "Dr. Okafor"} and split.types == {"dr. okafor": "person"}
    assert split.kept_relations == {("harbour office", "ngozi okafor"): ["c4"], ("marta quell", "ngozi okafor"): ["c1"]}
    # the relation between the two was a self-loop of the merge: the records bring it back
    assert split.new_relations == {("dr. okafor", "harbour office"): ["c2"], ("dr. okafor", "ngozi okafor"): ["c3"]}
    assert split.moved


def test_nothing_moves_when_no_record_names_the_absorbed_name():
    extractions = {"c1": ChunkExtraction("c1", [_entity("Ngozi Okafor")])}
    split = split_provenance("ngozi okafor", {"dr. okafor"}, ["c1"], {}, extractions)
    assert split.kept == ["c1"] and split.restored == {"dr. okafor": []} and not split.moved
