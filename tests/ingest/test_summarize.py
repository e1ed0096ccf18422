"""Description summarisation: no LLM below the thresholds, one call above, map-reduce past the context size,
nothing dropped (oversize fragments are split), iteration cap, summary cache."""

from __future__ import annotations

import json

from app.domain.texts import SEP
from app.services.graph.summaries import Summarizer


def _summarizer(app, **overrides) -> Summarizer:
    settings = app.container.settings.model_copy(update=overrides)
    c = app.container
    return Summarizer(c.llm_cache, c.tokenizer, settings)


def _passages(call) -> list[str]:
    lines = call.messages[-1]["content"].splitlines()
    return [json.loads(line)["description"] for line in lines if line.startswith("{")]


async def test_below_thresholds_joins_without_llm(app_client, fake_llm):
    s = _summarizer(app_client)
    assert await s.summarize("entity", "Alice", [], "English") == ""
    assert await s.summarize("entity", "Alice", ["only one"], "English") == "only one"
    result = await s.summarize("entity", "Alice", ["a", "b", "c"], "English")
    assert result == f"a{SEP}b{SEP}c"
    assert fake_llm.calls_of("summary") == []
    assert not s.needs_llm(["a", "b", "c"])


async def test_fragment_count_threshold_triggers_one_call(app_client, fake_llm):
    s = _summarizer(app_client, force_llm_summary_on_merge=4)
    assert await s.summarize("entity", "Alice", ["a1", "b2", "c3"], "English") == f"a1{SEP}b2{SEP}c3"
    assert fake_llm.calls_of("summary") == []
    frags = ["alpha fact", "beta fact", "gamma fact", "delta fact"]
    assert s.needs_llm(frags)
    result = await s.summarize("entity", "Alice", frags, "French")
    calls = fake_llm.calls_of("summary")
    assert len(calls) == 1 and result == calls[0].response
    assert _passages(calls[0]) == frags
    assert "Alice" in calls[0].messages[-1]["content"] and "French" in calls[0].messages[0]["content"]


async def test_token_threshold_triggers_one_call(app_client, fake_llm):
    s = _summarizer(app_client, summary_max_tokens=50)
    frags = ["word " * 30, "other " * 30]
    await s.summarize("relation", "(A, B)", frags, "English")
    assert len(fake_llm.calls_of("summary")) == 1
    assert "relationship" in fake_llm.calls_of("summary")[0].messages[-1]["content"]


async def test_map_reduce_when_over_context_keeps_every_fragment(app_client, fake_llm):
    s = _summarizer(app_client, summary_context_size=100)
    fake_llm.handlers["summary"] = lambda messages: "merged"
    frags = [f"fragment {i}" + " filler" * 25 for i in range(10)]  # ~30 tokens each, 300 in total
    result = await s.summarize("entity", "Alice", frags, "English")
    calls = fake_llm.calls_of("summary")
    sent = [p for c in calls for p in _passages(c) if p != "merged"]
    assert sorted(sent) == sorted(frags)  # every fragment summarised exactly once
    assert all(sum(app_client.container.tokenizer.count(p) for p in _passages(c)) <= 100 for c in calls)
    assert len(calls) >= 4  # three groups, then the reduce of their results
    assert result == "merged"


async def test_oversize_fragment_is_split_not_dropped(app_client, fake_llm):
    s = _summarizer(app_client, summary_context_size=100)
    fake_llm.handlers["summary"] = lambda messages: "short"
    big = " ".join(f"w{i}" for i in range(400))
    await s.summarize("entity", "Alice", [big, "small tail fact"], "English")
    sent = " ".join(p for c in fake_llm.calls_of("summary") for p in _passages(c) if p != "short")
    for i in range(400):
        assert f"w{i}" in sent.split()
    assert "small tail fact" in sent


async def test_iteration_cap_keeps_parts_joined(app_client, fake_llm):
    s = _summarizer(app_client, summary_context_size=100, summary_max_iterations=1)
    fake_llm.handlers["summary"] = lambda messages: "long result " * 40
    frags = [f"fragment {i}" + " filler" * 25 for i in range(10)]
    result = await s.summarize("entity", "Alice", frags, "English")
    calls = fake_llm.calls_of("summary")
    assert all(p.startswith("fragment") for c in calls for p in _passages(c))  # one round only
    assert len(result.split(SEP)) > 1 and "long result" in result


async def test_summary_is_cached(app_client, fake_llm):
    s = _summarizer(app_client, force_llm_summary_on_merge=2)
    first = await s.summarize("entity", "Alice", ["x one", "y two"], "English")
    second = await s.summarize("entity", "Alice", ["x one", "y two"], "English")
    assert first == second and len(fake_llm.calls_of("summary")) == 1
