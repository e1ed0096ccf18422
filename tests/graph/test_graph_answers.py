"""Graph views (GET /graph, GET /lightrag/graphs) are capped per process like exports, and encoded in a worker
thread: a request beyond the cap waits for a turn (bounded), then gets 503 `graph_busy` + Retry-After; the
encoded answer is the JSON the response models describe."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from app.adapters.lightrag.schemas import LightragKnowledgeGraph
from app.domain.json_slices import SLICE, json_object
from app.schemas.graph import GraphOut
from app.web.graph_answers import GraphGate
from tests.support.curation import seed_graph

WAIT = 60.0  # generous: only ever reached when something is broken
ROUTES = (("/graph", {}), ("/lightrag/graphs", {"label": "*"}))
# a ring bigger than one encoding slice, with text that JSON must escape
NAMES = [f'Entité {i} "東京"' for i in range(SLICE + 40)]


@pytest.fixture
async def capped(start_app, make_settings):
    app = await start_app(make_settings(graph_max_concurrent=1, graph_queue_timeout=0))
    async with app.container.db.transaction() as conn:
        await seed_graph(conn, ents=[("Alice", "person", "Alice runs the lab.", [])])
    return app


def _gate(app) -> GraphGate:
    gate = app.app.state.graph_gate = getattr(app.app.state, "graph_gate", None) or GraphGate(1)
    return gate


@pytest.mark.parametrize(("path", "params"), ROUTES)
async def test_a_graph_request_beyond_the_cap_is_refused_with_retry_after(capped, path, params):
    gate = _gate(capped)
    async with gate.slot(0) as admitted:  # another graph answer being built
        assert admitted
        refused = await capped.http.get(path, params=params)
    assert refused.status_code == 503
    assert refused.json()["code"] == "graph_busy" and int(refused.headers["retry-after"]) > 0
    assert gate.active == 0 and gate.waiting == 0
    answered = await capped.http.get(path, params=params)
    assert answered.status_code == 200 and [n["id"] for n in answered.json()["nodes"]] == ["Alice"]


async def test_a_graph_request_beyond_the_cap_waits_for_a_turn(start_app, make_settings):
    app = await start_app(make_settings(graph_max_concurrent=1, graph_queue_timeout=WAIT))
    gate = _gate(app)
    async with gate.slot(0):
        queued = asyncio.create_task(app.http.get("/graph"))
        async with asyncio.timeout(WAIT):
            while gate.waiting != 1:  # noqa: ASYNC110 (a counter, not an event)
                await asyncio.sleep(0.01)
        assert not queued.done()
    response = await asyncio.wait_for(queued, WAIT)
    assert response.status_code == 200 and response.json() == {"nodes": [], "edges": [], "is_truncated": False}


@pytest.fixture
async def ring(app_client):
    async with app_client.container.db.transaction() as conn:
        await seed_graph(
            conn,
            ents=[(n, "person", f"{n} says \\ hi\nand\tbye.", []) for n in NAMES],
            rels=[
                (a, b, f"{a} knows {b}", 'kw, "quoted"', 1.5 + i / 7, [])
                for i, (a, b) in enumerate(zip(NAMES, NAMES[1:] + NAMES[:1], strict=True))
            ],
        )
    return app_client


async def test_graph_answers_are_encoded_off_the_event_loop_as_their_models_describe(ring, monkeypatch):
    from app.adapters.lightrag.routes import graph as compat_graph  # noqa: PLC0415
    from app.routers import graph as entities  # noqa: PLC0415

    encoded_on: list[int] = []

    def spy(encode):
        def run(rows):
            encoded_on.append(threading.get_ident())
            return encode(rows)

        return run

    monkeypatch.setattr(entities, "graph_json", spy(entities.graph_json))
    monkeypatch.setattr(compat_graph, "knowledge_graph_json", spy(compat_graph.knowledge_graph_json))
    native = await ring.http.get("/graph", params={"max_nodes": 10_000})
    compat = await ring.http.get("/lightrag/graphs", params={"label": "*", "max_nodes": 10_000})
    assert native.status_code == compat.status_code == 200
    assert native.headers["content-type"] == compat.headers["content-type"] == "application/json"
    assert len(encoded_on) == 2 and threading.get_ident() not in encoded_on

    body = native.json()
    assert len(body["nodes"]) == len(NAMES) and len(body["edges"]) == len(NAMES)
    assert GraphOut.model_validate(body).model_dump(mode="json") == body
    compat_body = compat.json()
    assert LightragKnowledgeGraph.model_validate(compat_body).model_dump(mode="json") == compat_body
    assert {n["id"] for n in compat_body["nodes"]} == set(NAMES)
    edge = next(e for e in compat_body["edges"] if e["source"] == NAMES[0])
    assert edge == {
        "id": f"{NAMES[0]}-{NAMES[1]}",
        "type": "DIRECTED",
        "source": NAMES[0],
        "target": NAMES[1],
        "properties": {"weight": 1.5, "keywords": 'kw, "quoted"', "description": f"{NAMES[0]} knows {NAMES[1]}"},
    }


def test_sliced_encoding_equals_one_json_dump():
    fields = {
        "nodes": [{"id": n, "w": i / 3, "tags": ["a\u2028b", "\x01"]} for i, n in enumerate(NAMES)],
        "edges": [],
        "empty": [],
        "flag": True,
        "count": 3,
        "none": None,
    }
    expected = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode()
    assert json_object(fields) == expected
