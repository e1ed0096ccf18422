"""`python -m app.worker`: a standalone queue worker (app/worker/queue.py); a refused start is one line."""

import asyncio
import sys

from app.core.startup import StartupRefused
from app.worker.queue import _main

if __name__ == "__main__":
    try:
        asyncio.run(_main())
    except StartupRefused as refusal:
        print(refusal, file=sys.stderr)
        raise SystemExit(2) from None
