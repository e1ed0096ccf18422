"""The nickname shape study (bench/nickname_shape_bench.py): the structural rule reads the issue's split nicknames
as short forms and leaves its named dangers apart, yet the same shape joins names of two people, which is why it
stays out of the service; the scoring counts a small gold by hand. No database."""

from __future__ import annotations

import pytest

from app.domain.name_variants import confusable
from bench.nickname_shape_bench import DANGERS, TARGETS, VARIANTS, Shape, either_way, load_gold, score, shortened

BROAD = VARIANTS["broad: any ending, prefix or inside"]


@pytest.mark.parametrize(("short", "formal"), TARGETS)
def test_the_broad_shape_reads_each_split_nickname_as_a_short_form(short, formal):
    assert shortened(short, formal, BROAD) and not shortened(formal, short, BROAD)


@pytest.mark.parametrize(("a", "b"), DANGERS)
def test_the_issue_s_named_dangers_stay_apart_in_every_variant(a, b):
    for shape in VARIANTS.values():
        assert not either_way(lambda x, y, s=shape: shortened(x, y, s))(a, b)


@pytest.mark.parametrize(("short", "formal"), [("harry", "harriet"), ("mary", "martin"), ("julie", "julian")])
def test_the_same_shape_joins_two_people_s_given_names(short, formal):
    """Why the rule is not in the service: letters alone cannot tell "Cathy" / "Cathleen" from these."""
    assert shortened(short, formal, BROAD)
    assert confusable(f"{short.title()} Hale", "person", f"{formal.title()} Hale", "person")  # the guard: apart


def test_pieces_read_a_doubled_consonant_before_the_ending():
    assert ("rol", "o") in set(Shape().pieces("rollo")) and ("gus", "ie") in set(Shape().pieces("gussie"))
    assert not shortened("don", "brandon", BROAD)  # a bare three-letter piece inside says too little
    assert not shortened("dan", "danielle", Shape(min_stem=4))


def test_score_counts_related_and_unrelated_pairs_of_a_small_gold():
    gold = load_gold({"cathleen": ["cathy"], "harriet": ["hattie"], "harry": [], "julian": [], "julie": []})
    result = score(either_way(lambda a, b: shortened(a, b, BROAD)), gold)
    assert result.related == {"a-m": [1, 2], "n-z": [0, 0]}  # cathy/cathleen fired, hattie/harriet not
    assert result.unrelated["canonical"][0] == 2  # harry/harriet and julie/julian
    assert result.fired_canonical == [("harriet", "harry"), ("julian", "julie")]
    assert result.precision() == result.precision("canonical") == pytest.approx(1 / 3)
