"""Failures print one clear line on stderr and exit non-zero, never a traceback."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from app.cli.errors import EXIT_AUTH, EXIT_UNREACHABLE, EXIT_USAGE
from tests.cli.conftest import LiveService


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens here once the socket is closed


@pytest.mark.parametrize("api_key", ["wrong-key", ""])
def test_a_wrong_or_missing_api_key_is_one_clear_line(live_service: LiveService, api_key: str):
    result = live_service.run("documents", api_key=api_key)

    assert result.exit_code == EXIT_AUTH
    assert result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: HTTP 401 ") and "--api-key" in line and "LIGHTRAG_API_KEY" in line


def test_an_unreachable_service_is_one_clear_line(live_service: LiveService):
    url = f"http://127.0.0.1:{_closed_port()}"
    result = live_service.run("status", url=url)

    assert result.exit_code == EXIT_UNREACHABLE
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: cannot connect to the service at {url}: ") and "Connection refused" in line


@pytest.mark.slow  # a `python -m app.cli` process
def test_the_installed_command_reports_errors_without_a_traceback():
    url = f"http://127.0.0.1:{_closed_port()}"
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "--url", url, "query", "hello"], capture_output=True, text=True, timeout=60
    )

    assert done.returncode == EXIT_UNREACHABLE
    assert done.stdout == ""
    assert done.stderr.startswith(f"error: cannot connect to the service at {url}")
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_url_that_is_not_http_is_a_usage_error(live_service: LiveService):
    result = live_service.run("status", url="ftp://example.org")

    assert result.exit_code == EXIT_USAGE
    assert "is not an http:// or https:// URL" in result.stderr


def test_an_invalid_request_shows_the_service_detail(live_service: LiveService):
    result = live_service.run("documents", project="Not A Project!")

    assert result.exit_code == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: HTTP 422 validation_error: ") and "project_id" in line
