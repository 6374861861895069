"""Offline study, in Chromium: the service worker saves the whole book, serves it with the server
stopped and the network off (cross-origin isolated, Pyodide included), replaces a build whole, and
a page opened from the disk says how to run code.

Two books: a small one assembled here (real Pyodide, a test worker, two pages) to pin the worker's
behaviour whatever the build does, and the real book, unzipped from `builder.dist`'s zip and served
by the serve.py inside it."""
from __future__ import annotations

import json
import queue
import shutil
import socket
import subprocess
import sys
import threading
import zipfile
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from builder import offline  # noqa: E402
from builder.assets import NODE_MODULES, PYODIDE_FILES  # noqa: E402

NOTICE = """<p id="file-notice" class="file-notice" hidden>Opened as a file, this page reads in full
but cannot run its code. To run it, open a terminal in the book's folder and type:
<code>python3 serve.py</code></p>
<script>if (location.protocol === "file:") document.getElementById("file-notice").hidden = false;</script>"""

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>{title}</title></head><body>
{notice}<h1>{title}</h1><p id="text">{text}</p>
<script type="module">import {{ init }} from "./assets/js/offline.js"; init();</script>
</body></html>"""

# A stand-in for the book's runtime: Pyodide in a module worker, answering one expression.
TEST_WORKER = """import { loadPyodide } from "../../pyodide/pyodide.mjs";
const ready = loadPyodide({ indexURL: new URL("../../pyodide/", import.meta.url).href });
self.onmessage = async ({ data }) => {
  try {
    const pyodide = await ready;
    self.postMessage({ result: String(pyodide.runPython(data)), isolated: self.crossOriginIsolated });
  } catch (error) {
    self.postMessage({ error: String(error) });
  }
};"""

RUN_PYTHON = """async (source) => {
  const worker = new Worker("assets/js/test-worker.js", { type: "module" });
  const answer = await new Promise((resolve) => {
    worker.onmessage = ({ data }) => resolve(data);
    worker.onerror = (event) => resolve({ error: event.message || "worker failed to start" });
    worker.postMessage(source);
  });
  worker.terminate();
  return answer;
}"""

CACHES = """async () => {
  const names = await caches.keys();
  const sizes = {};
  for (const name of names) sizes[name] = (await (await caches.open(name)).keys()).length;
  return sizes;
}"""

CONTROLLED = "() => navigator.serviceWorker && navigator.serviceWorker.controller !== null"


def small_book(root: Path, text: str = "version A") -> Path:
    """A two-page book with the real offline.js, sw.js and Pyodide, and the offline list."""
    (root / "assets" / "js").mkdir(parents=True, exist_ok=True)
    (root / "pyodide").mkdir(exist_ok=True)
    for name in PYODIDE_FILES:
        shutil.copyfile(NODE_MODULES / "pyodide" / name, root / "pyodide" / name)
    shutil.copyfile(ROOT / "site" / "js" / "offline.js", root / "assets" / "js" / "offline.js")
    (root / "assets" / "js" / "test-worker.js").write_text(TEST_WORKER)
    (root / "course.json").write_text(json.dumps({"build": "small", "pages": []}))
    write_pages(root, text)
    offline.write_precache(root)
    return root


def write_pages(root: Path, text: str) -> None:
    (root / "index.html").write_text(PAGE.format(title="Small book", notice=NOTICE, text=text))
    (root / "page2.html").write_text(PAGE.format(title="Second page", notice=NOTICE, text="page two, " + text))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(folder: Path, *, dir_option: bool = True):
    """`serve.py` as a subprocess: the repository's on `folder`, or (dir_option=False) the copy
    inside `folder`, run from there as a reader runs it. Yields (process, url)."""
    port = free_port()
    if dir_option:
        command = [sys.executable, str(ROOT / "site" / "serve.py"), "--dir", str(folder)]
    else:
        command = [sys.executable, "serve.py"]
    process = subprocess.Popen(command + ["--no-browser", "--port", str(port)], cwd=folder,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: lines.put(process.stdout.readline()), daemon=True).start()
    try:
        line = lines.get(timeout=15)
    except queue.Empty:
        line = ""
    try:
        assert line.startswith(f"The book is at http://127.0.0.1:{port}/"), (line, process.poll())
        yield process, f"http://127.0.0.1:{port}/"
    finally:
        stop(process)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        process.wait(timeout=10)


def open_page(profiles):
    context = profiles.open()
    page = context.pages[0] if context.pages else context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return context, page, errors


def test_the_small_book_runs_python_with_the_server_stopped_and_the_network_off(tmp_path, profiles):
    book = small_book(tmp_path / "book")
    build = json.loads((book / "precache.json").read_text())["build"]
    count = len(json.loads((book / "precache.json").read_text())["files"])
    with serving(book) as (server, url):
        context, page, errors = open_page(profiles)
        page.goto(url)
        page.wait_for_function(CONTROLLED, timeout=60_000)
        assert page.evaluate(CACHES) == {f"book-{build}": count}
        assert page.evaluate(RUN_PYTHON, "6 * 7") == {"result": "42", "isolated": True}
        stop(server)
        context.set_offline(True)
        page.reload()
        assert page.text_content("#text") == "version A"
        assert page.evaluate("crossOriginIsolated") is True
        assert page.is_hidden("#file-notice")
        assert page.evaluate(RUN_PYTHON, "sum(range(10))") == {"result": "45", "isolated": True}
        page.goto(url + "page2.html")  # never visited: saved all the same
        assert page.text_content("#text") == "page two, version A"
        page.goto(url + "no-such-page.html")
        assert "not part of the book saved in this browser" in page.text_content("body")
    assert errors == []


def test_a_new_build_replaces_the_old_cache_whole(tmp_path, profiles):
    book = small_book(tmp_path / "book")
    first = json.loads((book / "precache.json").read_text())["build"]
    with serving(book) as (_, url):
        context, page, errors = open_page(profiles)
        page.goto(url)
        page.wait_for_function(CONTROLLED, timeout=60_000)
        write_pages(book, "version B")
        second = offline.write_precache(book).build
        assert second != first
        page.reload()
        # The open book stays on its own build while the new one is saved beside it.
        assert page.text_content("#text") == "version A"
        page.wait_for_selector("#book-update button", timeout=60_000)
        assert set(page.evaluate(CACHES)) == {f"book-{first}", f"book-{second}"}
        with page.expect_navigation():
            page.click("#book-update button")
        page.wait_for_function(CONTROLLED)
        assert page.text_content("#text") == "version B"
        assert list(page.evaluate(CACHES)) == [f"book-{second}"]
        page.goto(url + "page2.html")
        assert page.text_content("#text") == "page two, version B"
    assert errors == []


UPDATE = """async () => {
  const registration = await navigator.serviceWorker.getRegistration();
  const settled = new Promise((resolve) => registration.addEventListener("updatefound", () => {
    const worker = registration.installing;
    worker.addEventListener("statechange", () => {
      if (worker.state === "installed" || worker.state === "redundant") resolve(worker.state);
    });
  }));
  await registration.update();
  return await settled;
}"""


def test_a_build_whose_files_do_not_match_its_list_is_never_installed(tmp_path, profiles):
    book = small_book(tmp_path / "book")
    first = json.loads((book / "precache.json").read_text())["build"]
    with serving(book) as (_, url):
        context, page, errors = open_page(profiles)
        page.goto(url)
        page.wait_for_function(CONTROLLED, timeout=60_000)
        write_pages(book, "version B")
        offline.write_precache(book)
        (book / "page2.html").write_text("<p id=text>written after the list: another build's file</p>")
        assert page.evaluate(UPDATE) == "redundant"
        page.reload()
        assert page.text_content("#text") == "version A"
        page.goto(url + "page2.html")
        assert page.text_content("#text") == "page two, version A"
        assert page.query_selector("#book-update") is None
    assert errors == []


def test_a_page_opened_from_the_disk_reads_and_says_how_to_run_code(tmp_path, profiles):
    book = small_book(tmp_path / "book")
    context, page, _ = open_page(profiles)
    page.goto((book / "index.html").as_uri())
    assert page.text_content("#text") == "version A"
    assert page.is_visible("#file-notice")
    assert "python3 serve.py" in page.text_content("#file-notice")
