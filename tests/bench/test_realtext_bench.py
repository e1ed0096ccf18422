"""The real-text bench's pure parts (bench/realtext): they run without its extra (no spaCy, no torch)."""

from __future__ import annotations

import json

import pytest

from bench.realtext import data, records
from bench.realtext.provider import classify, fragments_of, query_of
from bench.realtext.report import summarise
from bench.realtext.scoring import coverage, fold, share_at_least, terms


def test_terms_drop_stopwords_and_question_words_and_fold_plurals():
    assert terms("What are the arteries of the heart?") == {"artery", "heart"}
    assert terms("Tumors, therapies and glasses") == {"tumor", "therapy", "glass"}
    assert fold("diabetes") == "diabete" and fold("virus") == "virus" and fold("bus") == "bus"


def test_numbers_count_as_terms_with_their_decimals():
    assert terms("a dose of 2.5 mg, 1,000 units") == {"dose", "2.5", "mg", "1000", "unit"}


def test_coverage_is_the_share_of_answer_terms_in_the_context():
    answer = "Basal cell carcinoma (BCC) is the most common type of skin cancer."
    assert coverage(answer, "basal cell carcinomas are a skin cancer") == pytest.approx(5 / 8)
    assert coverage(answer, answer.upper()) == 1.0
    assert coverage("the of is", "anything") is None
    assert share_at_least([1.0, 0.8, 0.79, None]) == pytest.approx(2 / 3)


def test_checksums_of_the_committed_files_hold_and_a_changed_file_is_named(tmp_path):
    data.verify()
    (tmp_path / "medical.json").write_text("[]")
    with pytest.raises(ValueError, match="medical.json"):
        data.verify(tmp_path, {"medical.json": data.CHECKSUMS["medical.json"]})


def test_the_committed_data_has_one_document_and_2062_questions_of_four_types():
    assert len(data.corpus()) == 1
    questions = data.questions()
    assert len(questions) == 2062
    assert {q.type for q in questions} == set(data.QUESTION_TYPES)


def test_the_stratified_sample_is_fixed_by_its_seed_and_takes_each_type():
    questions = data.questions()
    first = data.stratified(questions, 5, seed=7)
    assert first == data.stratified(questions, 5, seed=7) != data.stratified(questions, 5, seed=8)
    assert sorted(q.type for q in first) == sorted(list(data.QUESTION_TYPES) * 5)
    assert len(data.stratified(questions, None, seed=7)) == 2062


PARSED = [
    {
        "text": "Basal cell carcinoma is  the most common skin cancer in Australia.",
        "mentions": [["Basal cell carcinoma", "TERM"], ["common skin cancer", "TERM"], ["Australia", "GPE"]],
        "verbs": [],
    },
    {
        "text": "Sun exposure causes basal cell carcinoma.",
        "mentions": [["Sun exposure", "TERM"], ["basal cell carcinoma", "TERM"], ["2020", "DATE"]],
        "verbs": ["cause"],
    },
]


def test_records_name_terms_in_lowercase_keep_named_entities_and_relate_neighbours_in_a_sentence():
    entities, relations = records.extraction(PARSED)
    assert entities == [
        ("basal cell carcinoma", "Concept", "Basal cell carcinoma is the most common skin cancer in Australia."),
        ("common skin cancer", "Concept", "Basal cell carcinoma is the most common skin cancer in Australia."),
        ("Australia", "Location", "Basal cell carcinoma is the most common skin cancer in Australia."),
        ("sun exposure", "Concept", "Sun exposure causes basal cell carcinoma."),
    ]
    assert [(a, b, k) for a, b, k, _ in relations] == [
        ("basal cell carcinoma", "common skin cancer", "related"),
        ("common skin cancer", "Australia", "related"),
        ("sun exposure", "basal cell carcinoma", "cause"),
    ]
    text = records.format_records(entities, relations)
    assert text.splitlines()[0] == "entity<|#|>basal cell carcinoma<|#|>Concept<|#|>" + entities[0][2]
    assert text.endswith("\n<|COMPLETE|>") and text.count("relation<|#|>") == 3


def test_records_keep_the_most_salient_entities_within_the_caps():
    entities, relations = records.extraction(PARSED, max_entities=2, max_records=3)
    assert [e[0] for e in entities] == ["basal cell carcinoma", "Australia"]  # named first, then by frequency
    assert len(entities) + len(relations) == 3


def test_keywords_put_names_and_terms_low_and_other_noun_chunks_high():
    parsed = [{"text": "", "mentions": [["the type", "NOUN"], ["skin cancer", "TERM"], ["Mayo", "ORG"]]}]
    assert records.keywords(parsed) == (["the type"], ["skin cancer", "Mayo"])
    assert records.keywords([{"text": "", "mentions": [["risk", "NOUN"]]}]) == (["risk"], ["risk"])


def test_summary_joins_distinct_fragments_within_a_bound():
    assert records.summary(["A b.", "A b.", "C  d."]) == "A b. C d."
    assert records.summary(["one two three"], max_words=2) == "one two"


def test_official_prompts_are_recognised_by_content():
    extract = [
        {"role": "system", "content": "---Role---"},
        {"role": "user", "content": "---Input Text---\n```\nX\n```"},
    ]
    assert classify(extract) == "extract"
    follow_up = [{"role": "assistant", "content": "..."}, {"role": "user", "content": "more"}]
    assert classify([*extract, *follow_up]) == "glean"
    prompt = 'Use "high_level_keywords".\n---Real Data---\nUser Query: Why?\n---Output---'
    keywords = [{"role": "user", "content": prompt}]
    assert classify(keywords) == "keywords" and query_of(keywords) == "Why?"

    from app.prompts.keywords import keyword_messages

    service = keyword_messages("Which band was formed first?", [{"role": "user", "content": "Hi"}], "English")
    assert "Query: Who is Charlie Gordon?" in service[-1]["content"]  # the prompt's examples come before it
    assert query_of(service) == "Which band was formed first?"
    summary = "Description List:\n```\n" + json.dumps({"Description": "x"}) + "\n" + json.dumps({"description": "y"})
    assert classify([{"role": "user", "content": summary}]) == "summary"
    assert fragments_of([{"role": "user", "content": summary}]) == ["x", "y"]


def test_the_report_summarises_rows_per_budget_mode_and_system():
    rows = [
        {"system": s, "budget": "tight", "mode": "local", "type": "Fact Retrieval", "seconds": 0.1}
        | {"coverage": c, "tokens": 10}
        for s, c in (("service", 1.0), ("service", 0.5), ("official", 0.5))
    ]
    summary = summarise(rows)["tight"]["local"]
    assert summary["service"]["coverage"] == 0.75 and summary["service"]["covered_0_8"] == 0.5
    assert summary["official"]["by_type"]["Fact Retrieval"] == 0.5


def test_a_saved_official_run_is_reused_only_when_it_holds_every_asked_answer():
    import argparse

    from bench.realtext.__main__ import reused_official

    questions = data.stratified(data.questions(), 1, seed=7)
    rows = [
        {"system": system, "budget": "tight", "mode": mode, "id": q.id, "coverage": 1.0}
        for system in ("service", "official")
        for mode in ("local", "mix")
        for q in questions
    ]
    saved = {"args": {"embeddings": "minilm"}, "rows": rows, "ingest_seconds": {"official": 9.0}}
    args = argparse.Namespace(embeddings="minilm", modes=["local"], budgets=["tight"], rerank=False)
    reused = reused_official(saved, questions, args)
    assert {(r["system"], r["mode"]) for r in reused["rows"]} == {("official", "local")}
    assert len(reused["rows"]) == len(questions) and reused["ingest_seconds"] == 9.0
    joined = saved | {"ingest_seconds": {"official": [9.0, 8.0]}}  # a file joined from two official runs
    assert reused_official(joined, questions, args)["ingest_seconds"] is None
    with pytest.raises(ValueError, match="lacks 4 official answers"):
        reused_official(
            saved, questions, argparse.Namespace(embeddings="minilm", modes=["naive"], budgets=["tight"], rerank=False)
        )
    with pytest.raises(ValueError, match="hashed"):
        reused_official(
            saved, questions, argparse.Namespace(embeddings="hashed", modes=["local"], budgets=["tight"], rerank=False)
        )


def _tiny_corpus():
    from bench.realtext.headroom import Corpus

    chunks = ["aspirin thins blood", "aspirin relieves pain and fever", "insulin lowers glucose", "unrelated text"]
    return Corpus.of(chunks, lambda text: len(text.split()))  # a token per word


def test_the_oracle_takes_the_chunks_adding_most_answer_terms_within_the_tokens_and_chunk_count():
    from bench.realtext.headroom import oracle_coverage

    corpus = _tiny_corpus()
    wanted = terms("Aspirin relieves pain; insulin lowers glucose")  # aspirin relieve pain insulin lower glucose
    assert oracle_coverage(wanted, corpus, max_tokens=100) == 1.0
    # most new terms per token first: "insulin lowers glucose" (3 in 3 tokens); then within 7 tokens the
    # 5-token chunk (3 more terms) no longer fits, "aspirin thins blood" does (1 more)
    assert oracle_coverage(wanted, corpus, max_tokens=7) == pytest.approx(4 / 6)
    assert oracle_coverage(wanted, corpus, max_tokens=100, max_chunks=1) == pytest.approx(3 / 6)
    assert oracle_coverage(wanted, corpus, max_tokens=2) == 0.0  # no chunk is that small
    assert oracle_coverage(terms("the of"), corpus, max_tokens=100) is None


def test_headroom_gives_the_corpus_ceiling_and_the_oracle_per_budget():
    from bench.realtext.headroom import headroom

    answers = ["Aspirin relieves pain", "Aspirin cures malaria"]  # "cure" and "malaria" are nowhere in the corpus
    budgets = {"wide": {"max_total_tokens": 100, "chunk_top_k": 4}, "narrow": {"max_total_tokens": 3, "chunk_top_k": 1}}
    found = headroom(answers, _tiny_corpus(), budgets)
    assert found["wide"]["ceiling"] == found["narrow"]["ceiling"] == pytest.approx((1 + 1 / 3) / 2)
    assert found["wide"]["oracle"] == found["wide"]["oracle_top_k"] == pytest.approx((1 + 1 / 3) / 2)
    # 3 tokens: only "aspirin thins blood" fits (1 of 3 terms, "aspirin"), for either answer
    assert found["narrow"]["oracle"] == pytest.approx((1 / 3 + 1 / 3) / 2)


def test_the_headroom_line_names_the_ceiling_and_both_oracles():
    from bench.realtext.report import headroom_lines

    line = headroom_lines(
        {"default": {"ceiling": 0.95, "oracle": 0.94, "oracle_top_k": 0.93, "tokens": 30000, "chunk_top_k": 20}}
    )
    assert "[default] whole-corpus ceiling 0.950" in line
    assert "0.940" in line and "20 chunks 0.930" in line and "upper bounds" in line


def test_the_candidate_pool_oracle_chooses_only_among_the_pool():
    from bench.realtext.ceiling import pool_figures

    pool = (["aspirin thins blood", "unrelated text"], ["insulin lowers glucose"])  # hybrid's ranked, naive's
    count = lambda text: len(text.split())  # noqa: E731
    found = pool_figures("Aspirin relieves pain; insulin lowers glucose", pool, count, _LIMITS)
    # "relieve" and "pain" are in the corpus but not in the pool: the pool holds 4 of the 6 terms
    assert found["pool_chunks"] == 3 and found["pool_terms"] == pytest.approx(4 / 6)
    assert found["pool_oracle"] == pytest.approx(4 / 6)
    assert found["pool_oracle_top_k"] == pytest.approx(3 / 6)  # one chunk: "insulin lowers glucose"
    # hybrid's own order: its first chunk ("aspirin"), its first two (still "aspirin": naive's is not its own)
    assert found["hybrid_first_top_k"] == found["hybrid_first_2_top_k"] == pytest.approx(1 / 6)
    empty = pool_figures("Aspirin", ([], []), count, _LIMITS)
    assert empty["pool_terms"] == empty["pool_oracle"] == empty["hybrid_first_top_k"] == 0.0


_LIMITS = {"max_total_tokens": 100, "chunk_top_k": 1}


def test_the_pool_is_hybrids_candidates_with_room_for_all_then_naives_chunks():
    import asyncio

    from app.services.query.graph_chunks import CANDIDATES, LOCAL_CANDIDATES
    from bench.realtext.ceiling import WIDE_TOKENS, candidate_pool

    asked = []

    class System:
        async def query(self, question, mode, limits):
            asked.append((mode, limits))
            texts = {"hybrid": [" b ", "a"], "naive": ["a", "c"]}[mode]
            return {"chunks": [{"content": t} for t in texts]}

    pool = asyncio.run(candidate_pool(System(), "q", {"top_k": 40, "chunk_top_k": 20, "max_total_tokens": 30000}))
    assert pool == (["b", "a"], ["c"])
    assert asked[0] == (
        "hybrid",
        {"top_k": 40, "chunk_top_k": LOCAL_CANDIDATES + CANDIDATES, "max_total_tokens": WIDE_TOKENS},
    )
    assert asked[1] == ("naive", {"top_k": 40, "chunk_top_k": 20, "max_total_tokens": 30000})


def test_the_ceiling_lines_put_the_pool_oracle_beside_hybrid_and_mix_per_type():
    from bench.realtext.ceiling import summarise_pools
    from bench.realtext.report import ceiling_lines

    rows = [
        {"budget": "default", "id": "1", "type": t, "pool_chunks": 100, "pool_terms": 0.9}
        | {"pool_oracle": 0.9, "pool_oracle_top_k": v, "hybrid_first_top_k": 0.6, "hybrid_first_2_top_k": 0.7}
        for t, v in zip(data.QUESTION_TYPES, (0.8, 0.9, 1.0, 0.7), strict=True)
    ]
    pools = summarise_pools(rows, data.QUESTION_TYPES)
    assert pools["default"]["pool_oracle_top_k"] == pytest.approx(0.85)
    assert pools["default"]["by_type"]["Fact Retrieval"]["pool_oracle_top_k"] == 0.8
    summary = summarise(
        [
            {"system": "service", "budget": "default", "mode": "hybrid", "id": "1", "type": t}
            | {"seconds": 0.1, "coverage": 0.5, "tokens": 10}
            for t in data.QUESTION_TYPES
        ]
    )
    text = ceiling_lines(pools, summary)
    assert "pool 100 chunks" in text and "0.900 of the answer terms" in text
    assert "pool oracle       0.850   0.800   0.900   1.000   0.700" in text
    assert "hybrid first 2k   0.700   0.700" in text
    assert "hybrid service    0.500" in text


def test_a_partial_out_file_holds_official_answers_a_later_run_reuses(tmp_path):
    import argparse

    from bench.realtext.__main__ import check_out_path, reused_official, save_partial

    questions = data.stratified(data.questions(), 1, seed=7)
    out = tmp_path / "run.json"
    args = argparse.Namespace(
        embeddings="minilm", modes=["local"], budgets=["tight"], rerank=False, out=str(out), reuse_official=None
    )
    rows = [{"system": "official", "budget": "tight", "mode": "local", "id": q.id, "coverage": 1.0} for q in questions]
    result = {"ingest_seconds": {"official": 9.0}, "chunks": {"official": ["a chunk"]}, "rows": rows}
    save_partial(args, result, "official")  # the run stopped after official's answers
    saved = json.loads(out.read_text())
    assert saved["partial"] is True and [p.name for p in tmp_path.iterdir()] == ["run.json"]
    reused = reused_official(saved, questions, args)
    assert reused["rows"] == rows and reused["chunks"] == ["a chunk"] and reused["ingest_seconds"] == 9.0
    check_out_path(argparse.Namespace(out=str(tmp_path / "next.json"), reuse_official=out))
    with pytest.raises(SystemExit, match="must not be the --reuse-official file"):
        check_out_path(argparse.Namespace(out=str(out), reuse_official=tmp_path / "." / "run.json"))
