"""A small on-disk key-value cache (SQLite) under the bench's cache folder: NLP parses and embeddings are
computed once per text and model, so reruns skip them."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

DEFAULT_DIR = Path(__file__).resolve().parents[2] / ".bench-cache"


class DiskCache:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
        self._lock = threading.Lock()

    @staticmethod
    def key(*parts: str) -> str:
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                marks = ",".join("?" * len(part))
                found.update(self._db.execute(f"SELECT key, value FROM kv WHERE key IN ({marks})", part).fetchall())  # noqa: S608
        return found

    def put_many(self, items: dict[str, bytes]) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO kv VALUES (?, ?)", list(items.items()))
            self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()
