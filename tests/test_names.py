"""One source for the names the build, the page's scripts and the servers agree on (builder/names.py).

site/serve.py and site/sw.js cannot import builder/names.py, so they keep a copy; these tests tie
each copy to it. The scripts import the rest from the generated assets/js/names.js, and no script
keeps a copy of its own. The HTML classes and ids the scripts (and search.py) look for are each made
by a built page or by the scripts themselves: a class renamed in a template fails here, not in a
reader's browser."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from builder import names, options, search
from builder.pipeline import build
from builder.project import Project

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "site" / "js"
FIXTURES = [ROOT / "tests" / "fixtures" / "book", ROOT / "tests" / "fixtures" / "browser"]


def test_the_service_worker_adds_the_isolation_headers_of_names_py():
    text = (ROOT / "site" / "sw.js").read_text()
    literal = re.search(r"const ISOLATION = (\{.*?\});", text, re.S).group(1)
    assert json.loads(re.sub(r",\s*}", "}", literal)) == names.ISOLATION_HEADERS


def test_serve_py_sends_the_isolation_headers_of_names_py():
    spec = importlib.util.spec_from_file_location("book_serve_names", ROOT / "site" / "serve.py")
    serve = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(serve)
    assert {k: serve.HEADERS[k] for k in names.ISOLATION_HEADERS} == names.ISOLATION_HEADERS


def test_the_headers_file_says_each_isolation_header():
    lines = names.headers_file().splitlines()
    assert lines[0] == "/*"
    assert dict(line.strip().split(": ") for line in lines[1:]) == names.ISOLATION_HEADERS


def test_the_page_gets_the_default_time_limit_from_the_cells_schema():
    assert f"export const DEFAULT_TIMEOUT = {options.DEFAULT_TIMEOUT:g};" in names.js_module()
    assert options.CELL.read("")["timeout"] == options.DEFAULT_TIMEOUT


@pytest.mark.parametrize("pattern, what", [
    (r"DEFAULT_TIMEOUT\s*=\s*\d", "a default time limit of its own"),
    (r"OUTPUT_CAP\s*=|200_000|200000|200,000", "an output cap of its own (cellrun caps output where it is printed)"),
    (r"`\$\{[^}]*\}-\$\{[^}]*\}`", "a lab storage key of its own (names.js labKey)"),
    (r"Cross-Origin-(Opener|Embedder|Resource)-Policy", "isolation headers (sw.js keeps the one copy)"),
])
def test_no_script_keeps_a_copy(pattern, what):
    for path in sorted(JS.glob("*.js")):
        assert not re.search(pattern, path.read_text()), f"site/js/{path.name} has {what}"


# -- classes and ids -----------------------------------------------------------------------------

SELECTOR_CALL = re.compile(r"""(?:querySelector(?:All)?|closest|matches)\(\s*(["'`])(.*?)\1""")
BY_ID = re.compile(r"""getElementById\(\s*["']([\w-]+)["']\s*\)""")
MADE_BY_SCRIPT = [
    re.compile(r"""className\s*=\s*["'`]([^"'`$]+)["'`]"""),
    re.compile(r"""classList\.(?:add|toggle)\(\s*["']([\w-]+)["']"""),
    re.compile(r"""\bbutton\(\s*[^,]+,\s*["']([\w -]+)["']"""),
    re.compile(r"""\belement\(\s*["']\w+["']\s*,\s*["']([\w -]+)["']"""),
    re.compile(r"""\.id\s*=\s*["']([\w-]+)["']"""),
    re.compile(r"""class=\\?["']([\w -]+)\\?["']"""),
    re.compile(r"""id=\\?["']([\w-]+)\\?["']"""),
]


def _looked_for() -> dict[str, set[str]]:
    """{"site/js/x.js": {".class", "#id"}}: every class and id a script looks up."""
    found: dict[str, set[str]] = {}
    for path in sorted(JS.glob("*.js")):
        text = path.read_text()
        wanted = set()
        for _, selector in SELECTOR_CALL.findall(text):
            selector = selector.split("${")[0]
            wanted |= {"." + c for c in re.findall(r"\.([A-Za-z][\w-]*)", selector)}
            wanted |= {"#" + i for i in re.findall(r"#([A-Za-z][\w-]*)", selector)}
        wanted |= {"#" + i for i in BY_ID.findall(text)}
        found[f"site/js/{path.name}"] = wanted
    return found


MADE_BY_LIBRARIES = {".cm-editor"}     # CodeMirror's own (site/editor)


def _made_by_templates() -> set[str]:
    """Every literal class and id in site/templates (parts included): what a page may carry even
    when no fixture page needs it (a cell that `answers`, say)."""
    made = set()
    for path in (ROOT / "site" / "templates").rglob("*.html"):
        text = re.sub(r"\{[{%#].*?[}%#]\}", " ", path.read_text(), flags=re.S)
        for value in re.findall(r'\bclass="([^"]*)"', text):
            made |= {"." + c for c in value.split()}
        made |= {"#" + i for i in re.findall(r'\bid="([^"]*)"', text) if i.strip()}
    return made


def _made_by_scripts() -> set[str]:
    made = set()
    for path in sorted(JS.glob("*.js")):
        text = path.read_text()
        for pattern in MADE_BY_SCRIPT:
            for value in pattern.findall(text):
                prefix = "#" if "id" in pattern.pattern[:8] else "."
                made |= {prefix + word for word in value.split()}
    return made


@pytest.fixture(scope="module")
def made_by_pages(tmp_path_factory) -> set[str]:
    """Every class and id in the pages built from the two fixture books (between them, every
    directive, every kind of page and every template)."""
    made = set()
    for n, book in enumerate(FIXTURES):
        out = tmp_path_factory.mktemp(f"names{n}") / "_site"
        build(Project.at(book), out, assets=False, log=lambda line: None)
        for page in out.glob("*.html"):
            text = page.read_text()
            for value in re.findall(r'\bclass="([^"]*)"', text):
                made |= {"." + c for c in value.split()}
            made |= {"#" + i for i in re.findall(r'\bid="([^"]*)"', text)}
        assert (out / "assets" / "js" / "names.js").read_text() == names.js_module()
        assert (out / "_headers").read_text() == names.headers_file()
    return made


def test_every_class_and_id_a_script_looks_for_is_made(made_by_pages):
    made = made_by_pages | _made_by_templates() | _made_by_scripts() | MADE_BY_LIBRARIES
    missing = {script: sorted(wanted - made) for script, wanted in _looked_for().items()
               if wanted - made}
    assert missing == {}


def test_every_class_search_skips_is_made(made_by_pages):
    made = made_by_pages | _made_by_templates() | _made_by_scripts()
    assert sorted(c for c in search.SKIP_CLASSES if "." + c not in made) == []


def test_a_cells_name_in_tracebacks_is_said_once():
    """names.CELL_NAME; the runtime, which cannot import it, has it as run_cell's default."""
    import inspect
    import cellrun
    assert inspect.signature(cellrun.run_cell).parameters["name"].default == names.CELL_NAME
    assert f"export const CELL_NAME = {names.CELL_NAME!r};" in names.js_module().replace('"', "'")
    for path in [*JS.glob("*.js"), *(ROOT / "builder").glob("*.py")]:
        if path.name != "names.py":
            assert not re.search(r"""CELL_NAME\s*=|["']cell["'],\s*["']exec|name=["']cell["']|File "cell\"""",
                                 path.read_text()), f"{path.name} names the cell itself"


def test_a_page_is_named_in_one_place():
    from builder.course import Page
    pages = {kind: Page(id=i, kind=kind, title="T", subtitle="", minutes=1, folder="f")
             for kind, i in [("lesson", "11"), ("checkpoint", "B"), ("side-quest", "S2"),
                             ("welcome", "00"), ("closing", "16")]}
    assert {k: (p.label, p.heading, p.named(), p.named(": "), p.named(lesson_word=True))
            for k, p in pages.items()} == {
        "lesson": ("11", "Lesson 11", "11 · T", "11 · T", "Lesson 11 · T"),
        "checkpoint": ("Checkpoint B", "Checkpoint B", "Checkpoint B · T", "Checkpoint B: T", "Checkpoint B · T"),
        "side-quest": ("Side quest S2", "Side quest S2", "Side quest S2 · T", "Side quest S2: T", "Side quest S2 · T"),
        "welcome": ("T", "", "T", "T", "T"),
        "closing": ("T", "T", "T", "T", "T")}
    for path in [*JS.glob("*.js"), *(ROOT / "builder").glob("*.py"), *(ROOT / "site" / "templates").rglob("*.html")]:
        if path.name != "course.py":
            assert not re.search(r"Lesson \$?\{|Checkpoint \$?\{|Side quest \$?\{|Lesson \{\{", path.read_text()), \
                f"{path.name} names a page itself (course.Page.label, heading, named; course.json's name)"
