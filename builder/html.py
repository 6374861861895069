"""Stage 4a, render the body: markdown-it render rules for the lesson dialect.

`install(md)` adds one rule per kind of token the book adds or changes: directives, cells and
static code (Pygments), `lesson:` links, and `{tau}`/`{general}` roles. Every rule reads what it
needs from `env["page"]`, a PageContext built by builder.render, so rendering never runs code
or reads files. The HTML here is the contract in docs/architecture.md ("Pages and their HTML
contract"): the page's scripts find cells, labs and checks by these classes and data attributes.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from html import escape

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token
from markupsafe import Markup

from . import directives, markup
from .code import CSS_CLASS, highlight, script_json
from .course import Course, Page
from .model import LabView


@dataclass
class PageContext:
    """What the render rules need to know about the page being rendered."""

    course: Course
    page: Page
    outputs: dict[str, str] = field(default_factory=dict)        # cell id -> recorded output
    cells: dict[str, object] = field(default_factory=dict)       # cell id -> source.Cell
    labs: dict[int, LabView] = field(default_factory=dict)
    templates: object = None       # the jinja2 Environment the partials come from
    in_book: bool = False          # drawn into print.html, beside every other page
    headings: set[str] = field(default_factory=set)   # the section ids the page's headings carry
    drawn: list | None = None      # when a list: each check and prompt drawn, (kind, its partial's
    #                                context), for the review's questions.json (builder/questions.py)
    glossary: object = None        # builder.glossary.Glossary: its terms' first uses get cards
    carded: set[str] = field(default_factory=set)     # the terms given a card on this page so far
    inline: object = None          # Markdown text -> Markup, one line (a term's definition)
    now: list | None = None        # "Your harness now": builder.inventory.Region list, or None

    def href_glossary(self, slug: str = "") -> str:
        """The glossary page, or one entry of it."""
        return "glossary.html" + (f"#{slug}" if slug else "")

    @property
    def prefix(self) -> str:
        """How this page numbers things: "11" for lesson 11 ("Figure 11.2")."""
        return str(self.page.number)

    def section_id(self, slug: str) -> str:
        """A heading's id: its slug on its own page; in the whole book, where two pages may share
        a heading ("What Tau adds"), prefixed with the page's anchor ("page-11-what-tau-adds")."""
        return f"{page_anchor(self.page)}-{slug}" if self.in_book else slug

    def href(self, target: Page, fragment: str = "") -> str:
        """Where a link to `target` goes: its file, or inside print.html its part of the book."""
        if not self.in_book:
            return target.path + (f"#{fragment}" if fragment else "")
        return "#" + (self.section_id(fragment) if fragment else page_anchor(target))


def page_anchor(page: Page) -> str:
    """The id of a page's article in print.html: "page-11", "page-S2"."""
    return f"page-{page.id}"


def heading_ids(tokens: list[Token]) -> set[str]:
    """Every id the anchors plugin gave a heading, directives' insides included."""
    found = set()
    for token in tokens:
        if token.type == "heading_open" and token.attrGet("id"):
            found.add(str(token.attrGet("id")))
        found |= heading_ids(token.children or []) if token.type == "directive" else set()
    return found


# -- render rules ------------------------------------------------------------------------------

def _directive(self, tokens, idx, options, env) -> str:
    """A directive draws itself through its partial (builder/directives.py's registry); a part
    without one (an option, a hint) is drawn by its parent, so here only its content."""
    token, page = tokens[idx], env["page"]
    entry = directives.REGISTRY.get(token.info)
    render = lambda ts: self.render(ts, options, env)  # noqa: E731
    if entry is None or entry.template is None:
        return render(token.children)
    # No term cards inside a check or a prompt (their text becomes buttons and the review's
    # questions) nor in the terms box itself.
    quiet = token.info in ("check", "prompt", "terms")
    env["no_cards"] = env.get("no_cards", 0) + quiet
    try:
        context = entry.context(token, render, page)
    finally:
        env["no_cards"] -= quiet
    if page.drawn is not None and token.info in ("check", "prompt"):
        page.drawn.append((token.info, context))
    return page.templates.get_template(entry.template).render(**context)


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


def _drawn_with(tokens: list[Token], idx: int, **attrs: str) -> list[Token]:
    """`tokens` with a copy of token `idx` carrying `attrs`: the parsed tokens are drawn twice (the
    page and print.html), so a render rule never changes them."""
    token = replace(tokens[idx], attrs=dict(tokens[idx].attrs))
    for name, value in attrs.items():
        token.attrSet(name, value)
    return [*tokens[:idx], token, *tokens[idx + 1:]]


def _link_open(self, tokens, idx, options, env) -> str:
    token, page = tokens[idx], env["page"]
    href = str(token.attrGet("href") or "")
    if href.startswith("lesson:"):
        target = page.course.page(href.removeprefix("lesson:"))
        tokens = _drawn_with(tokens, idx, href=page.href(target), **{"class": "page-link"})
    elif href.startswith("#") and href[1:] in page.headings:
        tokens = _drawn_with(tokens, idx, href="#" + page.section_id(href[1:]))
    env["in_link"] = env.get("in_link", 0) + 1
    return self.renderToken(tokens, idx, options, env)


def _link_close(self, tokens, idx, options, env) -> str:
    env["in_link"] = max(0, env.get("in_link", 0) - 1)
    return self.renderToken(tokens, idx, options, env)


def _heading_close(self, tokens, idx, options, env) -> str:
    env["in_heading"] = False
    return self.renderToken(tokens, idx, options, env)


def _text(self, tokens, idx, options, env) -> str:
    """Running text; the first use on this page of a term introduced on an earlier page is
    drawn as a link to its glossary entry with its card (not in headings, links, checks,
    prompts, nor in the whole book to print)."""
    text, page = tokens[idx].content, env["page"]
    glossary = page.glossary
    if (glossary is None or page.in_book or env.get("in_link") or env.get("in_heading")
            or env.get("no_cards")):
        return escapeHtml(text)
    here = glossary.order.get(page.page.id, -1)
    out, cursor = [], 0
    for start, end, term in glossary.uses(text):
        if term.slug in page.carded or glossary.order[term.page.id] >= here:
            continue
        page.carded.add(term.slug)
        out.append(escapeHtml(text[cursor:start]))
        out.append(page.templates.get_template("parts/term.html").render(
            term=term, text=text[start:end], glossary=page.href_glossary(term.slug),
            source=term.page.path + "#" + term.anchor, definition=page.inline(term.definition)).strip())
        cursor = end
    out.append(escapeHtml(text[cursor:]))
    return "".join(out)


def _heading_open(self, tokens, idx, options, env) -> str:
    slug = tokens[idx].attrGet("id")
    env["in_heading"] = True
    if slug and env["page"].in_book:
        tokens = _drawn_with(tokens, idx, id=env["page"].section_id(str(slug)))
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
        # The badge says what it means in its own words: a tooltip is no explanation on a phone.
        return (f'<span class="general"><span class="general-tag" title="Not from Tau and not from a '
                f'provider\'s documentation">general knowledge</span> {escape(token.content)}</span>')
    if name == "term":
        glossary = env["page"].glossary
        term = glossary.term_of(content) if glossary is not None else None
        anchor = f' id="{term.anchor}"' if term is not None else ""
        return f'<dfn class="term-intro"{anchor}>{escape(token.content)}</dfn>'
    if name == "ahead":
        return f'<span class="term-ahead">{escape(token.content)}</span>'
    return f"<code>{escape(token.content)}</code>"


def install(md: MarkdownIt) -> MarkdownIt:
    """Add the book's render rules to `md` (a builder.markup parser)."""
    md.add_render_rule("directive", _directive)
    md.add_render_rule("fence", _fence)
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("heading_open", _heading_open)
    md.add_render_rule("heading_close", _heading_close)
    md.add_render_rule("link_close", _link_close)
    md.add_render_rule("text", _text)
    md.add_render_rule("myst_role", _role)
    return md
