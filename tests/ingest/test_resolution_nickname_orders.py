"""People written by a short form of their given name, family name first with a comma, or by a short surname
alone in one document and in full in another end as one node in either ingestion order (app/domain/
name_nicknames.py, name_matching.given_names_first, name_variants.lone_word); a look-alike given name that
is a name of its own stays another person in either order."""

from __future__ import annotations

import pytest

from tests.ingest.test_pipeline import ingest
from tests.ingest.test_resolution_ingest import graph, install
from tests.ingest.test_resolution_spelling_orders import quoted_person_doc


async def _people(app, fake_llm, short: str, full: str, short_first: bool) -> set[str]:
    install(
        fake_llm, {"short doc": quoted_person_doc(short, "short doc"), "full doc": quoted_person_doc(full, "full doc")}
    )
    for marker in ("short doc", "full doc") if short_first else ("full doc", "short doc"):
        [doc] = await ingest(app, [marker])
        assert doc["status"] == "processed"
    keys, _ = await graph(app)
    return {k for k in keys if not k.startswith("clerk ")}


@pytest.mark.parametrize("short_first", [True, False], ids=["short first", "full first"])
@pytest.mark.parametrize(
    ("short", "full"),
    [
        ("Emeka Okoye", "Chukwuemeka Okoye"),
        ("Kariuki, A. K.", "Amani K. Kariuki"),
        ("Ødvik, S. T.", "Sølve T. Ødvik"),  # keys keep the "ø" that folding reads "o"
        ("Hu", "Meilin Hu"),
    ],
    ids=["clipped given name", "family name first", "family name first, not ASCII", "short surname"],
)
async def test_a_short_form_and_the_full_name_give_one_node(
    make_settings, start_app, fake_llm, short, full, short_first
):
    app = await start_app(make_settings())
    nodes = await _people(app, fake_llm, short, full, short_first)
    assert len(nodes) == 1, nodes


@pytest.mark.parametrize("short_first", [True, False], ids=["short first", "full first"])
async def test_a_given_name_of_its_own_stays_another_person(make_settings, start_app, fake_llm, short_first):
    app = await start_app(make_settings())
    nodes = await _people(app, fake_llm, "Bella Harrow", "Isabella Harrow", short_first)
    assert nodes == {"bella harrow", "isabella harrow"}


@pytest.mark.parametrize("short_first", [True, False], ids=["short first", "full first"])
async def test_initials_family_name_first_of_another_given_name_stay_apart(
    make_settings, start_app, fake_llm, short_first
):
    app = await start_app(make_settings())
    nodes = await _people(app, fake_llm, "Ødvik, K. T.", "Sølve T. Ødvik", short_first)
    assert nodes == {"ødvik, k. t.", "sølve t. ødvik"}
