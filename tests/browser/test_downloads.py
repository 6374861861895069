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


def test_the_closing_page_gives_one_zip_to_take_home(page, base_url, site_dir, tmp_path):
    """Once lab 16.4 has passed, its "Take my harness home" button gives one zip: the harness that
    passed, agent.py as the page's lab folder has it, and a README; agent.py runs from it."""
    import json
    from pathlib import Path
    import stages
    harness = stages.load().solution("16.4")
    page.goto(base_url + "closing.html")
    button = page.locator("#lab-16-4 .lab-take-home")
    button.wait_for(state="attached", timeout=15_000)   # the labs are built after the saved work is read
    assert button.count() == 1 and button.is_hidden(), "offered before the lab passed"
    work = {"format": 1, "saved": "", "answers": {}, "hints": {}, "cells": {},
            "labs": {"16-4": {"passed": True, "passedCode": harness}}}
    page.evaluate(f"localStorage.setItem('agent-harness-book/work', {json.dumps(json.dumps(work))})")
    page.reload()
    button.wait_for(state="visible", timeout=15_000)
    assert page.locator("#lab-16-1 .lab-take-home").count() == 0
    with page.expect_download() as info:
        button.click()
    assert info.value.suggested_filename == "my-agent.zip"
    archive = tmp_path / "my-agent.zip"
    info.value.save_as(archive)
    with zipfile.ZipFile(archive) as zipped:
        assert zipped.testzip() is None
        assert sorted(zipped.namelist()) == ["my-agent/README.md", "my-agent/agent.py",
                                             "my-agent/harness.py"]
        zipped.extractall(tmp_path)
    folder = tmp_path / "my-agent"
    assert (folder / "harness.py").read_text() == harness
    assert (folder / "agent.py").read_bytes() == (site_dir / "downloads" / "lesson-16" / "agent.py").read_bytes()
    assert "--resume" in (folder / "README.md").read_text()
    project = tmp_path / "project"
    project.mkdir()
    done = subprocess.run([sys.executable, "agent.py", "--folder", str(project), "--base-url",
                           "http://127.0.0.1:9/v1", "--resume"], cwd=folder, capture_output=True,
                          text=True, timeout=60)
    # the zip's harness imports and is the finished one: the only complaint is the empty session
    assert done.returncode == 2 and "no session" in done.stderr, done.stderr
    assert Path(project).exists() and not (project / ".agent").exists()
