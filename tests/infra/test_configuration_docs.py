"""Every setting is documented in .env.example and the README, and .env.example parses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dotenv import dotenv_values

from app.core.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def _env_names() -> set[str]:
    return {name.upper() for name in Settings.model_fields}


def _example_names() -> set[str]:
    """Names .env.example sets, and names it shows commented out (`# LLM_MODEL=gpt-4o-mini`)."""
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    return set(dotenv_values(ROOT / ".env.example")) | set(re.findall(r"^# ?([A-Z][A-Z0-9_]*)=", text, re.MULTILINE))


def test_env_example_lists_every_setting():
    documented = _example_names()
    assert _env_names() - documented == set()
    assert documented - _env_names() == set()


def test_readme_mentions_every_setting():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = sorted(name for name in _env_names() if name not in readme)
    assert missing == []


def test_env_example_values_are_valid_settings():
    values = {k.lower(): v for k, v in dotenv_values(ROOT / ".env.example").items() if v not in (None, "")}
    Settings(_env_file=None, **values)


def test_env_example_as_shipped_loads_and_empty_values_mean_unset(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text((ROOT / ".env.example").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for name in _env_names():
        monkeypatch.delenv(name, raising=False)
    settings = Settings()
    defaults = Settings(_env_file=None)
    assert settings.llm_temperature is None and settings.database_url is None
    assert settings.data_dir == defaults.data_dir  # `DATA_DIR=` is not "./"
    assert settings.chunk_split_by_character is None and settings.api_keys == []
    # no provider until the user names one: the quick start's curl answers 503 llm_not_configured at once
    # instead of calling a provider without a key
    assert not settings.llm_configured and not settings.embedding_configured
    monkeypatch.setenv("LLM_TEMPERATURE", "")
    assert Settings().llm_temperature is None


async def test_app_starts_with_env_example_as_shipped(tmp_path, monkeypatch, database_url):
    import httpx  # noqa: PLC0415

    from app.main import create_app  # noqa: PLC0415

    (tmp_path / ".env").write_text((ROOT / ".env.example").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for name in _env_names():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATABASE_URL", database_url)  # the test cluster instead of a new embedded server
    monkeypatch.setenv("EMBEDDING_DIM", "64")
    app = create_app(Settings())
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            health = await client.get("/health")
    assert health.status_code == 200, health.text


def test_open_api_binds_to_loopback_unless_keys_or_host_are_set():
    assert Settings(_env_file=None).bind_host == "127.0.0.1"
    assert Settings(_env_file=None, api_keys=["k"]).bind_host == "0.0.0.0"
    assert Settings(_env_file=None, host="0.0.0.0").bind_host == "0.0.0.0"


@pytest.mark.slow  # a `python -m` process per module
@pytest.mark.parametrize("module", ["app", "app.worker"])
def test_invalid_settings_stop_the_start_with_one_line_each(tmp_path, module):
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    env = {"PATH": "/usr/bin:/bin", "LLM_TEMPERATURE": "warm", "PORT": "70000", "HOME": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-m", module],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    lines = sorted(line.strip() for line in run.stderr.splitlines() if line.startswith("  "))
    assert len(lines) == 2
    assert lines[0].startswith("LLM_TEMPERATURE='warm': ") and "number" in lines[0]
    assert lines[1].startswith("PORT='70000': ") and "65535" in lines[1]
