"""Ingestion end to end through the real pipeline and worker (real DB, fake OpenAI-compatible server)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from app.db.tables import chunks, documents, entities, entity_sources, llm_cache, relation_sources, relations
from app.domain.texts import SEP, fragments
from app.services.ingest.intake import IngestionService
from tests.support.fakes.openai_server import COMPLETE, TUPLE, chunk_text, default_extract

PARAGRAPHS = {"chunk_split_by_character": "\n\n", "chunk_split_by_character_only": True}


def entity_line(name: str, etype: str, desc: str) -> str:
    return f"entity{TUPLE}{name}{TUPLE}{etype}{TUPLE}{desc}"


def relation_line(a: str, b: str, keywords: str, desc: str) -> str:
    return f"relation{TUPLE}{a}{TUPLE}{b}{TUPLE}{keywords}{TUPLE}{desc}"


async def ingest(app, texts: list[str], project_id: str = "default", **extra) -> list[dict]:
    body = {"project_id": project_id, "documents": [{"text": t, **extra} for t in texts], "wait": True}
    response = await app.http.post("/documents", json=body)
    assert response.status_code == 200, response.text
    return response.json()["documents"]


async def scalar(app, query):
    async with app.container.db.connect() as conn:
        return await conn.scalar(query)


async def rows(app, query) -> list[dict]:
    async with app.container.db.connect() as conn:
        return [dict(r) for r in (await conn.execute(query)).mappings()]


async def entity(app, key: str, project_id: str = "default") -> dict:
    found = await rows(app, select(entities).where(entities.c.project_id == project_id, entities.c.key == key))
    assert found, f"entity {key!r} missing"
    return found[0]


async def sources_of(app, key: str) -> list[str]:
    return [
        r["chunk_id"]
        for r in await rows(
            app,
            select(entity_sources.c.chunk_id).where(entity_sources.c.entity_key == key).order_by(entity_sources.c.seq),
        )
    ]


@pytest.fixture
async def app(settings, start_app):
    return await start_app(settings)


@pytest.fixture
async def para_app(settings, start_app):
    """Chunks are paragraphs: one chunk per paragraph, so tests control chunk contents exactly."""
    app = await start_app(settings)
    response = await app.http.post("/projects", json={"id": "p", "settings": PARAGRAPHS})
    assert response.status_code == 201
    return app


async def test_document_is_chunked_extracted_merged_and_embedded(app, fake_llm):
    [item] = await ingest(app, ["Alice met Bob in Paris. Bob works for Acme Corp."], file_path="notes/story.txt")
    assert item["status"] == "processed"
    detail = (await app.http.get(f"/documents/{item['id']}")).json()
    assert detail["chunks_count"] == 1 and detail["entities_count"] == 4 and detail["relations_count"] == 3
    assert detail["llm_calls"] == 2 and detail["llm_prompt_tokens"] > 0 and detail["embedding_tokens"] > 0
    assert detail["finished_at"] is not None and detail["error"] is None

    [chunk] = (await app.http.get(f"/documents/{item['id']}/chunks")).json()["chunks"]
    assert chunk["id"] == f"{item['id']}-chunk-000" and chunk["order"] == 0 and chunk["start_token"] == 0
    assert chunk["content"] == "Alice met Bob in Paris. Bob works for Acme Corp."
    stored = (await rows(app, select(chunks.c.extraction_cache_keys, chunks.c.embedding.is_not(None).label("e"))))[0]
    assert len(stored["extraction_cache_keys"]) == 2 and stored["e"]  # first pass + one gleaning pass
    cached = await scalar(
        app, select(func.count()).select_from(llm_cache).where(llm_cache.c.key.in_(stored["extraction_cache_keys"]))
    )
    assert cached == 2

    bob = await entity(app, "bob")
    assert bob["name"] == "Bob" and bob["entity_type"] == "concept"
    assert bob["description"] == "Alice met Bob in Paris."  # the fake describes a name once per chunk
    assert bob["file_paths"] == ["story.txt"] and bob["source_ids"] == [chunk["id"]]
    assert bob["embedding"] is not None and bob["embedded_hash"] and bob["degree"] == 3
    rel_rows = await rows(
        app,
        select(
            relations.c.src_key, relations.c.tgt_key, relations.c.weight, relations.c.embedding.is_not(None).label("e")
        ).order_by(relations.c.src_key),
    )
    assert [(r["src_key"], r["tgt_key"], r["weight"], r["e"]) for r in rel_rows] == [
        ("acme corp", "bob", 1.0, True),
        ("alice", "bob", 1.0, True),
        ("bob", "paris", 1.0, True),
    ]


async def test_entity_accumulates_across_chunks_and_documents(para_app, fake_llm):
    first = "Alice founded Acme.\n\nAlice lives in Rome.\n\nAlice likes tea."
    [doc1] = await ingest(para_app, [first], project_id="p")
    alice = await entity(para_app, "alice", "p")
    assert fragments(alice["description"]) == ["Alice founded Acme.", "Alice lives in Rome.", "Alice likes tea."]
    assert await sources_of(para_app, "alice") == [f"{doc1['id']}-chunk-00{i}" for i in range(3)]

    [doc2] = await ingest(para_app, ["Alice wrote a book.\n\nAlice sold Acme."], project_id="p")
    alice = await entity(para_app, "alice", "p")
    assert fragments(alice["description"])[3:] == ["Alice wrote a book.", "Alice sold Acme."]
    assert await sources_of(para_app, "alice") == [f"{doc1['id']}-chunk-00{i}" for i in range(3)] + [
        f"{doc2['id']}-chunk-00{i}" for i in range(2)
    ]
    assert fake_llm.calls_of("summary") == []  # 5 fragments < 8: joined, no LLM


async def test_summary_exactly_when_threshold_crossed(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(force_llm_summary_on_merge=3))
    await app.http.post("/projects", json={"id": "p", "settings": PARAGRAPHS})
    await ingest(app, ["Carol paints.\n\nCarol sings."], project_id="p")
    assert fake_llm.calls_of("summary") == []
    assert (await entity(app, "carol", "p"))["description"] == f"Carol paints.{SEP}Carol sings."

    fake_llm.handlers["summary"] = lambda messages: "Carol is an artist who paints, sings and dances."
    await ingest(app, ["Carol dances."], project_id="p")
    summary_calls = fake_llm.calls_of("summary")
    assert len(summary_calls) == 1 and "Carol" in summary_calls[0].messages[-1]["content"]
    carol = await entity(app, "carol", "p")
    assert carol["description"] == "Carol is an artist who paints, sings and dances."
    assert len(await sources_of(app, "carol")) == 3


async def test_reingest_same_text_is_duplicate_with_no_llm_call(app, fake_llm):
    [first] = await ingest(app, ["Dave met Erin."])
    calls = len(fake_llm.calls)
    [again] = await ingest(app, ["Dave met Erin."])
    assert again == {**first, "status": "duplicate"} and len(fake_llm.calls) == calls


async def test_reused_chunk_content_makes_no_llm_call(para_app, fake_llm):
    await ingest(para_app, ["Frank built a boat.\n\nGina sailed it."], project_id="p")
    before = len(fake_llm.calls_of("extract"))
    [doc2] = await ingest(para_app, ["Frank built a boat.\n\nHenry bought it."], project_id="p")
    new_extracts = fake_llm.calls_of("extract")[before:]
    assert [chunk_text(c.messages).strip() for c in new_extracts] == ["Henry bought it."]
    assert await sources_of(para_app, "frank") == [
        (
            await rows(
                para_app,
                select(chunks.c.id).where(chunks.c.content == "Frank built a boat.").order_by(chunks.c.created_at),
            )
        )[i]["id"]
        for i in range(2)
    ]
    assert doc2["status"] == "processed"


async def test_cycle_a_b_c_a(app, fake_llm):
    fake_llm.handlers["extract"] = lambda messages: "\n".join(
        [
            entity_line("A", "node", "First node."),
            entity_line("B", "node", "Second node."),
            entity_line("C", "node", "Third node."),
            relation_line("A", "B", "next", "A leads to B."),
            relation_line("B", "C", "next", "B leads to C."),
            relation_line("C", "A", "next", "C leads back to A."),
            COMPLETE,
        ]
    )
    await ingest(app, ["A loop of three nodes."])
    pairs = await rows(
        app, select(relations.c.src_key, relations.c.tgt_key).order_by(relations.c.src_key, relations.c.tgt_key)
    )
    assert [(r["src_key"], r["tgt_key"]) for r in pairs] == [("a", "b"), ("a", "c"), ("b", "c")]
    degrees = await rows(app, select(entities.c.key, entities.c.degree).order_by(entities.c.key))
    assert [(r["key"], r["degree"]) for r in degrees] == [("a", 2), ("b", 2), ("c", 2)]


async def test_relation_endpoints_never_extracted_are_created(app, fake_llm):
    fake_llm.handlers["extract"] = lambda messages: "\n".join(
        [
            entity_line("Ivy", "person", "Ivy is a chemist."),
            relation_line("Ivy", "Jack", "colleague", "Ivy works with Jack."),
            COMPLETE,
        ]
    )
    await ingest(app, ["Ivy and Jack."])
    jack = await entity(app, "jack")
    assert jack["entity_type"] == "UNKNOWN" and jack["description"] == "Ivy works with Jack."
    assert jack["embedding"] is not None and len(await sources_of(app, "jack")) == 1
    assert len(await sources_of(app, "ivy")) == 1  # relation mention adds no duplicate provenance


async def test_gleaning_adds_missed_entities(app, fake_llm):
    fake_llm.handlers["glean"] = lambda messages: "\n".join(
        [entity_line("Karl", "person", "Karl was mentioned in passing."), COMPLETE]
    )
    await ingest(app, ["Lena met someone."])
    assert (await entity(app, "karl"))["description"] == "Karl was mentioned in passing."
    assert (await entity(app, "lena"))["name"] == "Lena"


async def test_a_database_error_leaves_a_clean_message_on_the_document(app, monkeypatch, caplog):
    from sqlalchemy import text

    from app.repositories import graph as graph_repo

    async def broken_lock(conn, *args, **kwargs):
        await conn.execute(text("SELECT 1 / (SELECT count(*) FROM projects WHERE id = 'nowhere')"))

    monkeypatch.setattr(graph_repo, "lock_keys", broken_lock)
    [doc] = await ingest(app, ["Mia met Ned in Oslo."])
    assert doc["status"] == "failed"
    for shown in (doc["error"], (await app.http.get(f"/documents/{doc['id']}")).json()["error"]):
        assert "division by zero" in shown and "database" in shown, shown
        assert not any(leak in shown for leak in ("SQL", "SELECT", "nowhere", "sqlalche.me", "asyncpg")), shown
    assert "SELECT 1 / (SELECT count(*)" in caplog.text  # the statement stays in the worker's log


async def test_llm_failure_mid_document_fails_cleanly_and_retry_works(para_app, fake_llm):
    def flaky(messages):
        if "Oscar" in chunk_text(messages):
            raise RuntimeError("model crashed")
        from tests.support.fakes.openai_server import default_extract

        return default_extract(messages)

    fake_llm.handlers["extract"] = flaky
    [doc] = await ingest(para_app, ["Mia met Ned.\n\nOscar met Pia.\n\nQuinn met Rex."], project_id="p")
    assert doc["status"] == "failed" and "ProviderError" in doc["error"]
    detail = (await para_app.http.get(f"/documents/{doc['id']}", params={"project_id": "p"})).json()
    assert detail["status"] == "failed" and detail["error"] == doc["error"] and "Traceback" not in doc["error"]
    assert detail["entities_count"] == 0 and detail["llm_calls"] > 0
    for table in (entities, relations, entity_sources, relation_sources):
        assert await scalar(para_app, select(func.count()).select_from(table)) == 0
    assert not await scalar(para_app, select(documents.c.graph_merged))

    fake_llm.handlers.pop("extract")
    before = len(fake_llm.calls_of("extract"))
    retried = await para_app.http.post(f"/documents/{doc['id']}/retry", json={"project_id": "p"})
    assert retried.status_code == 200
    done, states = await IngestionService(para_app.container).wait_until_done("p", [doc["id"]], limit=30)
    assert done and states[doc["id"]].status == "processed"
    # the chunks that had succeeded come from the extraction cache: only the failed one calls the LLM
    assert [chunk_text(c.messages).strip() for c in fake_llm.calls_of("extract")[before:]] == ["Oscar met Pia."]
    assert {r["key"] for r in await rows(para_app, select(entities.c.key))} == {
        "mia",
        "ned",
        "oscar",
        "pia",
        "quinn",
        "rex",
    }


async def test_failure_after_merge_retries_only_finalisation(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(force_llm_summary_on_merge=2))
    await app.http.post("/projects", json={"id": "p", "settings": PARAGRAPHS})
    fake_llm.fail_next(10, status=500, operation="summary")
    [doc] = await ingest(app, ["Sam rows.\n\nSam runs."], project_id="p")
    assert doc["status"] == "failed"
    assert await scalar(app, select(documents.c.graph_merged))
    assert (await entity(app, "sam", "p"))["description"] == f"Sam rows.{SEP}Sam runs."  # merged, unsummarised

    fake_llm.reset()
    await app.http.post(f"/documents/{doc['id']}/retry", json={"project_id": "p"})
    done, _ = await IngestionService(app.container).wait_until_done("p", [doc["id"]], limit=30)
    assert done
    assert fake_llm.calls_of("extract") == [] and fake_llm.calls_of("glean") == []
    assert len(fake_llm.calls_of("summary")) == 1
    assert (await entity(app, "sam", "p"))["description"].startswith("Summary:")
    assert len(await sources_of(app, "sam")) == 2  # no duplicated provenance


def held_until_a_second_arrives(timeout: float = 60.0):
    """An extraction handler that holds an extraction until another one is asked for while it waits, so two
    documents are proven to be extracted at once (whatever the machine's load): `overlapped()` says they were."""
    state: dict = {"waiting": 0, "overlapped": None}

    async def handler(messages: list[dict]) -> str:
        if state["overlapped"] is None:  # created on the fake server's own event loop
            state["overlapped"] = asyncio.Event()
        if state["waiting"]:
            state["overlapped"].set()  # releases the one held
        elif not state["overlapped"].is_set():
            state["waiting"] += 1
            try:  # a pipeline that never overlaps fails the test's assertion, not the extraction
                await asyncio.wait_for(state["overlapped"].wait(), timeout)
            except TimeoutError:
                pass
            finally:
                state["waiting"] -= 1
        return default_extract(messages)

    handler.overlapped = lambda: state["overlapped"] is not None and state["overlapped"].is_set()
    return handler


async def test_two_documents_sharing_entities_at_once_lose_nothing(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(max_parallel_insert=4))
    fake_llm.handlers["extract"] = barrier = held_until_a_second_arrives()
    texts = [f"Tom met Uma on day {i}. Uma called Vic about item {i}." for i in range(4)]
    responses = await asyncio.gather(*(ingest(app, [t]) for t in texts))
    assert all(r[0]["status"] == "processed" for r in responses)
    assert barrier.overlapped(), "a second extraction never started while the first was held"
    uma = await entity(app, "uma")
    assert sorted(fragments(uma["description"])) == sorted(t.split(". ")[0] + "." for t in texts)
    assert len(await sources_of(app, "uma")) == 4
    rel = (await rows(app, select(relations).where(relations.c.src_key == "tom")))[0]
    assert rel["weight"] == 4.0 and len(fragments(rel["description"])) == 4
    assert await scalar(app, select(func.count()).select_from(relation_sources)) == 8


async def test_wait_true_token_headers_equal_fake_usage(app, fake_llm):
    fake_llm.fixed_usage = (11, 5)
    response = await app.http.post("/documents", json={"documents": [{"text": "Walt met Xena."}], "wait": True})
    assert response.status_code == 200
    calls = len(fake_llm.calls)
    assert calls == 2
    assert response.headers["x-token-input"] == str(11 * calls)
    assert response.headers["x-token-output"] == str(5 * calls)
    doc = (await app.http.get(f"/documents/{response.json()['documents'][0]['id']}")).json()
    assert (doc["llm_prompt_tokens"], doc["llm_completion_tokens"], doc["llm_calls"]) == (22, 10, 2)
    assert (await app.http.post("/documents", json={"documents": [{"text": "Walt met Xena."}], "wait": True})).headers[
        "x-token-input"
    ] == "0"


async def test_async_default_then_processed(app, fake_llm):
    response = await app.http.post("/documents", json={"documents": [{"text": "Yara met Zed."}]})
    assert response.status_code == 202
    doc_id = response.json()["documents"][0]["id"]
    done, states = await IngestionService(app.container).wait_until_done("default", [doc_id], limit=30)
    assert done and states[doc_id].status == "processed"
    pipeline = (await app.http.get("/pipeline")).json()
    assert pipeline["by_status"]["processed"] == 1 and pipeline["queue_depth"] == 0
    assert pipeline["local_worker"]["max_parallel"] == 3


async def test_upload_with_wait_processes_file(app, fake_llm):
    files = [("files", ("story.md", b"# Story\n\nUrsula met Victor in Oslo.", "text/markdown"))]
    response = await app.http.post("/documents/upload", files=files, data={"wait": "true"})
    assert response.status_code == 200
    [item] = response.json()["documents"]
    assert item["status"] == "processed" and item["file_path"] == "story.md"
    assert (await entity(app, "ursula"))["file_paths"] == ["story.md"]


async def test_gleaning_repeating_first_pass_changes_nothing(app, fake_llm):
    from tests.support.fakes.openai_server import default_extract

    fake_llm.handlers["glean"] = default_extract
    await ingest(app, ["Abe met Bea. Bea met Cy."])
    assert (await entity(app, "bea"))["description"] == "Abe met Bea."
    rel = (await rows(app, select(relations).where(relations.c.src_key == "abe")))[0]
    assert rel["weight"] == 1.0 and rel["description"] == "Abe met Bea."


async def test_long_names_and_hostile_output(app, fake_llm):
    long_name = "N" + "x" * 700
    fake_llm.handlers["extract"] = lambda messages: "\n".join(
        [
            "```",
            entity_line(long_name, "thing", "A very long name."),
            f"entity{TUPLE}Eve{TUPLE}person{TUPLE}Eve says {TUPLE}relation{TUPLE} inside her text.",
            "garbage line without delimiters",
            f"relation{TUPLE}Eve{TUPLE}Eve{TUPLE}self{TUPLE}Self loop.",
            f"ENTITY{TUPLE}Fay{TUPLE}person{TUPLE}Fay is fine.",
            "```",
            COMPLETE,
        ]
    )
    [doc] = await ingest(app, ["Hostile output test."])
    assert doc["status"] == "processed"
    keys = {r["key"] for r in await rows(app, select(entities.c.key))}
    assert "fay" in keys and "eve" in keys
    long_key = next(k for k in keys if k.startswith("nxxx"))
    assert len((await entity(app, long_key))["name"]) == 500
    assert await scalar(app, select(func.count()).select_from(relations)) == 0  # self-relation dropped


def test_fold_summary_keeps_fragments_merged_meanwhile():
    from app.services.ingest.finalise import fold_summary

    assert fold_summary(f"a{SEP}b", f"a{SEP}b", "S") == "S"
    assert fold_summary(f"a{SEP}b{SEP}c", f"a{SEP}b", "S") == f"S{SEP}c"  # c arrived during the LLM call
    assert fold_summary(f"x{SEP}c", f"a{SEP}b", "S") is None  # rewritten meanwhile: summary dropped
    assert fold_summary("S", f"a{SEP}b", "S") is None and fold_summary(f"a{SEP}b", f"a{SEP}b", "") is None


async def _assert_vectors_match_current_text(app, project_id: str) -> None:
    """Every entity and relation holds the embedding of its current canonical text."""
    from app.domain.texts import entity_embedding_text, relation_embedding_text, text_hash
    from tests.support.fakes.openai_server import fake_embedding

    def check(label: str, row: dict, text: str) -> None:
        assert row["embedded_hash"] == text_hash(text), f"{label} embedded a stale text"
        assert row["embedding"] is not None, f"{label} has no embedding"
        assert list(row["embedding"]) == pytest.approx(fake_embedding(text, len(row["embedding"])), abs=1e-6)

    for row in await rows(app, select(entities).where(entities.c.project_id == project_id)):
        check(row["key"], row, entity_embedding_text(row["name"], row["description"]))
    names = {r["key"]: r["name"] for r in await rows(app, select(entities.c.key, entities.c.name))}
    for row in await rows(app, select(relations).where(relations.c.project_id == project_id)):
        check(
            f"{row['src_key']}~{row['tgt_key']}",
            row,
            relation_embedding_text(names[row["src_key"]], names[row["tgt_key"]], row["keywords"], row["description"]),
        )


@pytest.mark.parametrize("b_fails_in", ["summary", "embedding"])
async def test_item_skipped_for_a_later_writer_that_fails_is_embedded(make_settings, start_app, fake_llm, b_fails_in):
    """A skips embedding Kai because B merged Kai after it; B then fails before its embeddings are written.
    Every item, Kai included, must still end with the embedding of its current text (B, failing, embeds
    the stored text of what it was the last writer of)."""
    import threading

    from tests.support.fakes.openai_server import default_extract, default_summary

    app = await start_app(
        make_settings(force_llm_summary_on_merge=2, max_parallel_insert=2, llm_max_retries=0, embedding_max_retries=0)
    )
    await app.http.post("/projects", json={"id": "p", "settings": PARAGRAPHS})
    a_summarising, b_summarising, go_a, go_b = (threading.Event() for _ in range(4))

    async def extract(messages):  # B extracts only once A has merged and is summarising Ola
        if "Max" in chunk_text(messages):
            await asyncio.to_thread(a_summarising.wait, 10)
        return default_extract(messages)

    async def summary(messages):
        content = messages[-1]["content"]
        if "Ola rows" in content:  # A, after its merge: held until B has merged Kai
            a_summarising.set()
            await asyncio.to_thread(go_a.wait, 10)
            return default_summary(messages)
        b_summarising.set()  # B summarising Kai (A's and B's fragments), after its merge
        await asyncio.to_thread(go_b.wait, 10)
        if b_fails_in == "summary":
            raise RuntimeError("model crashed")
        return default_summary(messages)

    fake_llm.handlers.update(extract=extract, summary=summary)
    try:
        response = await app.http.post(
            "/documents",
            json={
                "project_id": "p",
                "documents": [{"text": "Kai met Lea.\n\nOla rows.\n\nOla runs."}, {"text": "Kai met Max."}],
            },
        )
        a_id, b_id = (d["id"] for d in response.json()["documents"])
        assert await asyncio.to_thread(b_summarising.wait, 10)  # B merged Kai after A did
        go_a.set()
        ingestion = IngestionService(app.container)
        done, states = await ingestion.wait_until_done("p", [a_id], limit=30)
        assert done and states[a_id].status == "processed"  # A finished without embedding Kai (B rewrote it)
        if b_fails_in == "embedding":
            fake_llm.fail_next_embeddings(1)  # B's next embedding call is its graph embedding
        go_b.set()
        done, states = await ingestion.wait_until_done("p", [b_id], limit=30)
        assert done and states[b_id].status == "failed"
    finally:
        for gate in (a_summarising, go_a, go_b):
            gate.set()
    if b_fails_in == "summary":
        assert fragments((await entity(app, "kai", "p"))["description"]) == ["Kai met Lea.", "Kai met Max."]
    else:
        assert (await entity(app, "kai", "p"))["description"].startswith("Summary:")
    await _assert_vectors_match_current_text(app, "p")
