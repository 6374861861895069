"""The page model: what a lesson is made of, parsed once.

The parse stage (source.py) fills one `PageModel` per written page as it walks the Markdown;
every later stage reads it: the rules (rules.py), the cell runner, the labs, the renderer (which
also keeps the token tree for drawing), course.json, and the tests. Nothing here parses text:
it only holds what the parser found, with the line each part starts at, so any rule can point
at `lessons/<folder>/page.md:<line>`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


def fold(text: str) -> str:
    """Whitespace runs, line breaks included, as one space."""
    return " ".join(text.split())


@dataclass
class Option:
    text: str                      # the first paragraph: the option itself
    right: bool
    explanation: str               # the rest: what it misses, or why it holds
    line: int


@dataclass
class Check:
    number: int                    # 0 until the numbering pass (source.number) sets it
    line: int
    question: str
    options: list[Option]
    explain: str = ""

    @property
    def right(self) -> Option:
        return next(option for option in self.options if option.right)


@dataclass
class Hint:
    title: str
    text: str
    line: int


@dataclass
class Prompt:
    number: int                    # 0 until the numbering pass
    line: int
    question: str
    hints: list[Hint]
    answer: str
    misses: str                    # the first '::: misses' (the common answers)
    misses_lines: list[int] = field(default_factory=list)   # the line of each '::: misses'


@dataclass
class Lab:
    number: int
    line: int
    title: str
    spec: str
    hints: list[Hint]
    done: str


@dataclass
class Figure:
    number: int                    # 0 until the numbering pass
    line: int
    src: str
    alt: str
    caption: str
    legible: int = 0               # CSS px at which its smallest label reads (builder/figures.py)


@dataclass
class Citation:
    """A {tau} reference: `path`, `path:12` or `path:12-20`."""

    path: str
    first: int | None
    last: int | None
    line: int

    @property
    def ref(self) -> str:
        if self.first is None:
            return self.path
        return f"{self.path}:{self.first}" + (f"-{self.last}" if self.last != self.first else "")


class SideBySide(NamedTuple):
    """Two code blocks shown side by side: ours and theirs."""

    left: str
    right: str


@dataclass
class Capabilities:
    """The capability checklist (what it says is course.yaml's)."""

    line: int


@dataclass
class Section:
    title: str
    line: int


@dataclass
class PageModel:
    """Every part of one page, in reading order within each kind."""

    sections: list[Section] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    prompts: list[Prompt] = field(default_factory=list)
    labs: list[Lab] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    capabilities: bool = False     # it has the capability checklist
    card: set[str] = field(default_factory=set)      # the closing card's parts it has
    links: list[str] = field(default_factory=list)   # page ids it links to (lesson:ID)
    side_by_side: list[SideBySide] = field(default_factory=list)

    def add(self, node: object) -> None:
        """Keep a directive's node (what its parse returned) in reading order with its kind."""
        if isinstance(node, Capabilities):
            self.capabilities = True
            return
        kinds = {Check: self.checks, Prompt: self.prompts, Lab: self.labs, Figure: self.figures,
                 SideBySide: self.side_by_side}
        kinds[type(node)].append(node)


@dataclass
class LabView:
    """Everything a lab section shows that does not come from its source: what the labs stage
    (labs.py) works out from stages.py and lab_check, for the lab's partial to draw."""

    number: int
    point: str
    title: str
    starting: str
    diff: list[str]
    changes_title: str              # "What changed since lesson 10" / "... since the previous lab"
    tests: list[tuple[str, str]]    # (test id "Lab1.test_x", sentence)
    tests_path: str                 # "py/tests/lesson11.py"
    download: str                   # "downloads/lesson-11/"
    file_name: str                  # "harness.py" or "harness-lab2.py"
    solution: str = ""              # "solutions/lesson-11/lab-1.json", fetched only on request
    take_home: list[str] = field(default_factory=list)   # the last lab of a page with extras:
    #                                 those files ("downloads/lesson-16/agent.py"), zipped in the
    #                                 page with the reader's harness.py ("Take my harness home")
