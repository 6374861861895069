"""A small site built by hand to the HTML contract of docs/architecture.md, for the browser tests
that need cells no lesson has (a runaway loop, a flood of output, output that looks like HTML).

It uses the real parts: site/js, Pyodide and the editor bundle (builder.assets), cellrun.py, the
lab package and lab_check.py. Only the lesson is made up (lesson 99, one lab). Each cell's
recorded output is what cellrun printed for it under CPython here, as the build records it.
"""
from __future__ import annotations

import html
import json
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
FIXTURE = ROOT / "tests" / "fixtures" / "site"

CELLS = [
    ("99-1", {}, 'print("hello from the page")\nfor i in range(3):\n    print(i, i * i)\n'),
    ("99-2", {"editable": True}, 'import harness\nentries = [{"message": "Ada"}, {"message": "Noted."}]\n'
                                  'messages = [entries[-1]["message"]]\nprint(messages)\n'),
    ("99-3", {"raises": True}, 'def f():\n    return 1 / 0\n\nprint("before")\nf()\n'),
    ("99-4", {}, 'print("<script>window.hacked = 1</script><b>bold</b>")\n'),
    ("99-5", {"timeout": 3, "editable": True}, "while True:\n    pass\n"),
    ("99-6", {}, "for i in range(100_000):\n    print('line', i)\n"),
    ("99-7", {"lab": 1}, 'import harness\nprint(harness.remember([{"message": 1}, {"message": 2}]))\n'),
    ("99-8", {"raises": True}, "def down(n):\n    return down(n + 1)\n\ndown(0)\n"),
    ("99-9", {"editable": True, "timeout": 30}, "import time\nstart = time.time()\nwhile time.time() - start < 25:\n    pass\nprint('done')\n"),
]


def record(source: str, site: Path) -> str:
    """What the build would record for `source`: cellrun under this CPython."""
    sys.path.insert(0, str(ROOT / "harness_py"))
    try:
        import cellrun
    finally:
        sys.path.pop(0)
    if "while True" in source or "time.time()" in source:
        return "(not run by the fixture: it never ends)\n"
    result = cellrun.run_cell(source, harness_path=str(site / "py" / "reference" / "lesson99.py"),
                              lab_dir=str(site / "py"), name="cell")
    return result.output


def cell_html(cell_id: str, options: dict, source: str, output: str) -> str:
    attributes = f'class="cell" id="cell-{cell_id}" data-cell="{cell_id}" data-lesson="99" ' \
                 f'data-timeout="{options.get("timeout", 10)}"'
    if options.get("editable"):
        attributes += " data-editable"
    if options.get("lab"):
        attributes += f' data-lab="{options["lab"]}"'
    if options.get("raises"):
        attributes += " data-raises"
    data = json.dumps({"source": source, "output": output}).replace("</", "<\\/")
    return (f"<div {attributes}>\n<pre class=\"cell-code\">{html.escape(source)}</pre>\n"
            f'<script type="application/json" class="cell-data">{data}</script>\n'
            f'<pre class="cell-output">{html.escape(output)}</pre>\n</div>\n')


def lab_html(starting: str) -> str:
    data = json.dumps({"starting": starting, "tests": "py/tests/lesson99.py", "lesson": 99, "lab": 1})
    data = data.replace("</", "<\\/")
    items = "".join(f'<li data-test="Lab1.{name}">{html.escape(sentence)}</li>' for name, sentence in (
        ("test_greet", 'greet("Ada") says hello to Ada.'),
        ("test_remember", "remember(entries) keeps every message, oldest first.")))
    return (f'<section class="lab" id="lab-99-1" data-lesson="99" data-lab="1" data-point="99.1">\n'
            f"<h2>Lab 1</h2>\n"
            f'<script type="application/json" class="lab-data">{data}</script>\n'
            f'<pre class="lab-starting">{html.escape(starting)}</pre>\n'
            f'<ol class="lab-tests">{items}</ol>\n<div class="lab-done" hidden>Done!</div>\n</section>\n')


ENTRY = """<script type="module">
import * as python from "./assets/js/python.js";
import * as storage from "./assets/js/storage.js";
import * as cells from "./assets/js/cells.js";
import * as labs from "./assets/js/labs.js";
import * as progress from "./assets/js/progress.js";
python.init(); await storage.init(); cells.init(); labs.init(); progress.init();
window.bookPython = python;
</script>"""


def build_fixture(out: Path) -> Path:
    """Build the fixture site into `out` (replacing it) and return `out`."""
    from builder import assets

    if out.exists():
        shutil.rmtree(out)
    (out / "assets").mkdir(parents=True)
    shutil.copytree(ROOT / "site" / "js", out / "assets" / "js")
    assets.build(out)
    py = out / "py"
    shutil.copytree(FIXTURE / "py", py)
    shutil.copytree(ROOT / "harness_py" / "lab", py / "lab", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "harness_py" / "cellrun.py", py / "cellrun.py")
    files = sorted(p.relative_to(py).as_posix() for p in py.rglob("*.py"))
    (py / "files.json").write_text(json.dumps({"files": files}))
    starting = (FIXTURE / "starting99.py").read_text()
    body = "".join(cell_html(cid, options, source, record(source, out)) for cid, options, source in CELLS)
    page = (f'<!doctype html>\n<html lang="en" data-build="fixture"><head><meta charset="utf-8">'
            f'<title>Fixture lesson 99</title><script type="module" async src="assets/js/boot.js"></script></head>'
            f"\n<body><main>\n"
            f'<div id="python-status"></div>\n{body}{lab_html(starting)}</main>\n{ENTRY}\n</body></html>\n')
    (out / "lesson-99.html").write_text(page)
    course = {"build": "fixture", "pages": [{"id": "99", "kind": "lesson", "number": 99, "title": "Fixture",
                                              "path": "lesson-99.html", "labs": [{"number": 1}]}]}
    (out / "course.json").write_text(json.dumps(course))
    (out / "index.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Map</title></head>'
        '<body class="course-map"><main><ul><li data-page="99"><a href="lesson-99.html">Lesson 99</a></li></ul>'
        f"</main>\n{ENTRY}\n</body></html>\n")
    return out


if __name__ == "__main__":
    print(build_fixture(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_site.fixture"))


# ------------------------------------------------------------------ helpers the browser tests share

READY_MS = 90_000       # Pyodide's boot on a busy two-core machine can take a while
FINISHED = "['done', 'error', 'stopped', 'failed'].includes(document.getElementById(%r).dataset.state)"


def wait_ready(page, timeout: int = READY_MS) -> None:
    """Wait until the page's Python says it is ready."""
    page.wait_for_function("document.getElementById('python-status')?.dataset.state === 'ready'",
                           timeout=timeout)


def run_cell(page, cell_id: str, timeout: int = 60_000) -> str:
    """Click the cell's Run button, wait for it to finish, and return its output text."""
    element_id = f"cell-{cell_id}"
    page.locator(f"#{element_id} .cell-run").click()
    page.wait_for_function(FINISHED % element_id, timeout=timeout)
    return page.locator(f"#{element_id} .cell-output").text_content()


def recorded(page, cell_id: str) -> str:
    """The output the build recorded for the cell (its JSON data)."""
    return json.loads(page.locator(f"#cell-{cell_id} .cell-data").text_content())["output"]


def wait_editor(page, selector: str, timeout: int = READY_MS) -> None:
    page.wait_for_selector(f"{selector} .cm-content", timeout=timeout)


def editor_text(page, selector: str) -> str:
    """The text of the CodeMirror editor inside `selector`, line by line as the reader sees it."""
    wait_editor(page, selector)
    return page.eval_on_selector(f"{selector} .code-editor", "node => node.bookEditor.getText()")


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
    import threading

    import serve  # site/serve.py, put on sys.path by conftest

    if isolated:
        server = serve.make_server(root, 0)
    else:
        class Plain(serve.BookHandler):
            def end_headers(self) -> None:
                http.server.SimpleHTTPRequestHandler.end_headers(self)

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Plain, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()

OUTPUT_NOTE = "[Output stopped at 200,000 characters: the rest is not shown.]"
