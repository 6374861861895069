"""Stage 4a, render the body: markdown-it render rules for the lesson dialect.

`install(md)` adds one rule per kind of token the book adds or changes: directives, cells and
static code (Pygments), `lesson:` links, and `{tau}`/`{general}` roles. Every rule reads what it
needs from `env["page"]`, a PageContext built by builder.render, so rendering never runs code
or reads files. The HTML here is the contract in docs/architecture.md ("Pages and their HTML
contract"): the page's scripts find cells, labs and checks by these classes and data attributes.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from html import escape

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup
from pygments import highlight as _pygments
from pygments.filter import Filter
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.style import Style
from pygments.token import (Comment, Keyword, Name, Number, Operator, String, Text,
                            Whitespace)
from pygments.util import ClassNotFound

from . import directives, markup
from .course import Course, Page

CSS_CLASS = "hl"                    # the Pygments stylesheet is scoped to .hl


class BookStyle(Style):
    """The book's one syntax theme. Its colours are CSS variables (`--tok-*`, set in book.css for
    the light and the dark theme), and the editors' HighlightStyle (site/editor/editor.js) colours
    the same kinds of token with the same variables, so code looks the same read-only and in an
    editor, in either theme. Only kinds that both Pygments and CodeMirror's Python grammar tell
    apart get a colour: keywords, strings and their escapes, comments, numbers, True/False/None,
    and the name a `def` or `class` defines. Everything else (names, builtins, operators,
    punctuation) is drawn as plain text."""

    background_color = "var(--code-bg)"
    highlight_color = "var(--accent-soft)"
    styles = {
        Keyword: "var(--tok-keyword)",
        Keyword.Constant: "var(--tok-constant)",
        Operator.Word: "var(--tok-keyword)",
        String: "var(--tok-string)",
        String.Escape: "var(--tok-escape)",
        Comment: "italic var(--tok-comment)",
        Number: "var(--tok-number)",
        Name.Function: "var(--tok-def)",
        Name.Class: "var(--tok-def)",
        Name.Tag: "var(--tok-def)",            # JSON keys
    }


STYLE = BookStyle                   # the one Pygments style of the book


def highlight(code: str, language: str) -> str:
    """Pygments HTML (spans only) for `code`; unknown languages are shown as plain text."""
    try:
        lexer = get_lexer_by_name(language or "text", stripnl=False, ensurenl=False)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False, ensurenl=False)
    lexer.add_filter(UnstyledAsText())
    return _pygments(code, lexer, HtmlFormatter(nowrap=True))


@functools.lru_cache(maxsize=None)
def drawn_plain(ttype) -> bool:
    """Whether the book's style draws tokens of `ttype` like plain text: no colour, no weight."""
    look = STYLE.style_for_token(ttype)
    return ttype in Whitespace or not any(
        look[key] for key in ("color", "bold", "italic", "underline", "bgcolor", "border"))


class UnstyledAsText(Filter):
    """Tokens that the style draws like plain text (most names, punctuation, spaces) become plain
    text, so they get no <span> of their own. The page looks the same and weighs about half: a
    lab's starting file is hundreds of names and brackets, each of which would be a span."""

    def filter(self, lexer, stream):
        for ttype, value in stream:
            yield (Text if drawn_plain(ttype) else ttype), value


def code_stylesheet() -> str:
    """The one stylesheet for every highlighted block."""
    return HtmlFormatter(style=STYLE).get_style_defs(f".{CSS_CLASS}") + "\n"


def script_json(data: object) -> str:
    """JSON that is safe inside <script type="application/json">: no `</script>` can end it."""
    return (json.dumps(data, ensure_ascii=False)
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


@dataclass
class LabView:
    """Everything a lab section shows that does not come from its source."""

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


@dataclass
class PageContext:
    """What the render rules need to know about the page being rendered."""

    course: Course
    page: Page
    outputs: dict[str, str] = field(default_factory=dict)        # cell id -> recorded output
    cells: dict[str, object] = field(default_factory=dict)       # cell id -> source.Cell
    labs: dict[int, LabView] = field(default_factory=dict)
    templates: object = None       # the jinja2 Environment the partials come from

    @property
    def prefix(self) -> str:
        """How this page numbers things: "11" for lesson 11 ("Figure 11.2")."""
        return str(self.page.number)


# -- render rules ------------------------------------------------------------------------------

def _directive(self, tokens, idx, options, env) -> str:
    """A directive draws itself through its partial (builder/directives.py's registry); a part
    without one (an option, a hint) is drawn by its parent, so here only its content."""
    token, page = tokens[idx], env["page"]
    entry = directives.REGISTRY.get(token.info)
    render = lambda ts: self.render(ts, options, env)  # noqa: E731
    if entry is None or entry.template is None:
        return render(token.children)
    return page.templates.get_template(entry.template).render(**entry.context(token, render, page))


def _fence(self, tokens, idx, options, env) -> str:
    token = tokens[idx]
    if markup.is_cell(token):
        return _cell(token, env["page"])
    language = token.info.split()[0] if token.info.strip() else "text"
    return (f'<pre class="code {CSS_CLASS}" data-language="{escape(language)}" tabindex="0">'
            f'{highlight(token.content, language)}</pre>\n')


def _cell(token: Token, page: PageContext) -> str:
    cell = page.cells[token.meta["cell"]]
    output = page.outputs.get(cell.id, "")
    return page.templates.get_template("parts/cell.html").render(
        cell=cell, lesson=page.page.number, output=output,
        code=Markup(highlight(cell.source, "python")),
        data=Markup(script_json({"source": cell.source})))


def _link_open(self, tokens, idx, options, env) -> str:
    token = tokens[idx]
    href = token.attrGet("href") or ""
    if href.startswith("lesson:"):
        target = env["page"].course.page(href.removeprefix("lesson:"))
        token.attrSet("href", target.path)
        token.attrSet("class", "page-link")
    return self.renderToken(tokens, idx, options, env)


def _role(self, tokens, idx, options, env) -> str:
    token = tokens[idx]
    name, content = token.meta.get("name"), token.content.strip()
    if name == "tau":
        path, _, lines = content.partition(":")
        url = env["page"].course.tau_url(path, lines)
        return (f'<a class="tau" href="{escape(url)}" title="Tau at commit '
                f'{env["page"].course.tau_commit[:7]}"><code>{escape(content)}</code></a>')
    if name == "general":
        return (f'<span class="general"><span class="general-tag" title="From general knowledge, '
                f'not from Tau">general</span> {escape(token.content)}</span>')
    return f"<code>{escape(token.content)}</code>"


def install(md: MarkdownIt) -> MarkdownIt:
    """Add the book's render rules to `md` (a builder.markup parser)."""
    md.add_render_rule("directive", _directive)
    md.add_render_rule("fence", _fence)
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("myst_role", _role)
    return md
