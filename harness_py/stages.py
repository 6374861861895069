"""Cut the course's marked harness into stages: the starting file, the solution and the diff of
every lab.

The course's harness is one file, `harness_py/course/harness.py`, written as it stands after the
last lab, with the versions it went through kept beside each other in `#@` blocks. One source
means one place to fix a bug, and every stage is cut from it by the same rule, so a reader's
starting file is always exactly the previous lab's solution with this lab's blocks opened up.

Markers (docs/architecture.md, "The marked source"):

    #@ block P            present from point P on
    #@ block P given      present from P on; in P's starting file preceded by "# given in lesson L"
    #@ block P given: t   the same, with ": t" appended to the mark
    #@ block P gap        present from P on; in P's starting file it is a gap the reader fills
    #@ block P..Q ...     as above, but only up to, not including, Q (a later lab rewrites it)
    #@ spec               in a gap block: the comment lines up to `#@ code` are the gap's spec
    #@ code               in a gap block: the solution code follows
    #@ end                closes the block

Points form a tree, not only a line. The main chain is every lesson's labs in course order
(1.1, 1.2, 2.1, ... 11.2, 12.1); a side quest's labs (S2.1, S2.2) are a side branch whose first
point follows a point of the main chain (S2.1 follows 11.2) and which no main point follows. A
point's *line* is the chain from the first point to it; a block exists at a point when its start is
on that point's line and its end (if any) is not. So a `#@ block S2.1` exists at S2.1 and S2.2 and
never at 12.1, and a `#@ block 12.1` never on the side branch.

Blocks do not nest. A block with a range (`P..Q`) is rewritten at Q by the block that follows it
directly, with no line between: such a chain is the versions of one thing (a *group*). Their
ranges may not overlap, and a gap shows, under its spec, the code of the versions in its group that
end where the gap begins, so the reader edits the old version instead of starting from nothing.
Blocks without a range that follow each other are separate things. Leading blank lines of a block
stay in place, before its mark or gap.

Standard library only; PyYAML is imported only when the points have to be read from
lessons/course.yaml and none were passed.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = ROOT / "harness_py" / "course" / "harness.py"
COURSE_YAML = ROOT / "lessons" / "course.yaml"

GAP_OPEN = "# --- your code ---"
GAP_CLOSE = "# --- end ---"

_POINT = r"(?:\d+|S\d+)\.\d+"        # 11.2 on the main chain, S2.1 on a side branch
_BLOCK = re.compile(rf"^#@ block (?P<start>{_POINT})(?:\.\.(?P<until>{_POINT}))?"
                    r"(?: (?P<kind>given|gap)(?P<note>.*))?$")


_DEFINES = re.compile(r"^(?:async\s+)?(?:def|class)\s+(?P<name>\w+)")


class MarkerError(Exception):
    """A mistake in the marked source, named by file and line like a compiler error."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line, self.message = path, line, message


def point_key(point: str) -> tuple[int, int]:
    """"10.1" -> (10, 1): main-chain points compare as numbers, so 9.1 < 10.1."""
    lesson, lab = point.split(".")
    return int(lesson), int(lab)


def page_of(point: str) -> str:
    """The page a point belongs to: "11" for 11.2, "S2" for S2.1."""
    return point.split(".")[0]


def lab_of(point: str) -> int:
    return int(point.split(".")[1])


def page_words(page: str, names: dict[str, str] | None = None) -> str:
    """How a page is named in a starting file: "lesson 11", "side quest S2", or the name
    lessons/course.yaml gives a page of its own kind ("the closing page")."""
    if names and page in names:
        return names[page]
    return f"lesson {int(page)}" if page.isdigit() else f"side quest {page}"


def chain(points: list[str]) -> dict[str, str | None]:
    """The parents of points that form one line, each following the one before it."""
    return {point: (points[i - 1] if i else None) for i, point in enumerate(points)}


@dataclass
class Block:
    """One `#@ block`: the lines it holds and the points at which they exist."""
    line: int                      # line of its `#@ block` marker, counted from 1
    start: str
    until: str | None              # the first point it is no longer part of; None: to the end
    kind: str                      # "plain", "given" or "gap"
    note: str = ""                 # for "given": text appended to the mark
    spec: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    group: int = 0                 # blocks in one group are versions of one thing
    end: int = 0                   # line of its `#@ end`

    @property
    def name(self) -> str:
        """What the block holds, for an author's listing: its first def or class, else its first
        line of code."""
        lines = [line.strip() for line in self.code if line.strip()]
        for line in lines:
            match = _DEFINES.match(line)
            if match:
                return match["name"]
        return lines[0][:50] if lines else ""

    @property
    def span(self) -> str:
        """Its range as written: "9.1..10.1", or "9.1.." when it lasts to the end."""
        return f"{self.start}..{self.until}" if self.until else f"{self.start}.."


@dataclass
class Stages:
    """Every stage of the course's harness, cut on demand from the parsed source."""
    points: list[str]      # every point, in course order (a side branch where it is read)
    items: list            # the source in order: a plain line (str) or a Block
    path: str = "harness_py/course/harness.py"
    parents: dict = field(default_factory=dict)    # point -> the point it follows (None: first)
    names: dict = field(default_factory=dict)      # page -> its words, when not "lesson N"

    def __post_init__(self) -> None:
        if not self.parents:
            self.parents = chain(self.points)

    def _check(self, point: str) -> None:
        if point not in self.points:
            raise KeyError(f"{point} is not a stage point; the points are {', '.join(self.points)}")

    def previous(self, point: str) -> str | None:
        """The point `point` follows: on the main chain the lab before it, for a side branch's
        first lab the main point it branches from; None for the course's first lab."""
        self._check(point)
        return self.parents[point]

    def line(self, point: str) -> list[str]:
        """The points from the course's first lab to `point`, in order, along the parents."""
        self._check(point)
        return _line(self.parents, point)

    def live(self, block: "Block", point: str) -> bool:
        """Whether `block` is part of the harness at `point`."""
        return _live(block, set(self.line(point)))

    def solution(self, point: str) -> str:
        """The harness after the reader finished lab `point`."""
        on = set(self.line(point))
        lines: list[str] = []
        for item in self.items:
            if isinstance(item, str):
                lines.append(item)
            elif _live(item, on):
                lines.extend(item.code)
        return _text(lines)

    def starting(self, point: str) -> str:
        """The file lab `point` starts from: the previous solution with `point`'s blocks shown as
        gaps, or with their "given in lesson L" marks."""
        on = set(self.line(point))
        words = self.words(page_of(point))
        lines: list[str] = []
        for item in self.items:
            if isinstance(item, str):
                lines.append(item)
            elif item.start != point:
                if _live(item, on):
                    lines.extend(item.code)
            else:
                lead, body = _split_lead(item.code)
                lines.extend(lead)
                indent = _indent(body[0] if body else "")
                if item.kind == "given":
                    lines.append(f"{indent}# given in {words}{item.note}")
                    lines.extend(body)
                elif item.kind == "gap":
                    lines.append(indent + GAP_OPEN)
                    lines.extend(item.spec)
                    for old in self._replaced(item):
                        lines.extend(_split_lead(old.code)[1])
                    lines.append(indent + GAP_CLOSE)
                else:
                    lines.extend(body)
        return _text(lines)

    def _replaced(self, gap: Block) -> list[Block]:
        """The versions a gap takes the place of: its group's blocks that end where it starts."""
        return [item for item in self.items if isinstance(item, Block)
                and item.group == gap.group and item.until == gap.start]

    def reference(self, lesson: int | str) -> str:
        """The reference harness of a lesson (11) or side quest ("S2"): its last lab's solution."""
        page = str(lesson)
        mine = [point for point in self.points if page_of(point) == page]
        if not mine:
            raise KeyError(f"{page_words(page) if page.isdigit() or page.startswith('S') else page}"
                           " has no labs in lessons/course.yaml")
        return self.solution(mine[-1])

    def diff(self, point: str) -> list[str]:
        """What changed since the previous lab, as unified diff lines (no line ends), from the
        previous point's solution to this point's starting file; the first lab diffs from an
        empty file. Two lines of context, as the page shows it."""
        before = self.previous(point)
        old = self.solution(before) if before else ""
        where = f"{self.words(page_of(before))} lab {lab_of(before)}" if before else "empty"
        return list(difflib.unified_diff(
            old.splitlines(), self.starting(point).splitlines(),
            fromfile=f"harness.py ({where})", tofile=f"harness.py (lab {point})",
            n=2, lineterm=""))

    def words(self, page: str) -> str:
        """How page `page` is named in a starting file or a diff's header."""
        return page_words(page, self.names)

    def blocks(self) -> list[Block]:
        return [item for item in self.items if isinstance(item, Block)]

    def chains(self, name_or_line: str) -> list[list[Block]]:
        """The chains (a group's versions, in order) that define `name_or_line` (a function or
        class name: `run_agent`) or hold that line of the source (`445`). Raises KeyError."""
        blocks = self.blocks()
        if name_or_line.isdigit():
            at = int(name_or_line)
            groups = [b.group for b in blocks if b.line <= at <= b.end]
            what = f"no block holds line {at} of {self.path}"
        else:
            groups = [b.group for b in blocks if b.name == name_or_line or any(
                (m := _DEFINES.match(line.strip())) and m["name"] == name_or_line for line in b.code)]
            what = f"no block of {self.path} defines {name_or_line}"
        if not groups:
            raise KeyError(what)
        return [[b for b in blocks if b.group == group] for group in dict.fromkeys(groups)]

    def chain_report(self, name_or_line: str) -> list[str]:
        """Every version of each chain `chains()` finds, with its range and place, then the diff
        between each version and the next: where a fix to one version must go again."""
        out: list[str] = []
        for versions in self.chains(name_or_line):
            names = " -> ".join(dict.fromkeys(block.name for block in versions))
            out.append(f"{names}: {len(versions)} version{'s' if len(versions) != 1 else ''}")
            for block in versions:
                out.append(f"  {self.path}:{block.line}-{block.end}  {block.span:<12} {block.kind:<5} "
                           f"{len(block.code)} lines")
            for old, new in zip(versions, versions[1:]):
                out.extend(difflib.unified_diff(
                    old.code, new.code, lineterm="", n=2,
                    fromfile=f"{self.path}:{old.line} ({old.span})",
                    tofile=f"{self.path}:{new.line} ({new.span})"))
        return out

    def point_report(self, point: str) -> list[str]:
        """The blocks that begin at `point` (new, or a new version of a chain) and those it
        replaces (the versions that end there), with their lines: what a lab touches."""
        self._check(point)
        blocks = self.blocks()
        begin = [b for b in blocks if b.start == point]
        end = [b for b in blocks if b.until == point]
        out = [f"{point}: {len(begin)} block{'s' if len(begin) != 1 else ''} begin here, "
               f"{len(end)} end here"]
        for block in begin:
            replaced = [b for b in end if b.group == block.group]
            how = (f"replaces {', '.join(f'{b.span} at :{b.line}' for b in replaced)}" if replaced
                   else "new")
            out.append(f"  {self.path}:{block.line}-{block.end}  {block.span:<12} {block.kind:<5} "
                       f"{block.name}  ({how})")
        for block in end:
            if not any(b.group == block.group for b in begin):
                out.append(f"  {self.path}:{block.line}-{block.end}  {block.span:<12} {block.kind:<5} "
                           f"{block.name}  (ends here, with no new version)")
        return out


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _line(parents: dict, point: str) -> list[str]:
    line, seen = [], set()
    current: str | None = point
    while current is not None and current not in seen:
        seen.add(current)
        line.append(current)
        current = parents.get(current)
    return line[::-1]


def _live(block: Block, on: set[str]) -> bool:
    """A block is there at a point whose line (`on`) holds its start and does not hold its end."""
    return block.start in on and (block.until is None or block.until not in on)


def _split_lead(code: list[str]) -> tuple[list[str], list[str]]:
    """A block's leading blank lines, and the rest."""
    n = 0
    while n < len(code) and not code[n].strip():
        n += 1
    return code[:n], code[n:]


def parse(text: str, points: list[str], path: str = "harness_py/course/harness.py",
          parents: dict[str, str | None] | None = None,
          names: dict[str, str] | None = None) -> Stages:
    """Parse a marked source. Every mistake raises MarkerError naming `path` and the line.
    `parents` gives each point the point it follows (default: `points` as one line); `names`, the
    pages named otherwise than "lesson N" (default: none)."""
    known = set(points)
    parents = dict(parents) if parents else chain(points)
    lines_of = {point: set(_line(parents, point)) for point in points}
    items: list = []
    block: Block | None = None
    part = ""                         # in a gap block: "" before #@ spec, "spec", then "code"
    group, continues = 0, False       # continues: the line before closed a block with a range

    def fail(line: int, message: str):
        raise MarkerError(path, line, message)

    def check_point(point: str | None, number: int) -> None:
        if point is not None and point not in known:
            fail(number, f"point {point} is not a lab in lessons/course.yaml "
                         f"(the points are {', '.join(points)})")

    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("#@"):
            if line != stripped:
                fail(number, "a marker must start at the beginning of its line")
            match = _BLOCK.match(stripped)
            if match:
                if block is not None:
                    fail(number, f"a block cannot open inside the block opened at line "
                                 f"{block.line}; blocks do not nest")
                start, until = match["start"], match["until"]
                check_point(start, number)
                check_point(until, number)
                if until is not None and (until == start or start not in lines_of[until]):
                    fail(number, f"the range {start}..{until} is empty: it must end after it "
                                 "starts, on a line of labs that goes through both")
                kind, note = match["kind"] or "plain", match["note"] or ""
                if kind == "gap" and note:
                    fail(number, f"unexpected text after 'gap': {note.strip()!r}")
                if kind == "given" and note and not note.startswith(":"):
                    fail(number, "text after 'given' must start with ':', as in "
                                 "'given: the docstring'")
                if not continues:
                    group += 1
                block = Block(number, start, until, kind, note, group=group)
                part = "" if kind == "gap" else "code"
                continues = False
            elif stripped == "#@ spec":
                if block is None or block.kind != "gap":
                    fail(number, "'#@ spec' belongs inside a gap block ('#@ block P gap')")
                if part != "":
                    fail(number, "a gap has one '#@ spec'")
                part = "spec"
            elif stripped == "#@ code":
                if block is None or block.kind != "gap":
                    fail(number, "'#@ code' belongs inside a gap block ('#@ block P gap')")
                if part != "spec":
                    fail(number, "'#@ code' comes after the gap's '#@ spec' and its lines")
                if not block.spec:
                    fail(block.line, "a gap with no spec: write the comment lines that say what "
                                     "the reader writes between '#@ spec' and '#@ code'")
                part = "code"
            elif stripped == "#@ end":
                if block is None:
                    fail(number, "'#@ end' with no open block")
                if block.kind == "gap" and part != "code":
                    fail(block.line, "a gap with no spec: a gap block needs '#@ spec', its "
                                     "comment lines, then '#@ code'")
                if not any(code.strip() for code in block.code):
                    fail(block.line, "an empty block: it holds no code")
                _check_overlap(items, block, fail, lines_of)
                block.end = number
                items.append(block)
                continues = block.until is not None
                block = None
            else:
                fail(number, f"unknown marker {stripped!r}; the markers are '#@ block', "
                             "'#@ spec', '#@ code' and '#@ end'")
            continue
        if block is None:
            items.append(line)
            continues = False
        elif part == "":
            fail(number, "a gap block starts with '#@ spec'")
        elif part == "spec":
            if not stripped.startswith("#"):
                fail(number, "a spec line must be a comment; end the spec with '#@ code'")
            block.spec.append(line)
        else:
            block.code.append(line)
    if block is not None:
        fail(block.line, "this block is never closed: add '#@ end'")
    return Stages(points=list(points), items=items, path=path, parents=parents,
                  names=dict(names or {}))


def _check_overlap(items: list, block: Block, fail, lines_of: dict[str, set[str]]) -> None:
    """Two versions of one thing may not both be there at any point."""
    for other in items:
        if isinstance(other, Block) and other.group == block.group:
            if any(_live(other, on) and _live(block, on) for on in lines_of.values()):
                fail(block.line, f"overlapping ranges of the same block: {_range(block)} here "
                                 f"and {_range(other)} at line {other.line} (versions of one "
                                 "thing follow each other with no line between them)")


def _range(block: Block) -> str:
    return f"{block.start}..{block.until}" if block.until else f"{block.start}.."


def course_parents(course_yaml: Path | str = COURSE_YAML) -> dict[str, str | None]:
    """Every stage point, in course order, with the point it follows, from lessons/course.yaml.
    A lesson's labs continue the main chain. A side quest's labs (S2.1, S2.2) are a side branch:
    its first lab follows the last main point before it, and no main point follows any of them."""
    return _parents_of(_course_pages(course_yaml))


def _course_pages(course_yaml: Path | str) -> list[dict]:
    """The pages of lessons/course.yaml, read once for both the points and the names."""
    try:
        import yaml
    except ImportError:
        raise RuntimeError("reading lessons/course.yaml needs PyYAML; pass points= instead") \
            from None
    return yaml.safe_load(Path(course_yaml).read_text(encoding="utf-8"))["pages"]


def _parents_of(pages: list[dict]) -> dict[str, str | None]:
    parents: dict[str, str | None] = {}
    main: str | None = None
    for page in pages:
        kind, labs = page.get("kind"), page.get("labs") or []
        if kind in ("lesson", "closing"):   # the main chain
            for k in range(1, len(labs) + 1):
                point = f"{int(page['id'])}.{k}"
                parents[point], main = main, point
        elif kind == "side-quest":
            before = main
            for k in range(1, len(labs) + 1):
                point = f"{page['id']}.{k}"
                parents[point], before = before, point
    return parents


PAGE_NAMES = {"closing": "the closing page"}


def _names_of(pages: list[dict]) -> dict[str, str]:
    """The pages a starting file names by their kind rather than their number: the closing page
    carries the id 16, but nobody calls it "lesson 16"."""
    return {str(page["id"]): PAGE_NAMES[page["kind"]] for page in pages
            if page.get("kind") in PAGE_NAMES}


def course_points(course_yaml: Path | str = COURSE_YAML) -> list[str]:
    """The stage points, in course order, from the labs of every lesson and side quest."""
    return list(course_parents(course_yaml))


def load(path: Path | str | None = None, points: list[str] | None = None,
         parents: dict[str, str | None] | None = None,
         names: dict[str, str] | None = None) -> Stages:
    """Read and parse the marked source (by default the course's), with the points and page names
    of lessons/course.yaml unless `points` (one line) or `parents` (a tree) is given."""
    source = Path(path) if path is not None else DEFAULT_SOURCE
    if parents is not None:
        points = list(parents) if points is None else points
    elif points is None:
        pages = _course_pages(COURSE_YAML)
        parents, names = _parents_of(pages), names or _names_of(pages)
        points = list(parents)
    shown = str(source)
    try:
        shown = source.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        pass
    return parse(source.read_text(encoding="utf-8"), points, shown, parents, names)


USAGE = """usage: stages.py starting|solution|diff|blocks POINT, or stages.py chain NAME|LINE
  starting POINT   the file lab POINT starts from
  solution POINT   the harness once lab POINT is done
  diff POINT       what changed since the previous lab, as the page shows it
  blocks POINT     the blocks that begin at POINT (new, or a new version) and those they replace
  chain NAME|LINE  every version of the chained block that defines NAME (or holds LINE of the
                   source), with its range and lines, and the diff between each and the next"""


def main(argv: list[str] | None = None) -> int:
    """`python harness_py/stages.py starting|solution|diff|blocks POINT` prints one stage or what a
    point touches; `stages.py chain NAME|LINE` prints a chain's versions and their diffs."""
    import sys
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in ("starting", "solution", "diff", "blocks", "chain"):
        print(USAGE, file=sys.stderr)
        return 2
    what, point = args
    try:
        stages = load()
        if what in ("diff", "blocks", "chain"):
            lines = {"diff": stages.diff, "blocks": stages.point_report, "chain": stages.chain_report}[what](point)
            text = "\n".join(lines) + "\n"
        else:
            text = getattr(stages, what)(point)
    except KeyError as error:           # a point the course does not have: its sentence, no traceback
        print(f"stages.py: {error.args[0]}", file=sys.stderr)
        return 2
    except MarkerError as error:
        print(error, file=sys.stderr)
        return 2
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
