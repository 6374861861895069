"""Helpers the browser tests share: waiting for Python, running a cell, typing into an editor,
serving a folder like site/serve.py. The fixture lesson itself (lesson 99, cells that misbehave)
is a course of its own, tests/fixtures/browser, built by the real pipeline (conftest.py)."""
from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ helpers the browser tests share

READY_MS = 90_000       # Pyodide's boot on a busy two-core machine can take a while
FINISHED = "['done', 'error', 'stopped', 'failed'].includes(document.getElementById(%r).dataset.state)"


def wait_ready(page, timeout: int = READY_MS) -> None:
    """Wait until the page's Python says it is ready."""
    page.wait_for_function("document.getElementById('python-status')?.dataset.state === 'ready'",
                           timeout=timeout)


STARTED_MS = 15_000     # a click on Run sets the cell's state at once; this is for a busy machine
# An editor in its place: editors.js measures a new one out of sight (.code-editor-measuring) first.
PLACED = ".code-editor:not(.code-editor-measuring) .cm-content"
EDITORS = """() => [...document.querySelectorAll('.cell[data-editable], section.lab[data-lab]')]
    .every(part => part.querySelector('%s'))""" % PLACED


def wait_settled(page, timeout: int = READY_MS) -> None:
    """Wait until every editor on the page is mounted. They arrive together once Python is ready,
    and each one changes the height of what it replaces: a click aimed while they land can hit
    the wrong place on a busy machine."""
    page.wait_for_function(EDITORS, timeout=timeout)


WORK_KEY = "agent-harness-book/work"
SAVED = """(texts) => {
    const text = localStorage.getItem(%r) || '';
    if (!texts.every((t) => text.includes(t))) return false;
    try { return document.documentElement.dataset.saved === JSON.parse(text).saved; } catch { return false; }
}""" % WORK_KEY


def wait_saved(page, *texts: str, timeout: int = 15_000) -> None:
    """Wait until the saved work holds every one of `texts` and that save is whole: storage.js
    sets <html data-saved> to a copy's stamp once both localStorage and IndexedDB (on the disk,
    so it survives a killed browser) hold it."""
    page.wait_for_function(SAVED, arg=list(texts), timeout=timeout)


def run_cell(page, cell_id: str, timeout: int = 60_000) -> str:
    """Click the cell's Run button, wait for it to finish, and return its output text. A cell
    that does not finish in time fails with what the page shows: the cell's state and output,
    and Python's status."""
    element_id = f"cell-{cell_id}"
    wait_settled(page)
    page.locator(f"#{element_id} .cell-run").click()
    try:
        page.wait_for_function(f"document.getElementById({element_id!r}).dataset.state !== undefined",
                               timeout=STARTED_MS)
    except Exception as error:
        raise AssertionError(f"cell {cell_id}: the click on Run did not start it: "
                             f"{describe_cell(page, element_id)}") from error
    try:
        page.wait_for_function(FINISHED % element_id, timeout=timeout)
    except Exception as error:  # Playwright's TimeoutError, or a page that went away
        raise AssertionError(f"cell {cell_id} did not finish in {timeout // 1000} s: "
                             f"{describe_cell(page, element_id)}") from error
    return page.locator(f"#{element_id} .cell-output").text_content()


def describe_cell(page, element_id: str) -> str:
    """A cell's state, its state label, the end of its output, and Python's status, in a line."""
    seen = page.evaluate("""(id) => {
        const cell = document.getElementById(id);
        const status = document.getElementById('python-status');
        return {state: cell.dataset.state ?? '(never ran)',
                label: cell.querySelector('.cell-state')?.textContent ?? '',
                output: (cell.querySelector('.cell-output')?.textContent ?? '').slice(-300),
                python: status ? `${status.dataset.state}: ${status.textContent.trim()}` : '(no status)'};
    }""", element_id)
    return (f"state {seen['state']!r} ({seen['label']!r}); Python {seen['python']!r}; "
            f"output ends {seen['output']!r}")


def recorded(page, cell_id: str) -> str:
    """The output the build recorded for the cell: its output in the page's HTML as served
    (before any run replaced it)."""
    return page.evaluate("""async (id) => {
        const html = await (await fetch(location.href)).text();
        const served = new DOMParser().parseFromString(html, "text/html");
        return served.querySelector(`#cell-${id} .cell-output`).textContent;
    }""", cell_id)


def wait_editor(page, selector: str, timeout: int = READY_MS) -> None:
    page.wait_for_selector(f"{selector} {PLACED}", timeout=timeout)


def editor_text(page, selector: str) -> str:
    """The text of the CodeMirror editor inside `selector`, line by line as the reader sees it."""
    wait_editor(page, selector)
    return page.eval_on_selector(f"{selector} .code-editor", "node => node.bookEditor.getText()")


def rewrite_cell(page, cell_id: str, source: str) -> None:
    """Give an editable cell new code before running it (through the editor's own API, so a
    busy machine cannot lose keystrokes), and make sure the editor holds it."""
    selector = f"#cell-{cell_id}"
    wait_editor(page, selector)
    page.eval_on_selector(f"{selector} .code-editor", "(node, text) => node.bookEditor.setText(text)", source)
    assert editor_text(page, selector) == source, f"cell {cell_id}: the editor did not take the new code"


def type_into_editor(page, selector: str, text: str) -> None:
    """Replace the editor's text the way a reader would: select all, then type (pasted in one go,
    so that auto-indent does not re-indent it)."""
    wait_editor(page, selector)
    page.locator(f"{selector} .cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(text)


@contextmanager
def serving(root: Path, isolated: bool = True) -> Iterator[str]:
    """Serve `root` on 127.0.0.1 like site/serve.py, for as long as the `with` lasts; without the
    isolation headers if asked (so that Stop must end the worker). Yields the base url."""
    import functools
    import http.server

    import serve  # site/serve.py, put on sys.path by conftest

    if isolated:
        server = serve.make_server(root, 0)
    else:
        class Plain(serve.BookHandler):
            def end_headers(self) -> None:
                http.server.SimpleHTTPRequestHandler.end_headers(self)

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Plain, directory=str(root)))
    with running(server) as url:
        yield url


@contextmanager
def running(server) -> Iterator[str]:
    """Run an http.server on a thread for as long as the `with` lasts; yields its base url."""
    import threading

    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()

OUTPUT_NOTE = "[Output stopped at 200,000 characters: "   # then how many more were not kept


RESULTS = ".search-list .search-result"


def search(page, text: str) -> list[dict]:
    """Type `text` into the header's search box the way a reader does ("/" first) and return
    the results drawn: [{where, kind, snippet, href}]."""
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "search-input", "/ focuses the search box"
    page.keyboard.type(text)
    # The list says which query it shows (search.js): a search for the first letters, run while
    # the rest was still being typed on a slow machine, is not taken for this one.
    page.wait_for_function("(text) => document.querySelector('.search-list').dataset.query === text"
                           " && document.querySelector('.search-input').value === text", arg=text)
    return page.eval_on_selector_all(RESULTS, """links => links.map(a => ({
        where: a.querySelector('.search-where').textContent,
        kind: a.querySelector('.search-kind').textContent,
        snippet: a.querySelector('.search-snippet').textContent,
        href: a.getAttribute('href')}))""")
