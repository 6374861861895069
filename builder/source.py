"""Stage 2, parse: read one lesson source, parse it, and check everything that can be checked
without running it.

The checks here are the ones an author gets wrong: an unknown directive, a check with no right
option or two, a figure whose file is missing, a cell that will not parse, a link to a page that
does not exist or is not written. Each stops the build with `lessons/<file>:<line>: ...`, where the
line comes from markdown-it's token maps (counted over the whole file, front matter included).
Each directive is read by its pure parse (builder/directives.py) into a typed node of the page
model, which the walk keeps (`token.meta["node"]` too, for drawing). Numbering is a pass of its
own once every part is read: checks, prompts, figures and cells in reading order, so the renderer
and the cell runner agree on "Figure 11.2" and "cell-11-3".
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from markdown_it.token import Token

from . import directives, markup, options
from .course import Course, Page
from .model import Check, Citation, Hint, Lab, PageModel, Prompt, Section
from .errors import BuildError
from .names import CELL_NAME
from .options import DEFAULT_TIMEOUT, OptionError
from .project import Project

ROLES = ("tau", "general", "term", "ahead")
TAU_REF = re.compile(r"[\w./-]+(:\d+(-\d+)?)?\Z")


@dataclass
class Cell:
    """One ```python cell: its code, where it is, and how it must be run."""

    id: str                        # "11-3", or "11-<name>" with id=<name> (lesson 1: "1-3")
    source: str
    line: int                      # the line of the opening fence
    editable: bool = False
    lab: int | None = None
    raises: bool = False
    timeout: float = DEFAULT_TIMEOUT
    answers: str | None = None     # "check-11-2" / "prompt-11-1": its output stays folded until
                                   # the reader has answered that, or runs the cell
    expected: str | None = None    # the declared ```output, if any
    expected_line: int = 0

    @property
    def code_line(self) -> int:
        """The file line of the cell's first line of code."""
        return self.line + 1


@dataclass
class Source:
    """A parsed, checked lesson source."""

    page: Page
    path: Path
    rel: str                       # "lessons/11-memory.md", as errors name it
    meta: dict
    tokens: list[Token]
    cells: list[Cell] = field(default_factory=list)
    model: PageModel = field(default_factory=PageModel)  # every part, typed (model.py)

    @property
    def labs(self) -> dict[int, Lab]:
        return {lab.number: lab for lab in self.model.labs}

    @property
    def figures(self) -> list[str]:
        """The src of each figure, in order."""
        return [figure.src for figure in self.model.figures]


def parse(project: Project, course: Course, page: Page) -> Source:
    """Parse and check the source of `page`."""
    path = project.lessons / page.file
    rel = project.rel(path)
    text = path.read_text(encoding="utf-8")
    md = markup.parser()
    tokens = md.parse(text, {})
    meta: dict = {}
    if tokens and tokens[0].type == "front_matter":
        front = tokens.pop(0)
        try:
            meta = yaml.safe_load(front.content) or {}
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            raise BuildError(rel, (mark.line + 2) if mark else 1, f"front matter is not valid YAML: "
                             f"{getattr(error, 'problem', error)}") from None
        if not isinstance(meta, dict):
            raise BuildError(rel, 1, "front matter must be a mapping")
    if str(meta.get("id", page.id)) != page.id:
        raise BuildError(rel, 2, f"front matter says id {meta['id']!r}, course.yaml says {page.id!r}")
    source = Source(page=page, path=path, rel=rel, meta=meta, tokens=tokens)
    checker = _Checker(project, course, source, text.splitlines())
    checker.walk(tokens, "")
    checker.number()
    missing = [k for k in range(1, len(page.labs) + 1) if k not in source.labs]
    if missing:
        raise BuildError(rel, 0, f"course.yaml gives lesson {page.id} lab {missing[0]} "
                                 f"({page.labs[missing[0] - 1]!r}), and the source has no ::: lab {missing[0]}")
    if meta.get("new_here"):
        source.meta["new_here_tokens"] = md.parseInline(str(meta["new_here"]), {})
        line = next((n for n, text_line in enumerate(text.splitlines(), 1)
                     if text_line.startswith("new_here")), 2)
        _Checker(project, course, source).check_inline(source.meta["new_here_tokens"][0], line)
    return source


class _Checker:
    """Walks the folded tokens once: checks each directive, cell and link, and numbers them."""

    def __init__(self, project: Project, course: Course, source: Source,
                 lines: list[str] | None = None) -> None:
        self.project, self.course, self.source = project, course, source
        self.lines = lines or []
        self.parents: list[Token] = []     # the directives around the one being checked
        self.last_question: Check | Prompt | None = None   # the latest one, for `answers`
        self.cells: list[tuple[Token, Cell, str | None, Check | Prompt | None]] = []

    def fail(self, line: int, message: str) -> None:
        raise BuildError(self.source.rel, line, message)

    def raw(self, first: int, end: int) -> str:
        """The source text of lines [first, end) (0-based), as the author wrote it."""
        return "\n".join(self.lines[first:end]).strip()

    def inside(self, token: Token, until: Token | None = None) -> str:
        """A directive's text, after its opening line, up to `until` or its closing line."""
        return self.raw(token.map[0] + 1, until.map[0] if until is not None else token.map[1])

    def hints(self, token: Token) -> list[Hint]:
        return [Hint(title=self.options(h)["title"] or "", text=self.inside(h), line=h.map[0] + 1)
                for h in directives.kids(token, "hint")]

    def first_part(self, token: Token) -> Token | None:
        return next((t for t in token.children if t.type == "directive"), None)

    def walk(self, tokens: list[Token], parent: str) -> None:
        for token in tokens:
            line = token.map[0] + 1 if token.map else 0
            if token.type == "directive":
                self.directive(token, parent, line)
            elif markup.is_cell(token):
                self.cell(token, line)
            elif markup.is_output(token):
                self.fail(line, "an ```output fence must come straight after a ```python cell")
            elif token.type == "inline":
                self.check_inline(token, line)
            elif token.type == "heading_open" and token.tag == "h2" and not parent:
                self.source.model.sections.append(Section(title="", line=line))
            if (token.type == "inline" and self.source.model.sections
                    and self.source.model.sections[-1].line == line and not parent
                    and not self.source.model.sections[-1].title):
                self.source.model.sections[-1].title = token.content

    # -- directives --------------------------------------------------------------------------

    def directive(self, token: Token, parent: str, line: int) -> None:
        name = token.info
        self.closed(token, line)
        entry = directives.REGISTRY.get(name)
        if entry is None:
            self.fail(line, f"unknown directive '::: {name}' (known: "
                            f"{', '.join(sorted(directives.REGISTRY))})")
        outer = directives.REGISTRY.get(parent)
        if entry.parents is directives.ANYWHERE and outer is not None and outer.closed:
            self.fail(line, f"'::: {name}' cannot go inside '::: {parent}'")
        if entry.parents is not directives.ANYWHERE and parent not in entry.parents:
            where = " or ".join(f"'::: {p}'" for p in sorted(entry.parents) if p) or "the top level"
            self.fail(line, f"'::: {name}' belongs inside {where}")
        self.options(token)
        node = entry.parse(self, token, line) if entry.parse is not None else None
        if node is not None:
            token.meta["node"] = node
            self.source.model.add(node)
            if isinstance(node, (Check, Prompt)):
                self.last_question = node
        if parent == "card":
            self.source.model.card.add(name)
        self.parents.append(token)
        self.walk(token.children, name)
        self.parents.pop()

    def closed(self, token: Token, line: int) -> None:
        """A directive without its closing line would silently swallow the rest of the lesson
        (markdown-it closes it at the end of its parent, or of the file)."""
        end = token.map[1]
        closing = self.lines[end].strip() if end < len(self.lines) else ""
        parent = self.parents[-1] if self.parents else None
        if parent is not None and end >= parent.map[1] and parent.markup == token.markup:
            # the parent's closing line was meant for a part before this one
            self.fail(parent.map[0] + 1, f"'{parent.markup} {parent.info}' is never closed: the "
                                         f"'{parent.markup}' on line {parent.map[1] + 1} closes it, so "
                                         f"'{token.markup} {token.info}' on line {line} ends up inside it")
        if (not closing or closing.strip(":") or len(closing) < len(token.markup)
                or (parent is not None and end >= parent.map[1])):
            self.fail(line, f"'{token.markup} {token.info}' is never closed (a line "
                            f"'{token.markup}' ends it)")

    def options(self, token: Token) -> dict:
        """A directive's options, read through its schema once (kept in its meta); a bad one
        stops the build at the directive's line, with the option's name."""
        if "options" not in token.meta:
            entry = directives.REGISTRY.get(token.info)
            schema = entry.options if entry is not None else options.NONE
            try:
                token.meta["options"] = schema.read(token.meta["params"])
            except OptionError as error:
                self.fail(token.map[0] + 1, f"'{token.markup} {token.info}': {error}")
        return token.meta["options"]

    # -- cells -------------------------------------------------------------------------------

    def cell(self, token: Token, line: int) -> None:
        page = self.source.page
        try:
            values = options.CELL.read(" ".join(token.info.split()[2:]))
        except OptionError as error:
            self.fail(line, f"cell: {error}")
        lab = values["lab"]
        if lab is not None and lab > len(page.labs):
            self.fail(line, f"cell: lab={lab}: page {page.id} has " +
                            (f"labs 1 to {len(page.labs)}" if len(page.labs) > 1 else
                             "lab 1" if page.labs else "no lab"))
        timeout = values["timeout"]
        try:
            # as cellrun compiles it: a cell may await at its top level (lesson 15 on)
            compile(token.content, CELL_NAME, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        except SyntaxError as error:
            where = line + (error.lineno or 1)
            self.fail(where, f"cell does not parse: {error.msg}")
        if values["answers"] and self.last_question is None:
            self.fail(line, "a cell that answers comes after the check or prompt it answers")
        cell = Cell(id="", source=token.content, line=line, editable=values["editable"],
                    lab=lab, raises=values["raises"], timeout=timeout,
                    expected=token.meta.get("expected"),
                    expected_line=token.meta.get("expected_line", 0))
        self.cells.append((token, cell, values["id"], self.last_question if values["answers"] else None))
        self.source.cells.append(cell)

    # -- numbering: a pass of its own, once every part is read --------------------------------

    def number(self) -> None:
        """Number checks, prompts and figures in reading order ("Figure 11.2"), check that the
        labs come once each and in order, and give each cell its id ("11-3", or "11-<id>") and
        the question it answers ("check-11-2"), so the renderer and the cell runner agree."""
        model, prefix = self.source.model, self.source.page.number
        for kind in (model.checks, model.prompts, model.figures):
            for n, node in enumerate(kind, 1):
                node.number = n
        seen: set[int] = set()
        for lab in model.labs:
            if lab.number in seen:
                self.fail(lab.line, f"lab {lab.number} appears twice")
            if lab.number != len(seen) + 1:
                self.fail(lab.line, f"lab {lab.number} comes before lab {len(seen) + 1}")
            seen.add(lab.number)
        ids: set[str] = set()
        for n, (token, cell, name, question) in enumerate(self.cells, 1):
            cell.id = f"{prefix}-{name or n}"
            if cell.id in ids:
                self.fail(cell.line, f"two cells have the id {cell.id}")
            ids.add(cell.id)
            if question is not None:
                kind = "check" if isinstance(question, Check) else "prompt"
                cell.answers = f"{kind}-{prefix}-{question.number}"
            token.meta["cell"] = cell.id

    # -- inline: links and roles --------------------------------------------------------------

    def check_inline(self, token: Token, line: int) -> None:
        text = token.content
        cursor = 0
        for child in token.children or []:
            if child.type == "link_open":
                href = child.attrGet("href") or ""
                if href.startswith("lesson:"):
                    target = href.removeprefix("lesson:")
                    self.source.model.links.append(target)
                    at = text.find(f"(lesson:{target}", cursor)
                    cursor = at + 1 if at >= 0 else cursor
                    here = line + (text.count("\n", 0, at) if at >= 0 else 0)
                    page = self.course.page(target)
                    if page is None:
                        self.fail(here, f"link to lesson:{target}: there is no page {target!r} "
                                        f"in course.yaml")
                    if not page.written:
                        self.fail(here, f"link to lesson:{target}: {page.label} "
                                        f"({page.title}) is not written yet")
            elif child.type == "myst_role":
                role = child.meta.get("name")
                at = text.find("{" + str(role) + "}", cursor)
                cursor = at + 1 if at >= 0 else cursor
                here = line + (text.count("\n", 0, at) if at >= 0 else 0)
                if role not in ROLES:
                    self.fail(here, f"unknown role {{{role}}} (known: {', '.join(ROLES)})")
                if role == "tau" and not TAU_REF.match(child.content.strip()):
                    self.fail(here, f"{{tau}}`{child.content}`: write path or path:first-last")
                if role == "tau":
                    path, _, lines = child.content.strip().partition(":")
                    first, _, last = lines.partition("-")
                    self.source.model.citations.append(Citation(
                        path=path, first=int(first) if first else None,
                        last=int(last or first) if first else None, line=here))
