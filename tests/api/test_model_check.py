"""The model check (GET /health/llm?deep=true and `lightrag-service check-llm`) against a well-behaved and
a badly-behaved fake model."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from app.cli.main import cli
from app.core.config import get_settings
from app.providers.embeddings import EmbeddingClient
from app.providers.llm import LLMClient, forget_provider_knowledge
from app.providers.tokenizer import Tokenizer
from app.services.model_check.check import KNOWN_ENTITIES, ModelCheck
from tests.support.database import TEST_DIM

KEY = "check-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
PROSE = (
    "Sure! Here are the entities in the text: Ada Lindqvist is a biologist, and the Coral Atlas is a "
    "project. Let me know if you need anything else."
)


@pytest.fixture(autouse=True)
def _fresh_provider_knowledge():
    forget_provider_knowledge()
    yield
    forget_provider_knowledge()


def misbehave(fake) -> None:
    """A small model's habits: prose instead of records, a gleaning turn that loops, keywords in prose."""
    fake.handlers["extract"] = lambda messages: PROSE
    fake.handlers["glean"] = lambda messages: "Ada Lindqvist studies coral reefs in Bergen today.\n" * 300
    fake.handlers["keywords"] = lambda messages: "The keywords are coral and funding."


@pytest.fixture
async def keyed(start_app, make_settings):
    app = await start_app(make_settings(api_keys=[KEY]))
    return app.http


async def test_the_check_needs_an_api_key_while_health_stays_open(keyed):
    assert (await keyed.get("/health/llm")).status_code == 401
    assert (await keyed.get("/health/llm", params={"deep": "true"})).status_code == 401
    assert (await keyed.get("/health")).status_code == 200


async def test_without_deep_only_the_configuration_is_reported(keyed, fake_llm):
    body = (await keyed.get("/health/llm", headers=AUTH)).json()
    assert body["check"] is None
    assert body["configuration"]["llm"]["model"] == "fake-llm"
    assert body["configuration"]["llm"]["max_tokens"] == {
        "extract": 4000,
        "keywords": 400,
        "summary": 1000,
        "query": 4000,
    }
    assert body["configuration"]["embedding"]["dim"] == TEST_DIM
    assert fake_llm.calls == []


async def test_scoped_keys_see_no_provider_url_and_cannot_spend_llm_calls(start_app, make_settings, fake_llm):
    host = fake_llm.url.split("://", 1)[1]
    settings = make_settings(
        api_keys=[KEY, "team-key:team"], llm_base_url=f"http://proxyuser:s3cret-pass@{host}?api_key=s3cret-query&v=2"
    )
    http = (await start_app(settings)).http
    admin = (await http.get("/health/llm", headers=AUTH)).json()["configuration"]["llm"]
    assert admin["base_url"] == f"http://{host}?api_key=REDACTED&v=2"
    scoped_headers = {"Authorization": "Bearer team-key"}
    scoped = (await http.get("/health/llm", headers=scoped_headers)).json()["configuration"]["llm"]
    assert "base_url" not in scoped and scoped["model"] == "fake-llm"
    deep = await http.get("/health/llm", params={"deep": "true"}, headers=scoped_headers)
    assert (deep.status_code, deep.json()["code"]) == (403, "admin_key_required")
    assert fake_llm.calls == []


async def test_a_well_behaved_model_is_good(keyed, fake_llm):
    response = await keyed.get("/health/llm", params={"deep": "true"}, headers=AUTH)
    assert response.status_code == 200
    check = response.json()["check"]
    assert [c["call"] for c in check["calls"]] == ["extract", "glean", "keywords", "summary", "embedding"]
    assert all(c["ok"] and c["error"] is None for c in check["calls"])
    assert all(c["prompt_tokens"] > 0 and c["latency_ms"] >= 0 for c in check["calls"])
    assert check["records_parsed"] > 0 and check["records_unparseable"] == 0
    assert set(KNOWN_ENTITIES) <= set(check["entities"])
    assert check["facts_found"] >= 0.75 * check["facts_total"]
    assert check["keywords_json"] == "valid" and check["summary_ok"]
    assert check["embedding_dim"] == check["embedding_dim_expected"] == TEST_DIM
    assert check["verdict"] == "good", check["reasons"]
    assert [c.operation for c in fake_llm.calls] == ["extract", "glean", "keywords", "summary"]


async def test_a_badly_behaved_model_is_not_recommended_and_says_why(keyed, fake_llm):
    misbehave(fake_llm)
    check = (await keyed.get("/health/llm", params={"deep": "true"}, headers=AUTH)).json()["check"]
    assert check["verdict"] == "not recommended"
    assert check["records_parsed"] == 0 and check["facts_found"] == 0
    assert check["keywords_json"] == "invalid"
    glean = next(c for c in check["calls"] if c["call"] == "glean")
    assert glean["runaway"] == "loop"
    reasons = " ".join(check["reasons"])
    assert "no extraction record could be parsed" in reasons and "ran away" in reasons


async def test_a_wrong_url_or_model_names_the_settings_and_nothing_judged_of_answers_never_given(keyed, fake_llm):
    """Every call answered 404 (a base URL without its /v1, a model the endpoint does not serve): each failure
    says which settings to check, and no finding about the answers' format follows from answers that never came."""
    fake_llm.fail_next(100, status=404)
    fake_llm.fail_next_embeddings(10, status=404)
    check = (await keyed.get("/health/llm", params={"deep": "true"}, headers=AUTH)).json()["check"]
    assert check["verdict"] == "not recommended"
    reasons = check["reasons"]
    assert reasons and all("HTTP 404" in r and "_BASE_URL" in r for r in reasons), reasons
    assert not any("record format" in r or "not JSON" in r or "facts" in r for r in reasons)


async def test_a_model_with_few_facts_and_repaired_keywords_is_usable(keyed, fake_llm):
    d = "<|#|>"
    fake_llm.handlers["extract"] = lambda messages: "\n".join(
        [*(f"entity{d}{name}{d}Person{d}{name} appears in the text." for name in KNOWN_ENTITIES[:5]), "<|COMPLETE|>"]
    )
    fake_llm.handlers["keywords"] = lambda messages: (
        'Here you go: ```json\n{"high_level_keywords": ["funding"], "low_level_keywords": ["Coral Atlas"]}\n```'
    )
    check = (await keyed.get("/health/llm", params={"deep": "true"}, headers=AUTH)).json()["check"]
    assert check["facts_found"] == 5 and check["keywords_json"] == "repaired"
    assert check["verdict"] == "usable"
    assert any("5 of 11 known facts" in r for r in check["reasons"])


async def test_an_embedding_dimension_other_than_configured_is_not_recommended(make_settings, fake_llm):
    settings = make_settings(embedding_dim=TEST_DIM * 2)  # the app itself would refuse to start with it
    tokenizer = Tokenizer(settings.tokenizer_encoding)
    llm, embedder = LLMClient(settings, tokenizer), EmbeddingClient(settings, tokenizer)
    try:
        check = (await ModelCheck(llm, embedder, settings).run()).as_dict()
    finally:
        await llm.close()
        await embedder.close()
    assert check["embedding_dim"] == TEST_DIM and check["embedding_dim_expected"] == TEST_DIM * 2
    assert check["verdict"] == "not recommended"
    assert any("EMBEDDING_DIM" in r for r in check["reasons"])


async def test_json_format_check_falls_back_when_the_provider_refuses_it(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(extraction_format="json"))
    fake_llm.structured_outputs = False
    check = (await app.http.get("/health/llm", params={"deep": "true"})).json()["check"]
    assert check["extraction_format"].startswith("records")
    assert check["verdict"] == "good"


async def test_without_an_llm_the_check_answers_503(start_app, make_settings):
    app = await start_app(make_settings(llm_model=None))
    response = await app.http.get("/health/llm", params={"deep": "true"})
    assert response.status_code == 503 and response.json()["code"] == "llm_not_configured"


def _run_cli(monkeypatch, fake, *args: str):
    for name, value in {
        "LLM_BASE_URL": fake.url,
        "LLM_MODEL": "fake-llm",
        "LLM_API_KEY": "k",
        "LLM_MAX_RETRIES": "0",
        "EMBEDDING_MODEL": "fake-embedding",
        "EMBEDDING_DIM": str(TEST_DIM),
    }.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    try:
        return CliRunner().invoke(cli, ["check-llm", *args], env={"COLUMNS": "200"})
    finally:
        get_settings.cache_clear()


def test_cli_check_llm_prints_the_verdict(monkeypatch, fake_llm):
    result = _run_cli(monkeypatch, fake_llm)
    assert result.exit_code == 0, result.output
    assert "GOOD" in result.output and "known facts found" in result.output


def test_cli_check_llm_fails_for_a_model_not_recommended(monkeypatch, fake_llm):
    misbehave(fake_llm)
    result = _run_cli(monkeypatch, fake_llm)
    assert result.exit_code == 1
    assert "NOT RECOMMENDED" in result.output and "no extraction record could be parsed" in result.output
