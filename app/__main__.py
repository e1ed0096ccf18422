"""`python -m app` serves the API on HOST:PORT with WORKERS processes (see app/config.py)."""

import uvicorn

from app.config import settings_or_exit


def main() -> None:
    settings = settings_or_exit(needs_database=True)
    uvicorn.run("app.asgi:app", host=settings.bind_host, port=settings.port, workers=settings.workers)


if __name__ == "__main__":
    main()
