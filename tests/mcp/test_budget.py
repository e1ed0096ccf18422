"""Cutting a tool's answer to its token budget (app/adapters/mcp/budget.py), with the service's tokenizer."""

from __future__ import annotations

from app.adapters.mcp.budget import ELLIPSIS, dump, fit
from app.providers.tokenizer import get_tokenizer

TOKENIZER = get_tokenizer()


def _fit(data: dict, budget: int, **paths) -> list[str]:
    return fit(data, budget, TOKENIZER.count, TOKENIZER.truncate, **paths)


def test_an_answer_within_budget_is_left_alone():
    data = {"entities": [{"name": "Rome"}], "answer": "short"}
    assert _fit(data, 1000, lists=["entities"], texts=["answer"]) == []
    assert data == {"entities": [{"name": "Rome"}], "answer": "short"}


def test_the_costliest_list_loses_its_last_items_first():
    data = {
        "chunks": [{"content": f"chunk {i} " + "word " * 200} for i in range(10)],
        "entities": [{"name": f"E{i}"} for i in range(10)],
    }
    notes = _fit(data, 1000, lists=["chunks", "entities"])
    assert TOKENIZER.count(dump(data)) <= 1000
    assert len(data["entities"]) == 10 and 0 < len(data["chunks"]) < 10
    assert [c["content"].split()[1] for c in data["chunks"]] == [str(i) for i in range(len(data["chunks"]))]
    assert notes == [f"kept {len(data['chunks'])} of 10 chunks"]


def test_texts_are_shortened_when_no_list_is_left_to_cut():
    data = {"answer": "word " * 3000, "references": [{"id": "1"}], "nested": {"items": [{"d": "x " * 50}]}}
    notes = _fit(data, 500, lists=["references", "nested.items"], texts=["answer"])
    assert TOKENIZER.count(dump(data)) <= 500
    assert data["answer"].endswith(ELLIPSIS) and data["references"] == [] and data["nested"]["items"] == []
    assert "kept 0 of 1 references" in notes and any(n.startswith("answer cut to ") for n in notes)


def test_indexed_paths_reach_texts_inside_lists():
    long = "long " * 1000
    data = {"relations": [{"description": long}, {"description": "short"}]}
    notes = _fit(data, 300, texts=["relations.0.description", "relations.1.description"])
    assert TOKENIZER.count(dump(data)) <= 300 and data["relations"][1]["description"] == "short"
    kept = TOKENIZER.count(data["relations"][0]["description"])
    assert notes == [f"relations.0.description cut to {kept} of {TOKENIZER.count(long)} tokens"]


def test_a_cut_leaves_room_for_its_note_and_an_answer_within_budget_needs_none():
    items = {"items": [{"text": f"item {i} " + "word " * 20} for i in range(30)]}
    [note] = _fit(items, 300, lists=["items"], note_room=40)
    assert TOKENIZER.count(dump(items)) <= 260 and note == f"kept {len(items['items'])} of 30 items"
    small = {"items": [{"text": "word " * 20}]}
    assert _fit(small, TOKENIZER.count(dump(small)), lists=["items"], note_room=40) == []  # fits: nothing cut


def test_what_depends_on_the_kept_items_is_redone_and_cut_again_if_it_grew():
    data = {"chunks": [{"id": i, "text": "word " * 50} for i in range(6)], "lines": [{"about": i} for i in range(6)]}

    def then(cut: dict) -> list[str]:
        kept = {c["id"] for c in cut["chunks"]}
        for line in cut["lines"]:  # a line says more once its chunk is gone
            line["text"] = "" if line["about"] in kept else "said again " * 10
        return ["lines"]

    notes = _fit(data, 250, lists=["chunks", "lines"], then=then)
    assert TOKENIZER.count(dump(data)) <= 250
    kept = {c["id"] for c in data["chunks"]}
    assert all(line["text"] == ("" if line["about"] in kept else "said again " * 10) for line in data["lines"])
    assert f"kept {len(data['chunks'])} of 6 chunks" in notes and f"kept {len(data['lines'])} of 6 lines" in notes
