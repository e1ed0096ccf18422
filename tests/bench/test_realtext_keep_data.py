"""`--keep-data`: a kept database is ingested once and reused only for the same documents cut the same way."""

import asyncio
from pathlib import Path

import pytest

from bench.realtext.service_side import Service


class Counting(Service):
    def __init__(self, kept: Path, stored: int = 0) -> None:
        super().__init__(None, None, kept)
        self.calls, self.stored, self.forgotten = 0, stored, 0

    async def ingest(self, texts: list[str], file_paths: list[str] | None = None) -> float:
        self.calls += 1
        self.stored = len(texts)
        return 12.5

    async def graph_size(self) -> tuple[int, int]:
        return self.stored, 0

    async def forget_keyword_answers(self) -> None:
        self.forgotten += 1


CUT = {"chunk_size": 1200, "chunk_overlap_size": 100, "llm_timeout": 600}


def test_a_kept_folder_is_ingested_once_and_gives_the_first_seconds(tmp_path: Path) -> None:
    first = Counting(tmp_path)
    assert asyncio.run(first.ingest_once(["a", "b"], None, CUT)) == 12.5
    again = Counting(tmp_path, stored=2)
    assert asyncio.run(again.ingest_once(["a", "b"], None, CUT | {"query_lexical": "false"})) == 12.5
    assert (first.calls, again.calls) == (1, 0)
    assert (first.forgotten, again.forgotten) == (0, 1)  # a reused folder's keyword answers are asked anew


def test_other_documents_or_another_cut_are_refused(tmp_path: Path) -> None:
    asyncio.run(Counting(tmp_path).ingest_once(["a", "b"], None, CUT))
    with pytest.raises(SystemExit, match="other documents"):
        asyncio.run(Counting(tmp_path, stored=2).ingest_once(["a", "c"], None, CUT))
    with pytest.raises(SystemExit, match="other documents"):
        asyncio.run(Counting(tmp_path, stored=2).ingest_once(["a", "b"], None, CUT | {"chunk_size": 600}))


def test_an_unfinished_ingestion_is_not_ingested_over(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="unfinished"):
        asyncio.run(Counting(tmp_path, stored=1).ingest_once(["a", "b"], None, CUT))


def test_without_a_kept_folder_every_run_ingests(tmp_path: Path) -> None:
    service = Counting(tmp_path)
    service.kept = None
    asyncio.run(service.ingest_once(["a"], None, CUT))
    asyncio.run(service.ingest_once(["a"], None, CUT))
    assert service.calls == 2 and not list(tmp_path.iterdir())
