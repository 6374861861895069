"""The glossary: every term the book teaches, defined once, where it is taught, and the rule that
no page uses a term before the page that introduces it.

A page introduces a term with a `{term}` role in its running text (``the {term}`transcript` ``),
at the place it teaches it, and gives it its one-line definition in the page's `::: terms` box:

    ::: terms
    - transcript: the list of messages, in order, that the harness sends the model each time.
    - stop reason | stop reasons | stop_reason: why the model ended its reply.
    :::

A line is `- name [| other form ...]: definition`; a form ending in s, es or ies is matched on its
own, and every form is matched with an -s or -es after it too. `collect()` reads every written
page in course order into a `Glossary` and stops the build when:

- a page uses a term (case aside, whole words, in prose: never in code, a code block, a cell's
  output, link text or another role) before the page that introduces it, unless the use is a
  `{ahead}` role (a forward reference the author means); every such use is named, each at its
  `file:line`;
- a term is defined twice, a `{term}` has no line in its page's `::: terms`, a line of `::: terms`
  has no `{term}` on its page, or a `{term}`/`{ahead}` names no term.

The renderer (builder/html.py) then draws each term's first use on every later page as a link to
its glossary entry with a card, and `glossary.html` lists them all (builder/render.py)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from markdown_it.token import Token

from .errors import BuildError
from .markup import _slug

ITEM = re.compile(r"-\s+(?P<names>[^:]+?)\s*:\s+(?P<definition>.+)\Z", re.S)


@dataclass
class Definition:
    """One line of a page's `::: terms`: the term's name, its other forms, what it means."""

    name: str
    forms: tuple[str, ...]
    definition: str
    line: int


@dataclass
class Mark:
    """A `{term}` or `{ahead}` role in a page's text."""

    role: str                       # "term" or "ahead"
    text: str
    line: int


@dataclass
class Term:
    """A term of the glossary, with where it is introduced and the pages that use it after."""

    name: str
    slug: str                       # its anchor on glossary.html; "term-<slug>" where introduced
    definition: str
    forms: tuple[str, ...]
    page: object                    # builder.course.Page that introduces it
    rel: str
    line: int
    section: str                    # the title of the section it is introduced in ("" if none)
    used_on: list = field(default_factory=list)    # later pages that use it, in course order

    @property
    def anchor(self) -> str:
        """The id of its introduction on its page (the `{term}` drawn as a <dfn>)."""
        return f"term-{self.slug}"


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "term"


def _pattern(forms: Iterable[str]) -> re.Pattern:
    """One regex for every form, the longest first (so "tool result" wins over "tool"): whole
    words, any case, any run of spaces between words, an optional -s/-es after."""
    parts = []
    for form in sorted(set(f.lower() for f in forms), key=len, reverse=True):
        words = r"\s+".join(re.escape(w) for w in form.split())
        parts.append(words + r"(?:s|es)?")
    body = "|".join(parts) or r"(?!x)x"
    return re.compile(rf"(?<![\w-])(?:{body})(?![\w-])", re.I)


def parse_terms(lines: list[str], first_line: int) -> tuple[list[Definition], list[tuple[int, str]]]:
    """A `::: terms` body (its lines, the first at file line `first_line`): its definitions and
    the problems of lines that are not `- name: definition`."""
    items: list[tuple[int, list[str]]] = []
    problems = []
    for n, text in enumerate(lines):
        if text.startswith("- "):
            items.append((first_line + n, [text.strip()]))
        elif text.strip() and items:
            items[-1][1].append(text.strip())
        elif text.strip():
            problems.append((first_line + n, "a line of '::: terms' is '- term: its one-line "
                                             "definition' (other forms after the term, with |)"))
    found = []
    for line, parts in items:
        match = ITEM.match(" ".join(parts))
        if not match:
            problems.append((line, "a line of '::: terms' is '- term: its one-line definition' "
                                   "(other forms after the term, with |)"))
            continue
        forms = tuple(f.strip().strip("`") for f in match["names"].split("|") if f.strip())
        found.append(Definition(name=forms[0], forms=forms, definition=match["definition"].strip(),
                                line=line))
    return found, problems


# -- the prose of a page: where a term may be used -------------------------------------------

@dataclass
class Prose:
    """A run of text a reader reads as prose, at a file line."""

    text: str
    line: int
    heading: bool = False


def prose(tokens: list[Token]) -> Iterator[Prose]:
    """Every run of running text in `tokens`, in reading order, with its line: paragraphs,
    headings, list items, table cells, the insides of directives. Not code spans, code blocks,
    cells and their outputs, link text, image text, roles, nor a `::: terms` box."""
    heading = False
    for token in tokens:
        if token.type == "directive":
            if token.info != "terms":
                yield from prose(token.children or [])
            continue
        if token.type == "heading_open":
            heading = True
        elif token.type == "heading_close":
            heading = False
        if token.type != "inline" or not token.map:
            continue
        line, depth = token.map[0] + 1, 0
        for child in token.children or []:
            if child.type in ("softbreak", "hardbreak"):
                line += 1
            elif child.type == "link_open":
                depth += 1
            elif child.type == "link_close":
                depth -= 1
            elif child.type == "text" and depth == 0:
                yield Prose(child.content, line, heading)


def marks(tokens: list[Token]) -> Iterator[Mark]:
    """Every `{term}` and `{ahead}` role in `tokens`, with its line."""
    for token in tokens:
        if token.type == "directive":
            yield from marks(token.children or [])
            continue
        if token.type != "inline" or not token.map:
            continue
        line = token.map[0] + 1
        for child in token.children or []:
            if child.type in ("softbreak", "hardbreak"):
                line += 1
            elif child.type == "myst_role" and child.meta.get("name") in ("term", "ahead"):
                yield Mark(child.meta["name"], child.content.strip(), line)
            # a role's own text may hold a line break: count it
            if child.type == "myst_role":
                line += child.content.count("\n")


def definitions(tokens: list[Token]) -> list[tuple[Token, list[Definition]]]:
    """The `::: terms` boxes of a page, each with its definitions (read by the parser)."""
    found = []
    for token in tokens:
        if token.type == "directive":
            if token.info == "terms":
                found.append((token, token.meta.get("definitions", [])))
            found += definitions(token.children or [])
    return found


# -- the glossary of the whole book -----------------------------------------------------------

@dataclass
class Glossary:
    terms: dict[str, Term] = field(default_factory=dict)       # slug -> term
    order: dict[str, int] = field(default_factory=dict)         # page id -> place in the course
    by_form: dict[str, str] = field(default_factory=dict)       # a form, lower case -> slug
    pattern: re.Pattern = field(default_factory=lambda: _pattern(()))
    ahead: int = 0                                              # {ahead} marks in the book

    def term_of(self, text: str) -> Term | None:
        """The term `text` names (any of its forms, any case, with an -s or -es after)."""
        for candidate in keys(text):
            if candidate in self.by_form:
                return self.terms[self.by_form[candidate]]
        return None

    def uses(self, text: str) -> Iterator[tuple[int, int, Term]]:
        """Each use of a term in `text`: (start, end, term)."""
        for match in self.pattern.finditer(text):
            term = self.term_of(match.group(0))
            if term is not None:
                yield match.start(), match.end(), term

    def sorted(self) -> list[Term]:
        return sorted(self.terms.values(), key=lambda t: t.name.lower().lstrip("_"))


def keys(text: str) -> list[str]:
    """What `text` may be a form of: itself, and without an -s or -es (any case, spaces folded)."""
    key = " ".join(text.lower().split())
    found = [key]
    if key.endswith("s"):
        found.append(key[:-1])
    if key.endswith("es"):
        found.append(key[:-2])
    return found


def _section(source, line: int) -> str:
    title = ""
    for section in source.model.sections:
        if section.line <= line:
            title = section.title
    return title


def collect(sources: list) -> Glossary:
    """The glossary of the written pages `sources` (builder.source.Source, in course order).
    Stops the build, naming every problem at its `file:line`, when a term is used before the
    page that introduces it or is defined wrongly (the module's docstring)."""
    glossary = Glossary(order={s.page.id: n for n, s in enumerate(sources)})
    problems: list[tuple[str, int, str]] = []
    first_place: dict[str, tuple[str, int]] = {}
    for source in sources:
        page_marks = list(marks(source.tokens))
        introduced = {}
        for mark in page_marks:
            if mark.role == "term":
                introduced.setdefault(" ".join(mark.text.lower().split()), []).append(mark)
        for box, defs in definitions(source.tokens):
            for definition in defs:
                names = {" ".join(form.lower().split()) for form in definition.forms}
                used = sorted((m for text, found in introduced.items() if set(keys(text)) & names
                               for m in found), key=lambda m: m.line)
                for form in definition.forms:
                    key = " ".join(form.lower().split())
                    if key in glossary.by_form:
                        rel, line = first_place[key]
                        problems.append((source.rel, definition.line,
                                         f"the term {form!r} is defined twice: first at {rel}:{line}"))
                        break
                else:
                    if not used:
                        problems.append((source.rel, definition.line,
                                         f"the term {definition.name!r} has a definition but no "
                                         f"{{term}}`{definition.name}` on this page: mark the place "
                                         f"the page teaches it"))
                        continue
                    if len(used) > 1:
                        problems.append((source.rel, used[1].line,
                                         f"{{term}}`{used[1].text}` again: the term is introduced "
                                         f"once, on line {used[0].line}"))
                    term = Term(name=definition.name, slug=slug(definition.name),
                                definition=definition.definition, forms=definition.forms,
                                page=source.page, rel=source.rel, line=used[0].line,
                                section=_section(source, used[0].line))
                    if term.slug in glossary.terms:
                        other = glossary.terms[term.slug]
                        problems.append((source.rel, definition.line,
                                         f"the term {term.name!r} has the same anchor as "
                                         f"{other.name!r} ({other.rel}:{other.line}): rename one"))
                        continue
                    glossary.terms[term.slug] = term
                    for form in definition.forms:
                        key = " ".join(form.lower().split())
                        glossary.by_form[key] = term.slug
                        first_place[key] = (source.rel, definition.line)
        for key, found in introduced.items():
            term = glossary.term_of(key)
            if term is None:
                problems.append((source.rel, found[0].line,
                                 f"{{term}}`{found[0].text}` has no line in this page's "
                                 f"'::: terms' box: add '- {found[0].text}: <its one-line "
                                 f"definition>'"))
            elif term.page.id != source.page.id:
                problems.append((source.rel, found[0].line,
                                 f"{{term}}`{found[0].text}`: the term is introduced by "
                                 f"{term.page.named(lesson_word=True)} ({term.rel}:{term.line}); write it plain here"))
    glossary.pattern = _pattern(glossary.by_form)
    for source in sources:
        here = glossary.order[source.page.id]
        for mark in marks(source.tokens):
            if mark.role != "ahead":
                continue
            glossary.ahead += 1
            term = glossary.term_of(mark.text)
            if term is None:
                problems.append((source.rel, mark.line, f"{{ahead}}`{mark.text}` names no term of "
                                                        f"the glossary"))
            elif glossary.order[term.page.id] <= here:
                problems.append((source.rel, mark.line,
                                 f"{{ahead}}`{mark.text}` marks a forward reference, but "
                                 f"{term.name!r} is introduced by {term.page.named(lesson_word=True)} "
                                 f"({term.rel}:{term.line}), not after this page: drop the mark"))
        for run in prose(source.tokens):
            for start, end, term in glossary.uses(run.text):
                there = glossary.order[term.page.id]
                if there > here:
                    problems.append((source.rel, run.line,
                                     f"{run.text[start:end]!r} is used before the page that "
                                     f"introduces it, {term.page.named(lesson_word=True)} ({term.rel}:{term.line}): "
                                     f"reword it, or mark a deliberate forward reference "
                                     f"{{ahead}}`{run.text[start:end]}`"))
                elif there < here and source.page not in term.used_on:
                    term.used_on.append(source.page)
    if problems:
        problems = sorted(set(problems), key=lambda p: (glossary.order.get(_page_of(sources, p[0]), 0),
                                                        p[1], p[2]))
        (rel, line, message), rest = problems[0], problems[1:]
        raise BuildError(rel, line, message,
                         "\n".join(f"{r}:{at}: {said}" for r, at, said in rest)
                         + (f"\n{len(problems)} glossary problems in all" if rest else ""))
    return glossary


def _page_of(sources: list, rel: str) -> str:
    return next((s.page.id for s in sources if s.rel == rel), "")
