"""The registry of directives: every `::: name` the lesson dialect knows, in one place.

Each kind declares where it may appear (`parents`), whether it holds only its own parts
(`closed`), what the parser checks when it meets one (`check`, called with the page's checker
from builder/source.py, which also fills the page model), and how it is drawn: the jinja
partial `site/templates/parts/<name>.html`, filled by `context`. A part drawn by its parent (an
option, a hint, a card's parts) has no template. Adding a directive is adding an entry here and,
if it draws itself, its partial."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from markdown_it.token import Token
from markupsafe import Markup

from .code import highlight, script_json
from .model import Check, Figure, Lab, Option, Prompt, fold
from .options import NONE, Int, Path, Schema, Value, Words

ANYWHERE = None
Render = Callable[[list[Token]], str]


@dataclass(frozen=True)
class Directive:
    name: str
    parents: frozenset[str] | None = ANYWHERE   # ANYWHERE: anywhere but inside a closed one
    closed: bool = False            # holds only its own parts (and prose)
    check: Callable | None = None   # (checker, token, params, line) -> None; fails the build
    context: Callable | None = None  # (token, render, page) -> dict for parts/<name>.html
    options: Schema = NONE          # what its line may say after the name (builder/options.py)

    @property
    def template(self) -> str | None:
        return f"parts/{self.name}.html" if self.context else None


def kids(token: Token, name: str) -> list[Token]:
    """The parts `::: name` directly inside `token`: what the parser checks and what the
    partials draw, found by this one function."""
    return [t for t in token.children if t.type == "directive" and t.info == name]


# -- what the parser checks (and records in the page model) ---------------------------------

def check_check(checker, token: Token, params: str, line: int) -> None:
    options = kids(token, "option")
    right = [o for o in options if checker.options(o)["right"]]
    if len(options) < 2:
        checker.fail(line, f"a check needs at least two options; this one has {len(options)}")
    if len(right) != 1:
        checker.fail(line, f"a check needs exactly one right option; this one has {len(right)}")
    if not token.children or token.children[0].type == "directive":
        checker.fail(line, "a check starts with its question, before the first option")
    if len(kids(token, "explain")) > 1:
        checker.fail(line, "a check has one '::: explain'")
    for option in options:
        inside = option.children
        if not inside or inside[0].type != "paragraph_open":
            checker.fail(option.map[0] + 1, "an option starts with a paragraph: the option itself")
    explain = kids(token, "explain")
    checker.source.model.checks.append(Check(
        number=checker.question(token, "check"), line=line,
        question=checker.inside(token, checker.first_part(token)),
        options=[Option(text=fold(o.children[1].content), right=checker.options(o)["right"],
                        explanation=checker.raw(o.children[0].map[1], o.map[1]),
                        line=o.map[0] + 1) for o in options],
        explain=checker.inside(explain[0]) if explain else ""))

def check_prompt(checker, token: Token, params: str, line: int) -> None:
    if not token.children or token.children[0].type == "directive":
        checker.fail(line, "a prompt starts with its question")
    if len(kids(token, "answer")) != 1:
        checker.fail(line, "a prompt needs exactly one '::: answer'")
    misses = kids(token, "misses")
    checker.source.model.prompts.append(Prompt(
        number=checker.question(token, "prompt"), line=line,
        question=checker.inside(token, checker.first_part(token)), hints=checker.hints(token),
        answer=checker.inside(kids(token, "answer")[0]),
        misses=checker.inside(misses[0]) if misses else "",
        misses_lines=[m.map[0] + 1 for m in misses]))

def check_figure(checker, token: Token, params: str, line: int) -> None:
    src = checker.options(token)["src"]
    if not (checker.project.room(checker.source.page) / src).is_file():
        checker.fail(line, f"figure file lessons/{checker.source.page.folder}/{src} does not exist")
    inside = token.children
    if len(inside) < 2 or inside[0].type != "paragraph_open" or not inside[1].content.startswith("alt:"):
        checker.fail(line, "a figure starts with a paragraph 'alt: <what the figure shows>'")
    if not inside[1].content[4:].strip():
        checker.fail(line, "the figure's alt text is empty")
    checker.counts["figure"] += 1
    token.meta["number"] = checker.counts["figure"]
    token.meta["src"] = src
    checker.source.figures.append(src)
    checker.source.model.figures.append(Figure(
        number=checker.counts["figure"], line=line, src=src, alt=inside[1].content[4:].strip(),
        caption=checker.raw(inside[0].map[1], token.map[1])))

def check_side_by_side(checker, token: Token, params: str, line: int) -> None:
    fences = [t for t in token.children if t.type == "fence"]
    if len(fences) != 2:
        checker.fail(line, f"a side-by-side holds two code blocks; this one has {len(fences)}")
    checker.source.model.side_by_side.append((fences[0].content, fences[1].content))

def check_lab(checker, token: Token, params: str, line: int) -> None:
    page = checker.source.page
    number = checker.options(token)["number"]
    if not 1 <= number <= len(page.labs):
        checker.fail(line, f"lab {number}: course.yaml gives page {page.id} "
                        f"{len(page.labs)} lab{'s' if len(page.labs) != 1 else ''}")
    if number in checker.source.labs:
        checker.fail(line, f"lab {number} appears twice")
    if number != len(checker.source.labs) + 1:
        checker.fail(line, f"lab {number} comes before lab {len(checker.source.labs) + 1}")
    token.meta["number"] = number
    checker.source.labs[number] = token
    hints = kids(token, "hints")
    done = kids(token, "done")
    checker.source.model.labs.append(Lab(
        number=number, line=line, title=page.labs[number - 1],
        spec=checker.inside(token, checker.first_part(token)),
        hints=checker.hints(hints[0]) if hints else [],
        done=checker.inside(done[0]) if done else ""))

def check_capabilities(checker, token: Token, params: str, line: int) -> None:
    """The checklist is course.yaml's capabilities of every lesson up to this one: written out
    in the source it must say exactly that; left empty, the renderer fills it in."""
    expected = checker.course.capabilities(checker.source.page)
    checker.source.model.capabilities = True
    items = [t for t in token.children if t.type == "inline"]
    if not token.children:
        return
    if not any(t.type == "bullet_list_open" for t in token.children):
        checker.fail(line, "a capability checklist is a Markdown list (or empty: course.yaml fills it)")
    for n, (item, want) in enumerate(zip(items, expected), 1):
        if item.content.strip() != want:
            checker.fail(item.map[0] + 1, f"capability {n} says {item.content.strip()!r}; "
                                       f"course.yaml says {want!r}")
    if len(items) != len(expected):
        checker.fail(line, f"the capability checklist has {len(items)} items; course.yaml gives "
                        f"{len(expected)} up to lesson {checker.source.page.id}")

def check_sidequest(checker, token: Token, params: str, line: int) -> None:
    quest = checker.options(token)["page"]
    target = checker.course.page(quest)
    if target is None or target.kind != "side-quest":
        checker.fail(line, f"side quest {quest!r} is not a side quest in course.yaml")


# -- what the partials are given --------------------------------------------------------------

def _before_first_directive(tokens: list[Token]) -> list[Token]:
    out = []
    for t in tokens:
        if t.type == "directive":
            break
        out.append(t)
    return out


def _first_paragraph(tokens: list[Token]) -> tuple[list[Token], list[Token]]:
    """Split at the end of the first paragraph: (its inline token, the rest)."""
    close = next(i for i, t in enumerate(tokens) if t.type == "paragraph_close")
    return tokens[1:close], tokens[close + 1:]


def _html(render: Render, tokens: list[Token]) -> Markup:
    return Markup(render(tokens))


def _hint_items(hints: list[Token], render: Render) -> list[dict]:
    return [{"title": h.meta["options"]["title"] or "", "body": _html(render, h.children)} for h in hints]


def draw_check(token: Token, render: Render, page) -> dict:
    options = []
    for option in kids(token, "option"):
        text, rest = _first_paragraph(option.children)
        options.append({"right": option.meta["options"]["right"],
                        "text": _html(render, text), "rest": _html(render, rest)})
    return {"id": f"{page.prefix}-{token.meta['number']}", "options": options,
            "question": _html(render, _before_first_directive(token.children)),
            "explain": [_html(render, e.children) for e in kids(token, "explain")]}


def draw_prompt(token: Token, render: Render, page) -> dict:
    return {"id": f"{page.prefix}-{token.meta['number']}",
            "question": _html(render, _before_first_directive(token.children)),
            "hint_items": _hint_items(kids(token, "hint"), render),
            "answer": [_html(render, a.children) for a in kids(token, "answer")],
            "misses": [_html(render, m.children) for m in kids(token, "misses")]}


def draw_figure(token: Token, render: Render, page) -> dict:
    return {"prefix": page.prefix, "number": token.meta["number"],
            "src": "assets/" + token.meta["src"], "alt": token.children[1].content[4:].strip(),
            "caption": _html(render, token.children[3:])}


def draw_body(token: Token, render: Render, page) -> dict:
    return {"body": _html(render, token.children), "title": token.meta["options"]["title"] or ""}


def draw_side_by_side(token: Token, render: Render, page) -> dict:
    columns, caption = [], []
    for t in token.children:
        if t.type == "fence":
            columns.append({"caption": _html(render, caption), "code": _html(render, [t])})
            caption = []
        else:
            caption.append(t)
    return {"columns": columns}


def draw_capabilities(token: Token, render: Render, page) -> dict:
    return {"body": _html(render, token.children) if token.children else "",
            "capabilities": page.course.capabilities(page.page)}


CARD_PARTS = (("hit", "You hit"), ("built", "You built"), ("principle", "The principle"),
              ("now", "Your harness now"), ("open", "Still open"))


def draw_card(token: Token, render: Render, page) -> dict:
    parts = [{"name": name, "label": label, "body": _html(render, part.children)}
             for name, label in CARD_PARTS for part in kids(token, name)]
    prose = [t for t in token.children if t.type != "directive"]
    return {"prose": _html(render, prose), "parts": parts}


def draw_sidequest(token: Token, render: Render, page) -> dict:
    return {"quest": page.course.page(token.meta["options"]["page"]), "body": _html(render, token.children)}


def diff_rows(lines: list[str]) -> list[dict]:
    """A unified diff's lines as table rows: old and new line numbers, a sign, the text."""
    rows, old, new = [], 0, 0
    for line in lines:
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            head = line.split()
            old = int(head[1][1:].split(",")[0])
            new = int(head[2][1:].split(",")[0])
            rows.append({"kind": "hunk", "text": line.rstrip()})
            continue
        sign, text = line[:1], line[1:].rstrip("\n")
        if sign == "+":
            rows.append({"kind": "add", "old": "", "new": new, "sign": "+", "text": text})
            new += 1
        elif sign == "-":
            rows.append({"kind": "del", "old": old, "new": "", "sign": "-", "text": text})
            old += 1
        else:
            rows.append({"kind": "ctx", "old": old, "new": new, "sign": " ", "text": text})
            old, new = old + 1, new + 1
    return rows


def draw_lab(token: Token, render: Render, page) -> dict:
    lab = page.labs[token.meta["number"]]
    lesson = page.page.number
    data = {"tests": lab.tests_path, "lesson": lesson, "lab": lab.number, "point": lab.point,
            "file": lab.file_name, "download": lab.download}
    spec = [t for t in token.children if not (t.type == "directive" and t.info in ("hints", "done"))]
    hints = [h for box in kids(token, "hints") for h in kids(box, "hint")]
    return {"id": f"{page.prefix}-{lab.number}", "lesson": lesson, "lab": lab,
            "spec": _html(render, spec), "hint_items": _hint_items(hints, render),
            "rows": diff_rows(lab.diff), "data": Markup(script_json(data)),
            "starting": Markup(highlight(lab.starting, "python")),
            "done": [_html(render, d.children) for d in kids(token, "done")]}


# -- the registry ---------------------------------------------------------------------------

def _entry(name, parents=ANYWHERE, closed=False, check=None, context=None,
           options: Schema = NONE) -> Directive:
    return Directive(name, frozenset(parents) if parents is not ANYWHERE else ANYWHERE, closed,
                     check, context, options)


TITLE = Schema(words=Words("title"))

REGISTRY: dict[str, Directive] = {d.name: d for d in [
    _entry("check", closed=True, check=check_check, context=draw_check),
    _entry("option", {"check"}, options=Schema(flags=("right",))), _entry("explain", {"check"}),
    _entry("prompt", closed=True, check=check_prompt, context=draw_prompt),
    _entry("hint", {"prompt", "hints"}, options=TITLE), _entry("answer", {"prompt"}),
    _entry("misses", {"prompt"}),
    _entry("figure", check=check_figure, context=draw_figure,
           options=Schema(values=(Value("src", Path(under="figures/"), required=True),),
                          example="::: figure src=figures/<file>.svg")),
    _entry("source", context=draw_body, options=TITLE),
    _entry("aside", context=draw_body,
           options=Schema(words=Words("title", required=True), example="::: aside <Title>")),
    _entry("side-by-side", closed=True, check=check_side_by_side, context=draw_side_by_side),
    _entry("lab", {""}, check=check_lab, context=draw_lab,
           options=Schema(words=Words("number", required=True, kind=Int(low=1)), example="::: lab 1")),
    _entry("hints", {"lab"}, closed=True), _entry("done", {"lab"}),
    _entry("capabilities", check=check_capabilities, context=draw_capabilities),
    _entry("card", closed=True, context=draw_card),
    *(_entry(part, {"card"}) for part, _ in CARD_PARTS),
    _entry("sidequest", check=check_sidequest, context=draw_sidequest,
           options=Schema(words=Words("page", required=True), example="::: sidequest S2")),
]}
