"""US states' abbreviations read as their state or nothing (app/domain/state_abbreviations.py), and the confusable
guard keeping them from other entities their letters fit."""

from __future__ import annotations

import pytest

from app.domain.name_variants import confusable
from app.domain.state_abbreviations import foreign_reading, state_of


@pytest.mark.parametrize(
    ("form", "state"),
    [("Mo.", "missouri"), ("R.I.", "rhode island"), ("N. Dak.", "north dakota"), ("W.Va.", "west virginia")],
)
def test_forms_with_periods_are_their_states(form, state):
    assert state_of(form) == state


@pytest.mark.parametrize("form", ["MO", "GA", "IN", "Mo", "Monaco", "N.Q."])
def test_forms_without_periods_or_unknown_are_no_state(form):
    """Capitals without periods are as often acronyms or words ("General Assembly", "in")."""
    assert state_of(form) is None


def test_a_state_form_reads_as_its_state_only():
    assert foreign_reading("Mo.", "mexico") and foreign_reading("R.I.", "republic of india")
    assert not foreign_reading("Mo.", "missouri") and not foreign_reading("Ga.", "georgia")
    assert not foreign_reading("Colo", "colombia")  # no period: not the state's abbreviation


def test_the_confusable_guard_keeps_a_state_form_from_other_places_both_ways():
    assert confusable("Mo.", "location", "Mexico", "location")
    assert confusable("Republic of India", "location", "R.I.", "location")
    assert not confusable("R.I.", "location", "Rhode Island", "location")
