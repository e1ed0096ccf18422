"""Run by tests/infra/test_temp_leftovers.py in a pytest of its own (not collected otherwise: no `test_`
file name): tests that write to the temp folder the ways the suite does, and one that waits to be killed."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from tests.support.database import PgCluster


def test_writes_everywhere(pg_cluster: PgCluster, tmp_path: Path) -> None:
    (tmp_path / "upload.txt").write_text("kept by pytest's tmp_path\n")
    Path(tempfile.mkdtemp(prefix="lrs-export-"), "graph.xlsx").write_bytes(b"an export's work file")
    with tempfile.NamedTemporaryFile(delete=False, suffix=".pdf") as handle:  # a file nobody removes
        handle.write(b"%PDF")


def test_waits_to_be_killed(pg_cluster: PgCluster) -> None:
    Path(os.environ["LEFTOVERS_READY"]).write_text(str(os.getpid()))
    time.sleep(300)
