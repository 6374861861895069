"""An unknown address gets the book's 404 page, with a way back, from serve.py (the built book
and the downloaded one alike)."""
from __future__ import annotations

import threading
import urllib.error
import urllib.request
from pathlib import Path

from builder.pipeline import build
from builder.project import Project
from test_serve import serve

ROOT = Path(__file__).resolve().parents[1]


def test_an_unknown_address_gets_the_404_page_with_a_way_back(tmp_path):
    site = tmp_path / "site"
    build(Project.at(ROOT / "tests" / "fixtures" / "book"), site, assets=False, log=lambda line: None)
    server = serve.make_server(site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/lesson-42.html"
        try:
            urllib.request.urlopen(url, timeout=10)
            raise AssertionError("an unknown page was served")
        except urllib.error.HTTPError as error:
            assert error.code == 404
            page = error.read().decode("utf-8")
        assert "No such page" in page and 'href="index.html"' in page
        assert 'href="lesson-01.html"' in page
    finally:
        server.shutdown()
        server.server_close()
