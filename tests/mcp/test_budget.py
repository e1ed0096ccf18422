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
