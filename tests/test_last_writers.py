"""LastWriters: an earlier document skips embedding what a later in-flight document rewrote."""

from app.services.last_writers import LastWriters


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
    w.release(b, embedded=True)
    assert not w.should_embed(a, "x")  # b embedded the newest text
    w.release(a, embedded=True)
    assert len(w) == 0


def test_a_last_writer_that_failed_hands_the_item_back() -> None:
    w = LastWriters()
    a, b = object(), object()
    w.wrote(a, ["x"])
    w.wrote(b, ["x"])
    w.release(b, embedded=False)
    assert w.should_embed(a, "x")
