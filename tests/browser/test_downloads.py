"""Every download link of the built book, fetched from a static server that lists no folders (as
GitHub Pages and Netlify do not), and every lab's zip unzipped and run with plain CPython, the way a
reader on their own machine does it."""
from __future__ import annotations

import functools
import http.server
import io
import subprocess
import sys
import zipfile
from html.parser import HTMLParser
from urllib.error import HTTPError
from urllib.request import urlopen

import pytest

from fixture_site import running


class NoListings(http.server.SimpleHTTPRequestHandler):
    """A plain static host: files only, a folder is a 404 (unless it has an index.html)."""

    def list_directory(self, path):
        self.send_error(404, "No listing here")
        return None

    def log_message(self, *args) -> None:
        pass


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        href = dict(attrs).get("href") or ""
        if tag == "a" and href.startswith("downloads/"):
            self.hrefs.append(href)


@pytest.fixture(scope="module")
def static_url(site_dir):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(NoListings, directory=str(site_dir)))
    with running(server) as url:
        yield url


def lab_pages(site_dir):
    return sorted(p for p in site_dir.glob("*.html") if 'class="lab"' in p.read_text(encoding="utf-8"))


def test_every_download_link_is_a_file_a_static_host_serves(site_dir, static_url):
    pages = lab_pages(site_dir)
    assert len(pages) >= 11
    for page in pages:
        links = Links()
        links.feed(page.read_text(encoding="utf-8"))
        assert any(h.endswith(".zip") for h in links.hrefs), f"{page.name} offers no zip"
        for href in sorted(set(links.hrefs)):
            assert not href.endswith("/"), f"{page.name} links a folder, which a static host does not list: {href}"
            try:
                with urlopen(static_url + href) as response:
                    assert response.status == 200 and response.read(), href
            except HTTPError as error:
                pytest.fail(f"{page.name}: {href} is {error.code} on a static host")


def test_each_zip_unzips_to_a_lab_folder_that_runs_under_cpython(site_dir, static_url, tmp_path):
    for zipped in sorted((site_dir / "downloads").glob("lesson-*.zip")):
        with urlopen(static_url + f"downloads/{zipped.name}") as response:
            archive = zipfile.ZipFile(io.BytesIO(response.read()))
        folder = zipped.stem
        names = set(archive.namelist())
        assert {f"{folder}/harness.py", f"{folder}/tests.py", f"{folder}/lab/__init__.py",
                f"{folder}/lab/lab_check.py"} <= names, f"{zipped.name}: {sorted(names)}"
        archive.extractall(tmp_path)
        lesson = folder.removeprefix("lesson-")
        done = subprocess.run([sys.executable, "lab/lab_check.py", "--harness", "harness.py", "--lesson",
                               lesson, "tests.py"], cwd=tmp_path / folder, capture_output=True, text=True,
                              timeout=300)
        last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
        # the starting file has gaps: its tests run and fail, one line each, never a usage error
        assert done.returncode == 1 and " passed, " in last and " failed" in last, \
            f"{zipped.name}: exit {done.returncode}\n{done.stdout[-800:]}\n{done.stderr[-800:]}"
