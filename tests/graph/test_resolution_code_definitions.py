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


@pytest.mark.parametrize(
    ("texts", "names", "expected"),
    [
        (["Costs of quorvane iron salt (QFS) fell."], ["quorvane iron salt", "QFS"], "quorvane iron salt"),
        (["Priced in New Tarvosian Dram (TDR)."], ["New Tarvosian Dram", "TDR"], "New Tarvosian Dram"),
        (["From Velmora and Tobrin (VTO) came."], ["Velmora and Tobrin"], "Velmora and Tobrin"),
        (["Notes.\n\nTarvos (TRV) grew."], ["Tarvos"], "Tarvos"),
    ],
    ids=["letters-not-initials", "letters-of-its-tail", "joining-word", "one-short-word"],
)
def test_a_code_right_after_a_name_of_the_document_is_that_name(texts, names, expected):
    assert code_definitions(texts, names)[texts[0].split("(")[1][:3]] == expected


def test_a_code_after_a_name_defined_otherwise_keeps_the_other_reading():
    texts = ["Costs of quorvane iron salt (QFS) fell.", "QFS (Quartz Field Survey) grew."]
    assert code_definitions(texts, ["quorvane iron salt", "Quartz Field Survey"])["QFS"] == "Quartz Field Survey"


def test_a_code_after_two_names_is_no_ones():
    texts = ["Costs of quorvane iron salt (QFS) fell.", "Costs of brindle copper wire (QFS) rose."]
    assert "QFS" not in code_definitions(texts, ["quorvane iron salt", "brindle copper wire"])


def test_a_name_the_letters_spell_is_kept_over_a_shorter_name_of_the_document_ending_it():
    texts = ["Notes on Ruritania Central Office (RNO)."]
    assert code_definitions(texts, ["Central Office"])["RNO"] == "Ruritania Central Office"
