"""Graph export: every format parses back with a standard reader and holds every entity and relation with
exact text (unicode, commas, quotes, newlines, a 40,000-character description, formula-looking text)."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import tempfile
import zipfile

import openpyxl
import pytest
from sqlalchemy import delete, insert

from app.db.tables import chunks, documents, entities, projects, relations
from app.domain.names import entity_key, sorted_pair
from app.domain.texts import SEP, readable
from app.services.export import ExportDownload, ExportFormat, ExportOptions, ExportService
from app.services.export.cells import EXCEL_CELL_LIMIT, fit_excel_cell, neutralise
from app.services.export.gate import ExportGate
from app.web.downloads import SEND_SLICE, ExportResponse
from tests.support.database import TEST_DIM

PROJECT = "gx"
LONG = ('Lorem ipsum, "quoted" dolor;\nsit amet — ünïcödé 🚀 ' * 1000)[:40_000]

# name, type, raw stored description (fragments joined by <SEP>), source ids, file paths
ENTITIES = [
    (
        "Zoë Ångström",
        "PERSON",
        f'Physicist, born in Uppsala{SEP}Said "hello", then left\nLine two',
        ["chunk-a", "chunk-b"],
        ["docs/zoë, notes.txt"],
    ),
    (
        "東京 Tower 🚀",
        "LOCATION",
        'Tall, red; "iconic"\r\nlandmark | pipes & <tags> <br> `code` \\ end',
        ["chunk-a"],
        ["docs/tokyo.md"],
    ),
    ("=SUM(A1:A9)", "FORMULA", "+cmd|' /C calc'!A0", ["chunk-b"], []),
    ("@mention", "ORG", "-negative start\n=also a formula", ["chunk-b"], ["x.txt", "y.txt"]),
    ("Long One", "CONCEPT", LONG, ["chunk-a"], ["long.txt"]),
    ("Tabbed", "THING", "\tindented start", [], []),
]
# source, target, keywords, raw description, weight
RELATIONS = [
    ("Zoë Ångström", "東京 Tower 🚀", "visit, travel", f'Visited, "twice"\nand more{SEP}Second fragment', 2.5),
    ("=SUM(A1:A9)", "@mention", "=danger", "-5 points", 1.0),
    ("Long One", "Zoë Ångström", "long", LONG, 0.75),
]
CHUNKS = [
    ("chunk-a", 0, 'First chunk, with "quotes"\nand a newline | pipe'),
    ("chunk-b", 1, "=cmd() second chunk 東京"),
]


def vector(seed: int) -> list[float]:
    """Values exactly representable in float32, so a round trip can be compared exactly."""
    return [((seed * 31 + j) % 17) / 8.0 - 1.0 for j in range(TEST_DIM)]


def sheet_text(value: str) -> str:
    """csv/xlsx neutralise formula-looking text with a leading apostrophe (stated here independently)."""
    return "'" + value if value and value[0] in "=+-@\t\r" else value


def expected_entities() -> list[dict]:
    degree = {entity_key(n): 0 for n, *_ in ENTITIES}
    for src, tgt, *_ in RELATIONS:
        degree[entity_key(src)] += 1
        degree[entity_key(tgt)] += 1
    rows = [
        {
            "name": n,
            "type": t,
            "aliases": [],
            "description": readable(d),
            "source_ids": s,
            "file_paths": f,
            "degree": degree[entity_key(n)],
            "vector": vector(i),
        }
        for i, (n, t, d, s, f) in enumerate(ENTITIES)
    ]
    return sorted(rows, key=lambda r: r["name"])


def expected_relations() -> list[dict]:
    rows = []
    for i, (a, b, kw, d, w) in enumerate(RELATIONS):
        names = {entity_key(a): a, entity_key(b): b}
        src, tgt = sorted_pair(entity_key(a), entity_key(b))
        rows.append(
            {
                "source": names[src],
                "target": names[tgt],
                "keywords": kw,
                "description": readable(d),
                "weight": w,
                "source_ids": ["chunk-a"],
                "file_paths": ["a.txt"],
                "vector": vector(100 + i),
            }
        )
    return sorted(rows, key=lambda r: (r["source"], r["target"]))


async def seed(db, project_id: str = PROJECT) -> None:
    async with db.transaction() as conn:
        await conn.execute(insert(projects).values(id=project_id, name=project_id))
        await conn.execute(
            insert(documents).values(
                project_id=project_id,
                id="doc-1",
                status="processed",
                content="x",
                content_hash="h",
                content_length=1,
                file_path="a.txt",
            )
        )
        await conn.execute(
            insert(chunks),
            [
                {
                    "project_id": project_id,
                    "id": cid,
                    "document_id": "doc-1",
                    "order_index": order,
                    "tokens": 7,
                    "start_token": 0,
                    "end_token": 7,
                    "content": content,
                    "file_path": "a.txt",
                    "embedding": vector(50 + order),
                }
                for cid, order, content in CHUNKS
            ],
        )
        await conn.execute(
            insert(entities),
            [
                {
                    "project_id": project_id,
                    "key": entity_key(n),
                    "name": n,
                    "entity_type": t,
                    "description": d,
                    "source_ids": s,
                    "file_paths": f,
                    "embedding": vector(i),
                }
                for i, (n, t, d, s, f) in enumerate(ENTITIES)
            ],
        )
        rows = []
        for i, (a, b, kw, d, w) in enumerate(RELATIONS):
            src, tgt = sorted_pair(entity_key(a), entity_key(b))
            rows.append(
                {
                    "project_id": project_id,
                    "src_key": src,
                    "tgt_key": tgt,
                    "keywords": kw,
                    "description": d,
                    "weight": w,
                    "source_ids": ["chunk-a"],
                    "file_paths": ["a.txt"],
                    "embedding": vector(100 + i),
                }
            )
        await conn.execute(insert(relations), rows)


@pytest.fixture
async def seeded(app_client):
    await seed(app_client.container.db)
    return app_client.http


async def get_export(client, fmt: str, project_id: str = PROJECT, **flags):
    params = {"project_id": project_id, "format": fmt, **{k: str(v).lower() for k, v in flags.items()}}
    response = await client.get("/export", params=params)
    assert response.status_code == 200, response.text
    return response


# ---------------------------------------------------------------- csv (zip of RFC 4180 files)


def read_csv_member(archive: zipfile.ZipFile, name: str) -> list[dict]:
    with archive.open(name) as member:
        return list(csv.DictReader(io.TextIOWrapper(member, encoding="utf-8", newline="")))


def split_sep(value: str) -> list[str]:
    return value.split(SEP) if value else []


async def test_csv_zip_round_trips_every_entity_and_relation(seeded):
    response = await get_export(seeded, "csv")
    assert response.headers["content-type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert archive.testzip() is None
    assert sorted(archive.namelist()) == ["entities.csv", "relations.csv"]
    raw = archive.read("entities.csv")
    assert raw.startswith(b"name,type,aliases,description,source_ids,file_paths,degree\r\n")

    got = read_csv_member(archive, "entities.csv")
    assert len(got) == len(ENTITIES)
    for row, want in zip(got, expected_entities(), strict=True):
        assert row["name"] == sheet_text(want["name"])
        assert row["type"] == want["type"]
        assert row["description"] == sheet_text(want["description"])
        assert split_sep(row["source_ids"]) == want["source_ids"]
        assert split_sep(row["file_paths"]) == want["file_paths"]
        assert int(row["degree"]) == want["degree"]
        assert "vector" not in row

    got = read_csv_member(archive, "relations.csv")
    for row, want in zip(got, expected_relations(), strict=True):
        assert row["source"] == sheet_text(want["source"])
        assert row["target"] == sheet_text(want["target"])
        assert row["keywords"] == sheet_text(want["keywords"])
        assert row["description"] == sheet_text(want["description"])
        assert float(row["weight"]) == want["weight"]
        assert split_sep(row["source_ids"]) == want["source_ids"]
    assert len(got) == len(RELATIONS)


async def test_csv_with_vectors_and_chunks(seeded):
    archive = zipfile.ZipFile(
        io.BytesIO((await get_export(seeded, "csv", include_vectors=True, include_chunks=True)).content)
    )
    assert sorted(archive.namelist()) == ["chunks.csv", "entities.csv", "relations.csv"]
    for row, want in zip(read_csv_member(archive, "entities.csv"), expected_entities(), strict=True):
        assert json.loads(row["vector"]) == want["vector"]
    for row, want in zip(read_csv_member(archive, "relations.csv"), expected_relations(), strict=True):
        assert json.loads(row["vector"]) == want["vector"]
    got = read_csv_member(archive, "chunks.csv")
    assert [
        (r["id"], r["document_id"], int(r["order"]), int(r["tokens"]), r["content"], r["file_path"]) for r in got
    ] == [(c, "doc-1", o, 7, sheet_text(t), "a.txt") for c, o, t in CHUNKS]
    assert [len(json.loads(r["vector"])) for r in got] == [TEST_DIM, TEST_DIM]


# ---------------------------------------------------------------- xlsx


def load_xlsx(body: bytes) -> openpyxl.Workbook:
    return openpyxl.load_workbook(io.BytesIO(body))


def cell(value) -> str:
    return "" if value is None else value


def check_truncated(value: str, want: str) -> None:
    assert len(value.encode("utf-16-le")) // 2 <= EXCEL_CELL_LIMIT
    assert value.endswith(
        f" …[truncated: cell limit {EXCEL_CELL_LIMIT} of {len(want.encode('utf-16-le')) // 2} characters]"
    )
    kept = value[: value.rindex(" …[truncated")]
    assert len(kept) > 30_000 and want.startswith(kept)


async def test_xlsx_round_trips_with_styled_frozen_header_and_truncation(seeded):
    response = await get_export(seeded, "xlsx")
    assert response.headers["content-type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    book = load_xlsx(response.content)
    assert book.sheetnames == ["Entities", "Relations"]
    sheet = book["Entities"]
    assert sheet.freeze_panes == "A2"
    assert [c.value for c in sheet[1]] == [
        "name",
        "type",
        "aliases",
        "description",
        "source_ids",
        "file_paths",
        "degree",
    ]
    assert all(c.font.b for c in sheet[1])
    assert sheet.column_dimensions["D"].width > sheet.column_dimensions["G"].width

    rows = list(sheet.iter_rows(min_row=2))
    assert len(rows) == len(ENTITIES)
    for row, want in zip(rows, expected_entities(), strict=True):
        name, etype, aliases, desc, sources, paths, degree = (cell(c.value) for c in row)
        assert split_sep(aliases) == want["aliases"]
        assert name == sheet_text(want["name"])
        assert etype == want["type"]
        if len(want["description"]) > EXCEL_CELL_LIMIT // 2:
            check_truncated(desc, want["description"])
        else:
            assert desc == one_newline_style(sheet_text(want["description"]))
        assert split_sep(sources) == want["source_ids"]
        assert split_sep(paths) == want["file_paths"]
        assert degree == want["degree"]
        assert all(c.data_type != "f" for c in row)  # nothing became a formula

    rows = list(book["Relations"].iter_rows(min_row=2, values_only=True))
    assert len(rows) == len(RELATIONS)
    for row, want in zip(rows, expected_relations(), strict=True):
        source, target, keywords, desc, weight, sources, _paths = (cell(v) for v in row)
        assert (source, target, keywords) == (
            sheet_text(want["source"]),
            sheet_text(want["target"]),
            sheet_text(want["keywords"]),
        )
        if len(want["description"]) > EXCEL_CELL_LIMIT // 2:
            check_truncated(desc, want["description"])
        else:
            assert desc == one_newline_style(sheet_text(want["description"]))
        assert weight == want["weight"]
        assert split_sep(sources) == want["source_ids"]


async def test_xlsx_with_vectors_and_chunks(seeded):
    book = load_xlsx((await get_export(seeded, "xlsx", include_vectors=True, include_chunks=True)).content)
    assert book.sheetnames == ["Entities", "Relations", "Chunks"]
    entity_rows = list(book["Entities"].iter_rows(min_row=2, values_only=True))
    assert [json.loads(r[-1]) for r in entity_rows] == [e["vector"] for e in expected_entities()]
    relation_rows = list(book["Relations"].iter_rows(min_row=2, values_only=True))
    assert [json.loads(r[-1]) for r in relation_rows] == [r["vector"] for r in expected_relations()]
    chunk_rows = list(book["Chunks"].iter_rows(min_row=2, values_only=True))
    assert [r[:6] for r in chunk_rows] == [(c, "doc-1", o, 7, sheet_text(t), "a.txt") for c, o, t in CHUNKS]
    assert all(len(json.loads(r[6])) == TEST_DIM for r in chunk_rows)


# ---------------------------------------------------------------- json


async def test_json_round_trips_exactly(seeded):
    response = await get_export(seeded, "json")
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["project"] == PROJECT
    assert body["counts"] == {"entities": len(ENTITIES), "relations": len(RELATIONS)}
    assert "chunks" not in body
    strip = [{k: v for k, v in e.items() if k != "vector"} for e in expected_entities()]
    assert body["entities"] == strip
    assert body["relations"] == [{k: v for k, v in r.items() if k != "vector"} for r in expected_relations()]
    assert any(len(e["description"]) == 40_000 for e in body["entities"])


async def test_json_with_vectors_and_chunks(seeded):
    body = (await get_export(seeded, "json", include_vectors=True, include_chunks=True)).json()
    assert body["entities"] == expected_entities()
    assert body["relations"] == expected_relations()
    assert body["chunks"] == [
        {
            "id": c,
            "document_id": "doc-1",
            "order": o,
            "tokens": 7,
            "content": t,
            "file_path": "a.txt",
            "vector": vector(50 + o),
        }
        for c, o, t in CHUNKS
    ]


# ---------------------------------------------------------------- markdown


def md_unescape(text: str) -> str:
    return "\n".join(
        re.sub(r"\\(.)|&(amp|lt|gt);", lambda m: m.group(1) or {"amp": "&", "lt": "<", "gt": ">"}[m.group(2)], part)
        for part in text.split("<br>")
    )


def md_row(line: str) -> list[str]:
    assert line.startswith("| ") and line.endswith(" |")
    inner, cells, current, i = line[2:-2], [], "", 0
    while i < len(inner):
        if inner[i] == "\\":
            current += inner[i : i + 2]
            i += 2
        elif inner.startswith(" | ", i):
            cells.append(current)
            current, i = "", i + 3
        else:
            current += inner[i]
            i += 1
    return [*cells, current]


def md_tables(body: str) -> dict[str, list[dict]]:
    tables: dict[str, list[dict]] = {}
    for part in body.split("\n## ")[1:]:
        title, _, rest = part.partition("\n\n")
        lines = [ln for ln in rest.splitlines() if ln.startswith("|")]
        header = md_row(lines[0])
        assert set(lines[1].replace(" ", "")) <= set("|-:")
        tables[title] = [dict(zip(header, (md_unescape(c) for c in md_row(ln)), strict=True)) for ln in lines[2:]]
    return tables


def one_newline_style(text: str) -> str:
    return re.sub(r"\r\n|\r", "\n", text)


async def test_markdown_tables_hold_exact_text(seeded):
    response = await get_export(seeded, "md", include_vectors=True)
    assert response.headers["content-type"] == "text/markdown; charset=utf-8"
    body = response.text
    assert body.startswith(f"# Knowledge graph export: {PROJECT}\n")
    tables = md_tables(body)
    assert list(tables) == ["Entities", "Relations"]
    for row, want in zip(tables["Entities"], expected_entities(), strict=True):
        assert row["name"] == want["name"]
        assert row["description"] == one_newline_style(want["description"])
        assert split_lines(row["source_ids"]) == want["source_ids"]
        assert split_lines(row["file_paths"]) == want["file_paths"]
        assert int(row["degree"]) == want["degree"]
        assert json.loads(row["vector"]) == want["vector"]
    assert len(tables["Entities"]) == len(ENTITIES)
    for row, want in zip(tables["Relations"], expected_relations(), strict=True):
        assert (row["source"], row["target"], row["keywords"]) == (want["source"], want["target"], want["keywords"])
        assert row["description"] == one_newline_style(want["description"])
        assert float(row["weight"]) == want["weight"]
    assert len(tables["Relations"]) == len(RELATIONS)


def split_lines(value: str) -> list[str]:
    return value.split("\n") if value else []


# ---------------------------------------------------------------- txt


def txt_field(label: str, value: str) -> str:
    lines = value.splitlines()
    if len(lines) > 1:
        return f"  {label}:\n" + "\n".join("    " + ln for ln in lines)
    return f"  {label}: {value}".rstrip()


async def test_text_blocks_hold_every_entity_and_relation(seeded):
    response = await get_export(seeded, "txt", include_chunks=True)
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    body = response.text
    assert body.startswith(f"Knowledge graph export of project {PROJECT}: 6 entities, 3 relations, 2 chunks\n")
    for want in expected_entities():
        block = "\n".join(
            [
                want["name"],
                txt_field("type", want["type"]),
                txt_field("aliases", ", ".join(want["aliases"])),
                txt_field("description", want["description"]),
                txt_field("source_ids", ", ".join(want["source_ids"])),
                txt_field("file_paths", ", ".join(want["file_paths"])),
                txt_field("degree", str(want["degree"])),
            ]
        )
        assert f"\n{block}\n\n" in body, want["name"]
    for want in expected_relations():
        head = f"\n{want['source']} — {want['target']}\n{txt_field('keywords', want['keywords'])}\n"
        assert head + txt_field("description", want["description"]) + "\n" in body
    assert "\nchunk-a\n  document_id: doc-1\n  order: 0\n" in body


# ---------------------------------------------------------------- errors, names, empty projects


async def test_unknown_format_is_422_and_unknown_project_404(client):
    response = await client.get("/export", params={"format": "pdf"})
    assert response.status_code == 422
    assert response.json()["code"] == "validation_error"
    response = await client.get("/export", params={"project_id": "nope", "format": "json"})
    assert response.status_code == 404
    assert response.json()["code"] == "project_not_found"
    assert (await client.get("/export", params={"project_id": "Bad Id"})).status_code == 422
    assert (await client.get("/export", params={"include_vectors": "maybe"})).status_code == 422


@pytest.mark.parametrize(
    ("fmt", "name"),
    [
        ("csv", "gx-graph.zip"),
        ("xlsx", "gx-graph.xlsx"),
        ("md", "gx-graph.md"),
        ("txt", "gx-graph.txt"),
        ("json", "gx-graph.json"),
    ],
)
async def test_content_disposition_names_the_file(seeded, fmt, name):
    response = await get_export(seeded, fmt)
    assert response.headers["content-disposition"] == f'attachment; filename="{name}"'


async def test_default_format_is_csv_of_default_project(client):
    response = await client.get("/export")
    assert response.status_code == 200
    assert response.headers["content-disposition"] == 'attachment; filename="default-graph.zip"'


async def test_empty_project_gives_a_valid_empty_file_in_every_format(client):
    assert (await client.post("/projects", json={"id": "empty"})).status_code == 201
    fetch = {
        fmt.value: (await get_export(client, fmt.value, "empty", include_chunks=True)).content for fmt in ExportFormat
    }

    archive = zipfile.ZipFile(io.BytesIO(fetch["csv"]))
    assert archive.read("entities.csv") == b"name,type,aliases,description,source_ids,file_paths,degree\r\n"
    assert read_csv_member(archive, "relations.csv") == [] and read_csv_member(archive, "chunks.csv") == []

    book = load_xlsx(fetch["xlsx"])
    assert book.sheetnames == ["Entities", "Relations", "Chunks"]
    assert all(book[s].max_row == 1 for s in book.sheetnames)

    assert json.loads(fetch["json"]) == {
        "project": "empty",
        "counts": {"entities": 0, "relations": 0, "chunks": 0},
        "entities": [],
        "relations": [],
        "chunks": [],
    }
    assert md_tables(fetch["md"].decode()) == {"Entities": [], "Relations": [], "Chunks": []}
    assert fetch["txt"].decode().count("(none)") == 3


async def test_projects_are_isolated(app_client):
    await seed(app_client.container.db, "other")
    assert (await app_client.http.post("/projects", json={"id": "mine"})).status_code == 201
    body = (await get_export(app_client.http, "json", "mine", include_chunks=True)).json()
    assert body["entities"] == [] and body["relations"] == [] and body["chunks"] == []


async def test_items_not_embedded_yet_export_a_null_vector(app_client):
    async with app_client.container.db.transaction() as conn:
        await conn.execute(insert(projects).values(id="nv", name="nv"))
        await conn.execute(insert(entities).values(project_id="nv", key="a", name="A", description="d"))
    body = (await get_export(app_client.http, "json", "nv", include_vectors=True)).json()
    assert body["entities"] == [
        {
            "name": "A",
            "type": "UNKNOWN",
            "aliases": [],
            "description": "d",
            "source_ids": [],
            "file_paths": [],
            "degree": 0,
            "vector": None,
        }
    ]
    response = await get_export(app_client.http, "csv", "nv", include_vectors=True)
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert read_csv_member(archive, "entities.csv")[0]["vector"] == ""


async def test_scoped_api_key_cannot_export_another_project(start_app, make_settings):
    app = await start_app(make_settings(api_keys=["scoped:gx"]))
    await seed(app.container.db)
    auth = {"Authorization": "Bearer scoped"}
    assert (
        await app.http.get("/export", params={"project_id": "gx", "format": "json"}, headers=auth)
    ).status_code == 200
    denied = await app.http.get("/export", params={"project_id": "default", "format": "json"}, headers=auth)
    assert denied.status_code == 403
    assert (await app.http.get("/export", params={"project_id": "gx"})).status_code == 401


# ---------------------------------------------------------------- streaming behaviour (service level)


async def test_small_batches_hold_no_connection_between_batches(start_app, make_settings):
    """Keyset pages of 2 rows see every row once, and no pooled connection is checked out while the body
    waits for its reader: a client that stops reading holds none. So a row written or deleted ahead of the
    cursor mid-export shows as it is when its page is read."""
    app = await start_app(make_settings(worker_enabled=False))  # nothing else borrows connections
    db = app.container.db
    await seed(db)
    service = ExportService(app.container, batch_size=2)
    download = await service.download(PROJECT, ExportOptions(ExportFormat.json, include_chunks=True))
    parts = []
    async for part in download.body:
        parts.append(part)
        assert db.engine.pool.checkedout() == 0
        if b'"name"' in part and len([p for p in parts if b'"name"' in p]) == 1:  # first entity batch
            async with db.transaction() as conn:
                await conn.execute(
                    delete(entities).where(entities.c.project_id == PROJECT, entities.c.key == entity_key("Tabbed"))
                )
                await conn.execute(insert(entities).values(project_id=PROJECT, key="zzz", name="Zzz"))
    body = json.loads(b"".join(parts))
    names = [e["name"] for e in body["entities"]]
    assert sorted(names) == sorted([e["name"] for e in expected_entities() if e["name"] != "Tabbed"] + ["Zzz"])
    assert body["counts"]["entities"] == len(ENTITIES)  # counted when the export started
    assert len(body["relations"]) == len(RELATIONS) and len(body["chunks"]) == len(CHUNKS)


async def test_export_slot_is_freed_when_a_download_ends(start_app, make_settings):
    app = await start_app(make_settings(export_max_concurrent=1))
    await seed(app.container.db)
    assert (await app.http.get("/export", params={"project_id": "nope"})).status_code == 404
    for fmt in ("json", "xlsx", "csv"):
        await get_export(app.http, fmt)
    assert app.app.state.export_gate.active == 0


async def test_xlsx_temp_files_are_removed_even_when_abandoned(app_client, monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    db = app_client.container.db
    await seed(db)
    service = ExportService(app_client.container)
    finished = await service.download(PROJECT, ExportOptions(ExportFormat.xlsx))
    assert zipfile.ZipFile(io.BytesIO(b"".join([p async for p in finished.body]))).testzip() is None
    assert list(tmp_path.iterdir()) == []

    abandoned = await service.download(PROJECT, ExportOptions(ExportFormat.xlsx))
    await anext(abandoned.body)
    await abandoned.body.aclose()
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- delivery (ASGI level)


def _download(*parts: bytes) -> ExportDownload:
    async def body():
        for part in parts:
            yield part

    return ExportDownload("x.json", "application/json", body())


async def _never_disconnects() -> dict:
    await asyncio.Event().wait()
    return {"type": "http.disconnect"}


HTTP_SCOPE = {"type": "http", "asgi": {"spec_version": "2.3"}}


async def test_big_batches_are_sent_in_slices_and_the_slot_is_freed():
    gate = ExportGate(1)
    assert gate.try_enter() and not gate.try_enter()
    sent = []

    async def send(message):
        sent.append(message)

    big = bytes(range(256)) * (SEND_SLICE // 128) + b"tail"  # two slices and a bit
    await ExportResponse(_download(b"head", big), gate, send_timeout=5)(HTTP_SCOPE, _never_disconnects, send)
    bodies = [m["body"] for m in sent if m["type"] == "http.response.body"]
    assert [len(b) for b in bodies] == [4, SEND_SLICE, SEND_SLICE, 4, 0]
    assert b"".join(bodies) == b"head" + big
    assert gate.active == 0


async def test_a_client_that_takes_nothing_is_dropped_after_the_send_timeout():
    gate = ExportGate(1)
    gate.try_enter()
    closed = asyncio.Event()

    async def body():
        try:
            yield b"first"
            yield b"never sent"
        finally:
            closed.set()

    async def stalled_send(message):
        if message.get("body"):
            await asyncio.Event().wait()  # the client stopped reading

    download = ExportDownload("x.json", "application/json", body())
    await asyncio.wait_for(
        ExportResponse(download, gate, send_timeout=0.05)(HTTP_SCOPE, _never_disconnects, stalled_send), timeout=10
    )
    assert gate.active == 0 and closed.is_set()


# ---------------------------------------------------------------- cell helpers


def test_neutralise_prefixes_only_formula_triggers():
    for text in ["=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "\r=1"]:
        assert neutralise(text) == "'" + text
    for text in ["", "plain", "1-2", "'quoted", "[0.5]"]:
        assert neutralise(text) == text


def test_fit_excel_cell_counts_utf16_units_and_never_splits_a_character():
    assert fit_excel_cell("a" * EXCEL_CELL_LIMIT) == "a" * EXCEL_CELL_LIMIT
    emoji = "🚀" * 20_000  # 40,000 UTF-16 units
    cut = fit_excel_cell(emoji)
    assert len(cut.encode("utf-16-le")) // 2 <= EXCEL_CELL_LIMIT
    kept = cut[: cut.rindex(" …[truncated")]
    assert set(kept) == {"🚀"}
    assert cut.endswith("of 40000 characters]")
