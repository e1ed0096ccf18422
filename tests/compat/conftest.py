"""The LightRAG Server compatibility routes served on a loopback port (embedded PostgreSQL, fake LLM) behind two
API keys: one for every project and one scoped to the project "other". Requests are shaped like LightRAG's
official client and WebUI send them: JSON bodies, multipart uploads, the LIGHTRAG-WORKSPACE header."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.support.database import PgCluster
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.live_server import live_app

ADMIN_KEY = "compat-admin-key"
SCOPED_KEY = "compat-scoped-key"
PREFIX = "/lightrag"
STORY = (
    "Charlie Gordon is a baker who takes part in an experiment. Alice Kinnian teaches Charlie Gordon to read "
    "at the Beekman school."
)
NOTE = "Professor Nemur leads the research. Doctor Strauss performs the surgery on Algernon."


@dataclass
class CompatService:
    url: str

    def http(self, key: str = ADMIN_KEY, workspace: str | None = None) -> httpx.Client:
        headers = {"X-API-Key": key}
        if workspace is not None:
            headers["LIGHTRAG-WORKSPACE"] = workspace
        return httpx.Client(base_url=self.url + PREFIX, headers=headers, timeout=60)


def wait_for_track(http: httpx.Client, track_id: str, timeout: float = 60) -> dict:
    """Poll /documents/track_status like LightRAG's client does until every document is processed or failed."""
    deadline = time.monotonic() + timeout
    while True:
        body = http.get(f"/documents/track_status/{track_id}").raise_for_status().json()
        if body["total_count"] and all(d["status"] in ("processed", "failed") for d in body["documents"]):
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.02)


@pytest.fixture(scope="package")
def compat_service(pg_cluster: PgCluster, fake_server: FakeOpenAI) -> Iterator[CompatService]:
    with live_app(
        pg_cluster, fake_server, f"compat_{os.getpid()}", api_keys=[ADMIN_KEY, f"{SCOPED_KEY}:other"]
    ) as server:
        service = CompatService(server.url)
        fake_server.reset()
        with httpx.Client(base_url=server.url, headers={"X-API-Key": ADMIN_KEY}) as root:
            root.post("/projects", json={"id": "other"}).raise_for_status()
        for workspace, text, source in (("", STORY, "story.txt"), ("other", NOTE, "note.txt")):
            with service.http(workspace=workspace) as http:
                inserted = http.post("/documents/text", json={"text": text, "file_source": source})
                inserted.raise_for_status()
                assert wait_for_track(http, inserted.json()["track_id"])["status_summary"] == {"processed": 1}
        yield service
