"""The book's code, drawn: Pygments with the book's one syntax theme, and JSON safe in a page.

Used by the render rules (html.py) and by the directives' partials (directives.py) alike, so
neither needs the other for it."""
from __future__ import annotations

import functools
import json

from pygments import highlight as _pygments
from pygments.filter import Filter
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.style import Style
from pygments.token import (Comment, Keyword, Name, Number, Operator, String, Text,
                            Whitespace)
from pygments.util import ClassNotFound

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
