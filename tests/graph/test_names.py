"""Name/type normalisation and case-folded identity."""

from __future__ import annotations

from app.domain.names import entity_key, lookup_key, normalize_name, normalize_type, sorted_pair


def test_case_and_whitespace_variants_share_one_key():
    keys = {entity_key(normalize_name(n)) for n in ["Apple", "APPLE", "apple", "  apple ", '"Apple"', "Apple\u00a0"]}
    assert keys == {"apple"}


def test_display_name_keeps_casing_and_strips_quotes_and_tags():
    assert normalize_name('"Charlie Gordon"') == "Charlie Gordon"
    assert normalize_name("\u201cAlgernon\u201d") == "Algernon"
    assert normalize_name("<p>Dr. Strauss</p>") == "Dr. Strauss"
    assert normalize_name("Tom &amp; Jerry") == "Tom & Jerry"
    assert normalize_name('Say "hi" Corp') == 'Say "hi" Corp'


def test_fullwidth_and_cjk_spacing():
    assert normalize_name("\uff21\uff22\uff23\uff11") == "ABC1"
    assert normalize_name("\u5317\u4eac \u5927\u5b66") == "\u5317\u4eac\u5927\u5b66"
    assert normalize_name("\uff08\u6d4b\u8bd5\uff09") == "(\u6d4b\u8bd5)"


def test_rejected_and_truncated_names():
    assert normalize_name("") == ""
    assert normalize_name("   ") == ""
    assert normalize_name("42") == ""
    assert normalize_name("1.2") == ""
    assert normalize_name("2024") == "2024"
    long = "N" * 700
    assert len(normalize_name(long, 500)) == 500


def test_types():
    assert normalize_type("Natural Object") == "naturalobject"
    assert normalize_type("Person, Organization") == "person"
    assert normalize_type('"Location"') == "location"
    assert normalize_type("a/b") == "unknown"
    assert normalize_type("") == "unknown"
    assert normalize_type("__proto__") == "unknown"


def test_lookup_key_and_pairs():
    assert lookup_key(' "APPLE" ') == "apple"
    assert sorted_pair("b", "a") == ("a", "b")
