"""The ingest bar's label: failures are counted apart from what was done, and make the label red, so a full bar
never reads as success when it is not."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.text import Text

from app.cli.ingest import progress_label
from app.cli.ingest_files import FileResult


def _files(*statuses: str) -> list[FileResult]:
    return [FileResult(Path(f"f{i}.txt"), 1, document_id=f"d{i}", status=s) for i, s in enumerate(statuses)]


def _rendered(markup: str) -> Text:
    return Text.from_markup(markup)


def test_all_done_is_plain() -> None:
    label = _rendered(progress_label(_files("processed", "processed")))
    assert label.plain == "2 done" and not label.spans


def test_failures_are_counted_and_red() -> None:
    label = _rendered(progress_label(_files(*["processed"] * 16, *["failed"] * 2, "rejected", "cancelled")))
    assert label.plain == "16 done, 2 failed, 1 rejected, 1 cancelled"
    assert {str(span.style) for span in label.spans} == {"bold red"}
    console = Console(force_terminal=True, color_system="standard", width=80)
    with console.capture() as captured:
        console.print(label)
    assert "\x1b[1;31m" in captured.get()  # bold red on a terminal


def test_rejections_alone_are_red_and_named_as_in_the_summary() -> None:
    label = _rendered(progress_label(_files("processed", "rejected")))
    assert label.plain == "1 done, 1 rejected"
    assert {str(span.style) for span in label.spans} == {"bold red"}


def test_while_waiting_it_says_what_is_left() -> None:
    label = _rendered(progress_label(_files("processed", "failed", "processing", "pending"), running=1, queued=1))
    assert label.plain == "1 done, 1 failed, 1 running, 1 queued"
