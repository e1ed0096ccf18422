"""The suite never reads a developer's `.env`, in its own process or in the processes it starts; outside tests
the entry points read `.env` (or the file ENV_FILE names)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.config import get_settings

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "EMBEDDING_BASE_URL=http://127.0.0.1:9/v1\nLLM_MODEL=hostile-model\nEMBEDDING_DIM=768\n"
PRINT_SETTINGS = (
    "from app.core.config import get_settings; s = get_settings(); "
    "print(s.embedding_base_url, s.llm_model, s.embedding_dim)"
)


@pytest.fixture
def fresh_settings():
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_a_dotenv_in_the_working_directory_reaches_no_test(tmp_path, monkeypatch, fresh_settings):
    (tmp_path / ".env").write_text(HOSTILE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    settings = get_settings()
    assert (settings.embedding_base_url, settings.llm_model, settings.embedding_dim) == (None, None, 1536)


def test_a_dotenv_reaches_no_process_a_test_starts(tmp_path):
    """Workers, servers and CLI runs started by tests inherit the suite's environment, which reads no .env."""
    (tmp_path / ".env").write_text(HOSTILE, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-c", PRINT_SETTINGS],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
        check=True,
    )
    assert run.stdout.split() == ["None", "None", "1536"]


def test_entry_points_read_the_working_directory_dotenv_or_env_file(tmp_path, monkeypatch, fresh_settings):
    (tmp_path / ".env").write_text(HOSTILE, encoding="utf-8")
    (tmp_path / "other.env").write_text("LLM_MODEL=named-model\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ENV_FILE")
    assert get_settings().llm_model == "hostile-model"
    get_settings.cache_clear()
    monkeypatch.setenv("ENV_FILE", str(tmp_path / "other.env"))
    assert get_settings().llm_model == "named-model"
