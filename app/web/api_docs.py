"""The API's interactive docs, /docs (Swagger UI) and /redoc (ReDoc), served with their files from this service.

Their scripts and styles come from the `fastapi-offline` package (its static files only), so the pages work with
no internet access. The pages and their files are open like the web UI's (app/web/auth.py); the API description
(/openapi.json) needs a key unless PUBLIC_DOCS is set: the page's own script (app/web/ui_static/docs/) fetches it with
the key this browser tab keeps, asking for one when the service refuses, and sends that key with "Try it out"
calls unless the Authorize button set another.
"""

from __future__ import annotations

from html import escape

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

from app.web.ui import UI_DIR

ASSETS_PATH = "/docs/assets"
_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "worker-src 'self' blob:; object-src 'none'; base-uri 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
_VIEWERS = {  # page → (title suffix, its library's files, the element it renders into)
    "swagger": ("Swagger UI", ["swagger-ui.css", "swagger-ui-bundle.js"], "swagger-ui"),
    "redoc": ("ReDoc", ["redoc.standalone.js"], "redoc"),
}


def _page(request: Request, viewer: str) -> HTMLResponse:
    title, files, element = _VIEWERS[viewer]
    root = request.scope.get("root_path", "").rstrip("/")
    assets = f"{root}{ASSETS_PATH}"
    links = "".join(f'<link rel="stylesheet" href="{assets}/{name}">' for name in files if name.endswith(".css"))
    scripts = "".join(f'<script src="{assets}/{name}"></script>' for name in files if name.endswith(".js"))
    name = escape(f"{request.app.title} - {title}")
    html = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{name}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="{assets}/favicon.png">{links}<link rel="stylesheet" href="{assets}/api-docs.css">
</head><body data-viewer="{viewer}" data-spec="{escape(root)}/openapi.json">
<form id="key-form" hidden><p id="key-reason"></p>
<input id="key-input" type="password" autocomplete="off" placeholder="API key" aria-label="API key">
<button type="submit">Show the API</button></form>
<div id="{element}"></div>{scripts}<script src="{assets}/api-docs.js"></script>
</body></html>"""
    return HTMLResponse(html, headers=_SECURITY_HEADERS)


async def _swagger(request: Request) -> HTMLResponse:
    return _page(request, "swagger")


async def _redoc(request: Request) -> HTMLResponse:
    return _page(request, "redoc")


def install_api_docs(app: FastAPI) -> None:
    """/docs, /redoc and their files (outside the OpenAPI description). Build the app with docs_url=None and
    redoc_url=None so FastAPI's own CDN-loading pages are not added."""
    app.add_route("/docs", _swagger, methods=["GET", "HEAD"], include_in_schema=False)
    app.add_route("/redoc", _redoc, methods=["GET", "HEAD"], include_in_schema=False)
    files = StaticFiles(directory=UI_DIR / "docs", packages=[("fastapi_offline", "static")])
    app.mount(ASSETS_PATH, files, name="api-docs-assets")
