"""The registry of directives: every `::: name` the lesson dialect knows, in one place.

Each kind declares where it may appear (`parents`), whether it holds only its own parts
(`closed`), the schema of its options (`options`), how the parser reads it (`parse`: from its
tokens to its typed node of the page model, checking what an author can get wrong), and how it is
drawn: the jinja
partial `site/templates/parts/<name>.html`, filled by `context`. A part drawn by its parent (an
option, a hint, a card's parts) has no template. Adding a directive is adding an entry here and,
if it draws itself, its partial."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from html import escape
from typing import Callable

from markdown_it.token import Token
from markupsafe import Markup

from .code import highlight, script_json
from .figures import FigureError, legible_width
from .model import Capabilities, Check, Figure, Lab, Option, Prompt, SideBySide, fold
from .options import NONE, Flag, Int, Path, Schema, Value, Words

ANYWHERE = None
Render = Callable[[list[Token]], str]


@dataclass(frozen=True)
class Directive:
    name: str
    parents: frozenset[str] | None = ANYWHERE   # ANYWHERE: anywhere but inside a closed one
    closed: bool = False            # holds only its own parts (and prose)
    parse: Callable | None = None   # (reader, token, line) -> its node of the page model, or
                                    # None; fails the build on a bad source
    context: Callable | None = None  # (token, render, page) -> dict for parts/<name>.html
    options: Schema = NONE          # what its line may say after the name (builder/options.py)
    doc: str = ""                   # one line for the authoring guide's reference

    @property
    def template(self) -> str | None:
        return f"parts/{self.name}.html" if self.context else None


def kids(token: Token, name: str) -> list[Token]:
    """The parts `::: name` directly inside `token`: what the parser checks and what the
    partials draw, found by this one function."""
    return [t for t in token.children if t.type == "directive" and t.info == name]


# -- what the parser reads: a pure parse from a directive's tokens to its node -----------------
#
# Each takes the page's reader (builder/source.py's _Checker: `fail`, the source text, the
# options of any token, the project and course) and returns the directive's typed node of the
# page model, or None when it adds nothing to the model. None writes anything: the walker keeps
# the node (PageModel.add), and numbering is a pass of its own (source.number).

def parse_now(reader, token: Token, line: int) -> None:
    if token.children:
        reader.fail(line, "a card's '::: now' is worked out from the page's harness "
                          "(builder/inventory.py), the same way on every page: leave it empty")
    return None


def parse_check(reader, token: Token, line: int) -> Check:
    options = kids(token, "option")
    right = [o for o in options if reader.options(o)["right"]]
    if len(options) < 2:
        reader.fail(line, f"a check needs at least two options; this one has {len(options)}")
    if len(right) != 1:
        reader.fail(line, f"a check needs exactly one right option; this one has {len(right)}")
    if not token.children or token.children[0].type == "directive":
        reader.fail(line, "a check starts with its question, before the first option")
    if len(kids(token, "explain")) > 1:
        reader.fail(line, "a check has one '::: explain'")
    for option in options:
        inside = option.children
        if not inside or inside[0].type != "paragraph_open":
            reader.fail(option.map[0] + 1, "an option starts with a paragraph: the option itself")
    explain = kids(token, "explain")
    return Check(
        number=0, line=line, question=reader.inside(token, reader.first_part(token)),
        options=[Option(text=fold(o.children[1].content), right=reader.options(o)["right"],
                        explanation=reader.raw(o.children[0].map[1], o.map[1]),
                        line=o.map[0] + 1) for o in options],
        explain=reader.inside(explain[0]) if explain else "")


def parse_prompt(reader, token: Token, line: int) -> Prompt:
    if not token.children or token.children[0].type == "directive":
        reader.fail(line, "a prompt starts with its question")
    if len(kids(token, "answer")) != 1:
        reader.fail(line, "a prompt needs exactly one '::: answer'")
    misses = kids(token, "misses")
    return Prompt(
        number=0, line=line, question=reader.inside(token, reader.first_part(token)),
        hints=reader.hints(token), answer=reader.inside(kids(token, "answer")[0]),
        misses=reader.inside(misses[0]) if misses else "",
        misses_lines=[m.map[0] + 1 for m in misses])


def parse_figure(reader, token: Token, line: int) -> Figure:
    src = reader.options(token)["src"]
    if not (reader.project.room(reader.source.page) / src).is_file():
        reader.fail(line, f"figure file lessons/{reader.source.page.folder}/{src} does not exist")
    inside = token.children
    if len(inside) < 2 or inside[0].type != "paragraph_open" or not inside[1].content.startswith("alt:"):
        reader.fail(line, "a figure starts with a paragraph 'alt: <what the figure shows>'")
    if not inside[1].content[4:].strip():
        reader.fail(line, "the figure's alt text is empty")
    try:
        legible = legible_width(reader.project.room(reader.source.page) / src)
    except FigureError as error:
        reader.fail(line, f"figure file lessons/{reader.source.page.folder}/{src}: {error}")
    return Figure(number=0, line=line, src=src, alt=inside[1].content[4:].strip(),
                  caption=reader.raw(inside[0].map[1], token.map[1]), legible=legible)


def parse_side_by_side(reader, token: Token, line: int) -> SideBySide:
    fences = [t for t in token.children if t.type == "fence"]
    if len(fences) != 2:
        reader.fail(line, f"a side-by-side holds two code blocks; this one has {len(fences)}")
    return SideBySide(fences[0].content, fences[1].content)


def parse_lab(reader, token: Token, line: int) -> Lab:
    """A lab's number is its own (`::: lab 2`); that the labs come once each and in order is
    the numbering pass's to check, as it sees them all."""
    page = reader.source.page
    number = reader.options(token)["number"]
    if not 1 <= number <= len(page.labs):
        reader.fail(line, f"lab {number}: course.yaml gives page {page.id} "
                          f"{len(page.labs)} lab{'s' if len(page.labs) != 1 else ''}")
    hints = kids(token, "hints")
    done = kids(token, "done")
    return Lab(number=number, line=line, title=page.labs[number - 1],
               spec=reader.inside(token, reader.first_part(token)),
               hints=reader.hints(hints[0]) if hints else [],
               done=reader.inside(done[0]) if done else "")


def parse_capabilities(reader, token: Token, line: int) -> Capabilities:
    """The checklist is course.yaml's capabilities of every lesson up to this one: written out
    in the source it must say exactly that; left empty, the renderer fills it in."""
    expected = reader.course.capabilities(reader.source.page)
    items = [t for t in token.children if t.type == "inline"]
    if not token.children:
        return Capabilities(line=line)
    if not any(t.type == "bullet_list_open" for t in token.children):
        reader.fail(line, "a capability checklist is a Markdown list (or empty: course.yaml fills it)")
    for n, (item, want) in enumerate(zip(items, expected), 1):
        if item.content.strip() != want:
            reader.fail(item.map[0] + 1, f"capability {n} says {item.content.strip()!r}; "
                                         f"course.yaml says {want!r}")
    if len(items) != len(expected):
        reader.fail(line, f"the capability checklist has {len(items)} items; course.yaml gives "
                          f"{len(expected)} up to lesson {reader.source.page.id}")
    return Capabilities(line=line)


def parse_terms(reader, token: Token, line: int) -> None:
    """The terms a page introduces, one `- term: definition` line each (builder/glossary.py);
    kept on the token for the glossary, which checks them against the page's {term} roles."""
    from .glossary import parse_terms as read
    found, problems = read(reader.lines[token.map[0] + 1:token.map[1]], token.map[0] + 2)
    if problems:
        reader.fail(*problems[0])
    if not found:
        reader.fail(line, "a '::: terms' box lists the terms the page introduces, one "
                          "'- term: its one-line definition' a line")
    token.meta["definitions"] = found
    return None


def parse_sidequest(reader, token: Token, line: int) -> None:
    quest = reader.options(token)["page"]
    target = reader.course.page(quest)
    if target is None or target.kind != "side-quest":
        reader.fail(line, f"side quest {quest!r} is not a side quest in course.yaml")


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


def draw_hints(token: Token, render: Render, page) -> dict:
    """Hints standing in the prose (a lab draws its own): an exercise's answer, folded."""
    return {"hint_items": _hint_items(kids(token, "hint"), render)}


def fingerprint(html: str) -> str:
    """A short hash of what a question or an option says, so a saved answer follows its check
    when checks are added or moved (the id is the check's place on the page, and moves with it),
    and is not put back on a question or an option whose words changed."""
    return hashlib.sha256(" ".join(str(html).split()).encode()).hexdigest()[:12]


def draw_check(token: Token, render: Render, page) -> dict:
    options = []
    for option in kids(token, "option"):
        text, rest = _first_paragraph(option.children)
        html = _html(render, text)
        options.append({"right": option.meta["options"]["right"], "text": html,
                        "key": fingerprint(html), "rest": _html(render, rest)})
    question = _html(render, _before_first_directive(token.children))
    return {"id": f"{page.prefix}-{token.meta['node'].number}", "options": options,
            "question": question, "key": fingerprint(question),
            "explain": [_html(render, e.children) for e in kids(token, "explain")]}


def draw_prompt(token: Token, render: Render, page) -> dict:
    return {"id": f"{page.prefix}-{token.meta['node'].number}",
            "question": _html(render, _before_first_directive(token.children)),
            "hint_items": _hint_items(kids(token, "hint"), render),
            "answer": [_html(render, a.children) for a in kids(token, "answer")],
            "misses": [_html(render, m.children) for m in kids(token, "misses")]}


def draw_figure(token: Token, render: Render, page) -> dict:
    figure = token.meta["node"]
    return {"prefix": page.prefix, "number": figure.number,
            "src": "assets/" + figure.src, "alt": figure.alt, "legible": figure.legible,
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


def _code(name) -> str:
    html = f"<code>{escape(name.name)}</code>"
    return f"<strong>{html}</strong>" if name.new else f"<em>{html}</em>" if name.changed else html


def draw_inventory(regions) -> Markup:
    """"Your harness now", worked out (builder/inventory.py): a line per region, its functions and
    classes in file order with a class's methods in brackets; what this page added in bold, what
    it changed in italics."""
    lines = []
    for region in regions:
        names = [_code(n) + (" (" + ", ".join(_code(m) for m in n.methods) + ")" if n.methods else "")
                 for n in region.names]
        lines.append(f'<li><span class="inventory-region">{region.number} · {escape(region.title)}</span> '
                     + ", ".join(names) + "</li>")
    every = [x for r in regions for n in r.names for x in (n, *n.methods)]
    said = [words for words, marked in (("in bold: what this page added", any(x.new for x in every)),
                                        ("in italics: what it changed", any(x.changed for x in every)))
            if marked]
    note = f'<p class="inventory-note">{"; ".join(said).capitalize()}.</p>\n' if said else ""
    return Markup(note + '<ul class="inventory">\n' + "\n".join(lines) + "\n</ul>\n")


def draw_card(token: Token, render: Render, page) -> dict:
    parts = []
    for name, label in CARD_PARTS:
        for part in kids(token, name):
            worked_out = name == "now" and page.now is not None
            parts.append({"name": name, "label": label,
                          "body": draw_inventory(page.now) if worked_out else _html(render, part.children)})
    prose = [t for t in token.children if t.type != "directive"]
    return {"prose": _html(render, prose), "parts": parts}


def draw_terms(token: Token, render: Render, page) -> dict:
    """The box "Words this page introduced": each term, its definition, a link to its entry."""
    from .glossary import slug
    return {"terms": [{"name": d.name, "slug": slug(d.name), "definition": page.inline(d.definition)}
                      for d in token.meta.get("definitions", [])],
            "glossary": page.href_glossary()}


def draw_sidequest(token: Token, render: Render, page) -> dict:
    quest = page.course.page(token.meta["options"]["page"])
    return {"quest": quest, "href": page.href(quest), "body": _html(render, token.children)}


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
    lab = page.labs[token.meta["node"].number]
    lesson = page.page.number
    data = {"tests": lab.tests_path, "lesson": lesson, "lab": lab.number, "point": lab.point,
            "file": lab.file_name, "download": lab.download}
    if lab.solution:
        data["solution"] = lab.solution
    if lab.take_home:
        data["take_home"] = lab.take_home
    spec = [t for t in token.children if not (t.type == "directive" and t.info in ("hints", "done"))]
    hints = [h for box in kids(token, "hints") for h in kids(box, "hint")]
    return {"id": f"{page.prefix}-{lab.number}", "lesson": lesson, "lab": lab,
            "spec": _html(render, spec), "hint_items": _hint_items(hints, render),
            "rows": diff_rows(lab.diff), "data": Markup(script_json(data)),
            "starting": Markup(highlight(lab.starting, "python")),
            "done": [_html(render, d.children) for d in kids(token, "done")]}


# -- the registry ---------------------------------------------------------------------------

def _entry(name, parents=ANYWHERE, closed=False, parse=None, context=None,
           options: Schema = NONE, doc: str = "") -> Directive:
    return Directive(name, frozenset(parents) if parents is not ANYWHERE else ANYWHERE, closed,
                     parse, context, options, doc)


TITLE = Schema(words=Words("title", doc="its title (optional)"))
CARD_DOCS = {part: f"the closing card's \"{label}\"" for part, label in CARD_PARTS}

REGISTRY: dict[str, Directive] = {d.name: d for d in [
    _entry("check", closed=True, parse=parse_check, context=draw_check,
           doc="a multiple-choice check: its question, then its options"),
    _entry("option", {"check"}, options=Schema(flags=(Flag("right", "the one right option"),)),
           doc="one option of a check: its text, then its explanation"),
    _entry("explain", {"check"}, doc="a check's longer explanation (at most one), shown once the right option is chosen"),
    _entry("prompt", closed=True, parse=parse_prompt, context=draw_prompt,
           doc="a write-it-yourself prompt: its question, hints, model answer, common answers"),
    _entry("hint", {"prompt", "hints"}, options=TITLE,
           doc="one hint, folded until asked for; a lab's last is titled 'Nearly the code'"),
    _entry("answer", {"prompt"}, doc="a prompt's model answer"),
    _entry("misses", {"prompt"}, doc="a prompt's common answers and what each misses, as one list"),
    _entry("figure", parse=parse_figure, context=draw_figure,
           options=Schema(values=(Value("src", Path(under="figures/"), required=True,
                                        doc="the SVG file, under the page's figures/"),),
                          example="::: figure src=figures/<file>.svg"),
           doc="a numbered figure: an `alt:` paragraph, then its caption"),
    _entry("source", context=draw_body, options=TITLE,
           doc="a \"Where this comes from\" note, usually holding {tau} citations"),
    _entry("aside", context=draw_body,
           options=Schema(words=Words("title", required=True, doc="its title"),
                          example="::: aside <Title>"),
           doc="a longer note with a title"),
    _entry("side-by-side", closed=True, parse=parse_side_by_side, context=draw_side_by_side,
           doc="two code blocks in two columns, each after a one-line caption"),
    _entry("lab", {""}, parse=parse_lab, context=draw_lab,
           options=Schema(words=Words("number", required=True, kind=Int(low=1),
                                      doc="its number on the page: 1, 2, ... in order"),
                          example="::: lab 1"),
           doc="a lab, at the top level: its spec, then its hints and done note"),
    _entry("hints", {"lab", ""}, closed=True, context=draw_hints,
           doc="a lab's hints, or an exercise's answer in the prose"),
    _entry("done", {"lab"}, doc="what a lab shows once its tests pass"),
    _entry("capabilities", parse=parse_capabilities, context=draw_capabilities,
           doc="the capability checklist (left empty, the build writes it from course.yaml)"),
    _entry("card", closed=True, context=draw_card, doc="the closing card, holding its five parts"),
    *(_entry(part, {"card"}, doc=CARD_DOCS[part]) if part != "now" else
      _entry(part, {"card"}, parse=parse_now,
             doc=f"{CARD_DOCS[part]}: written empty; the build lists the harness's regions and names")
      for part, _ in CARD_PARTS),
    _entry("terms", {""}, parse=parse_terms, context=draw_terms,
           doc="the terms the page introduces, one `- term: definition` line each (builder/glossary.py)"),
    _entry("sidequest", parse=parse_sidequest, context=draw_sidequest,
           options=Schema(words=Words("page", required=True, doc="the side quest's id: S2"),
                          example="::: sidequest S2"),
           doc="a pointer to a side quest; its title and minutes come from course.yaml"),
]}


# -- the authoring guide's reference, written from the registry ------------------------------

def _option_rows(schema: Schema) -> list[tuple[str, str]]:
    rows = []
    if schema.words is not None:
        rows.append((f"<{schema.words.name}>", schema.words.doc))
    rows += [(flag.name, flag.doc) for flag in schema.flags]
    rows += [(f"{value.name}=", value.doc) for value in schema.values]
    return rows


def reference() -> str:
    """The directive table of docs/authoring.md: every directive with its doc, where it goes,
    and its options with theirs. tests/test_build.py holds the guide to it."""
    lines = ["| directive | what it is | where | options |", "| --- | --- | --- | --- |"]
    for entry in REGISTRY.values():
        where = ("anywhere" if entry.parents is ANYWHERE else
                 ", ".join("top level" if p == "" else f"in `{p}`" for p in sorted(entry.parents)))
        said = "; ".join(f"`{name}`: {doc}" for name, doc in _option_rows(entry.options)) or "none"
        lines.append(f"| `::: {entry.name}` | {entry.doc} | {where} | {said} |")
    return "\n".join(lines) + "\n"


def cell_reference() -> str:
    """The cell's options table of docs/authoring.md, from options.CELL."""
    from .options import CELL
    lines = ["| option | meaning |", "| --- | --- |"]
    for flag in CELL.flags:
        lines.append(f"| `{flag.name}` | {flag.doc} |")
    for value in CELL.values:
        lines.append(f"| `{value.name}=` | {value.doc} |")
    return "\n".join(lines) + "\n"


GUIDE_MARKS = {"directives": reference, "cell options": cell_reference}


def guide_text(text: str) -> str:
    """`text` (docs/authoring.md) with each generated table, between its
    `<!-- generated: NAME -->` and `<!-- end generated -->` marks, written afresh."""
    for name, make in GUIDE_MARKS.items():
        head = f"<!-- generated: {name} (python -m builder.directives) -->\n"
        begin = text.index(head) + len(head)
        end = text.index("<!-- end generated -->", begin)
        text = text[:begin] + make() + text[end:]
    return text


if __name__ == "__main__":      # python -m builder.directives: rewrite the guide's tables
    import sys
    from pathlib import Path as _Path
    guide = _Path(__file__).resolve().parents[1] / "docs" / "authoring.md"
    guide.write_text(guide_text(guide.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"{guide}: directive and cell option tables written from the registry", file=sys.stderr)
