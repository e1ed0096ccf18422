"""Every export format shows each entity's aliases: each name once, oldest first, an empty list without."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from app.domain.aliases import AliasItem
from app.domain.names import entity_key
from app.domain.resolution import index_key
from app.repositories import aliases as alias_repo
from tests.export.test_export import get_export, load_xlsx, md_tables, read_csv_member, split_sep
from tests.support.curation import seed_graph

PROJECT = "default"
ALIASES = ["Kessara RI", "KRI, the institute", "=KRI"]  # a comma, and text that must not become a formula


@pytest.fixture
async def seeded(app_client):
    async with app_client.container.db.transaction() as conn:
        await seed_graph(
            conn,
            docs={"d1": ["c1"]},
            ents=[
                ("Kessara Research Institute", "organization", "A marine institute.", ["c1"]),
                ("Port Halden", "location", "A harbour town.", ["c1"]),
            ],
        )
    key = entity_key("Kessara Research Institute")
    for alias in ALIASES:  # one at a time, so their order of creation is theirs
        async with app_client.container.db.transaction() as conn:
            await alias_repo.add_aliases(conn, PROJECT, key, [AliasItem(entity_key(alias), alias, "manual")])
    async with app_client.container.db.transaction() as conn:  # the same name scoped to a document: listed once
        await alias_repo.add_aliases(
            conn, PROJECT, key, [AliasItem(entity_key("KRI"), "Kessara RI", "acronym", document_id="d1", scoped=True)]
        )
        # the resolution's internal match-key index rows are no aliases
        await alias_repo.add_aliases(
            conn, PROJECT, key, [AliasItem(index_key("kessara research"), "Kessara Research Institute", "rule")]
        )
    return app_client.http


WANT = {"Kessara Research Institute": ALIASES, "Port Halden": []}


async def test_json_lists_aliases(seeded):
    body = (await get_export(seeded, "json", PROJECT)).json()
    assert {e["name"]: e["aliases"] for e in body["entities"]} == WANT


async def test_csv_and_xlsx_have_an_aliases_column(seeded):
    archive = zipfile.ZipFile(io.BytesIO((await get_export(seeded, "csv", PROJECT)).content))
    got = {r["name"]: r["aliases"] for r in read_csv_member(archive, "entities.csv")}
    assert {k: split_sep(v) for k, v in got.items()} == WANT

    sheet = load_xlsx((await get_export(seeded, "xlsx", PROJECT)).content)["Entities"]
    header = [c.value for c in sheet[1]]
    column = header.index("aliases")
    cells = {row[0]: row[column] or "" for row in sheet.iter_rows(min_row=2, values_only=True)}
    assert split_sep(cells["Kessara Research Institute"]) == ALIASES
    assert cells["Port Halden"] == ""


async def test_markdown_and_text_show_aliases(seeded):
    tables = md_tables((await get_export(seeded, "md", PROJECT)).text)
    got = {r["name"]: r["aliases"] for r in tables["Entities"]}
    assert got == {"Kessara Research Institute": "\n".join(ALIASES), "Port Halden": ""}

    body = (await get_export(seeded, "txt", PROJECT)).text
    assert "Kessara Research Institute\n  type: organization\n  aliases: " + ", ".join(ALIASES) + "\n" in body
    assert "Port Halden\n  type: location\n  aliases:\n" in body


async def test_json_with_vectors_keeps_the_aliases(seeded):
    body = json.loads((await get_export(seeded, "json", PROJECT, include_vectors=True)).content)
    assert {e["name"]: e["aliases"] for e in body["entities"]} == WANT
