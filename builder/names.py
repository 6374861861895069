"""The names and numbers the build, the page's scripts and the servers must agree on, said once.

Each is written here and nowhere else in builder/; the page gets the ones it needs from
`assets/js/names.js`, which the build writes from this module (`js_module`). Two files cannot
import anything of ours and keep a copy, tied to this one by tests/test_names.py: site/serve.py
(it ships alone in the downloaded book) and site/sw.js (a classic service worker). So a change in
one place either reaches every other or fails a test; it never breaks the page silently.

Said elsewhere, once, because that is where they are made:
  - the output cap, `OUTPUT_CAP` in harness_py/cellrun.py, which caps output where it is printed,
    in the build and in the page alike (nothing else caps it);
  - the cell's options and their defaults, builder/options.py (DEFAULT_TIMEOUT is re-exported
    here for the page);
  - the HTML classes and ids the scripts look for: the templates and builder/html.py make them,
    and tests/test_names.py checks that every one the scripts and search.py look for is made.
"""
from __future__ import annotations

import json

from stages import GAP_CLOSE, GAP_OPEN

from .options import DEFAULT_TIMEOUT

# Cross-origin isolation: with it, Stop interrupts Python through a SharedArrayBuffer instead of
# ending its worker. The static host (`_headers`), the service worker and serve.py all send these.
ISOLATION_HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
}

JS_MODULE = "assets/js/names.js"

# The file name a cell's code has in its tracebacks ('File "cell", line 2'): compiled under it at
# build time (source.py, cellhost.py through builder/cells.py) and in the page (cells.js). The
# runtime, harness_py/cellrun.py, cannot import this and keeps it as run_cell's default, tied to
# this one by tests/test_names.py.
CELL_NAME = "cell"


def headers_file() -> str:
    """`_headers` for static hosts that read one (Netlify, Cloudflare Pages)."""
    return "/*\n" + "".join(f"  {name}: {value}\n" for name, value in ISOLATION_HEADERS.items())


def js_module() -> str:
    """assets/js/names.js: what the page's scripts import instead of writing their own copy."""
    def number(value: float) -> str:
        return f"{value:g}"

    return (
        "// Written by the build from builder/names.py: edit it there, not here.\n"
        f"export const DEFAULT_TIMEOUT = {number(DEFAULT_TIMEOUT)}; // seconds a cell may run\n"
        f"export const CELL_NAME = {CELL_NAME!r}; // a cell's file name in its tracebacks\n"
        "/** Where a lab's saved work lives in storage (\"labs\" section): lesson and lab number. */\n"
        "export const labKey = (lesson, lab) => `${lesson}-${lab}`;\n"
        "/** The lines that open and close a gap in a lab's starting file (harness_py/stages.py). */\n"
        f"export const GAP_OPEN = {json.dumps(GAP_OPEN)};\n"
        f"export const GAP_CLOSE = {json.dumps(GAP_CLOSE)};\n"
    )
