"""The chat APIs' footnotes, through the official `openai` and `ollama` clients: only the documents the answer
cited, once; none added when the model wrote its own references list; citation markers rewritten."""

from __future__ import annotations

from collections.abc import Iterator

import ollama
import openai
import pytest

from tests.chat.conftest import ADMIN_KEY, ChatService, _ingest
from tests.support.fakes.cited_answers import chunk_with, citing
from tests.support.fakes.openai_server import FakeOpenAI

QUESTION = [{"role": "user", "content": "Who is Charlie Gordon and who leads the research on him?"}]
STORY = "Charlie Gordon is a baker who takes part in an experiment at the Beekman clinic."
NOTE = "Professor Nemur leads the research on Charlie Gordon. Doctor Strauss performs the surgery."
UNCITED = "A remark on Charlie Gordon that nobody cites: he likes the bakery."


@pytest.fixture(scope="module")
def cites(chat_service: ChatService) -> Iterator[str]:
    with chat_service.http() as http:
        http.post("/projects", json={"id": "cites"}).raise_for_status()
        _ingest(http, "cites", STORY, "story.txt")
        _ingest(http, "cites", NOTE, "note.txt")
        _ingest(http, "cites", UNCITED, "uncited.txt")
    yield "lightrag:cites"
    with chat_service.http() as http:
        http.delete("/projects/cites")


def answer_citing_two_documents(chunks: list[dict]) -> str:
    assert len({c["reference_id"] for c in chunks}) == 3  # every document is in the context
    story, note = chunk_with(chunks, "baker"), chunk_with(chunks, "Nemur")
    return (
        f"Charlie Gordon is a baker who takes part in an experiment [{story['id']}].\n"
        f"[{note['id']}]\n"
        f"Professor Nemur leads the research on him【{note['id']}】 and he was born on Mars [c42]."
    )


def with_own_references(chunks: list[dict]) -> str:
    story = chunk_with(chunks, "baker")
    return f"Charlie Gordon is a baker [{story['id']}].\n\n### References\n- [{story['reference_id']}] story.txt"


def _openai(service: ChatService) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{service.url}/v1", api_key=ADMIN_KEY, max_retries=0, timeout=60)


def _ollama(service: ChatService) -> ollama.Client:
    return ollama.Client(host=service.url, headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=60)


def openai_text(service: ChatService, model: str, stream: bool) -> str:
    client = _openai(service)
    if not stream:
        return client.chat.completions.create(model=model, messages=QUESTION).choices[0].message.content or ""
    chunks = client.chat.completions.create(model=model, messages=QUESTION, stream=True)
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def ollama_text(service: ChatService, model: str, stream: bool) -> str:
    client = _ollama(service)
    if not stream:
        return client.chat(model=model, messages=QUESTION, stream=False).message.content or ""
    return "".join(part.message.content or "" for part in client.chat(model=model, messages=QUESTION, stream=True))


CLIENTS = [
    pytest.param(openai_text, False, id="openai"),
    pytest.param(openai_text, True, id="openai-stream"),
    pytest.param(ollama_text, False, id="ollama"),
    pytest.param(ollama_text, True, id="ollama-stream"),
]


@pytest.mark.parametrize(("ask", "stream"), CLIENTS)
def test_footnotes_list_only_the_cited_documents_once(chat_service, cites, fake_llm: FakeOpenAI, ask, stream):
    fake_llm.handlers["query"] = citing(answer_citing_two_documents)
    text = ask(chat_service, cites, stream)
    assert "[c" not in text and "【" not in text and "Mars." in text  # markers rewritten, [c42] dropped
    answer, notes = text.split("\n\n**Sources**\n")
    lines = notes.splitlines()
    assert sorted(line.split("] ")[1] for line in lines) == ["note.txt", "story.txt"]  # not uncited.txt
    refs = {line.split("] ")[1]: line.split("]")[0][3:] for line in lines}
    assert f"experiment [{refs['story.txt']}]." in answer and f"[{refs['note.txt']}]" in answer
    assert text.count("**Sources**") == 1 and "References" not in text


@pytest.mark.parametrize(("ask", "stream"), CLIENTS)
def test_no_footnotes_when_the_model_wrote_its_references(chat_service, cites, fake_llm: FakeOpenAI, ask, stream):
    fake_llm.handlers["query"] = citing(with_own_references)
    text = ask(chat_service, cites, stream)
    assert "**Sources**" not in text and text.count("story.txt") == 1 and "[c" not in text
