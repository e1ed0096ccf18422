"""Codes after a name of one word read from text (app/domain/name_codes.py::code_definitions), pure."""

from __future__ import annotations

import pytest

from app.domain.name_codes import code_definitions


@pytest.mark.parametrize(
    ("texts", "names", "expected"),
    [
        (["Zorvalium (QZV) weakened."], ["Zorvalium", "QZV"], {"QZV": "Zorvalium"}),
        (["prices of zorvalium and Zorvalium (QZV) rose"], ["Zorvalium"], {"QZV": "Zorvalium"}),
        (["Notes: Zorvalium (QZV)."], ["Zorvalium"], {"QZV": "Zorvalium"}),
    ],
    ids=["sentence-start", "after-lower-case", "after-colon"],
)
def test_a_code_right_after_one_word_is_its_code(texts, names, expected):
    assert code_definitions(texts, names) == expected


@pytest.mark.parametrize(
    ("texts", "names"),
    [
        (["Zorvalium (QZV) and Brantium (QZV)."], ["Zorvalium", "Brantium"]),  # defined two ways
        (["Crown (QZV) and the Veldorian Crown."], ["Crown", "Veldorian Crown"]),  # a word of another name
        (["Zorvalium (QZV) weakened."], ["QZV"]),  # the word is no name of the document
        (["Zorvalium (QZV) rose.", "QZV (Quartz Zone Venture) fell."], ["Zorvalium", "Quartz Zone Venture"]),
    ],
    ids=["two-ways", "word-of-another-name", "not-a-name", "defined-otherwise"],
)
def test_a_code_after_one_word_is_left_out_when_unsure(texts, names):
    assert "QZV" not in code_definitions(texts, names)


def test_a_longer_name_ending_in_the_word_is_one_definition_with_it():
    texts = ["Prices of Zorvalium (QZV) rose.", "Zorvalium (QZV) fell."]
    assert code_definitions(texts, ["Zorvalium"]) == {"QZV": "Prices of Zorvalium"}


def test_codes_after_longer_names_are_still_the_older_rules():
    assert code_definitions(["The Veldorian Crown (QRX) rose."], ["Veldorian Crown"]) == {"QRX": "The Veldorian Crown"}
