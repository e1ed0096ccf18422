"""Start-up objects are frozen out of the collector's way once per process; later garbage is still collected."""

from __future__ import annotations

import gc
import weakref

from app.core.process_gc import freeze_start_up_objects
from tests.conftest import AppClient


async def test_an_app_start_freezes_the_start_up_objects(app_client: AppClient) -> None:
    assert gc.get_freeze_count() > 0
    assert (await app_client.http.get("/health")).status_code == 200


def test_freezing_happens_once_and_later_cyclic_garbage_is_still_collected() -> None:
    freeze_start_up_objects()
    frozen = gc.get_freeze_count()
    kept = [object() for _ in range(1000)]
    freeze_start_up_objects()
    assert gc.get_freeze_count() == frozen  # the later objects stay in the scanned generations

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle: only the collector can free it
    gone = weakref.ref(a)
    del a, b
    gc.collect()
    assert gone() is None
    assert len(kept) == 1000
