"""Write the served OpenAPI document to openapi.yaml: `python -m app.web.openapi_export`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from app.core.config import Settings
from app.main import create_app

TARGET = Path(__file__).resolve().parents[2] / "openapi.yaml"


def served_spec() -> dict:
    app = create_app(Settings(_env_file=None))
    return json.loads(json.dumps(app.openapi()))


def main() -> None:
    text = yaml.safe_dump(served_spec(), sort_keys=False, allow_unicode=True, width=120)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}", file=sys.stderr)


if __name__ == "__main__":
    main()
