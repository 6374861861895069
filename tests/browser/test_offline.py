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
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]

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
    for name in ("offline.js", "dom.js", "files.js"):     # offline.js and what it imports
        shutil.copyfile(ROOT / "site" / "js" / name, root / "assets" / "js" / name)
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
        page.wait_for_function("document.getElementById('offline-status')?.textContent.startsWith('Saved in this browser')")
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


def test_a_new_build_replaces_the_old_cache_whole_at_the_next_refresh(tmp_path, profiles):
    """An author's rebuild, or a newer download: a page nobody has touched yet switches at once."""
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
        page.wait_for_function("document.getElementById('text')?.textContent === 'version B'", timeout=60_000)
        page.wait_for_function(CONTROLLED)
        assert list(page.evaluate(CACHES)) == [f"book-{second}"]
        assert page.query_selector("#book-update") is None
    assert errors == []


def test_a_reader_at_work_keeps_their_build_until_they_switch(tmp_path, profiles):
    book = small_book(tmp_path / "book")
    first = json.loads((book / "precache.json").read_text())["build"]
    with serving(book) as (_, url):
        context, page, errors = open_page(profiles)
        page.goto(url)
        page.wait_for_function(CONTROLLED, timeout=60_000)
        page.click("#text")  # the reader is at work on this page
        write_pages(book, "version B")
        second = offline.write_precache(book).build
        assert page.evaluate(UPDATE) == "installed"
        page.wait_for_selector("#book-update button")
        # The open book stays on its own build while the new one is saved beside it, complete.
        count = len(json.loads((book / "precache.json").read_text())["files"])
        assert page.evaluate(CACHES) == {f"book-{first}": count, f"book-{second}": count}
        assert page.text_content("#text") == "version A"
        assert page.evaluate(WAITING) is True
        with page.expect_navigation():
            page.click("#book-update button")
        page.wait_for_function(CONTROLLED)
        assert page.text_content("#text") == "version B"
        assert list(page.evaluate(CACHES)) == [f"book-{second}"]
        page.goto(url + "page2.html")
        assert page.text_content("#text") == "page two, version B"
    assert errors == []


def test_the_worker_adds_isolation_to_what_it_serves(tmp_path, profiles):
    """Served by a plain static server (no COOP/COEP), the book is not isolated on the first visit;
    from the second on the worker serves it, headers added, and it is, online and offline."""
    from fixture_site import serving

    book = small_book(tmp_path / "book")
    with serving(book, isolated=False) as url:
        context, page, errors = open_page(profiles)
        page.goto(url)
        assert page.evaluate("crossOriginIsolated") is False
        page.wait_for_function(CONTROLLED, timeout=60_000)
        page.reload()
        assert page.evaluate("crossOriginIsolated") is True
    context.set_offline(True)
    page.reload()
    assert page.evaluate("crossOriginIsolated") is True
    assert page.evaluate(RUN_PYTHON, "2 ** 10") == {"result": "1024", "isolated": True}
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


WAITING = """async () => (await navigator.serviceWorker.getRegistration()).waiting !== null"""


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


# ------------------------------------------------------------------ the real book, from its zip

from fixture_site import recorded, run_cell, search, type_into_editor, wait_ready  # noqa: E402

LESSON = 11
LAB_CHECK = ["lab/lab_check.py", "--harness", "harness.py", "--lesson"]


def stages():
    import stages as module
    return module.load()


@pytest.fixture(scope="module")
def book(site_dir, tmp_path_factory) -> Path:
    """The real book as a reader gets it: `make dist`'s zip of the built site, unzipped."""
    from builder import dist

    work = tmp_path_factory.mktemp("dist")
    site = work / "site"
    shutil.copytree(site_dir, site)  # the shared _site stays as the build left it
    target = dist.make_zip(site, work / "dist")
    print(f"\n{target.name}: {target.stat().st_size} bytes ({target.stat().st_size / 1e6:.1f} MB)")
    with zipfile.ZipFile(target) as archive:
        archive.extractall(work / "unzipped")
    (folder,) = (work / "unzipped").iterdir()
    return folder


def plain_cell(page) -> str:
    """The id of the lesson's first cell that is neither editable, a lab's, nor meant to raise."""
    return page.eval_on_selector(".cell[data-cell]:not([data-editable]):not([data-lab]):not([data-raises])",
                                 "cell => cell.dataset.cell")


def run_lab(page, lab: int) -> str:
    section = f"#lab-{LESSON}-{lab}"
    page.locator(f"{section} .lab-run").click()
    page.wait_for_function(f"['pass', 'fail', 'failed'].includes(document.querySelector({section!r}).dataset.state)",
                           timeout=120_000)
    return page.eval_on_selector(section, "section => section.dataset.state")


def test_the_zip_holds_every_page_pyodide_the_editor_and_every_lab_folder(book):
    course = json.loads((book / "course.json").read_text())
    written = [page for page in course["pages"] if page["path"]]
    assert written and (book / "index.html").is_file()
    for page in written:
        assert (book / page["path"]).is_file(), page["path"]
        if page["labs"]:
            folder = book / "downloads" / f"lesson-{page['id']}"   # lesson-01, lesson-S2
            for name in ("harness.py", "tests.py", "lab/__init__.py", "lab/lab_check.py"):
                assert (folder / name).is_file(), f"{folder.name}/{name}"
    for name in PYODIDE_FILES:
        assert (book / "pyodide" / name).read_bytes() == (NODE_MODULES / "pyodide" / name).read_bytes(), name
    assert (book / "assets" / "js" / "editor.bundle.js").stat().st_size > 10_000
    assert (book / "serve.py").read_bytes() == (ROOT / "site" / "serve.py").read_bytes()
    listed = json.loads((book / "precache.json").read_text())["files"]
    on_disk = {p.relative_to(book).as_posix() for p in book.rglob("*") if p.is_file()}
    assert set(listed) == on_disk - {"sw.js", "precache.json", "serve.py", "README.txt"}


def test_the_downloaded_book_runs_cells_and_labs_served_then_offline(book, profiles):
    solution = stages().solution(f"{LESSON}.2")
    with serving(book, dir_option=False) as (server, url):
        context, page, errors = open_page(profiles)
        hosts: list[str] = []
        context.on("request", lambda request: hosts.append(urlparse(request.url).hostname))
        page.goto(f"{url}lesson-{LESSON}.html")
        wait_ready(page)
        cell = plain_cell(page)
        assert run_cell(page, cell) == recorded(page, cell)
        type_into_editor(page, f"#lab-{LESSON}-2", solution)
        assert run_lab(page, 2) == "pass"
        page.wait_for_function(CONTROLLED, timeout=120_000)  # the whole book is saved
        assert page.evaluate("crossOriginIsolated") is True
        stop(server)
        context.set_offline(True)
        assert page.reload().from_service_worker
        wait_ready(page)
        assert page.evaluate("crossOriginIsolated") is True
        assert run_cell(page, cell) == recorded(page, cell)
        assert run_lab(page, 2) == "pass"  # the reader's saved solution, still there
        assert page.goto(url).from_service_worker  # the course map, never visited
        assert page.locator(f'[data-page="{LESSON}"] a').count() >= 1
        assert page.goto(f"{url}print.html").from_service_worker   # the whole book to print, never visited
        page.wait_for_selector(f"#page-{LESSON} .print-answers")     # a worksheet, with no Python
        page.goto(f"{url}lesson-01.html")              # search, from the saved book
        found = search(page, "torn write")
        assert any(r["kind"] == "Section" and r["href"].startswith("lesson-11.html#") for r in found), found
        page.goto(f"{url}lesson-02.html")
        found = search(page, "append-only log")                  # the glossary's entry, indexed
        assert any(r["href"] == "glossary.html#append-only-log" for r in found), found
        assert page.goto(f"{url}glossary.html").from_service_worker   # the glossary, never visited
        assert page.locator("h3#append-only-log").is_visible()
    assert errors == []
    assert len(hosts) > 50 and set(hosts) == {"127.0.0.1"}, sorted(set(hosts))


def page_download(page, lab: int, into: Path) -> dict[str, bytes]:
    """The files of the zip the lab's "download" button gives."""
    with page.expect_download() as download:
        page.locator(f"#lab-{LESSON}-{lab} .lab-download").click()
    saved = into / f"lab-{lab}.zip"
    download.value.save_as(saved)
    with zipfile.ZipFile(saved) as archive:
        return {name: archive.read(name) for name in archive.namelist() if not name.endswith("/")}


def test_the_page_download_is_the_lab_folder_of_the_zip(book, profiles, tmp_path):
    """Lab 1's download is the folder file for file; a later lab's differs only in harness.py,
    which is the folder's harness-labK.py (that lab's starting file)."""
    folder = book / "downloads" / f"lesson-{LESSON}"
    prefix = f"lesson-{LESSON}/"
    files = {p.relative_to(folder).as_posix(): p.read_bytes()
             for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    later = {name for name in files if name.startswith("harness-lab")}
    with serving(book, dir_option=False) as (_, url):
        context, page, errors = open_page(profiles)
        page.goto(f"{url}lesson-{LESSON}.html")
        first = page_download(page, 1, tmp_path)
        second = page_download(page, 2, tmp_path)
    want = {prefix + name: data for name, data in files.items() if name not in later}
    assert sorted(first) == sorted(want)
    for name in want:
        assert first[name] == want[name], name
    assert second[prefix + "harness.py"] == files["harness-lab2.py"]
    assert {n: d for n, d in second.items() if n != prefix + "harness.py"} == \
           {n: d for n, d in want.items() if n != prefix + "harness.py"}
    assert errors == []


def lab_folders(book: Path) -> list[Path]:
    return sorted(p for p in (book / "downloads").iterdir() if p.is_dir())


def test_every_lab_folder_runs_under_cpython(book, tmp_path):
    folders = lab_folders(book)
    assert f"lesson-{LESSON}" in [f.name for f in folders]
    course = stages()
    for folder in folders:
        key = folder.name.split("-", 1)[1]            # "01", or a side quest's "S2"
        lesson = int(key) if key.isdigit() else key
        command = [sys.executable, *LAB_CHECK, str(lesson), "tests.py"]
        starting = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=300)
        assert starting.returncode == 1, (folder.name, starting.stdout[-2000:], starting.stderr[-2000:])
        assert "FAIL" in starting.stdout
        mine = tmp_path / folder.name
        shutil.copytree(folder, mine)
        (mine / "harness.py").write_text(course.reference(lesson))
        solved = subprocess.run(command, cwd=mine, capture_output=True, text=True, timeout=300)
        assert solved.returncode == 0, (folder.name, solved.stdout[-2000:], solved.stderr[-2000:])
        assert solved.stdout.rstrip().endswith(" 0 failed")


def test_lesson_11_solution_passes_with_the_seed_command(book, tmp_path):
    mine = tmp_path / "lab"
    shutil.copytree(book / "downloads" / f"lesson-{LESSON}", mine)
    (mine / "harness.py").write_text(stages().solution(f"{LESSON}.2"))
    done = subprocess.run([sys.executable, *LAB_CHECK, str(LESSON), "tests.py"], cwd=mine,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]


def test_a_real_page_from_the_disk_reads_in_full_and_says_how_to_run_code(book, profiles):
    context, page, _ = open_page(profiles)
    page.goto((book / f"lesson-{LESSON}.html").as_uri())
    assert page.is_visible("#file-notice")
    assert "python3 serve.py" in page.text_content("#file-notice")
    outputs = page.locator(".cell-output")
    assert outputs.count() > 0
    for i in range(outputs.count()):
        # An output that answers a check stays folded until the reader opens it: one click.
        fold = page.locator(".cell").nth(i).locator("details.cell-answer")
        if fold.count():
            fold.locator("summary").click()
        assert outputs.nth(i).is_visible()
    assert page.locator(".lab-starting").first.is_visible()


def test_a_real_page_reads_without_javascript(book, profiles):
    with serving(book, dir_option=False) as (_, url):
        context = profiles.fresh(java_script_enabled=False)
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(f"{url}lesson-{LESSON}.html")
        cell = page.locator(".cell[data-cell]").first
        data = json.loads(cell.locator(".cell-data").text_content())
        assert cell.locator(".cell-code").text_content() == data["source"]
        assert cell.locator(".cell-output").text_content().strip()
        assert cell.locator(".cell-code").is_visible()
        assert page.is_hidden("#file-notice")


def test_a_first_save_that_fails_says_so(tmp_path, profiles):
    book = small_book(tmp_path / "book")
    (book / "page2.html").write_text("<p>changed after the list was written</p>")
    with serving(book) as (_, url):
        context, page, errors = open_page(profiles)
        page.goto(url)
        page.wait_for_function("document.getElementById('offline-status')?.textContent.includes('could not be saved')",
                               timeout=60_000)
        assert page.evaluate("navigator.serviceWorker.controller") is None
        assert page.evaluate("async () => (await navigator.serviceWorker.getRegistration())?.active ?? null") is None
    assert errors == []
