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
from typing import Callable

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pygments import highlight as _pygments
from pygments.filter import Filter
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import Text, Whitespace
from pygments.util import ClassNotFound

from . import markup
from .course import Course, Page

CSS_CLASS = "hl"                    # the Pygments stylesheet is scoped to .hl
STYLE = "friendly"                  # the one Pygments style of the book


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
    look = get_style_by_name(STYLE).style_for_token(ttype)
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

    @property
    def prefix(self) -> str:
        """How this page numbers things: "11" for lesson 11 ("Figure 11.2")."""
        return str(self.page.number)


# -- helpers -----------------------------------------------------------------------------------

Render = Callable[[list[Token]], str]


def _kids(token: Token, name: str) -> list[Token]:
    return [t for t in token.children if t.type == "directive" and t.info == name]


def _before_first_directive(tokens: list[Token]) -> list[Token]:
    out = []
    for t in tokens:
        if t.type == "directive":
            break
        out.append(t)
    return out


def _prose(tokens: list[Token]) -> list[Token]:
    return [t for t in tokens if t.type != "directive"]


def _first_paragraph(tokens: list[Token]) -> tuple[list[Token], list[Token]]:
    """Split at the end of the first paragraph: (its inline token, the rest)."""
    close = next(i for i, t in enumerate(tokens) if t.type == "paragraph_close")
    return tokens[1:close], tokens[close + 1:]


# -- directives --------------------------------------------------------------------------------

def d_check(token: Token, render: Render, page: PageContext) -> str:
    cid = f"{page.prefix}-{token.meta['number']}"
    question = render(_before_first_directive(token.children))
    options = []
    for n, option in enumerate(_kids(token, "option"), 1):
        right = "right" in option.meta["params"].split()
        text, rest = _first_paragraph(option.children)
        verdict = "The right answer." if right else "Not this one."
        options.append(
            f'<li class="check-option" data-option="{n}"{" data-right" if right else ""}>\n'
            f'<div class="option-text">{render(text)}</div>\n'
            f'<details class="option-explain"><summary>Explanation</summary>\n'
            f'<p class="option-verdict">{verdict}</p>\n{render(rest)}</details>\n</li>\n')
    explain = "".join(
        f'<details class="check-explain"><summary>The longer explanation</summary>\n'
        f'{render(e.children)}</details>\n' for e in _kids(token, "explain"))
    return (f'<section class="check" id="check-{cid}" data-check="{cid}" '
            f'aria-labelledby="check-{cid}-q">\n'
            f'<p class="check-label">Check</p>\n'
            f'<div class="check-question" id="check-{cid}-q">\n{question}</div>\n'
            f'<ol class="check-options">\n{"".join(options)}</ol>\n'
            f'<p class="check-verdict" aria-live="polite"></p>\n{explain}</section>\n')


def _hints(hints: list[Token], render: Render) -> str:
    total = len(hints)
    items = []
    for n, hint in enumerate(hints, 1):
        title = hint.meta["params"]
        label = f"Hint {n} of {total}" + (f": {escape(title)}" if title else "")
        items.append(f'<details class="hint" data-hint="{n}"><summary>{label}</summary>\n'
                     f'{render(hint.children)}</details>\n')
    return f'<div class="hints" data-hints="{total}">\n{"".join(items)}</div>\n' if items else ""


def d_prompt(token: Token, render: Render, page: PageContext) -> str:
    pid = f"{page.prefix}-{token.meta['number']}"
    question = render(_before_first_directive(token.children))
    answer = "".join(f'<details class="prompt-answer"><summary>The model answer</summary>\n'
                     f'{render(a.children)}</details>\n' for a in _kids(token, "answer"))
    misses = "".join(f'<details class="prompt-misses"><summary>Common answers, and what each one '
                     f'misses</summary>\n{render(m.children)}</details>\n'
                     for m in _kids(token, "misses"))
    return (f'<section class="prompt" id="prompt-{pid}" data-prompt="{pid}">\n'
            f'<p class="prompt-label">Write it yourself</p>\n'
            f'<div class="prompt-question">\n{question}</div>\n'
            f'<label class="prompt-input-label" for="prompt-{pid}-input">Your answer '
            f'(it stays on this page)</label>\n'
            f'<textarea class="prompt-input" id="prompt-{pid}-input" rows="3"></textarea>\n'
            f'{_hints(_kids(token, "hint"), render)}{answer}{misses}</section>\n')


def d_figure(token: Token, render: Render, page: PageContext) -> str:
    kids = token.children
    alt = kids[1].content[4:].strip()
    caption = render(kids[3:])
    number = f"Figure {page.prefix}.{token.meta['number']}"
    src = "assets/" + token.meta["src"]
    return (f'<figure class="figure" id="figure-{page.prefix}-{token.meta["number"]}">\n'
            f'<img src="{escape(src)}" alt="{escape(alt)}">\n'
            f'<figcaption><span class="figure-number">{number}</span> {caption}</figcaption>\n'
            f'</figure>\n')


def d_source(token: Token, render: Render, page: PageContext) -> str:
    return (f'<aside class="note note-source">\n<p class="note-title">Where this comes from</p>\n'
            f'{render(token.children)}</aside>\n')


def d_aside(token: Token, render: Render, page: PageContext) -> str:
    title = escape(token.meta["params"])
    return (f'<aside class="note note-aside">\n<p class="note-title">{title}</p>\n'
            f'{render(token.children)}</aside>\n')


def d_side_by_side(token: Token, render: Render, page: PageContext) -> str:
    columns, caption = [], []
    for t in token.children:
        if t.type == "fence":
            columns.append(f'<figure class="side">\n<figcaption>{render(caption)}</figcaption>\n'
                           f'{render([t])}</figure>\n')
            caption = []
        else:
            caption.append(t)
    return f'<div class="side-by-side">\n{"".join(columns)}</div>\n'


def d_capabilities(token: Token, render: Render, page: PageContext) -> str:
    from .source import capabilities
    listing = render(token.children) if token.children else (
        "<ul>\n" + "".join(f"<li>{escape(c)}</li>\n" for c in capabilities(page.course, page.page))
        + "</ul>\n")
    return (f'<section class="capabilities">\n<h2>What your harness can do</h2>\n'
            f'{listing}</section>\n')


CARD_PARTS = (("hit", "You hit"), ("built", "You built"), ("principle", "The principle"),
              ("now", "Your harness now"), ("open", "Still open"))


def d_card(token: Token, render: Render, page: PageContext) -> str:
    parts = []
    for name, label in CARD_PARTS:
        for part in _kids(token, name):
            parts.append(f'<div class="card-part card-{name}">\n<dt>{label}</dt>\n'
                         f'<dd>{render(part.children)}</dd>\n</div>\n')
    return (f'<section class="card" aria-label="Lesson summary">\n{render(_prose(token.children))}'
            f'<dl class="card-parts">\n{"".join(parts)}</dl>\n</section>\n')


def d_sidequest(token: Token, render: Render, page: PageContext) -> str:
    quest = page.course.page(token.meta["params"])
    meta = f"~{quest.minutes} min · optional" if quest.minutes else "optional"
    if quest.written:
        go = f'<p class="sidequest-go"><a href="{quest.path}">Take the side quest</a></p>\n'
    else:
        go = '<p class="sidequest-go"><span class="not-written">Not yet written.</span></p>\n'
    return (f'<aside class="sidequest" data-quest="{escape(quest.id)}">\n'
            f'<p class="note-title">Side quest {escape(quest.id)}: {escape(quest.title)}</p>\n'
            f'<p class="sidequest-meta">{escape(quest.subtitle)} · {meta}</p>\n'
            f'{render(token.children)}{go}</aside>\n')


def _diff_table(lines: list[str]) -> str:
    """A unified diff as a table a reader can follow without JavaScript: old and new line
    numbers, a sign, the line."""
    rows, old, new = [], 0, 0
    for line in lines:
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            head = line.split()
            old = int(head[1][1:].split(",")[0])
            new = int(head[2][1:].split(",")[0])
            rows.append(f'<tr class="diff-hunk"><td colspan="4">{escape(line.rstrip())}</td></tr>')
            continue
        sign, text = line[:1], line[1:].rstrip("\n")
        if sign == "+":
            rows.append(f'<tr class="diff-add"><td class="diff-old"></td><td class="diff-new">{new}'
                        f'</td><td class="diff-sign">+</td><td class="diff-text">{escape(text)}</td></tr>')
            new += 1
        elif sign == "-":
            rows.append(f'<tr class="diff-del"><td class="diff-old">{old}</td><td class="diff-new">'
                        f'</td><td class="diff-sign">-</td><td class="diff-text">{escape(text)}</td></tr>')
            old += 1
        else:
            rows.append(f'<tr class="diff-ctx"><td class="diff-old">{old}</td><td class="diff-new">'
                        f'{new}</td><td class="diff-sign"> </td><td class="diff-text">{escape(text)}'
                        f'</td></tr>')
            old, new = old + 1, new + 1
    return ('<table class="diff">\n<thead><tr><th scope="col">before</th><th scope="col">after</th>'
            '<th scope="col"><span class="visually-hidden">change</span></th>'
            '<th scope="col">line</th></tr></thead>\n<tbody>\n' + "\n".join(rows) +
            "\n</tbody>\n</table>\n")


def d_lab(token: Token, render: Render, page: PageContext) -> str:
    lab = page.labs[token.meta["number"]]
    lesson = page.page.number
    lid = f"{page.prefix}-{lab.number}"
    spec = render([t for t in token.children
                   if not (t.type == "directive" and t.info in ("hints", "done"))])
    hints = "".join(_hints(_kids(h, "hint"), render) for h in _kids(token, "hints"))
    done = "".join(f'<div class="lab-done">\n<h3>When every test passes</h3>\n'
                   f'{render(d.children)}</div>\n' for d in _kids(token, "done"))
    # The starting file is on the page once, in its <pre>; the page's script reads it from there.
    data = {"tests": lab.tests_path, "lesson": lesson,
            "lab": lab.number, "point": lab.point, "file": lab.file_name,
            "download": lab.download}
    if lab.diff:
        changes = (f'<div class="lab-changes">\n<h3>{escape(lab.changes_title)}</h3>\n'
                   f'{_diff_table(lab.diff)}</div>\n')
    else:
        changes = ""
    tests = "".join(f'<li data-test="{escape(test_id)}">{escape(sentence)}</li>\n'
                    for test_id, sentence in lab.tests)
    command = f"python lab/lab_check.py --harness harness.py --lesson {lesson} tests.py"
    fresh = ("" if lab.number == 1 else
             f' Starting here without lab {lab.number - 1}? <a href="{lab.download}{lab.file_name}">'
             f'{lab.file_name}</a> is this lab\'s starting file: save it as harness.py.')
    return (f'<section class="lab" id="lab-{lid}" data-lesson="{lesson}" data-lab="{lab.number}" '
            f'data-point="{lab.point}" aria-labelledby="lab-{lid}-title">\n'
            f'<h2 class="lab-title" id="lab-{lid}-title"><span class="lab-number">Lab '
            f'{lab.point}</span> {escape(lab.title)}</h2>\n'
            f'<div class="lab-spec">\n{spec}</div>\n{hints}{changes}'
            f'<div class="lab-file">\n<h3>The file you start from: harness.py</h3>\n'
            f'<script type="application/json" class="lab-data">{script_json(data)}</script>\n'
            f'<pre class="lab-starting {CSS_CLASS}">{highlight(lab.starting, "python")}</pre>\n</div>\n'
            f'<div class="lab-checklist">\n<h3>The tests</h3>\n<ol class="lab-tests">\n{tests}</ol>\n</div>\n'
            f'<div class="lab-local">\n<h3>Run the tests on your machine</h3>\n'
            f'<p>Download the lab folder, <a href="{lab.download}">{lab.download}</a> '
            f'(<a href="{lab.download}{lab.file_name}">{lab.file_name}</a>, '
            f'<a href="{lab.download}tests.py">tests.py</a> and <a href="{lab.download}lab/">lab/</a>; '
            f'Python 3.10 or newer, nothing to install), and run, inside it:</p>\n'
            f'<pre class="lab-command">{escape(command)}</pre>\n'
            f'<p class="lab-local-note">Add <code>--lab {lab.number}</code> to run only this lab\'s '
            f'tests.{fresh}</p>\n</div>\n{done}</section>\n')


def d_part(token: Token, render: Render, page: PageContext) -> str:
    """option, explain, hint, ...: rendered by their parent, never on their own."""
    return render(token.children)


DIRECTIVES: dict[str, Callable[[Token, Render, PageContext], str]] = {
    "check": d_check, "prompt": d_prompt, "figure": d_figure, "source": d_source,
    "aside": d_aside, "side-by-side": d_side_by_side, "lab": d_lab,
    "capabilities": d_capabilities, "card": d_card, "sidequest": d_sidequest,
}


# -- render rules ------------------------------------------------------------------------------

def _directive(self, tokens, idx, options, env) -> str:
    token = tokens[idx]
    handler = DIRECTIVES.get(token.info, d_part)
    return handler(token, lambda ts: self.render(ts, options, env), env["page"])


def _fence(self, tokens, idx, options, env) -> str:
    token = tokens[idx]
    if markup.is_cell(token):
        return _cell(token, env["page"])
    language = token.info.split()[0] if token.info.strip() else "text"
    return (f'<pre class="code {CSS_CLASS}" data-language="{escape(language)}">'
            f'{highlight(token.content, language)}</pre>\n')


def _cell(token: Token, page: PageContext) -> str:
    cell = page.cells[token.meta["cell"]]
    output = page.outputs.get(cell.id, "")
    attrs = [f'class="cell"', f'id="cell-{cell.id}"', f'data-cell="{cell.id}"',
             f'data-lesson="{escape(str(page.page.number))}"', f'data-timeout="{cell.timeout:g}"']
    if cell.editable:
        attrs.append("data-editable")
    if cell.lab is not None:
        attrs.append(f'data-lab="{cell.lab}"')
    if cell.answers:
        attrs.append(f'data-answers="{cell.answers}"')
    if cell.raises:
        attrs.append("data-raises")
    data = script_json({"source": cell.source, "output": output})
    return (f'<div {" ".join(attrs)}>\n'
            f'<pre class="cell-code {CSS_CLASS}">{highlight(cell.source, "python")}</pre>\n'
            f'<script type="application/json" class="cell-data">{data}</script>\n'
            + _cell_output(cell, output) + '</div>\n')


def _cell_output(cell, output: str) -> str:
    """The recorded output. A cell that answers a check or prompt keeps it folded, so the
    question comes before its answer: open it yourself, answer, or run the cell."""
    pre = f'<pre class="cell-output" aria-label="Output">{escape(output)}</pre>\n'
    if not cell.answers:
        return pre
    kind = cell.answers.split("-")[0]
    return (f'<details class="cell-answer" data-answers="{cell.answers}"><summary>What it '
            f'printed (answer the {kind} above first, or run the cell)</summary>\n{pre}</details>\n')


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
