"""`make serve` while writing: a saved page is rebuilt, only its own cells run again, the open page
is told to reload, and a page that no longer builds shows its file:line error instead of the
old page in silence."""
from __future__ import annotations

import json
import time
import shutil
import threading
import urllib.request
from pathlib import Path

import pytest

from builder import devserve
from builder.project import Project

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "book"
PAGE = "lessons/01-hello/page.md"


@pytest.fixture
def served(tmp_path):
    book = tmp_path / "book"
    shutil.copytree(FIXTURE, book)
    state = devserve.State()
    builder = devserve.Builder(Project.at(book), tmp_path / "_site", state)
    assert builder.once(log=lambda line: None)
    server = devserve.serve.BookServer(
        ("127.0.0.1", 0), lambda *a, **k: devserve.make_handler(state)(*a, directory=str(builder.out), **k))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield book, builder, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, ""


def test_pages_carry_the_reload_script_and_no_service_worker_is_served(served):
    _, _, url = served
    status, page = get(url + "lesson-01.html")
    assert status == 200 and '<script src="/__dev/reload.js"></script></body>' in page
    assert get(url)[1].count("/__dev/reload.js") == 1
    assert get(url + "sw.js")[0] == 404
    assert "location.reload()" in get(url + "__dev/reload.js")[1]


def test_an_edit_rebuilds_reruns_only_that_pages_cells_and_moves_the_version(served, monkeypatch):
    from builder import pipeline
    book, builder, url = served
    before = json.loads(get(url + "__dev/state")[1])
    path = book / PAGE
    path.write_text(path.read_text().replace("Because a greeting is a sentence",
                                             "Because a greeting is one sentence"))
    ran, execute = [], pipeline.cells.execute
    monkeypatch.setattr(pipeline.cells, "execute", lambda *a, **k: ran.append(a[1]) or execute(*a, **k))
    assert builder.once(log=lambda line: None)
    assert ran == [], "an edit to prose alone proves no cell again"
    after = json.loads(get(url + "__dev/state")[1])
    assert after == {"version": before["version"] + 1, "error": None}
    assert "Because a greeting is one sentence" in get(url + "lesson-01.html")[1]
    path.write_text(path.read_text().replace('print(harness.greet("Ada"))', 'print(harness.greet("Bo"))'))
    assert not builder.once(log=lambda line: None)          # the declared output now differs
    assert ran == [PAGE], "an edited cell is proven again, and only its page's"


def test_a_page_that_no_longer_builds_shows_its_error_and_the_old_page_stays(served):
    book, builder, url = served
    path = book / PAGE
    path.write_text(path.read_text().replace("::: aside Why a full stop", "::: quiz Why a full stop"))
    assert not builder.once(log=lambda line: None)
    state = json.loads(get(url + "__dev/state")[1])
    from builder import directives
    line = path.read_text().splitlines().index("::: quiz Why a full stop") + 1
    assert state["error"] == (f"{PAGE}:{line}: unknown directive '::: quiz' "
                              f"(known: {', '.join(sorted(directives.REGISTRY))})")
    assert get(url + "lesson-01.html")[0] == 200
    path.write_text(path.read_text().replace("::: quiz Why", "::: aside Why"))
    assert builder.once(log=lambda line: None)
    assert json.loads(get(url + "__dev/state")[1])["error"] is None


def wait_for(condition, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_the_watch_goes_on_after_a_build_fails_with_any_error_and_the_page_shows_it(served):
    """An emptied course.yaml (the review's probe) once killed the watcher in silence."""
    book, builder, url = served
    stop = threading.Event()
    watcher = threading.Thread(target=devserve.watch, args=(builder, stop), daemon=True)
    watcher.start()
    course = book / "lessons" / "course.yaml"
    text = course.read_text()
    try:
        before = json.loads(get(url + "__dev/state")[1])["version"]
        time.sleep(devserve.POLL_S * 2)
        course.write_text("")
        assert wait_for(lambda: json.loads(get(url + "__dev/state")[1])["error"] is not None)
        assert json.loads(get(url + "__dev/state")[1])["error"] == EMPTY_COURSE
        assert watcher.is_alive()
        course.write_text(text)
        assert wait_for(lambda: json.loads(get(url + "__dev/state")[1]) == {"version": before + 1,
                                                                            "error": None})
        assert watcher.is_alive()
    finally:
        stop.set()
        watcher.join(5)


EMPTY_COURSE = ("lessons/course.yaml: the course file holds no mapping: it needs tau: (repo "
                "and commit) and pages: (a list, one entry a page)")


def _raise_unexpected(*args, **kwargs):
    raise RuntimeError("the disk is full")


def test_an_error_that_is_not_a_build_error_becomes_one_sentence_with_its_place(tmp_path, monkeypatch):
    state = devserve.State()
    builder = devserve.Builder(Project.at(FIXTURE), tmp_path / "_site", state)
    monkeypatch.setattr(devserve, "build", _raise_unexpected)
    logged = []
    assert not builder.once(log=logged.append)
    line = _raise_unexpected.__code__.co_firstlineno + 1
    assert state.error == f"RuntimeError: the disk is full (test_devserve.py:{line})"
    assert logged == [f"build failed: {state.error}"]


def test_a_file_that_vanishes_while_the_folder_is_read_is_skipped(tmp_path, monkeypatch):
    book = tmp_path / "book"
    shutil.copytree(FIXTURE, book)
    gone = book / "lessons" / "01-hello" / ".#page.md"
    real_is_file, real_stat = Path.is_file, Path.stat
    monkeypatch.setattr(Path, "is_file", lambda self: self == gone or real_is_file(self))
    monkeypatch.setattr(Path, "stat", lambda self, **k: (_ for _ in ()).throw(FileNotFoundError(self))
                        if self == gone else real_stat(self, **k))
    gone.write_text("saved halfway")
    files = devserve.watched(Project.at(book))
    assert gone not in files and book / PAGE in files


def test_a_tool_that_fails_is_shown_as_its_own_sentence(tmp_path, monkeypatch):
    from builder.search import SearchError
    state = devserve.State()
    builder = devserve.Builder(Project.at(FIXTURE), tmp_path / "_site", state)

    def no_node(*args, **kwargs):
        raise SearchError("node is not on PATH: the search index is made with Node")
    monkeypatch.setattr(devserve, "build", no_node)
    assert not builder.once(log=lambda line: None)
    assert state.error == "node is not on PATH: the search index is made with Node"


def test_the_first_build_says_what_it_is_doing(tmp_path):
    """`make serve`'s first build is not a silence: each step of it is heard as it happens."""
    book = tmp_path / "book"
    shutil.copytree(FIXTURE, book)
    builder = devserve.Builder(Project.at(book), tmp_path / "_site", devserve.State())
    heard: list[str] = []
    assert builder.once(log=lambda line: None, steps=heard.append)
    assert any(line.startswith("execute") for line in heard), heard
    assert any(line.startswith("write") for line in heard), heard
