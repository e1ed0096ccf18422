"""The web UI: static ES modules and CSS in app/web/ui_static/, served at /ui/ (`/` and `/ui` redirect there).

No build step and no CDN: the page and the graph library it uses (app/web/ui_static/vendor/) are files of this
package. The files are open to anyone (app/web/auth.py lets GET/HEAD under /ui/ through); the page asks for an API
key when a call answers 401 and sends it with every API call.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

UI_DIR = Path(__file__).resolve().parent / "ui_static"
# The page runs only its own scripts and talks only to this service.
_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; "
    "object-src 'none'; base-uri 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class UIFiles(StaticFiles):
    """StaticFiles that serves index.html for the folder and adds the security headers to every answer."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.update(_SECURITY_HEADERS)
        if path in (".", "index.html"):
            response.headers["Cache-Control"] = "no-cache"  # the page must pick up new module versions
        return response


async def _to_ui(request: Request) -> RedirectResponse:
    # a path without scheme and host: an absolute URL would be built from the Host header the client sent
    return RedirectResponse(f"{request.scope.get('root_path', '').rstrip('/')}/ui/", status_code=307)


def install_ui(app: FastAPI) -> None:
    """Serve the web UI at /ui/ and redirect `/` and `/ui` there (outside the OpenAPI description)."""
    app.add_route("/", _to_ui, methods=["GET", "HEAD"], include_in_schema=False)
    app.add_route("/ui", _to_ui, methods=["GET", "HEAD"], include_in_schema=False)
    app.mount("/ui", UIFiles(directory=UI_DIR, html=True), name="ui")
