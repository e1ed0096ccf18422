"""Every setting is documented in .env.example and the README, and .env.example parses."""

from __future__ import annotations

from pathlib import Path

from dotenv import dotenv_values

from app.config import Settings

ROOT = Path(__file__).resolve().parents[1]


def _env_names() -> set[str]:
    return {name.upper() for name in Settings.model_fields}


def test_env_example_lists_every_setting():
    documented = set(dotenv_values(ROOT / ".env.example"))
    assert _env_names() - documented == set()
    assert documented - _env_names() == set()


def test_readme_mentions_every_setting():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = sorted(name for name in _env_names() if name not in readme)
    assert missing == []


def test_env_example_values_are_valid_settings():
    values = {k.lower(): v for k, v in dotenv_values(ROOT / ".env.example").items() if v not in (None, "")}
    Settings(_env_file=None, **values)
