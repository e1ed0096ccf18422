"""The pure parts of claim-level citations: markers, claims, passages, verdicts, footnotes."""

from __future__ import annotations

import pytest

from app.domain.citation_check import judge
from app.domain.citation_markers import MarkerContext, MarkerStream, rewrite_markers
from app.domain.citation_text import footnotes, model_references_start, without_model_references
from app.domain.claim_split import split_claims
from app.domain.claim_support import facts, passages

# chunks c1, c2 of document 1, c3 of document 2
CTX = MarkerContext(chunk_documents=["1", "1", "2"], reference_ids=frozenset({"1", "2"}))


@pytest.mark.parametrize(
    ("raw", "text", "named"),
    [
        ("Opened in 1998 [c1].", "Opened in 1998 [1].", [((0,), ("1",))]),
        ("Opened in 1998.[C3]", "Opened in 1998.[2]", [((2,), ("2",))]),
        ("Opened (c3) in 1998.", "Opened [2] in 1998.", [((2,), ("2",))]),
        ("Opened【c2】 in 1998.", "Opened[1] in 1998.", [((1,), ("1",))]),
        ("Opened in 1998 [^2].", "Opened in 1998 [2].", [((), ("2",))]),
        ("Opened in 1998 [1].", "Opened in 1998 [1].", [((), ("1",))]),
        ("Opened [c1, c3] here.", "Opened [1][2] here.", [((0, 2), ("1", "2"))]),
        ("Opened [c1][c2] here.", "Opened [1] here.", [((0, 1), ("1",))]),
        ("Opened [chunk 3] here.", "Opened [2] here.", [((2,), ("2",))]),
    ],
)
def test_marker_forms_become_document_references(raw, text, named):
    rewritten, marks = rewrite_markers(raw, CTX)
    assert rewritten == text
    assert [(m.chunks, m.documents) for m in marks] == named
    assert all(rewritten[m.start : m.end] == "".join(f"[{d}]" for d in m.documents) for m in marks)


def test_invented_markers_are_dropped_with_their_space():
    text, marks = rewrite_markers("Opened in 1998 [c9]. Closed [7] in 2001 [c0].", CTX)
    assert (text, marks) == ("Opened in 1998. Closed in 2001.", [])


def test_a_marker_on_its_own_line_joins_the_line_above():
    text, marks = rewrite_markers("First sentence.\n[c3]\nSecond one.\n  [c8]  \nThird.", CTX)
    assert text == "First sentence. [2]\nSecond one.\nThird."
    assert [m.documents for m in marks] == [("2",)]


def test_brackets_that_are_not_markers_stay():
    raw = "Index x[3] and [1](https://example.org) and (3) stay."
    assert rewrite_markers(raw, CTX)[0] == raw


def test_streamed_rewrite_is_the_whole_rewrite_for_any_piece_size():
    raw = (
        "In 1998 the bridge opened [c1]. It cost 5 million (c3).\n[c2]\n"
        "More [c9] text【c3】 here [^1].\n\n| a | b [c1] |"
    )
    whole = rewrite_markers(raw, CTX)[0]
    for size in range(1, 12):
        stream = MarkerStream(CTX)
        pieces = [stream.feed(raw[i : i + size]) for i in range(0, len(raw), size)]
        assert "".join(pieces) + stream.flush() == whole


CODE_ANSWER = (
    "Run `grep [c3] log` to see it [c1].\n\n"
    "```python\nrefs = data[c2]  # [c1]\n```\n"
    "Then ``a ` [c3]`` and [c3].\n\n"
    "~~~\n[c1]\n~~~~\nAfter the fence [c2]. An open ` tick [c3].\n\n"
    "```\nunclosed [c1]"
)


def test_markers_in_code_stay_as_written():
    text, marks = rewrite_markers(CODE_ANSWER, CTX)
    assert text == (
        "Run `grep [c3] log` to see it [1].\n\n"
        "```python\nrefs = data[c2]  # [c1]\n```\n"
        "Then ``a ` [c3]`` and [2].\n\n"
        "~~~\n[c1]\n~~~~\nAfter the fence [1]. An open ` tick [2].\n\n"
        "```\nunclosed [c1]"
    )
    assert [m.documents for m in marks] == [("1",), ("2",), ("1",), ("2",)]
    assert all(text[m.start : m.end] == f"[{m.documents[0]}]" for m in marks)


def test_markers_in_code_stay_as_written_when_streamed():
    whole = rewrite_markers(CODE_ANSWER, CTX)[0]
    for size in range(1, 15):
        stream = MarkerStream(CTX)
        pieces = [stream.feed(CODE_ANSWER[i : i + size]) for i in range(0, len(CODE_ANSWER), size)]
        assert "".join(pieces) + stream.flush() == whole, size


MARKDOWN = """# The bridge

The bridge opened in 1998 [1]. It cost 5 million.[2]

Facts below:

- Designed by Mira Tolven [1]
- Built by Acme Works. Painted red.
1. Numbered item.

| Name | Year |
|------|-----:|
| Acme | 1990 [2] |

```python
x = "Not a claim."
```

Dr. Smith arrived at 5 p.m. on Monday. Version 3.5 is out!
"""


def test_claims_are_sentences_list_items_and_table_rows_not_headings_code_or_rules():
    claims = [MARKDOWN[c.start : c.end] for c in split_claims(MARKDOWN)]
    assert claims == [
        "The bridge opened in 1998 [1].",
        "It cost 5 million.",
        "Designed by Mira Tolven",
        "Built by Acme Works.",
        "Painted red.",
        "Numbered item.",
        "Acme | 1990",
        "Dr. Smith arrived at 5 p.m. on Monday.",
        "Version 3.5 is out!",
    ]


def test_empty_and_marker_only_answers_have_no_claims():
    assert split_claims("") == [] and split_claims("   \n\n") == [] and split_claims("[1]\n---") == []


def test_facts_are_numbers_dates_and_names():
    assert facts("In 2008, Bulvotim Valley and Kikstuk Foods signed a deal worth 18,000 euros.") == {
        "2008",
        "18000",
        "bulvotim",
        "valley",
        "kikstuk",
        "food",
    }
    assert facts("Records show a deal.") == frozenset()  # a capitalised first word alone is no name


SOURCE = (
    "Records from 1994 show that The Ranouth Festival led an export deal together with Kikstuk Foods. "
    "In 2008, Bulvotim Valley and Kikstuk Foods signed a supply contract worth 18 million. "
    "Local newspapers followed the story closely."
)
OTHER = "Moumpre Mining worked with Thuke Games on a grid maintenance in 2005."
PASSAGES = passages(0, SOURCE) + passages(1, OTHER)


def _judge(claim: str, marked: set[int] | None = None):
    return judge(claim, PASSAGES, marked or set(), lambda p: None)


def test_a_claim_stated_by_a_passage_is_supported_with_its_span():
    verdict = _judge("In 2008, Bulvotim Valley and Kikstuk Foods signed a supply contract worth 18 million.", {0})
    assert verdict.support == "supported"
    span = verdict.cited[0].passage
    assert SOURCE[span.start : span.end].startswith("In 2008, Bulvotim Valley") and span.chunk == 0


@pytest.mark.parametrize(
    "invented",
    [
        "In 2009, Bulvotim Valley and Kikstuk Foods signed a supply contract worth 18 million.",  # date
        "In 2008, Bulvotim Valley and Kikstuk Foods signed a supply contract worth 81 million.",  # number
        "In 2008, Bulvotim Valley and Thuke Games signed a supply contract worth 18 million.",  # name
    ],
)
def test_a_swapped_number_date_or_name_is_unsupported(invented):
    assert _judge(invented, {0}).support == "unsupported"


def test_a_claim_with_a_wrong_marker_is_reattributed():
    verdict = _judge("Moumpre Mining worked with Thuke Games on a grid maintenance in 2005.", {0})
    assert verdict.support == "supported" and verdict.cited[0].passage.chunk == 1


def test_loose_wording_is_partial_and_unrelated_text_unsupported():
    assert _judge("Kikstuk Foods took part in several festivals and deals abroad.").support == "partial"
    assert _judge("The weather was cold and windy all winter.").support == "unsupported"


def test_the_models_own_references_list_is_found_and_footnotes_list_what_is_cited():
    answer = "The bridge opened [1].\n\n### References\n- [1] bridge.txt\n- [2] other.txt"
    assert model_references_start(answer) == answer.index("###")
    assert without_model_references(answer) == "The bridge opened [1]."
    assert model_references_start("**Sources:**\n[1] a.txt") == 0
    assert model_references_start("The sources of the river are in the hills.") is None
    assert footnotes([]) == ""
    assert footnotes([("1", "bridge.txt"), ("3", "c.txt")]) == "\n\n**Sources**\n- [1] bridge.txt\n- [3] c.txt"


def test_passages_end_at_sentence_ends_not_at_titles_or_company_suffixes():
    content = "Dr. Quivbov Norsousska met Acme Corp. (ACM) in 1975. Sorsa Mining Ltd. joined later. Next one."
    assert [p.text for p in passages(0, content)] == [
        "Dr. Quivbov Norsousska met Acme Corp. (ACM) in 1975.",
        "Sorsa Mining Ltd. joined later.",
        "Next one.",
    ]


STITCH = passages(
    0,
    "Kovel Institute and Golvuv Krouvzil announced a court ruling in the spring of 1962. "
    "Taevkil Festival and Devpis Riazev announced a court ruling in the spring of 2006. "
    "Kovel Institute later worked with Devpis Riazev on a court ruling.",
)


def test_a_name_swapped_for_one_named_elsewhere_is_not_stitched_together():
    claim = "Kovel Institute and Devpis Riazev announced a court ruling in the spring of 1962."
    assert judge(claim, STITCH, {0}, lambda p: None).support == "unsupported"


def test_a_number_from_another_passage_does_not_count():
    claim = "Kovel Institute worked with Devpis Riazev on a court ruling in 2006."
    assert judge(claim, STITCH, set(), lambda p: None).support == "unsupported"


def test_similarity_breaks_ties_and_the_score_blends_it():
    claim = "Kovel Institute later worked with Devpis Riazev on a court ruling."
    verdict = judge(claim, STITCH, set(), lambda p: 0.9 if "later" in p.text else 0.1)
    assert verdict.support == "supported" and "later" in verdict.cited[0].passage.text
    assert 0 < verdict.cited[0].score <= 1
