"""A hyphenated surname or root written alone, and a plain root alone, give the same nodes in every ingestion order:
with one full name of those parts the short form joins it; with two, it stays alone, and a merge made while one
was the only fit is undone when the second arrives (as in the order where the second came first)."""

from __future__ import annotations

import itertools

import pytest

from tests.ingest.test_resolution_shape_orders import DOCS, _nodes  # three documents, each naming one form

ONE = {
    "person": ("Dr. Lloyd-Pryce", "Bethan Lloyd-Pryce", "Harbour Quell"),
    "organization": ("Lindqvist-Berg", "Lindqvist-Berg Maritime AB", "Harbour Quell Ltd"),
}
TWO = {
    "person": ("Dr. Lloyd-Pryce", "Bethan Lloyd-Pryce", "Owain Lloyd-Pryce"),
    "organization": ("Lindqvist-Berg", "Lindqvist-Berg Maritime AB", "Lindqvist-Berg Holdings"),
}


@pytest.mark.parametrize("etype", sorted(ONE))
@pytest.mark.parametrize("order", list(itertools.permutations(DOCS)), ids=lambda o: " > ".join(o))
async def test_one_full_name_of_the_parts_takes_the_short_form_in_every_order(
    make_settings, start_app, fake_llm, etype, order
):
    app = await start_app(make_settings())
    short, full, other = ONE[etype]
    nodes = await _nodes(app, fake_llm, dict(zip(DOCS, ONE[etype], strict=True)), etype, order)
    assert nodes == {full.casefold(), other.casefold()}, short


@pytest.mark.parametrize("etype", sorted(TWO))
@pytest.mark.parametrize("order", list(itertools.permutations(DOCS)), ids=lambda o: " > ".join(o))
async def test_two_full_names_of_the_parts_leave_the_short_form_alone_in_every_order(
    make_settings, start_app, fake_llm, etype, order
):
    app = await start_app(make_settings())
    nodes = await _nodes(app, fake_llm, dict(zip(DOCS, TWO[etype], strict=True)), etype, order)
    assert nodes == {n.casefold() for n in TWO[etype]}


PLAIN = ("Lindqvist", "Lindqvist Maritime AB", "Lindqvist Holdings")


@pytest.mark.parametrize("order", list(itertools.permutations(DOCS)), ids=lambda o: " > ".join(o))
async def test_a_root_alone_merged_before_a_second_fit_arrived_is_undone_in_every_order(
    make_settings, start_app, fake_llm, order
):
    """A root's merge made across documents is recorded under its rule ("root"), so the ambiguity check after a
    later document finds it (it was recorded as "rule", and the short form stayed in whichever company came
    first)."""
    app = await start_app(make_settings())
    nodes = await _nodes(app, fake_llm, dict(zip(DOCS, PLAIN, strict=True)), "organization", order)
    assert nodes == {n.casefold() for n in PLAIN}
