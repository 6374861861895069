"""Stage 3b, labs: everything a lab shows that is cut from the course's harness and its tests.

The starting files, the reference harness each lesson's cells import, the diffs and the test
checklists all come from two sources of truth, harness_py/course/harness.py (through
harness_py/stages.py) and each lesson's lessons/<folder>/tests.py (through lab_check.sentences, which
reads the tests without running them). This module only asks them; it cuts nothing itself.
"""
from __future__ import annotations

import ast
import io
import json
import re
import zipfile
from pathlib import Path

import difflib

import stages
from lab import lab_check

from .course import Course, Page
from .errors import BuildError
from .inventory import inventory
from .model import LabView
from .project import Project


# An escape in a string's source that stands for a blank: \n, \t, \r, \f or \v, after an even number
# of backslashes (an odd number would make it a backslash and a letter).
_BLANK_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\[ntrfv]")


def lost_escapes(source: str) -> list[tuple[int, str, str]]:
    """(line, test, escape) for every escape such as \\n written in a lab test's docstring.

    The checklist joins a docstring's words with single spaces (lab_check's _sentence), so the
    newline that \\n stands for shows as a space, and a sentence about "a\\nb" reads "a b". A
    checklist line that means the two characters writes them \\\\n. Raw docstrings are left alone:
    their \\n is already the two characters."""
    found = []
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.ClassDef) and lab_check.LAB_CLASS.match(node.name)):
            continue
        for item in node.body:
            if not (isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and item.name.startswith("test") and item.body):
                continue
            first = item.body[0]
            if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                continue
            text = ast.get_source_segment(source, first.value) or ""
            if "r" in text[:len(text) - len(text.lstrip("rRuUbBfF"))].lower():
                continue                        # a raw string: its \n is the two characters
            for match in _BLANK_ESCAPE.finditer(text):
                line = first.value.lineno + text.count("\n", 0, match.start())
                found.append((line, item.name, match.group(0)[-2:]))
    return found


def tests_name(page: Page) -> str:
    """lesson01.py for lesson "01", lessonA.py for checkpoint A (harness_py/pagerun.py's key)."""
    return f"lesson{int(page.id):02d}.py" if page.id.isdigit() else f"lesson{page.id}.py"


class Labs:
    """The stages of the course's harness and the tests, as the pages and downloads need them."""

    def __init__(self, project: Project, course: Course) -> None:
        self.project, self.course = project, course
        self._stages = None
        self._sentences: dict[str, list[tuple[str, int, str]]] = {}

    @property
    def stages(self):
        """harness_py/stages.py's Stages for the course, parsed once, on first use."""
        if self._stages is None:
            source = self.project.harness_source
            if not source.exists():
                raise BuildError(self.project.rel(source), 0, "the course's marked harness is missing")
            try:
                self._stages = stages.load(source, parents=self.course.parents,
                                           names=self.course.page_names)
            except stages.MarkerError as error:
                raise BuildError(self.project.rel(source), error.line, error.message) from None
        return self._stages

    # -- what cells import ---------------------------------------------------------------------

    def reference(self, page: Page) -> str:
        """The harness a page's cells import: the solution of the page's last lab, or for a page
        without labs, of the last lab before it (an empty file before the first lab)."""
        if page.points:
            return self.stages.solution(page.points[-1])
        base = self.course.base(page)
        return self.stages.solution(base) if base else ""

    def inventory(self, page: Page) -> list:
        """"Your harness now" for the page's card: its reference harness, region by region, with
        what the page's labs added marked (builder/inventory.py)."""
        after = self.reference(page)
        if not page.points:                  # a checkpoint: the harness it reviews, nothing added
            return inventory(after, after)
        before = self.stages.previous(page.points[0])
        return inventory(after, self.stages.solution(before) if before else "")

    # -- what a lab section shows -----------------------------------------------------------------

    def tests_file(self, page: Page) -> Path:
        return self.project.tests_file(page)

    def sentences(self, page: Page) -> list[tuple[str, int, str]]:
        """(test id, lab, sentence) of the page's tests, read by lab_check without running them."""
        if page.id not in self._sentences:
            path = self.tests_file(page)
            rel = self.project.rel(path)
            if not path.exists():
                raise BuildError(rel, 0, f"lesson {page.id} has labs and no tests file")
            try:
                self._sentences[page.id] = [tuple(t) for t in lab_check.sentences(path)]
            except lab_check.UsageError as error:
                raise BuildError(rel, 0, str(error)) from None
            lost = lost_escapes(path.read_text(encoding="utf-8"))
            if lost:
                line, test, escape = lost[0]
                raise BuildError(rel, line, f"the docstring of {test} writes {escape}, which its "
                                 f"checklist line shows as a space: write \\{escape} for the two "
                                 "characters")
        return self._sentences[page.id]

    def views(self, page: Page, rel: str) -> dict[int, LabView]:
        """A LabView for every lab of `page`."""
        views = {}
        tests = self.sentences(page) if page.labs else []
        for number, title in enumerate(page.labs, 1):
            point = page.point(number)
            mine = [(test_id, sentence) for test_id, lab, sentence in tests if lab == number]
            if not mine:
                raise BuildError(self.project.rel(self.tests_file(page)), 0,
                                 f"lab {point} has no tests (a class Lab{number} with test methods)")
            before = self.stages.previous(point)
            if before is None:
                changes = "The whole file, new"
            elif stages.page_of(before) == stages.page_of(point):
                changes = "What changed since the previous lab"
            else:
                changes = f"What changed since {self.stages.words(stages.page_of(before))}"
            views[number] = LabView(
                number=number, point=point, title=title, starting=self.stages.starting(point),
                diff=self.stages.diff(point) if before else [], changes_title=changes,
                tests=mine, tests_path=f"py/tests/{tests_name(page)}",
                download=f"downloads/lesson-{page.id}/",
                file_name="harness.py" if number == 1 else f"harness-lab{number}.py",
                solution=solution_path(page, number),
                take_home=([f"downloads/lesson-{page.id}/{name}" for name in self._extras(page)]
                           if number == len(page.labs) else []))
        return views

    # -- files for the reader's machine and for the worker ----------------------------------------

    def _lab_package(self) -> dict[str, Path]:
        root = self.project.lab_package
        return {f"lab/{p.relative_to(root).as_posix()}": p for p in sorted(root.rglob("*.py"))
                if "__pycache__" not in p.parts}

    def _extras(self, page: Page) -> dict[str, Path]:
        """What a page adds to its lab folder: every file in lessons/<folder>/download/ (the
        closing page's agent.py), at the same place under the folder."""
        root = self.project.lessons / page.folder / "download"
        if not root.is_dir():
            return {}
        return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*"))
                if p.is_file() and "__pycache__" not in p.parts}

    def downloads(self, page: Page) -> dict[str, bytes | Path]:
        """downloads/lesson-NN/: the lesson's lab folder, runnable with plain CPython, and the
        same folder as one file, downloads/lesson-NN.zip: a static host lists no folders, so
        the page links the zip and the folder's single files, never the folder."""
        folder = f"lesson-{page.id}/"
        files: dict[str, bytes | Path] = {}
        for number in range(1, len(page.labs) + 1):
            name = "harness.py" if number == 1 else f"harness-lab{number}.py"
            files[folder + name] = self.stages.starting(page.point(number)).encode("utf-8")
        files[folder + "tests.py"] = self.tests_file(page)
        for name, path in self._lab_package().items():
            files[folder + name] = path
        for name, path in self._extras(page).items():
            files[folder + name] = path
        made = {f"downloads/{name}": data for name, data in files.items()}
        made[f"downloads/lesson-{page.id}.zip"] = zipped(files)
        return made

    def solutions(self, page: Page) -> dict[str, bytes]:
        """solutions/lesson-NN/lab-K.json: each lab's reference solution, for the reader who asks
        for it (solution.js fetches it on request; it is in no page's HTML, so nothing on a page
        gives it away): {"file": the whole solved file, "gaps": the book's code for each gap of
        the starting file, in order, with the line its gap starts at}."""
        made = {}
        for number in range(1, len(page.labs) + 1):
            point = page.point(number)
            starting, solution = self.stages.starting(point), self.stages.solution(point)
            data = {"lesson": page.id, "lab": number, "file": solution,
                    "gaps": gap_solutions(starting, solution)}
            made[solution_path(page, number)] = json.dumps(data, indent=1).encode("utf-8")
        return made

    def py(self, pages: list[Page]) -> dict[str, bytes | Path]:
        """py/: what the page's worker loads (docs/architecture.md, "The page's Python")."""
        files: dict[str, bytes | Path] = {"py/cellrun.py": self.project.cellrun,
                                          "py/pagerun.py": self.project.code / "pagerun.py"}
        for name, path in self._lab_package().items():
            files["py/" + name] = path
        for page in pages:
            # every page's cells import this harness (a checkpoint's: the last lab's before it)
            files[f"py/reference/{tests_name(page)}"] = self.reference(page).encode("utf-8")
            if page.labs:
                files[f"py/tests/{tests_name(page)}"] = self.tests_file(page)
        listing = sorted(name.removeprefix("py/") for name in files)
        files["py/files.json"] = json.dumps({"files": listing}, indent=1).encode("utf-8")
        return files


def solution_path(page: Page, number: int) -> str:
    return f"solutions/lesson-{page.id}/lab-{number}.json"


def gap_solutions(starting: str, solution: str) -> list[dict]:
    """For each gap of `starting` (GAP_OPEN to GAP_CLOSE), the lines of `solution` that take its
    place: the solution's lines between the nearest lines around the gap that both files share."""
    old, new = starting.splitlines(), solution.splitlines()
    where: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        for k in range(size):
            where[a + k] = b + k
    gaps, open_at = [], None
    for index, line in enumerate(old):
        if line.strip() == stages.GAP_OPEN:
            open_at = index
        elif line.strip() == stages.GAP_CLOSE and open_at is not None:
            before = next((where[i] for i in range(open_at - 1, -1, -1) if i in where), -1)
            after = next((where[i] for i in range(index + 1, len(old)) if i in where), len(new))
            code = new[before + 1:after]
            while code and not code[0].strip():
                code.pop(0)
            while code and not code[-1].strip():
                code.pop()
            gaps.append({"line": open_at + 1, "code": "\n".join(code)})
            open_at = None
    return gaps


def zipped(files: dict[str, bytes | Path]) -> bytes:
    """`files` as one zip, the same bytes for the same files: sorted, with one fixed date."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            data = files[name]
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data.read_bytes() if isinstance(data, Path) else data)
    return buffer.getvalue()
