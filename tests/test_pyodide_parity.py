"""Pyodide prints what CPython printed, on both of the page's boots, checked in one Node process
each (tests/parity.mjs) rather than through the page: every cell of every written page prints,
under Pyodide, the output the build proved under CPython (and raises where it is marked to); every
lab's starting file fails its tests and its solution passes them. The page's own files are used,
as the worker gets them: the built site's py/ folder (`make test` builds it first) and the
snapshot in it. What only a browser can show (the page's buttons, Stop, storage) stays in
tests/browser/."""
from __future__ import annotations

import json
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

from builder import course as course_stage, source as source_stage
from builder.labs import Labs
from builder.project import Project

ROOT = Path(__file__).resolve().parents[1]
CELL_NAME = "cell"          # what a traceback calls a cell, in the build and in the page
PYODIDE = ROOT / "node_modules" / "pyodide"
SITE_PY = ROOT / "_site" / "py"
PROJECT = Project.book()
COURSE = course_stage.load(PROJECT)


def _lesson(page) -> int | str:
    """What the page sends the worker: 11 for a lesson, "S2" or "A" otherwise."""
    return int(page.id) if page.id.isdigit() else page.id


def _key(page) -> str:
    return f"{int(page.id):02d}" if page.id.isdigit() else page.id


def _jobs() -> tuple[list[dict], dict[str, object], dict[str, str]]:
    """The jobs, the cells by id, and each lab job's expectation ("fails" or "passes")."""
    jobs, cells, want = [], {}, {}
    labs = Labs(PROJECT, COURSE)
    for page in COURSE.written:
        for cell in source_stage.parse(PROJECT, COURSE, page).cells:
            cells[cell.id] = cell
            jobs.append({"kind": "cell", "lesson": _lesson(page), "id": cell.id, "name": CELL_NAME,
                         "source": cell.source})
        for number, point in enumerate(page.points, 1):
            for kind, text in (("starting", labs.stages.starting(point)),
                               ("solution", labs.stages.solution(point))):
                job_id = f"lab {point} {kind}"
                want[job_id] = "fails" if kind == "starting" else "passes"
                jobs.append({"kind": "lab", "lesson": _lesson(page), "lab": number, "id": job_id,
                             "tests": f"tests/lesson{_key(page)}.py", "harness": text})
    return jobs, cells, want


@lru_cache(maxsize=None)
def _run(boot: str) -> dict[str, dict]:
    node = shutil.which("node")
    assert node and (PYODIDE / "pyodide.mjs").is_file(), "needs node and node_modules/pyodide (make setup)"
    assert (SITE_PY / "files.json").is_file(), "needs the built site's py/ folder: run python build.py first"
    jobs, _, _ = _jobs()
    folder = Path(__import__("tempfile").mkdtemp(prefix="parity-"))
    (folder / "jobs.json").write_text(json.dumps(jobs), encoding="utf-8")
    done = subprocess.run([node, str(ROOT / "tests" / "parity.mjs"), str(PYODIDE), str(SITE_PY), boot,
                           str(folder / "jobs.json")], capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"tests/parity.mjs ({boot} boot) stopped: {done.stderr[-2000:]}"
    results = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
            results[result["id"]] = result
    return results


@pytest.mark.parametrize("boot", ["snapshot", "plain"])
def test_every_cell_prints_under_pyodide_what_it_printed_under_cpython(boot):
    if boot == "snapshot":
        assert (SITE_PY / "snapshot.bin.gz").is_file(), "the build made no snapshot"
    results = _run(boot)
    _, cells, _ = _jobs()
    differ = []
    for cell_id, cell in cells.items():
        result = results.get(cell_id)
        assert result is not None, f"cell {cell_id} was not run under Pyodide ({boot} boot)"
        got = result["output"].rstrip("\n").splitlines()
        if got != cell.expected.rstrip("\n").splitlines() or bool(result["error"]) != cell.raises:
            differ.append(f"cell {cell_id}: printed {result['output'][-300:]!r}, error {result['error']!r}")
        assert result["streamed"] == result["output"] or len(result["streamed"]) > len(result["output"]), \
            f"cell {cell_id}: what was written as it ran is not what it returned"
    assert not differ, f"{len(differ)} of {len(cells)} cells print otherwise under Pyodide ({boot} boot):\n" \
        + "\n".join(differ[:10])


def test_every_labs_starting_file_fails_and_its_solution_passes_under_pyodide():
    results = _run("snapshot")
    _, _, want = _jobs()
    wrong = []
    for job_id, expectation in want.items():
        statuses = results[job_id]["statuses"]
        passes = bool(statuses) and all(status == "pass" for status in statuses)
        if passes != (expectation == "passes"):
            wrong.append(f"{job_id}: {statuses.count('pass')} of {len(statuses)} tests pass")
    assert not wrong, "under Pyodide:\n" + "\n".join(wrong)


def test_every_labs_page_shows_the_starting_file_its_tests_are_run_on():
    """The editor opens on the page's `.lab-starting` (site/js/labs.js): for every lab of every
    written page it is the stage's starting file, the one the test above runs."""
    from html.parser import HTMLParser

    class Starting(HTMLParser):
        def __init__(self):
            super().__init__()
            self.lab, self.inside, self.found = None, False, {}

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if tag == "section" and "lab" in (attrs.get("class") or "").split():
                self.lab = attrs.get("id")
            if tag == "pre" and "lab-starting" in (attrs.get("class") or "").split():
                self.inside = True
                self.found[self.lab] = ""

        def handle_endtag(self, tag):
            if tag == "pre":
                self.inside = False

        def handle_data(self, data):
            if self.inside:
                self.found[self.lab] += data

    stages = Labs(PROJECT, COURSE).stages
    checked = 0
    for page in COURSE.written:
        if not page.points:
            continue
        parser = Starting()
        parser.feed((ROOT / "_site" / page.path).read_text(encoding="utf-8"))
        for point in page.points:
            lesson, number = point.split(".")
            lab_id = f"lab-{int(lesson) if lesson.isdigit() else lesson}-{number}"
            assert parser.found.get(lab_id) == stages.starting(point), \
                f"{page.path}: #{lab_id} does not show the starting file of lab {point}"
            checked += 1
    assert checked == sum(len(page.points) for page in COURSE.written) >= 27
