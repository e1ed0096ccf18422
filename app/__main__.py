"""`python -m app` serves the API (HOST/PORT from the environment, default 0.0.0.0:9621)."""

import os

import uvicorn

if __name__ == "__main__":
    uvicorn.run("app.asgi:app", host=os.environ.get("HOST", "0.0.0.0"), port=int(os.environ.get("PORT", "9621")),
                workers=int(os.environ.get("WORKERS", "1")))
