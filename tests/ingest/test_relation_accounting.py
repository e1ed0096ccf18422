"""Every relation an answer states is either parsed or counted as unparseable, whatever format the model chose.

One small set of facts is written the ways models write it when they leave the asked format: the legacy
tuple style, JSON (one object, one object per line, separate fenced blocks), another delimiter used
throughout, descriptions wrapped over lines; plus shapes nobody can read. A relation missing from the
parse must show in `malformed` (the document report's `unparseable_records`): never lost silently.
"""

from __future__ import annotations

import json

import pytest

from app.core.config import DEFAULT_ENTITY_TYPES
from app.domain.extraction_parser import parse_extraction
from app.domain.names import entity_key
from app.domain.records import ExtractionReport

ENTITIES = [
    ("Greta Holm", "Person", "Greta Holm is a lighthouse keeper on Utö."),
    ("Utö Lighthouse", "Artifact", "Utö Lighthouse is the oldest lighthouse in Finland."),
    ("Archipelago Sea", "Location", "The Archipelago Sea lies between Finland and Åland."),
]
RELATIONS = [
    ("Greta Holm", "Utö Lighthouse", "keeper, duty", "Greta Holm keeps the Utö Lighthouse."),
    ("Utö Lighthouse", "Archipelago Sea", "navigation", "It guides ships through the Archipelago Sea."),
    ("Greta Holm", "Archipelago Sea", "residence", "Greta Holm lives by the Archipelago Sea."),
]
WANT = {tuple(sorted((entity_key(a), entity_key(b)))) for a, b, _, _ in RELATIONS}


def _lines(d: str, wrap: bool = False) -> str:
    rows = [f"entity{d}{n}{d}{t}{d}{x}" for n, t, x in ENTITIES]
    for a, b, k, x in RELATIONS:
        head, _, tail = x.partition(" ") if wrap else (x, "", "")
        rows.append(f"relation{d}{a}{d}{b}{d}{k}{d}{head}" + (f"\n{tail}" if wrap else ""))
    return "\n".join(rows) + "\n<|COMPLETE|>"


def _tuples(d: str) -> str:
    rows = [f'("entity"{d}"{n}"{d}"{t.lower()}"{d}"{x}")' for n, t, x in ENTITIES]
    rows += [f'("relationship"{d}"{a}"{d}"{b}"{d}"{x}"{d}"{k}"{d}7)' for a, b, k, x in RELATIONS]
    return "##\n".join(rows) + "##\n<|COMPLETE|>"


def _objects() -> tuple[list[dict], list[dict]]:
    return (
        [{"type": "entity", "name": n, "entity_type": t, "description": x} for n, t, x in ENTITIES],
        [
            {"type": "relationship", "source": a, "target": b, "keywords": k, "description": x}
            for a, b, k, x in RELATIONS
        ],
    )


def _json(shape: str) -> str:
    entities, relations = _objects()
    if shape == "object":
        return json.dumps({"entities": entities, "relationships": relations}, ensure_ascii=False)
    if shape == "lines":
        return "\n".join(json.dumps(o, ensure_ascii=False) for o in entities + relations)
    return "\n\n".join(
        f"```json\n{json.dumps({key: items}, ensure_ascii=False)}\n```"
        for key, items in (("entities", entities), ("relationships", relations))
    )


READABLE = {
    "asked format": _lines("<|#|>"),
    "near-miss <|##|>": _lines("<|##|>"),
    "near-miss |#|": _lines("|#|"),
    "placeholder echoed": _lines("{tuple_delimiter}"),
    "<SEP>": _lines("<SEP>"),
    "tab": _lines("\t"),
    "double pipe": _lines(" || "),
    "tilde": _lines(" ~ "),
    "wrapped descriptions": _lines("<|#|>", wrap=True),
    "keyword alone on its line": _lines("<|#|>").replace("relation<|#|>", "relation\n<|#|>"),
    "tuple style <|>": _tuples("<|>"),
    "tuple style <|#|>": _tuples("<|#|>"),
    "json object": _json("object"),
    "json lines": _json("lines"),
    "json in two fences": _json("fences"),
}
UNREADABLE = {
    "arrows": "\n".join(
        [
            *(f"entity<|#|>{n}<|#|>{t}<|#|>{x}" for n, t, x in ENTITIES),
            *(f"Relation {i}: {a} -> {b} ({k})" for i, (a, b, k, _) in enumerate(RELATIONS, 1)),
        ]
    ),
    "no keyword": "\n".join(
        [
            *(f"entity<|#|>{n}<|#|>{t}<|#|>{x}" for n, t, x in ENTITIES),
            *(f"{a}<|#|>{b}<|#|>{k}<|#|>{x}" for a, b, k, x in RELATIONS),
        ]
    ),
    "cut off": _lines("<|#|>").rsplit("<|#|>", 2)[0],
}


def _lost_and_counted(text: str) -> tuple[int, int]:
    result = parse_extraction(text, "chunk", "doc.txt", entity_types=DEFAULT_ENTITY_TYPES)
    lost = len(WANT - {(r.src_key, r.tgt_key) for r in result.relations})
    return lost, ExtractionReport.of([result]).unparseable_records


@pytest.mark.parametrize("shape", sorted(READABLE))
def test_relations_in_other_formats_are_all_parsed(shape):
    assert _lost_and_counted(READABLE[shape]) == (0, 0)


@pytest.mark.parametrize("shape", sorted(UNREADABLE))
def test_relations_that_cannot_be_read_are_counted(shape):
    lost, counted = _lost_and_counted(UNREADABLE[shape])
    assert lost > 0 and counted >= lost
