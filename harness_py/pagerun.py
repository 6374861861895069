"""The page's way into the book's Python: what the worker calls (site/js/worker.js).

The worker writes the book's files under /book (cellrun.py, lab/, reference/, tests/) and
imports this module; every call from the page lands in one of the two functions below. Keeping
the glue here, not in a string inside the worker, lets it be imported, tested under CPython, and
frozen into a memory snapshot with the rest of the book's runtime."""
from __future__ import annotations

import importlib.util
import json
import os
import sys
from typing import Callable

import cellrun

ROOT = os.path.dirname(os.path.abspath(__file__))
READER = "/reader"


def _key(lesson: int | str) -> str:
    """"01" for lesson 1, "A" for checkpoint A: how the files of a page are named."""
    return "%02d" % lesson if isinstance(lesson, int) else str(lesson)


def _write_reader(lesson: int | str, kind: str, text: str) -> str:
    """Put the reader's file where the runner can import it, and return its path."""
    folder = "%s/lesson%s" % (READER, _key(lesson))
    os.makedirs(folder, exist_ok=True)
    path = "%s/%s.py" % (folder, kind)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    # Bytecode is checked against the source's size and its mtime in whole seconds: an edit that
    # keeps the size, run within the second, would find the old bytecode valid. The file was just
    # written, so whatever bytecode it had is stale: drop it.
    try:
        os.remove(importlib.util.cache_from_source(path))
    except FileNotFoundError:
        pass
    return path


def run_cell(source: str, lesson: int | str, name: str, harness_text: str | None,
             write: Callable[[str], object],
             flush: Callable[[], object] | None = None) -> list:
    """Run a cell against the book's harness of `lesson`, or the reader's when given its text.
    `write` gets each piece of output as it is printed, `flush` each flush the cell asks for.
    Returns [output, error or None, characters printed past the cap and not kept]."""
    if harness_text is None:
        harness_path = "%s/reference/lesson%s.py" % (ROOT, _key(lesson))
    else:
        harness_path = _write_reader(lesson, "harness", harness_text)
    result = cellrun.run_cell(source, harness_path=harness_path, lab_dir=ROOT, name=name,
                              write=write, flush=flush)
    return [result.output, result.error if result.error is None else str(result.error),
            result.dropped]


def run_tests(harness_text: str, lesson: int | str, lab: int, tests_path: str,
              report: Callable[[str], object] | None = None) -> str:
    """Run lab `lab` of `lesson` (11, or a side quest: "S2") on the reader's harness;
    lab_check's results as JSON. `report`, if given, is called with each test's result, as
    JSON, as soon as that test has finished: the page ticks its checklist as the run goes, and
    knows which test a stop cut short."""
    from lab import lab_check       # imported on first use: unittest is not small

    path = _write_reader(lesson, "lab%d" % lab, harness_text)
    tell = None if report is None else (lambda result: report(json.dumps(result)))
    return json.dumps(lab_check.run(path, tests_path, lab=lab, report=tell))


def warm(lesson: int | str | None = None) -> None:
    """Run one throwaway cell, ahead of the reader's first click: right after a restore from the
    snapshot the code a cell runs through is cold, and this compiles it. Given the page's lesson
    ("11", "A"), the cell imports that lesson's harness, as the page's cells do: its code is then
    compiled and kept (cellrun), and the reader's first click runs it, not the compiler.

    It also lets imports keep their bytecode (Pyodide starts with sys.dont_write_bytecode set):
    every cell imports `lab` afresh, and from /book/lab/__pycache__ that is a read, not a compile
    of every module of the package on every click."""
    sys.dont_write_bytecode = False
    harness = "%s/reference/none.py" % ROOT
    source = "import lab\nprint(lab.shape([lab.user('warm')]))\n"
    if lesson is not None:
        key = _key(int(lesson) if str(lesson).isdigit() else lesson)
        if os.path.exists("%s/reference/lesson%s.py" % (ROOT, key)):
            harness, source = "%s/reference/lesson%s.py" % (ROOT, key), "import harness\n" + source
    cellrun.run_cell(source, harness_path=harness, lab_dir=ROOT, name="warm")


def warm_tests() -> None:
    """Import the lab runner (unittest is not small) while the reader reads."""
    from lab import lab_check  # noqa: F401  (imported for its side: the module is loaded)
