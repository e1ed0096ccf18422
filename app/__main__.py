"""`python -m app` serves the API on HOST:PORT with WORKERS processes (see app/core/config.py).

With WORKERS>1 (or PROMETHEUS_MULTIPROC_DIR set) the server processes share Prometheus multiprocess mode:
each writes its metrics to files in PROMETHEUS_MULTIPROC_DIR (emptied here, before any process starts, so
counters of an earlier run are not added again) and `/metrics` sums every process, whichever one answers.
"""

import os
import shutil
from typing import Any

import uvicorn

from app.core.config import settings_or_exit
from app.core.logging_setup import uvicorn_log_config
from app.core.metrics import MULTIPROC_ENV, prepare_multiprocess_dir


def main() -> None:
    settings = settings_or_exit(needs_database=True)
    created = None
    if settings.workers > 1 or settings.prometheus_multiproc_dir is not None:
        directory, fresh = prepare_multiprocess_dir(settings.prometheus_multiproc_dir)
        created = directory if fresh else None
        os.environ[MULTIPROC_ENV] = str(directory)  # inherited by the server processes uvicorn starts
    log_config = uvicorn_log_config(settings.log_level, settings.log_format)
    logging_option: dict[str, Any] = {"log_config": log_config} if log_config is not None else {}
    try:
        uvicorn.run(
            "app.asgi:app", host=settings.bind_host, port=settings.port, workers=settings.workers, **logging_option
        )
    finally:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)


if __name__ == "__main__":
    main()
