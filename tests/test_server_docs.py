"""The REST API's `/docs` (Swagger UI) and `/redoc` (ReDoc) render without a network: their
scripts, styles and favicon are served by the app itself.

The fast test reads the pages' HTML: every script, stylesheet and icon is a local path that
the app serves. The slow one loads both pages in headless Chromium with every host but
127.0.0.1 unresolvable, and finds the API's operations drawn (skipped without chromium)."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from langmem_plus.server import create_app
from langmem_plus.server.docs_pages import ASSETS_PREFIX, assets_dir

_REFS = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""")
_URLS = re.compile(r"""https?://""")


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(), base_url="http://localhost") as c:
        yield c


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_pages_reference_only_local_assets(client: TestClient, page: str) -> None:
    assert assets_dir() is not None, "fastapi-offline (the [server] extra) ships the assets"
    resp = client.get(page)
    assert resp.status_code == 200
    html = resp.text
    assert not _URLS.search(html), "a page must load nothing from another host"
    refs = _REFS.findall(html)
    assert refs and all(r.startswith(ASSETS_PREFIX + "/") for r in refs), refs
    for ref in refs:
        asset = client.get(ref)
        assert asset.status_code == 200 and len(asset.content) > 100, ref
    assert "/openapi.json" in html
    assert page not in client.get("/openapi.json").json()["paths"]  # pages stay out of the API


class _Server:
    """uvicorn in a background thread on 127.0.0.1, port chosen by the OS."""

    def __init__(self) -> None:
        import uvicorn

        config = uvicorn.Config(
            create_app(), host="127.0.0.1", port=0, log_level="warning", lifespan="off"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def _rendered(browser: str, url: str) -> str:
    """The page's DOM after its scripts ran, with no host but 127.0.0.1 reachable."""
    run = subprocess.run(
        [
            browser, "--headless=new", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--virtual-time-budget=20000", "--dump-dom", url,
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-1000:]
    return run.stdout


@pytest.mark.slow
@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_the_pages_render_offline_in_a_browser() -> None:
    pytest.importorskip("uvicorn")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    with _Server() as base:
        swagger = _rendered(browser, f"{base}/docs")
        redoc = _rendered(browser, f"{base}/redoc")
    # Swagger UI drew the operations; ReDoc drew the API's paths
    assert 'data-path="/memory/long-term"' in swagger
    assert "opblock-summary-path" in swagger
    assert "/memory/long-term" in redoc and "redoc" in redoc.lower()
