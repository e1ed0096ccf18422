"""docker-compose scrapes every process: the optional prometheus service mounts deploy/prometheus.yml, which
scrapes the API and every worker replica on the ports the services and the image really use; the worker
keeps its health check; the configuration documents the metrics settings."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from app.core.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))


def test_compose_prometheus_scrapes_the_api_and_every_worker():
    services = _compose()["services"]
    prometheus = services["prometheus"]
    assert prometheus["profiles"] == ["monitoring"]  # optional: not started by a plain `docker compose up`
    assert re.fullmatch(r"prom/prometheus:v\d+\.\d+\.\d+", prometheus["image"])  # pinned
    assert prometheus["healthcheck"]["test"]
    mounted = {v.split(":")[0]: v.split(":")[1] for v in prometheus["volumes"]}
    assert mounted["./deploy/prometheus.yml"] == "/etc/prometheus/prometheus.yml"

    config = yaml.safe_load((ROOT / "deploy/prometheus.yml").read_text(encoding="utf-8"))
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    api_port = str(Settings.model_fields["port"].default)
    assert [f"api:{api_port}"] == jobs["lightrag-api"]["static_configs"][0]["targets"]
    assert f"{api_port}:{api_port}" in services["api"]["ports"]
    (discovery,) = jobs["lightrag-worker"]["dns_sd_configs"]
    assert discovery["names"] == ["worker"] and discovery["type"] == "A"  # every `--scale worker=N` replica
    assert str(discovery["port"]) == str(services["worker"]["environment"]["WORKER_PORT"])
    assert all(job.get("metrics_path", "/metrics") == "/metrics" for job in jobs.values())
    assert set(prometheus["depends_on"]) == {"api", "worker"}


def test_worker_service_is_health_checked_on_its_own_port():
    worker = _compose()["services"]["worker"]
    port = str(worker["environment"]["WORKER_PORT"])
    assert f"http://127.0.0.1:{port}/health" in " ".join(worker["healthcheck"]["test"])
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(rf"^EXPOSE .*\b{port}\b", dockerfile, flags=re.MULTILINE)
    assert f"WORKER_PORT={port}" in dockerfile


def test_metrics_and_log_settings_are_documented():
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in ("PROMETHEUS_MULTIPROC_DIR", "LOG_FORMAT"):
        assert re.search(rf"^{name}=", example, flags=re.MULTILINE), name
        assert f"`{name}`" in readme, name
    assert "deploy/prometheus.yml" in _compose_text()


def _compose_text() -> str:
    return (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
