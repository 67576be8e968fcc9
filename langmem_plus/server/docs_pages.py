"""The API's documentation pages, `/docs` (Swagger UI) and `/redoc` (ReDoc), served with
their scripts and styles from this server, so they render without a network.

FastAPI's own pages load Swagger UI, ReDoc, a favicon and Google Fonts from CDNs; behind a
firewall or offline they are blank. The assets come from the `fastapi-offline` package (part
of the ``[server]`` extra), which ships them, and are served under ``/docs-assets/``.
Without that package the pages fall back to FastAPI's CDN ones, with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["ASSETS_PREFIX", "assets_dir", "install_docs"]

logger = logging.getLogger("langmem_plus.server")

ASSETS_PREFIX = "/docs-assets"
_ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")


def assets_dir() -> Path | None:
    """The folder holding the Swagger UI and ReDoc assets, or None when not installed."""
    try:
        folder = Path(str(resources.files("fastapi_offline") / "static"))
    except ModuleNotFoundError:
        return None
    return folder if all((folder / name).is_file() for name in _ASSETS) else None


def install_docs(app: Any, title: str, dependencies: Sequence[Any] = ()) -> bool:
    """Serve `/docs` and `/redoc` with local assets on `app` (created with
    ``docs_url=None, redoc_url=None``), each page behind `dependencies` (the assets, which
    hold no data, are not); False when the assets are missing and FastAPI's CDN pages are
    used instead."""
    from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
    from fastapi.staticfiles import StaticFiles

    folder = assets_dir()
    openapi_url = app.openapi_url or "/openapi.json"  # served by the app's own route
    asset = f"{ASSETS_PREFIX}/{{}}".format
    if folder is None:
        logger.warning(
            "the API docs load their scripts from a CDN (blank offline): "
            "pip install fastapi-offline (in the [server] extra) to serve them locally"
        )
        swagger: dict[str, Any] = {}
        redoc: dict[str, Any] = {}
    else:
        app.mount(ASSETS_PREFIX, StaticFiles(directory=folder), name="docs-assets")
        swagger = {
            "swagger_js_url": asset("swagger-ui-bundle.js"),
            "swagger_css_url": asset("swagger-ui.css"),
            "swagger_favicon_url": asset("favicon.png"),
        }
        redoc = {
            "redoc_js_url": asset("redoc.standalone.js"),
            "redoc_favicon_url": asset("favicon.png"),
            "with_google_fonts": False,
        }

    def swagger_ui() -> Any:  # no OAuth2 redirect page: the API takes bearer keys
        return get_swagger_ui_html(
            openapi_url=openapi_url, title=f"{title} - Swagger UI", **swagger
        )

    def redoc_page() -> Any:
        return get_redoc_html(openapi_url=openapi_url, title=f"{title} - ReDoc", **redoc)

    for path, page in (("/docs", swagger_ui), ("/redoc", redoc_page)):
        app.add_api_route(
            path, page, methods=["GET"], include_in_schema=False, dependencies=list(dependencies)
        )
    return folder is not None
