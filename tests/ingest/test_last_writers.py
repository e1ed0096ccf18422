"""LastWriters: an earlier document skips embedding what a later in-flight document rewrote."""

from app.services.ingest.last_writers import LastWriters


def test_the_last_writer_embeds_and_earlier_ones_skip() -> None:
    w = LastWriters()
    a, b = object(), object()
    w.wrote(a, ["x", "y"])
    w.wrote(b, ["x"])
    assert not w.should_embed(a, "x")
    assert w.should_embed(b, "x")
    assert w.should_embed(a, "y")
    assert w.should_embed(a, "never-written")


def test_entries_live_only_while_a_holder_is_in_flight() -> None:
    w = LastWriters()
    a, b = object(), object()
    w.wrote(a, ["x"])
    w.wrote(b, ["x"])
    w.wrote(b, ["x"])  # a second write by the same document holds the item once
    w.release(b)
    assert not w.should_embed(a, "x")  # b embedded the newest text
    w.release(a)
    assert len(w) == 0


def test_a_released_last_writer_keeps_the_item_until_it_is_rewritten() -> None:
    """Ended or failed, the last writer owns the embedding (a failed one embeds the stored text): the earlier
    holders' views are older than its write, so they keep skipping; a new write takes the item over."""
    w = LastWriters()
    a, b, c = object(), object(), object()
    w.wrote(a, ["x"])
    w.wrote(b, ["x"])
    assert w.should_embed(b, "x")  # what a failing b must still embed
    w.release(b)
    assert not w.should_embed(a, "x")
    w.wrote(c, ["x"])
    assert w.should_embed(c, "x") and not w.should_embed(a, "x")
    w.release(a)
    w.release(c)
    assert len(w) == 0
