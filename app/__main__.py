"""`python -m app` serves the API on HOST:PORT with WORKERS processes (see app/config.py)."""

import sys

import uvicorn
from pydantic import ValidationError

from app.config import get_settings, settings_problems


def main() -> None:
    try:
        settings = get_settings()
    except ValidationError as exc:  # one clear line per bad variable, no traceback
        print("Invalid settings (environment or .env):", *settings_problems(exc), sep="\n  ", file=sys.stderr)
        sys.exit(2)
    uvicorn.run("app.asgi:app", host=settings.bind_host, port=settings.port, workers=settings.workers)


if __name__ == "__main__":
    main()
