"""The lesson dialect of Markdown: a markdown-it-py parser with the book's plugins.

`parser()` gives a MarkdownIt that understands front matter, `{role}` text, and `:::` directives.
A core rule (`fold_directives`) turns every directive's open/close pair into one `directive`
token whose `children` are the tokens inside it, and hangs each ```output fence on the cell
before it. The stages after parsing (checking, running cells, rendering) then walk a tree
instead of counting colons. Rendering rules live in `builder.html`.
"""
from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from mdit_py_plugins.anchors import anchors_plugin
from mdit_py_plugins.container import container_plugin
from mdit_py_plugins.front_matter import front_matter_plugin
from mdit_py_plugins.myst_role import myst_role_plugin

NAME = re.compile(r"[a-z][a-z0-9-]*\Z")


def _slug(title: str) -> str:
    """"The cable" -> "the-cable": section ids a reader can link to (and never "cell-..." or
    "lab-...", which the page's own parts use)."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "section"
    return f"section-{slug}" if slug.startswith(("cell-", "lab-", "check-", "prompt-", "figure-")) else slug


def _is_directive(params: str, markup: str) -> bool:
    """Any `:::` line with a word after it opens a directive; a bare `:::` closes one. Unknown
    names are caught by the checker with their line, rather than read as a paragraph."""
    words = params.split()
    return bool(words) and bool(NAME.match(words[0]))


def split_info(info: str) -> tuple[str, str]:
    """" figure src=x.svg" -> ("figure", "src=x.svg")."""
    name, _, rest = info.strip().partition(" ")
    return name, rest.strip()


def is_cell(token: Token) -> bool:
    words = token.info.split()
    return token.type == "fence" and len(words) >= 2 and words[0] == "python" and words[1] == "cell"


def is_output(token: Token) -> bool:
    return token.type == "fence" and token.info.split()[:1] == ["output"]


def _fold(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    stack: list[Token] = []
    for token in tokens:
        if token.type == "container_directive_open":
            name, params = split_info(token.info)
            directive = Token("directive", "div", 0, info=name, map=token.map, block=True,
                              markup=token.markup, meta={"params": params}, children=[])
            (stack[-1].children if stack else out).append(directive)
            stack.append(directive)
        elif token.type == "container_directive_close":
            stack.pop()
        else:
            (stack[-1].children if stack else out).append(token)
    _attach_outputs(out)
    return out


def _attach_outputs(tokens: list[Token]) -> None:
    """An ```output fence straight after a cell is that cell's declared output."""
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "directive":
            _attach_outputs(token.children)
        elif is_cell(token) and i + 1 < len(tokens) and is_output(tokens[i + 1]):
            output = tokens.pop(i + 1)
            token.meta["expected"] = output.content
            token.meta["expected_line"] = output.map[0] + 1
        i += 1


def fold_directives(state: StateCore) -> None:
    state.tokens = _fold(state.tokens)


def parser() -> MarkdownIt:
    """The book's Markdown parser (CommonMark, tables, and the lesson plugins)."""
    md = MarkdownIt("commonmark", {"typographer": False}).enable(["table", "strikethrough"])
    md.use(front_matter_plugin)
    md.use(anchors_plugin, min_level=2, max_level=3, slug_func=_slug)
    md.use(myst_role_plugin)
    md.use(container_plugin, name="directive", marker=":", validate=_is_directive)
    md.core.ruler.push("fold_directives", fold_directives)
    return md
