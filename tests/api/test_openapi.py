"""openapi.yaml describes exactly what the app serves (regenerate: `python -m app.openapi_export`)."""

from __future__ import annotations

import yaml

from app.openapi_export import TARGET, served_spec


def test_openapi_yaml_matches_served_spec():
    committed = yaml.safe_load(TARGET.read_text(encoding="utf-8"))
    assert committed == served_spec(), "openapi.yaml is stale: run `python -m app.openapi_export`"


async def test_served_openapi_endpoint_matches(client):
    served = (await client.get("/openapi.json")).json()
    assert served == served_spec()
