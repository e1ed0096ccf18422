"""The chat APIs served on a loopback port (embedded PostgreSQL, fake LLM) behind two API keys: one for every
project and one scoped to the project "other". The default project holds a short story, "other" a note."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.support.database import PgCluster
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.live_server import live_app

ADMIN_KEY = "chat-admin-key"
SCOPED_KEY = "chat-scoped-key"
STORY = (
    "Charlie Gordon is a baker who takes part in an experiment. Alice Kinnian teaches Charlie Gordon to read "
    "at the Beekman school."
)
NOTE = "Professor Nemur leads the research. Doctor Strauss performs the surgery on Algernon."


@dataclass
class ChatService:
    url: str

    def http(self, key: str = ADMIN_KEY) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=60)


def _ingest(http: httpx.Client, project_id: str, text: str, file_path: str) -> None:
    response = http.post(
        "/documents",
        json={"project_id": project_id, "wait": True, "documents": [{"text": text, "file_path": file_path}]},
    )
    response.raise_for_status()
    assert response.json()["documents"][0]["status"] == "processed", response.text


@pytest.fixture(scope="package")
def chat_service(pg_cluster: PgCluster, fake_server: FakeOpenAI) -> Iterator[ChatService]:
    with live_app(
        pg_cluster, fake_server, f"chat_{os.getpid()}", api_keys=[ADMIN_KEY, f"{SCOPED_KEY}:other"]
    ) as server:
        service = ChatService(server.url)
        fake_server.reset()
        with service.http() as http:
            http.post("/projects", json={"id": "other"}).raise_for_status()
            _ingest(http, "default", STORY, "story.txt")
            _ingest(http, "other", NOTE, "note.txt")
        yield service


def spent(fake: FakeOpenAI) -> tuple[int, int]:
    """Prompt and completion tokens of every LLM call the fake answered since its reset."""
    return sum(c.prompt_tokens for c in fake.calls), sum(c.completion_tokens for c in fake.calls)
