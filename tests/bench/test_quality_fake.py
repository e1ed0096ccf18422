"""The cost bench's warm-up: the fake answering two worlds' documents, each from its own world, and the
callgrind window flag taken out of the quality bench's arguments."""

from __future__ import annotations

from bench.quality_fake import _Either
from bench.quality_world import build_world
from bench.resolution_instructions import WINDOW_FLAG, window_hooks
from tests.support.fakes.world_model import WorldModel


def _asked(text: str) -> list[dict]:
    return [{"role": "user", "content": f"Extract from this text.\n```\n{text}\n```"}]


def _names(answer: str) -> set[str]:
    return {line.split("<|#|>")[1] for line in answer.splitlines() if line.startswith("entity<|#|>")}


def test_each_chunk_is_answered_from_the_world_that_holds_its_document() -> None:
    measured, warm = build_world(7, 40, 6, True), build_world(8, 40, 6, True)
    either = _Either(WorldModel(measured), WorldModel(warm))
    for world in (measured, warm):
        doc = world.documents[0]
        expected = _names(WorldModel(world).extract(_asked(doc.text)))
        assert expected, "the document names entities"
        assert _names(either.extract(_asked(doc.text))) == expected
    assert set(measured.documents[0].mentions) != set(warm.documents[0].mentions)


def test_window_flag_is_taken_out_and_other_arguments_kept() -> None:
    plain = ["--no-queries", "--docs", "10"]
    assert window_hooks(plain) == plain
    import bench.quality_bench as quality

    before = (quality._ingest, quality.POLL_SECONDS)
    try:
        assert window_hooks([*plain, WINDOW_FLAG]) == plain
        assert quality.POLL_SECONDS == 5.0
        assert quality._ingest is not before[0]
    finally:
        quality._ingest, quality.POLL_SECONDS = before
