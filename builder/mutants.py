"""Mutation testing of the labs: does a lab's test suite fail the small slips a reader makes?

A *mutant* is the solution of a lab with one small change inside the code that lab asks the reader
to write (its gap blocks): a comparison turned round or loosened (`<` for `<=`), a constant moved
by one, a statement removed, an `except` broadened to `BaseException`, a branch forced, two
arguments swapped, a return value dropped, `and` for `or`. Each mutant runs through the lab's own
tests with the reader's runner (`lab_check`). A mutant that passes every test *survives*: either a
test is missing, or the change makes no difference a reader could get wrong, in which case it is
recorded as *equivalent*, with the reason, in the page's `mutants.yaml`:

    - lab: 1
      in: run_agent                      # the function (or Class.method) the change is in
      change: "turns >= max_turns  ->  turns > max_turns"
      why: the loop can never reach the comparison with turns above max_turns, so both stop alike

The changes are made over Python's own `ast` (standard library): each node's source segment is
replaced in the solution's text, so every other line, comment included, stays as it was. Mutants
that give the same text are made once. `python build.py mutants --lesson N` runs them; the report
is one line per survivor and the kill rate per lab."""
from __future__ import annotations

import ast
import os
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .course import LineLoader, Page
from .errors import BuildError
from .project import Project

TEST_TIMEOUT = 3.0      # seconds one lab test may take on a mutant before it counts as stuck
KEYS = {"lab", "in", "change", "why", "__line__"}


@dataclass(frozen=True)
class Mutant:
    """One small change to a lab's solution, inside the code the lab asks the reader to write."""

    point: str                 # "3.1"
    lab: int
    where: str                 # the function or Class.method holding the change ("" at top level)
    line: int                  # its line in the marked source (harness_py/course/harness.py)
    kind: str                  # which operator made it: "compare", "constant", ...
    before: str                # the source text replaced
    after: str                 # what replaced it
    text: str = field(repr=False, compare=False, default="")    # the whole mutated harness

    @property
    def change(self) -> str:
        """How mutants.yaml names the change: "before  ->  after", each on one line."""
        return f"{_one_line(self.before)}  ->  {_one_line(self.after)}"


@dataclass(frozen=True)
class Equivalent:
    """A survivor an author has judged harmless, from mutants.yaml."""

    lab: int
    where: str
    change: str
    why: str
    line: int

    def matches(self, mutant: Mutant) -> bool:
        return (self.lab == mutant.lab and self.where == mutant.where
                and " ".join(self.change.split()) == " ".join(mutant.change.split()))


def _one_line(text: str) -> str:
    return " ".join(text.split())


# -- where the reader writes --------------------------------------------------------------------

def gap_lines(stages, point: str) -> list[tuple[int, int, int]]:
    """The code the lab asks the reader to write: for each of `point`'s gap blocks, its first and
    last line in the solution (counted from 1) and the line of its first code line in the marked
    source (after `#@ block`, `#@ spec`, the spec and `#@ code`)."""
    spans: list[tuple[int, int, int]] = []
    count = 0
    for item in stages.items:
        if isinstance(item, str):
            count += 1
        elif stages.live(item, point):
            first = count + 1
            count += len(item.code)
            if item.kind == "gap" and item.start == point:
                spans.append((first, count, item.line + 3 + len(item.spec)))
    return spans


def _source_line(spans: list[tuple[int, int, int]], line: int) -> int:
    """A solution line inside a gap, as a line of the marked source."""
    first, _, source = next(span for span in spans if span[0] <= line <= span[1])
    return source + line - first


# -- the operators ------------------------------------------------------------------------------

_SWAP_COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
                 ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
                 ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_SWAP_BINOP = {ast.Add: ast.Sub, ast.Sub: ast.Add}
_BROAD = {"BaseException"}
_SYMMETRIC = {"max", "min"}     # calls whose arguments' order cannot matter: swapping them is no slip


def _changes(node: ast.AST) -> list[tuple[str, str]]:
    """The (kind, replacement source) of every mutation of `node` itself."""
    out: list[tuple[str, str]] = []
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _SWAP_COMPARE:
        new = ast.Compare(node.left, [_SWAP_COMPARE[type(node.ops[0])]()], node.comparators)
        out.append(("compare", ast.unparse(new)))
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        out.append(("constant", repr(not node.value)))
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        out += [("constant", repr(node.value + 1)), ("constant", repr(node.value - 1))]
    elif isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        out.append(("boolean", ast.unparse(ast.BoolOp(other, node.values))))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        out.append(("negation", ast.unparse(node.operand)))
    elif isinstance(node, ast.BinOp) and type(node.op) in _SWAP_BINOP:
        out.append(("arithmetic", ast.unparse(ast.BinOp(node.left, _SWAP_BINOP[type(node.op)](),
                                                        node.right))))
    elif isinstance(node, ast.Call):
        plain = [a for a in node.args if not isinstance(a, ast.Starred)]
        symmetric = isinstance(node.func, ast.Name) and node.func.id in _SYMMETRIC
        if len(plain) >= 2 and len(plain) == len(node.args) and not symmetric \
                and ast.unparse(plain[0]) != ast.unparse(plain[1]):
            args = [plain[1], plain[0], *plain[2:]]
            out.append(("arguments", ast.unparse(ast.Call(node.func, args, node.keywords))))
    elif isinstance(node, ast.Return) and node.value is not None \
            and not (isinstance(node.value, ast.Constant) and node.value.value is None):
        out.append(("return", "return None"))
    return out


def _statement_changes(node: ast.stmt) -> list[tuple[str, str]]:
    """Removing a simple statement; forcing an `if`'s branch (only its test is replaced)."""
    if isinstance(node, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Raise,
                         ast.Delete)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return []                              # a docstring
        return [("statement", "pass")]
    return []


class _Finder(ast.NodeVisitor):
    """Walks the solution, keeping the enclosing function's name, and collects every change of a
    node that lies inside one of the spans."""

    def __init__(self, source: str, spans: list[tuple[int, int]]) -> None:
        self.lines = source.splitlines(keepends=True)
        self.spans = spans
        self.scope: list[str] = []
        self.found: list[tuple[str, int, str, tuple[int, int, int, int], str]] = []

    def _inside(self, node: ast.AST) -> bool:
        start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        return start is not None and any(a <= start and end <= b for a, b, _ in self.spans)

    def _add(self, node: ast.AST, kind: str, after: str) -> None:
        where = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
        self.found.append((".".join(self.scope), node.lineno, kind, where, after))

    def _scoped(self, node) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def visit_If(self, node: ast.If) -> None:
        if self._inside(node.test):
            for forced in ("True", "False"):
                self._add(node.test, "branch", forced)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None and self._inside(node.type) \
                and ast.unparse(node.type) not in _BROAD:
            self._add(node.type, "except", "BaseException")
        self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        if self._inside(node):
            if isinstance(node, ast.stmt):
                for kind, after in _statement_changes(node):
                    self._add(node, kind, after)
            for kind, after in _changes(node):
                self._add(node, kind, after)
        super().generic_visit(node)


def _segment(lines: list[str], where: tuple[int, int, int, int]) -> tuple[int, int]:
    """Character offsets of a node's (line, col, end line, end col) in the joined text. ast's
    columns count UTF-8 bytes."""
    def offset(line: int, col: int) -> int:
        before = sum(len(text) for text in lines[:line - 1])
        return before + len(lines[line - 1].encode("utf-8")[:col].decode("utf-8"))
    return offset(where[0], where[1]), offset(where[2], where[3])


def make(stages, point: str) -> list[Mutant]:
    """Every distinct mutant of `point`'s solution, inside its gap blocks, in source order."""
    solution = stages.solution(point)
    spans = gap_lines(stages, point)
    if not spans:
        return []
    finder = _Finder(solution, spans)
    finder.visit(ast.parse(solution))
    mutants, seen = [], {solution}
    for where, line, kind, span, after in finder.found:
        start, end = _segment(finder.lines, span)
        before = solution[start:end]
        text = solution[:start] + after + solution[end:]
        if text in seen:
            continue
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        seen.add(text)
        mutants.append(Mutant(point, int(point.split(".")[1]), where,
                              _source_line(spans, line), kind, before, after, text))
    return mutants


# -- equivalents --------------------------------------------------------------------------------

def mutants_file(project: Project, page: Page) -> Path:
    return project.room(page) / "mutants.yaml"


def load_equivalents(project: Project, page: Page) -> list[Equivalent]:
    """The survivors of `page`'s labs judged harmless, checked: each names its lab, the function,
    the change and why."""
    path = mutants_file(project, page)
    if not path.exists():
        return []
    rel = project.rel(path)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=LineLoader) or []
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise BuildError(rel, mark.line + 1 if mark else 0, f"not valid YAML: {error}") from None
    if not isinstance(data, list):
        raise BuildError(rel, 1, "mutants.yaml is a list of equivalent mutants")
    out = []
    for raw in data:
        line = raw.get("__line__", 0) if isinstance(raw, dict) else 0
        if not isinstance(raw, dict):
            raise BuildError(rel, line, "each equivalent mutant is a mapping (lab, in, change, why)")
        unknown = sorted(set(raw) - KEYS)
        if unknown:
            raise BuildError(rel, line, f"unknown key {unknown[0]!r} (lab, in, change, why)")
        for key in ("lab", "change", "why"):
            if raw.get(key) in (None, ""):
                raise BuildError(rel, line, f"an equivalent mutant needs {key}:")
        if not isinstance(raw["lab"], int) or not 1 <= raw["lab"] <= len(page.labs):
            raise BuildError(rel, line, f"lab: {raw['lab']!r} is not a lab of {page.id} "
                                        f"(1 to {len(page.labs)})")
        out.append(Equivalent(raw["lab"], str(raw.get("in") or ""), str(raw["change"]),
                              " ".join(str(raw["why"]).split()), line))
    return out


# -- running ------------------------------------------------------------------------------------

@dataclass
class Outcome:
    mutant: Mutant
    status: str              # "killed", "survived", "slow" (killed only by a time-out)
    by: str = ""             # the first test that failed it


def _judge(job: tuple[str, str, int, str]) -> tuple[str, str]:
    """Run one mutant's harness text through its lab (in a worker process)."""
    text, tests, lab, folder = job
    from lab import lab_check

    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        harness = Path(scratch) / "harness.py"
        harness.write_text(text, encoding="utf-8")
        results = lab_check.run(harness, tests, lab, timeout=TEST_TIMEOUT)
    failed = [r for r in results if r["status"] != "pass"]
    if not failed:
        return "survived", ""
    timed = all("did not finish within" in (r["message"] or "") for r in failed)
    return ("slow" if timed else "killed"), failed[0]["id"]


def run(project: Project, page: Page, stages, lab: int | None = None,
        jobs: int | None = None) -> list[Outcome]:
    """Make and judge every mutant of `page`'s labs (or of lab `lab`)."""
    tests = str(project.tests_file(page))
    mutants = [m for k, point in enumerate(page.points, 1) if lab in (None, k)
               for m in make(stages, point)]
    jobs = jobs or os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as folder:
        work = [(m.text, tests, m.lab, folder) for m in mutants]
        if jobs == 1:
            verdicts = list(map(_judge, work))
        else:
            with ProcessPoolExecutor(jobs) as pool:
                verdicts = list(pool.map(_judge, work, chunksize=4))
    return [Outcome(m, status, by) for m, (status, by) in zip(mutants, verdicts)]


def report(project: Project, page: Page, outcomes: list[Outcome],
           equivalents: list[Equivalent], lab: int | None = None) -> tuple[list[str], int]:
    """The report's lines and the number of survivors nobody explained. An equivalent that matches
    no survivor (the code or the tests changed) is reported too: mutants.yaml must stay true."""
    lines, unexplained = [], 0
    used: set[int] = set()
    rel = project.rel(mutants_file(project, page))
    source = project.rel(project.harness_source)
    for number, point in enumerate(page.points, 1):
        if lab not in (None, number):
            continue
        mine = [o for o in outcomes if o.mutant.lab == number]
        killed = sum(o.status != "survived" for o in mine)
        explained, details = 0, []
        for outcome in mine:
            m = outcome.mutant
            if outcome.status == "slow":
                details.append(f"  slow      {point} {source}:{m.line} in {m.where or 'module'}: "
                             f"{m.change} (killed only by a time-out)")
            if outcome.status != "survived":
                continue
            match = next((i for i, e in enumerate(equivalents) if e.matches(m)), None)
            if match is not None:
                used.add(match)
                explained += 1
                continue
            unexplained += 1
            details.append(f"  SURVIVED  {point} {source}:{m.line} in {m.where or 'module'} "
                         f"[{m.kind}]: {m.change}")
        rate = f"{100 * killed / len(mine):.0f}%" if mine else "no mutants"
        lines.append(f"lab {point}: {len(mine)} mutants, {killed} killed ({rate}), "
                     f"{explained} equivalent, {len(mine) - killed - explained} unexplained")
        lines.extend(details)
    for i, equivalent in enumerate(equivalents):
        if i not in used and lab in (None, equivalent.lab):
            unexplained += 1
            lines.append(f"{rel}:{equivalent.line}: the mutant {equivalent.change!r} of lab "
                         f"{equivalent.lab} in {equivalent.where or 'module'} no longer survives "
                         f"(or is no longer made); remove the entry")
    return lines, unexplained
