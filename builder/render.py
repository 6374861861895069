"""Stage 4, render: a parsed, executed lesson into an HTML page, through site/templates/.

The body comes from the markdown-it tokens with the book's render rules (builder.html); the
frame around it (header, navigation, the course map) from jinja2 templates. Nothing here runs
code or checks sources: by the time a page is rendered, everything on it has been proven.
"""
from __future__ import annotations

from dataclasses import dataclass

import jinja2
from markdown_it import MarkdownIt
from markupsafe import Markup

from . import html, markup
from .course import Course, Page
from .glossary import Glossary
from .html import PageContext
from .model import LabView
from .project import Project
from .source import Source


@dataclass
class Link:
    """A neighbouring page, as the navigation shows it."""

    page: Page

    @property
    def href(self) -> str | None:
        return self.page.path if self.page.written else None

    @property
    def label(self) -> str:
        return self.page.named()


class Renderer:
    """The templates and the Markdown renderer, made once per build."""

    def __init__(self, project: Project, course: Course, glossary: Glossary | None = None) -> None:
        self.course = course
        self.glossary = glossary
        self.plain = MarkdownIt("commonmark")     # a term's definition: one line, no roles
        self.drawn: dict[str, list] = {}    # page id -> its checks and prompts as drawn (lesson())
        self.md = html.install(markup.parser())
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(project.site / "templates"),
            autoescape=jinja2.select_autoescape(["html"]), undefined=jinja2.StrictUndefined,
            trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)

    def _common(self, page: Page | None) -> dict:
        previous, following = self.course.neighbours(page) if page else (None, None)
        return {"course": self.course, "page": page,
                "previous": Link(previous) if previous else None,
                "next": Link(following) if following else None}

    def _body(self, source: Source, outputs: dict[str, str], labs: dict[int, LabView],
              in_book: bool = False, drawn: list | None = None) -> tuple[Markup, Markup]:
        """A page's body and its "new here" line, drawn from its parsed tokens."""
        context = PageContext(course=self.course, page=source.page, outputs=outputs,
                              cells={c.id: c for c in source.cells}, labs=labs,
                              templates=self.templates, in_book=in_book,
                              headings=html.heading_ids(source.tokens), drawn=drawn,
                              glossary=self.glossary, inline=self.inline,
                              now=source.meta.get("now"))
        env = {"page": context}
        body = self.md.renderer.render(source.tokens, self.md.options, env)
        new_here = ""
        if source.meta.get("new_here_tokens"):
            # the "new here" line sits above the page's text: a term's card waits for the text
            new_here = self.md.renderer.render(source.meta["new_here_tokens"], self.md.options,
                                               {**env, "no_cards": 1})
        return Markup(body), Markup(new_here)

    def lesson(self, source: Source, outputs: dict[str, str], labs: dict[int, LabView]) -> str:
        """The HTML of one written page (a lesson, the welcome page, a checkpoint...)."""
        page = source.page
        self.drawn[page.id] = []
        body, new_here = self._body(source, outputs, labs, drawn=self.drawn[page.id])
        previous, _ = self.course.neighbours(page)
        template = "welcome.html" if page.kind == "welcome" else "lesson.html"
        return self.templates.get_template(template).render(
            **self._common(page), body=body, new_here=new_here,
            builds_on=Link(previous) if previous and page.kind in ("lesson", "closing") else None,
            lab_count=len(page.labs), title=page.named(": "), runs_python=bool(source.cells or labs),
            python_lesson=page.number)

    def book(self, written: list[tuple[Source, dict[str, str], dict[int, LabView]]]) -> str:
        """print.html: every written page in course order, on one page to print. Each page is
        drawn from the same parsed tokens as its own file, as an `article` with the id
        "page-<id>"; links between pages lead inside this one, and headings' ids carry their
        page's anchor, so no id is said twice. It runs no Python: the outputs are the recorded
        ones."""
        pages = []
        for source, outputs, labs in written:
            body, new_here = self._body(source, outputs, labs, in_book=True)
            pages.append({"page": source.page, "anchor": html.page_anchor(source.page),
                          "body": body, "new_here": new_here, "label": source.page.heading})
        return self.templates.get_template("print.html").render(
            **self._common(None), title="The whole book, to print", runs_python=False, pages=pages)

    def inline(self, text: str) -> Markup:
        """One line of Markdown (a term's definition) as HTML."""
        return Markup(self.plain.renderInline(text))

    def glossary_page(self) -> str:
        """glossary.html: every term, A to Z, with its definition, the page and section that
        introduce it and the pages that use it after. Plain HTML: it needs no script."""
        terms = self.glossary.sorted() if self.glossary is not None else []
        letters: dict[str, list] = {}
        for term in terms:
            letter = term.name.lstrip("_")[:1].upper()
            letters.setdefault(letter if letter.isalpha() else "#", []).append(
                {"term": term, "definition": self.inline(term.definition),
                 "source": f"{term.page.path}#{term.anchor}"})
        return self.templates.get_template("glossary.html").render(
            **self._common(None), title="Glossary", runs_python=False, letters=letters,
            count=len(terms))

    def missing(self) -> str:
        """404.html, which serve.py answers for any address that is not a file of the book.
        Its links are relative to the site's root, so it is meant for unknown top-level pages."""
        first = next(p for p in self.course.pages if p.written and p.kind == "lesson")
        return self.templates.get_template("404.html").render(
            **self._common(None), title="No such page", runs_python=False, first=first)

    def review(self) -> str:
        """review.html: what the reader got wrong, drawn in the browser from their saved work
        (site/js/review.js) and questions.json; the HTML holds no question and no answer."""
        return self.templates.get_template("review.html").render(
            **self._common(None), title="Review what you got wrong", runs_python=False)

    def index(self) -> str:
        """The course map: every page in order, written or not."""
        return self.templates.get_template("index.html").render(
            **self._common(None), title="The course", runs_python=False, pages=self.course.pages,
            links=[Link(p) for p in self.course.pages])

