"""read_ahead: a stream is read to its end (and so closed, its LLM slot freed) without waiting for its reader;
unread text is bounded; errors arrive after the pieces before them; closing the reader closes the stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

import pytest

from app.core.errors import ProviderError
from app.providers.read_ahead import ITEM_OVERHEAD, ReadAheadOverflow, read_ahead

WAIT = 30.0


class Source:
    def __init__(self, pieces: list[str], error: Exception | None = None) -> None:
        self.pieces, self.error = pieces, error
        self.given = 0
        self.closed = asyncio.Event()

    async def stream(self) -> AsyncGenerator[str, None]:
        try:
            for piece in self.pieces:
                await asyncio.sleep(0)
                self.given += 1
                yield piece
            if self.error is not None:
                raise self.error
        finally:
            self.closed.set()


async def test_the_source_is_read_to_its_end_while_the_reader_waits():
    source = Source([f"piece {i} " for i in range(50)])
    reader = read_ahead(source.stream(), 1 << 20)
    assert await reader.__anext__() == "piece 0 "
    await asyncio.wait_for(source.closed.wait(), WAIT)  # ended with 49 pieces unread
    assert source.given == 50
    assert [piece async for piece in reader] == [f"piece {i} " for i in range(1, 50)]


async def test_unread_text_past_the_limit_stops_the_source():
    source = Source(["x" * 100] * 10)
    reader = read_ahead(source.stream(), 3 * (100 + ITEM_OVERHEAD))
    assert await reader.__anext__() == "x" * 100
    await asyncio.wait_for(source.closed.wait(), WAIT)
    assert source.given < 10
    rest = []
    with pytest.raises(ReadAheadOverflow):
        async for piece in reader:
            rest.append(piece)
    assert 1 + len(rest) == source.given


async def test_a_source_error_comes_after_the_pieces_before_it():
    source = Source(["a", "b"], ProviderError("the model failed"))
    reader = read_ahead(source.stream(), 1 << 20)
    got = []
    with pytest.raises(ProviderError, match="the model failed"):
        async for piece in reader:
            got.append(piece)
    assert got == ["a", "b"]


async def test_closing_the_reader_closes_the_source_at_once():
    source = Source(["a"] * 1000)
    reader = read_ahead(source.stream(), 1 << 30)
    assert await reader.__anext__() == "a"
    await reader.aclose()
    assert source.closed.is_set() and source.given < 1000
