"""The page's way into the book's Python: what the worker calls (site/js/worker.js).

The worker writes the book's files under /book (cellrun.py, lab/, reference/, tests/) and
imports this module; every call from the page lands in one of the two functions below. Keeping
the glue here, not in a string inside the worker, lets it be imported, tested under CPython, and
frozen into a memory snapshot with the rest of the book's runtime."""
from __future__ import annotations

import json
import os
from typing import Callable

import cellrun

ROOT = os.path.dirname(os.path.abspath(__file__))
READER = "/reader"


def _write_reader(lesson: int, kind: str, text: str) -> str:
    """Put the reader's file where the runner can import it, and return its path."""
    folder = "%s/lesson%02d" % (READER, lesson)
    os.makedirs(folder, exist_ok=True)
    path = "%s/%s.py" % (folder, kind)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def run_cell(source: str, lesson: int, name: str, harness_text: str | None,
             write: Callable[[str], object]) -> list:
    """Run a cell against the book's harness of `lesson`, or the reader's when given its text.
    Returns [output, error or None]."""
    if harness_text is None:
        harness_path = "%s/reference/lesson%02d.py" % (ROOT, lesson)
    else:
        harness_path = _write_reader(lesson, "harness", harness_text)
    result = cellrun.run_cell(source, harness_path=harness_path, lab_dir=ROOT, name=name,
                              write=write)
    return [result.output, result.error if result.error is None else str(result.error)]


def run_tests(harness_text: str, lesson: int, lab: int, tests_path: str) -> str:
    """Run lab `lab` of `lesson` on the reader's harness; lab_check's results as JSON."""
    from lab import lab_check       # imported on first use: unittest is not small

    path = _write_reader(lesson, "lab%d" % lab, harness_text)
    return json.dumps(lab_check.run(path, tests_path, lab=lab))


def warm() -> None:
    """Run one throwaway cell, ahead of the reader's first click: right after a restore from the
    snapshot the code a cell runs through is cold, and this compiles it."""
    cellrun.run_cell("import lab\nprint(lab.shape([lab.user('warm')]))\n",
                     harness_path="%s/reference/none.py" % ROOT, lab_dir=ROOT, name="warm")


def warm_tests() -> None:
    """Import the lab runner (unittest is not small) while the reader reads."""
    from lab import lab_check  # noqa: F401  (imported for its side: the module is loaded)
