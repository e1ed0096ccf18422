"""Graph routes as the WebUI's graph viewer and editor call them."""

from __future__ import annotations

from tests.compat.conftest import CompatService


def test_labels_search_and_popular(compat_service: CompatService):
    with compat_service.http() as http:
        labels = http.get("/graph/label/list").json()
        found = http.get("/graph/label/search", params={"q": "charlie", "limit": 10}).json()
        popular = http.get("/graph/label/popular", params={"limit": 2}).json()
    assert "Charlie Gordon" in labels and labels == sorted(labels, key=str.casefold)
    assert found == ["Charlie Gordon"] and len(popular) == 2


def test_graphs_knowledge_graph_shape(compat_service: CompatService):
    with compat_service.http() as http:
        graph = http.get("/graphs", params={"label": "Charlie Gordon", "max_depth": 2, "max_nodes": 100}).json()
        unknown = http.get("/graphs", params={"label": "Nobody Here"}).json()
        everything = http.get("/graphs", params={"label": "*", "max_nodes": 100000}).json()
    node = next(n for n in graph["nodes"] if n["id"] == "Charlie Gordon")
    assert node["labels"] == ["Charlie Gordon"]
    assert {"entity_id", "entity_type", "description"} <= set(node["properties"])
    edge = graph["edges"][0]
    assert set(edge) == {"id", "type", "source", "target", "properties"} and "weight" in edge["properties"]
    assert graph["is_truncated"] is False
    assert unknown == {"nodes": [], "edges": [], "is_truncated": False}
    assert len(everything["nodes"]) >= len(graph["nodes"])


def test_entity_exists(compat_service: CompatService):
    with compat_service.http() as http:
        assert http.get("/graph/entity/exists", params={"name": "Charlie Gordon"}).json() == {"exists": True}
        assert http.get("/graph/entity/exists", params={"name": "Nobody Here"}).json() == {"exists": False}


def test_edit_create_merge_and_delete(compat_service: CompatService):
    with compat_service.http(workspace="other") as http:
        created = http.post(
            "/graph/entity/create",
            json={
                "entity_name": "Quinn",
                "entity_data": {"description": "Quinn tests Algernon.", "entity_type": "person"},
            },
        )
        assert created.status_code == 200 and created.json()["data"]["entity_name"] == "Quinn"
        http.post(
            "/graph/entity/create",
            json={"entity_name": "Quinn Larkin", "entity_data": {"description": "Quinn Larkin is a graduate student."}},
        ).raise_for_status()
        relation = http.post(
            "/graph/relation/create",
            json={
                "source_entity": "Quinn",
                "target_entity": "Algernon",
                "relation_data": {"description": "Quinn tests Algernon.", "keywords": "tests", "weight": 1.0},
            },
        )
        assert relation.status_code == 200, relation.text
        edited = http.post(
            "/graph/relation/edit",
            json={"source_id": "Quinn", "target_id": "Algernon", "updated_data": {"weight": 3.0}},
        ).json()
        assert edited["status"] == "success" and edited["data"]["weight"] == 3.0

        renamed = http.post(
            "/graph/entity/edit",
            json={
                "entity_name": "Quinn",
                "updated_data": {"entity_name": "Quinn L.", "description": "A tester."},
                "allow_rename": True,
            },
        ).json()
        assert renamed["operation_summary"]["renamed"] is True and renamed["data"]["entity_name"] == "Quinn L."
        assert renamed["data"]["description"] == "A tester." and "source_id" in renamed["data"]
        refused = http.post(
            "/graph/entity/edit", json={"entity_name": "Quinn L.", "updated_data": {"entity_name": "Quinn Larkin"}}
        )
        assert refused.status_code == 422 and refused.json()["code"] == "rename_not_allowed"
        unknown_field = http.post(
            "/graph/entity/edit", json={"entity_name": "Quinn L.", "updated_data": {"source_id": "chunk-1"}}
        )
        assert unknown_field.status_code == 501 and "source_id" in unknown_field.json()["detail"]

        merged = http.post(
            "/graph/entities/merge", json={"entities_to_change": ["Quinn L."], "entity_to_change_into": "Quinn Larkin"}
        ).json()
        assert merged["status"] == "success" and merged["data"]["merged_entity"] == "Quinn Larkin"
        assert merged["data"]["deleted_entities"] == ["Quinn L."]
        assert http.get("/graph/entity/exists", params={"name": "Quinn L."}).json() == {"exists": False}

        gone = http.request(
            "DELETE", "/documents/delete_relation", json={"source_entity": "Quinn Larkin", "target_entity": "Algernon"}
        ).json()
        assert gone["status"] == "success" and gone["doc_id"] == ""
        assert (
            http.request("DELETE", "/documents/delete_entity", json={"entity_name": "Quinn Larkin"}).json()["status"]
            == "success"
        )


def test_rename_onto_an_existing_entity_merges_when_allowed(compat_service: CompatService):
    with compat_service.http(workspace="other") as http:
        for name in ("Rowan Ash", "Rowan Ashe"):
            http.post(
                "/graph/entity/create",
                json={"entity_name": name, "entity_data": {"description": f"{name} keeps the lab notes."}},
            ).raise_for_status()
        clash = http.post(
            "/graph/entity/edit",
            json={"entity_name": "Rowan Ash", "allow_rename": True, "updated_data": {"entity_name": "Rowan Ashe"}},
        )
        assert clash.status_code == 409 and clash.json()["code"] == "entity_exists"
        merged = http.post(
            "/graph/entity/edit",
            json={
                "entity_name": "Rowan Ash",
                "allow_rename": True,
                "allow_merge": True,
                "updated_data": {"entity_name": "Rowan Ashe"},
            },
        ).json()
        assert merged["message"] == "Entity merged successfully into 'Rowan Ashe'"
        assert merged["operation_summary"]["merged"] is True and merged["data"]["entity_name"] == "Rowan Ashe"
        assert http.get("/graph/entity/exists", params={"name": "Rowan Ash"}).json() == {"exists": False}
