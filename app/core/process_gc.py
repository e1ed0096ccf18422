"""Start-up objects out of the garbage collector's way.

A service process holds hundreds of thousands of objects that live as long as it does: modules, classes,
the SQLAlchemy, pydantic and HTTP client machinery, the container. CPython's collector walks all of them on
each full collection, and work that allocates many short-lived containers (a batch deletion decoding the
records of thousands of chunks, a large query context) triggers full collections again and again: 13-17% of
a deletion's time on a 2-core machine (bench/batch_delete_bench.py, one document and fifty). Freezing what
exists once start-up is done moves it to a generation the collector never scans; garbage made later is
collected as before.
"""

from __future__ import annotations

import gc

_frozen = False


def freeze_start_up_objects() -> None:
    """Once per process, when start-up is done (later calls do nothing: a test process starts many apps)."""
    global _frozen
    if _frozen:
        return
    _frozen = True
    gc.collect()
    gc.freeze()
