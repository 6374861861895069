"""Where a book's parts live on disk.

The real book and the test fixtures are laid out the same way, so every stage takes a Project
rather than guessing paths: the tests build a small fixture course with the very same code."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Project:
    """The folders a build reads. `root` is what error messages are relative to."""

    root: Path
    lessons: Path
    harness_source: Path
    code: Path                     # harness_py: stages.py, cellrun.py, lab/
    site: Path                     # templates/, css/, js/

    @property
    def course_file(self) -> Path:
        return self.lessons / "course.yaml"

    def room(self, page) -> Path:
        """A page's folder: page.md, tests.py, wrong.yaml, figures/."""
        return self.lessons / page.folder

    def tests_file(self, page) -> Path:
        return self.room(page) / "tests.py"

    def wrong_file(self, page) -> Path:
        return self.room(page) / "wrong.yaml"

    @property
    def lab_package(self) -> Path:
        return self.code / "lab"

    @property
    def cellrun(self) -> Path:
        return self.code / "cellrun.py"


    def rel(self, path: Path) -> str:
        """`path` as error messages name it: relative to the root when it is inside it."""
        try:
            return path.absolute().relative_to(self.root.absolute()).as_posix()
        except ValueError:
            return str(path)

    @classmethod
    def book(cls, root: Path = REPO) -> "Project":
        """The book in this repository."""
        return cls.at(root, code=root / "harness_py")

    @classmethod
    def at(cls, root: Path, *, code: Path | None = None, site: Path | None = None) -> "Project":
        """A book laid out like this repository under `root`; `code` and `site` default to ours,
        so a fixture course needs only its own lessons, harness source and tests."""
        root = Path(root)
        return cls(root=root, lessons=root / "lessons",
                   harness_source=root / "harness_py" / "course" / "harness.py",
                   code=code or REPO / "harness_py", site=site or REPO / "site")
