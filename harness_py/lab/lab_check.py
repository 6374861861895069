"""The lab test runner: checks the reader's harness.py against one lesson's lab tests.

    python lab/lab_check.py --harness harness.py --lesson 11 tests.py [--lab 1] [--timeout 30]

Run it from a lab folder (harness.py, tests.py, lab/). It prints one line per test, in the order
the tests are written, named by the test's sentence (its docstring, the checklist line of the
page): `PASS  <sentence>`, or `FAIL  <sentence>` and under it what was expected and what happened.
When a name harness.py lacks fails several tests, it is said in full under the first of them, and
each later one says `the same failure as above: harness.py has no SessionLog`. The last line is
`N passed, N failed`. Exit status: 0 when every selected test passed, 1 when one did not, 2 for bad
usage (a missing file, a lab the tests do not have).

The page runs the same module in Pyodide: `run(harness_path, tests_path, lab=None)` returns one
dict per test, and `sentences(tests_path)` lists the tests without running them. A test that never
returns cannot be stopped from inside Pyodide, so the page enforces its own time limit (it ends the
worker). Under CPython `--timeout` stops a test after that many seconds (SIGALRM, so Unix only).

Built on unittest and the standard library only, for CPython 3.10+ and Pyodide. Why unittest and
not pytest: it ships with every Python, including the one in the page.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import importlib.util
import inspect
import io
import linecache
import re
import signal
import sys
import threading
import traceback
import types
import unittest
from pathlib import Path
from typing import Callable

LAB_CLASS = re.compile(r"^Lab(\d+)$")
INDENT = " " * 6          # lines up under the sentence, after "PASS  " / "FAIL  "
PRINTED_LINES = 12        # at most this many lines of what a failing test printed are shown

__all__ = ["run", "sentences", "main", "UsageError"]


class UsageError(ValueError):
    """The runner was asked for something that is not there: a missing file, an unknown lab, a
    tests file that does not load. The command line exits 2 on it."""


class _TimeLimit(BaseException):
    """Raised inside a test that ran past --timeout. A BaseException, so that the reader's
    `except Exception` cannot swallow it."""


# ---------------------------------------------------------------------------- listing the tests

def _sentence(doc: str | None, name: str) -> str:
    """A docstring as one checklist line: its words, joined by single spaces. A test without a
    docstring is named by its method, so that it is still announced."""
    return " ".join(doc.split()) if doc and doc.strip() else name


def sentences(tests_path: str | Path) -> list[tuple[str, int, str]]:
    """(id, lab, sentence) for every lab test in the file, in the order they are written, without
    running or importing anything: the build prints the checklist from this. id is
    "Lab1.test_ids"; lab is the number in the class name."""
    path = Path(tests_path)
    if not path.is_file():
        raise UsageError(f"{path}: no such tests file")
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as error:
        raise UsageError(f"{path.name} does not load: {_import_error(path, error)}") from None
    found = []
    for node in tree.body:
        match = LAB_CLASS.match(node.name) if isinstance(node, ast.ClassDef) else None
        if not match:
            continue
        for item in node.body:
            if (isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and item.name.startswith("test")):
                found.append((f"{node.name}.{item.name}", int(match.group(1)),
                              _sentence(ast.get_docstring(item), item.name)))
    return found


# ------------------------------------------------------------------------------ loading modules

def _folder_above_lab() -> Path:
    """The lab folder: the one that holds lab/, where this file lives. `import lab` must find
    the lab package there, whichever directory the command was run from."""
    return Path(__file__).resolve().parent.parent


def _forget(names: tuple[str, ...]) -> None:
    """Drop modules (and their submodules) from sys.modules, so the next import is fresh: every
    run must see the reader's file as it is now, and a lab world nobody else has touched."""
    for key in list(sys.modules):
        if key in names or key.startswith(tuple(n + "." for n in names)):
            if sys.modules[key] is not sys.modules.get(__name__):
                del sys.modules[key]


def _load(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: cannot be loaded as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _where(path: Path, lineno: int | None, name: str | None = None) -> str:
    """`harness.py, line 12`, with the source line under it when there is one. `name` is what
    the reader calls the file, when that is not its name on this disk."""
    name = name or path.name
    if not lineno:
        return name
    text = linecache.getline(str(path), lineno).strip()
    return f"{name}, line {lineno}" + (f":\n    {text}" if text else "")


def _import_error(path: Path, error: BaseException, name: str | None = None) -> str:
    """Why harness.py does not import, naming its line."""
    name = name or path.name
    if isinstance(error, _TimeLimit):
        return str(error)
    if isinstance(error, SyntaxError) and error.filename and Path(error.filename) == path:
        where = f"{name}, line {error.lineno}"
        text = (error.text or "").rstrip("\n")
        shown = ""
        if text.strip():
            stripped = text.lstrip()
            caret = max((error.offset or 1) - 1 - (len(text) - len(stripped)), 0)
            shown = f"\n    {stripped}\n    {' ' * caret}^"
        return f"{where}: {type(error).__name__}: {error.msg}{shown}"
    frame = _innermost(error, path)
    where = _where(path, frame.lineno, name) if frame else name
    return f"{where}\n{type(error).__name__}: {error}"


def _innermost(error: BaseException, path: Path) -> traceback.FrameSummary | None:
    """The deepest frame of the traceback that is in `path`: the reader's line that raised, or
    called what raised."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if f.filename and _same(f.filename, path)]
    return frames[-1] if frames else None


def _same(filename: str, path: Path) -> bool:
    try:
        return Path(filename).resolve() == path.resolve()
    except OSError:
        return False


# ------------------------------------------------------------------- a name the harness lacks

class _Reader:
    """The reader's harness as the tests meet it: its file, the module it was loaded as, what
    messages call it, and the tests file (whether it does `from harness import *`)."""

    def __init__(self, path: Path, module: types.ModuleType, name: str, tests: Path,
                 star: bool = False) -> None:
        self.path, self.module, self.name, self.tests, self.star = path, module, name, tests, star
        self._defined: dict[str, int] | None = None
        self._source = ""
        self._tests_source: _TestsSource | None = None

    def goto(self, test_id: str, message: str) -> dict | None:
        """The reader's function a failure with no line of theirs is about (_goto), read with
        `ast` from the reader's file and the tests file the first time a failure asks."""
        if f"{self.name}, line " in message:
            return None         # the failure already names the line (a traceback in their file)
        if self._defined is None:
            self._source = self.path.read_text(encoding="utf-8")
            self._defined = _definitions(self._source)
            self._tests_source = _TestsSource(self.tests)
        assert self._tests_source is not None
        owners = {"harness", self.name} | {q.split(".")[0] for q in self._defined if "." in q}
        said = re.search(r"([\w.]+) has no (?:attribute )?(\w+)", message)
        if said and said.group(1) in owners:      # "harness has no X", "Harness has no attribute X"
            name = said.group(2)
            if not any(q == name or q.endswith("." + name) for q in self._defined):
                return _spec_of(name, self._source)   # not written yet: its gap's spec, or none
        return _goto(message, self._tests_source.names(test_id), self._defined)

    def lacks(self, error: BaseException | None) -> str | None:
        """What `error` says the harness lacks, as the sentence a reader acts on ("harness.py
        has no SessionLog", "SessionLog has no attribute replay"), or None. That is the cause
        of a failure when a test reached for a name harness.py does not define (yet): an
        attribute of the harness module, or of one of its classes or their objects; a name
        `from harness import` did not find. Never a value that is None ("'NoneType' object
        has no attribute ...": which value, each test may say differently) or an object of
        any other class; never an error raised on a line of harness.py: that is the reader's
        own code, and its line is part of the failure."""
        if error is None:
            return None
        frames = traceback.extract_tb(error.__traceback__)
        if frames and _same(frames[-1].filename, self.path):
            return None
        module = self.module.__name__
        if isinstance(error, AttributeError):
            owner, missing = getattr(error, "obj", None), getattr(error, "name", None)
            if not missing or owner is None:
                return None
            if owner is self.module:
                return f"{self.name} has no {missing}"
            cls = owner if isinstance(owner, type) else type(owner)
            if getattr(cls, "__module__", None) == module:
                return f"{cls.__qualname__} has no attribute {missing}"
            return None
        if isinstance(error, ImportError) and error.name == module:    # from harness import X
            missing = getattr(error, "name_from", None)                 # Python 3.12+
            if missing is None:
                said = re.match(r"cannot import name '(\w+)'", str(error.msg or ""))
                missing = said and said.group(1)
        elif isinstance(error, NameError) and self.star:                # from harness import *
            missing = getattr(error, "name", None)
            if not (frames and _same(frames[-1].filename, self.tests)):
                return None
        else:
            return None
        if not missing or hasattr(self.module, missing):
            return None
        return f"{self.name} has no {missing}"


def _imports_all_of_harness(tests: Path) -> bool:
    """Whether the tests file does `from harness import *`: then a name harness.py lacks is a
    NameError in the tests."""
    tree = ast.parse(tests.read_text(encoding="utf-8"), filename=str(tests))
    return any(isinstance(node, ast.ImportFrom) and node.module == "harness"
               and any(alias.name == "*" for alias in node.names) for node in ast.walk(tree))


# ----------------------------------------------------- the reader's function a failure is about

def _definitions(source: str) -> dict[str, int]:
    """The `def` lines of the reader's file, by name: "run_agent", and "SessionLog.replay" for a
    method (by its class). {} for a file that does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(node.name, node.lineno)
        elif isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found.setdefault(f"{node.name}.{inner.name}", inner.lineno)
    return found


class _TestsSource:
    """The tests file read with `ast`: which names each test reaches for, its helpers included."""

    def __init__(self, path: Path) -> None:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        self.functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        self.classes = {n.name: {m.name: m for m in n.body if isinstance(m, ast.FunctionDef)}
                        for n in tree.body if isinstance(n, ast.ClassDef)}
        self.bases = {n.name: [b.id for b in n.bases if isinstance(b, ast.Name)]
                      for n in tree.body if isinstance(n, ast.ClassDef)}

    def _methods(self, class_name: str, seen: frozenset = frozenset()) -> dict:
        """The methods a test class of the file has, its own and those of the file's classes it
        derives from (a helper on a shared base class is the test's helper too)."""
        methods: dict = {}
        for base in self.bases.get(class_name, []):
            if base not in seen:
                methods.update(self._methods(base, seen | {class_name}))
        methods.update(self.classes.get(class_name, {}))
        return methods

    def names(self, test_id: str) -> list[str]:
        """The attribute and plain names test `test_id` ("Lab1.test_x") uses, in the order
        written, following the helpers it calls (`self.run_agent(...)`, `_drive(...)`) once. An
        attribute comes with a dot before it (".replay"), a plain name without: a plain name can
        only be a function of the reader's file, never a method (a local `messages` is not
        `Harness.messages`)."""
        class_name, method = test_id.split(".")
        methods = self._methods(class_name)
        todo = [methods.get(method)]
        seen: set[int] = set()
        names: list[str] = []
        while todo:
            function = todo.pop(0)
            if function is None or id(function) in seen:
                continue
            seen.add(id(function))
            for node in ast.walk(function):
                if isinstance(node, ast.Attribute):
                    names.append("." + node.attr)
                    if isinstance(node.value, ast.Name) and node.value.id == "self":
                        todo.append(methods.get(node.attr))
                elif isinstance(node, ast.Name):
                    names.append(node.id)
                    todo.append(self.functions.get(node.id))
        return names


def _spec_of(name: str, source: str) -> dict | None:
    """Where the reader's file describes `name` it has not written yet: the first comment line
    of a gap's spec that starts with it (`# repair_tool_history(messages) -> list ...`), as
    {"name": "repair_tool_history's spec", "line": 289}; None if no comment does."""
    for number, line in enumerate(source.splitlines(), start=1):
        if re.match(rf"\s*#\s*{re.escape(name)}\b", line):
            return {"name": f"{name}'s spec", "line": number}
    return None


def _goto(message: str, used: list[str], defined: dict[str, int]) -> dict | None:
    """The reader's function a failure is about, as {"name": "run_agent", "line": 12}: the one
    of theirs the message names ("run_agent called the model 3 times", "SessionLog.replay
    returned ..."), else the only one the test reaches. A name counts when the test reaches it
    (`harness.run_agent`, `log.replay`: a method of exactly one of the reader's classes), so a
    word of the message that happens to be a name of theirs ("prompt") does not; a message's
    `Class.method` always counts. None when nothing is named, or more than one could be."""
    def resolve(name: str) -> str | None:
        if not name.startswith("."):        # a plain name: a function, never a method
            return name if name in defined else None
        name = name[1:]
        if name in defined:
            return name
        owners = [q for q in defined if q.endswith("." + name)]
        return owners[0] if len(owners) == 1 else None
    reached = []
    for name in used:
        qualified = resolve(name)
        if qualified and qualified not in reached:
            reached.append(qualified)
    functions = reached
    words = re.findall(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?", message)
    for word in words:
        if "." in word and word in defined:
            return {"name": word, "line": defined[word]}
        for qualified in functions:
            if word == qualified or word == qualified.rsplit(".", 1)[-1]:
                return {"name": qualified, "line": defined[qualified]}
    if len(functions) == 1:
        return {"name": functions[0], "line": defined[functions[0]]}
    return None


# ----------------------------------------------------------------------------- running the tests

class _Collect(unittest.TestResult):
    """Keeps one outcome per test, in the order unittest reports them: {"status", "message"},
    and "cause" and "printed" when a name the reader's harness lacks made the test fail."""

    def __init__(self, reader: _Reader, printed: io.StringIO) -> None:
        super().__init__()
        self.reader, self.printed = reader, printed
        self.outcomes: dict[str, dict] = {}

    def startTest(self, test: unittest.TestCase) -> None:
        super().startTest(test)
        self.printed.seek(0)
        self.printed.truncate()

    def addSuccess(self, test: unittest.TestCase) -> None:
        self.outcomes.setdefault(_test_id(test), {"status": "pass", "message": ""})

    def addFailure(self, test: unittest.TestCase, err) -> None:
        # A test that caught what the reader's code raised and failed with a sentence: the
        # exception it caught is the one being handled when it failed.
        error = err[1]
        caught = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
        self._outcome(test, "fail", self._failure(error), caught)

    def addError(self, test: unittest.TestCase, err) -> None:
        self._outcome(test, "error", self._error(err[1]), err[1])

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        self.outcomes[_test_id(test)] = {"status": "fail", "message": f"skipped: {reason}"}

    def addSubTest(self, test, subtest, err) -> None:
        if err is not None:
            (self.addFailure if issubclass(err[0], AssertionError) else self.addError)(test, err)

    def _failure(self, error: BaseException) -> str:
        message = str(error).strip()
        # unittest's own wording ("False is not true") says nothing to a reader; point at the check.
        if not message or re.fullmatch(r"(True|False|None) is not (true|false|None)", message):
            frames = [f for f in traceback.extract_tb(error.__traceback__)
                      if _same(f.filename, self.reader.tests)]
            check = _where(self.reader.tests, frames[-1].lineno) if frames else "the test"
            message = f"a check failed ({message or 'no message'}) at {check}"
        return message

    def _error(self, error: BaseException) -> str:
        if isinstance(error, _TimeLimit):
            return str(error)
        name = type(error).__name__
        detail = f"{name}: {error}" if str(error) else name
        frame = _innermost(error, self.reader.path)
        if frame is not None:
            return f"your code raised {detail}\nat {_where(self.reader.path, frame.lineno, self.reader.name)}"
        frames = traceback.extract_tb(error.__traceback__)
        last = frames[-1] if frames else None
        where = (f"{Path(last.filename).name}, line {last.lineno}, in {last.name}"
                 if last else "the test")
        if last and _same(last.filename, self.reader.tests) and (
                isinstance(error, AttributeError) or self.reader.lacks(error)):
            return (f"the test uses something {self.reader.name} does not have (yet): "
                    f"{_without_path(error)}\nat {where}")
        return f"the test stopped on {detail}\nraised at {where}"

    def _outcome(self, test: unittest.TestCase, status: str, message: str,
                 error: BaseException | None) -> None:
        """A failed test's outcome: its message, then what it printed. When a name the harness
        lacks is the cause, that too, and what it printed on its own: the part of the message
        that is the test's even when the cause is shared."""
        printed = self._printed()
        outcome = {"status": status, "message": message + (f"\n{printed}" if printed else "")}
        cause = self.reader.lacks(error)
        if cause:
            outcome.update(cause=cause, printed=printed)
        else:
            goto = self.reader.goto(_test_id(test), message)
            if goto:
                outcome["goto"] = goto
        self.outcomes[_test_id(test)] = outcome

    def _printed(self) -> str:
        """What the test printed, its last lines, as the message ends with it; "" if nothing."""
        lines = self.printed.getvalue().splitlines()
        if not lines:
            return ""
        shown = lines[-PRINTED_LINES:]
        cut = f" (the last {len(shown)} of {len(lines)} lines)" if len(shown) < len(lines) else ""
        return f"it printed{cut}:\n" + "\n".join("  " + line for line in shown)


def _without_path(error: BaseException) -> str:
    """An exception's message without the path ImportError adds: the reader's file is
    harness.py to them, wherever the page stored it."""
    text = str(error)
    path = getattr(error, "path", None) if isinstance(error, ImportError) else None
    return text.replace(f" ({path})", "") if path else text


def _test_id(test: unittest.TestCase) -> str:
    return f"{type(test).__name__}.{test._testMethodName}"


@contextlib.contextmanager
def _time_limit(seconds: float | None):
    """Stop the test after `seconds` where CPython can: SIGALRM, in the main thread only. In
    Pyodide (and on Windows) this does nothing, and the page's own limit applies."""
    usable = (seconds and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def stop(signum, frame):
        raise _TimeLimit(f"did not finish within {seconds:g} seconds: is something waiting "
                         "forever, or looping without end?")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _classes(module: types.ModuleType) -> list[tuple[int, type]]:
    """The lab classes of a tests module, in the order they are written."""
    return [(int(LAB_CLASS.match(name).group(1)), value) for name, value in vars(module).items()
            if LAB_CLASS.match(name) and isinstance(value, type)
            and issubclass(value, unittest.TestCase)]


def _methods(cls: type) -> list[str]:
    """The test methods of a class in definition order (unittest itself sorts them by name)."""
    return [name for name, value in vars(cls).items()
            if name.startswith("test") and callable(value)]


def _test(cls: type, method: str) -> unittest.TestCase:
    """One test, ready to run. A test written `async def` (lesson 15 on) runs on the book's
    simulated-clock loop, lab.run: the same loop in CPython and in the page, where unittest's
    IsolatedAsyncioTestCase cannot wait for a coroutine."""
    test = cls(method)
    if inspect.iscoroutinefunction(getattr(cls, method)):
        timers = importlib.import_module("lab.timers")   # the tests' own fresh lab
        coroutine_function = getattr(test, method)
        setattr(test, method, lambda: timers.run(coroutine_function()))
    return test


def run(harness_path: str | Path, tests_path: str | Path, lab: int | None = None, *,
        timeout: float | None = None, name: str = "harness.py",
        report: Callable[[dict], None] | None = None) -> list[dict]:
    """Run the lab tests of `tests_path` (all of them, or lab `lab`'s) against the harness file
    `harness_path`, loaded as the module `harness`, fresh. Returns one dict per test, in order:
    {"id": "Lab1.test_ids", "lab": 1, "sentence": ..., "status": "pass"|"fail"|"error",
    "message": ...}. "fail" is a check that did not hold, "error" an exception, in the reader's
    code or at its import. A failure caused by a name the harness lacks (a test reached for
    harness.SessionLog, or for a method its Harness objects do not have) also has "cause", a
    sentence ("harness.py has no SessionLog", "Harness has no attribute subscribe"), the same
    for every test it fails, and "printed", what that test printed as the message ends with
    it ("" if nothing): many tests can share a cause, and say it once. `report` is called with
    each dict as soon as it is known, so a command line can print while the rest run. `name` is
    what messages call the reader's file: to the reader it is harness.py, wherever the page
    stored it. Raises UsageError for a missing file or an unknown lab."""
    harness, tests = Path(harness_path).resolve(), Path(tests_path).resolve()
    for path, what in ((harness, "harness"), (tests, "tests")):
        if not path.is_file():
            raise UsageError(f"{Path(harness_path if what == 'harness' else tests_path)}: "
                             f"no such {what} file")
    listed = sentences(tests)
    if not listed:
        raise UsageError(f"{tests.name} has no lab tests: no class Lab1, Lab2, ... with test "
                         "methods")
    labs = sorted({number for _, number, _ in listed})
    if lab is not None and lab not in labs:
        raise UsageError(f"{tests.name} has no tests for lab {lab}; it has "
                         + (", ".join(f"lab {n}" for n in labs) or "none"))
    listed = [item for item in listed if lab is None or item[1] == lab]

    folder = str(_folder_above_lab())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    _forget(("harness", "lab"))
    linecache.clearcache()      # the page rewrites the reader's file between runs
    results: list[dict] = []

    def record(test_id: str, number: int, sentence: str, status: str, message: str,
               **cause: object) -> None:
        result = {"id": test_id, "lab": number, "sentence": sentence, "status": status,
                  "message": message, **cause}
        results.append(result)
        if report:
            report(result)

    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            with _time_limit(timeout):
                harness_module = _load("harness", harness)
    except (Exception, SystemExit, _TimeLimit) as error:  # SyntaxError too: the reader's file
        message = f"{name} does not import: {_import_error(harness, error, name)}"
        for test_id, number, sentence in listed:
            record(test_id, number, sentence, "error", message)
        return results

    reader = _Reader(harness, harness_module, name, tests, _imports_all_of_harness(tests))
    try:
        module = _load("_lab_tests", tests)
    except Exception as error:
        cause = reader.lacks(error)
        if cause is None:
            raise UsageError(f"{tests.name} does not load: "
                             f"{_import_error(tests, error)}") from error
        # `from harness import X` at the top of the tests, and the reader's file has no X:
        # every test fails for it, and that is theirs to write, not a broken tests file.
        frame = _innermost(error, tests)
        message = (f"the tests use something {name} does not have (yet): "
                   f"{_without_path(error)}\nat {_where(tests, frame.lineno if frame else None)}")
        for test_id, number, sentence in listed:
            record(test_id, number, sentence, "error", message, cause=cause, printed="")
        return results

    classes = dict((cls.__name__, (number, cls)) for number, cls in _classes(module))
    for test_id, number, sentence in listed:
        class_name, method = test_id.split(".")
        if class_name not in classes or method not in _methods(classes[class_name][1]):
            record(test_id, number, sentence, "error", f"{test_id} is written in {tests.name} "
                   "but could not be found when it was loaded")
            continue
        cls = classes[class_name][1]
        collect = _Collect(reader, printed)
        suite = unittest.TestSuite([_test(cls, method)])
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            try:
                with _time_limit(timeout):
                    suite.run(collect)
            except _TimeLimit as stop:       # the limit fell between unittest's own handlers
                collect.outcomes[test_id] = {"status": "error", "message": str(stop)}
        outcome = collect.outcomes.get(test_id, {"status": "error",
                                                 "message": "the test did not run"})
        record(test_id, number, sentence, **outcome)
    return results


# ---------------------------------------------------------------------------- the command line

class _Printer:
    """Prints each result as it arrives. A harness that does not import fails every test for
    one reason, so that reason is printed once, above them, and each test points at it. A name
    the harness lacks (a result's "cause") is said in full under the first test it fails; each
    later test it fails points up at it, and keeps only what it printed."""

    def __init__(self, harness_name: str) -> None:
        self.name = harness_name
        self.prefix = f"{harness_name} does not import:"
        self.shown = False
        self.causes: set[str] = set()

    def __call__(self, result: dict) -> None:
        mark = "PASS" if result["status"] == "pass" else "FAIL"
        message = result["message"]
        cause = result.get("cause")
        if message.startswith(self.prefix):
            if not self.shown:
                print(message)
                self.shown = True
            message = f"not run: {self.prefix.removesuffix(':')} (see above)"
        elif cause in self.causes:
            message = "\n".join(filter(None, (f"the same failure as above: {cause}",
                                               result.get("printed"))))
        elif cause:
            self.causes.add(cause)
        goto = result.get("goto")
        if goto:
            message += f"\n(your {goto['name']} is at {self.name}, line {goto['line']})"
        print(f"{mark}  {result['sentence']}")
        for line in message.splitlines():
            print(INDENT + line if line.strip() else "")
        sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    """The command line. Returns the exit status: 0 all passed, 1 some failed, 2 bad usage."""
    parser = argparse.ArgumentParser(
        prog="lab_check.py", description="Check your harness.py against a lesson's lab tests.")
    parser.add_argument("--harness", required=True, help="your harness file, e.g. harness.py")
    parser.add_argument("--lesson", required=True, type=_lesson,
                        help="the lesson number, e.g. 11, or a side quest's id, e.g. S2")
    parser.add_argument("--lab", type=int, help="run only this lab's tests (1, 2, ...)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds one test may take before it is stopped (0: no limit)")
    parser.add_argument("tests", help="the lesson's tests file, e.g. tests.py")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return 0 if exit_.code == 0 else 2

    try:
        declared = _declared_lesson(Path(args.tests))
        if declared is not None and declared != args.lesson:
            raise UsageError(f"{args.tests} holds the tests of {_words(declared)}, "
                             f"not {_words(args.lesson)}")
        if not Path(args.harness).is_file():
            raise UsageError(f"{args.harness}: no such harness file")
        scope = f"lab {args.lab}" if args.lab is not None else "all labs"
        where = _words(args.lesson)
        print(f"{where[0].upper()}{where[1:]}, {scope}: {args.harness} against {args.tests}")
        results = run(args.harness, args.tests, args.lab, timeout=args.timeout or None,
                      name=Path(args.harness).name,
                      report=_Printer(Path(args.harness).name))
    except UsageError as error:
        print(f"lab_check: {error}", file=sys.stderr)
        return 2
    passed = sum(result["status"] == "pass" for result in results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


def _lesson(text: str) -> int | str:
    """--lesson: a lesson's number (11, or 09 for 9), or a side quest's id as written ("S2")."""
    if text.isdigit():
        return int(text)
    if re.fullmatch(r"[A-Z]\d*", text):
        return text
    raise argparse.ArgumentTypeError(f"{text!r} is neither a lesson number (11) nor a side "
                                     "quest (S2)")


def _words(lesson: int | str) -> str:
    return f"lesson {lesson}" if isinstance(lesson, int) else f"side quest {lesson}"


def _declared_lesson(tests: Path) -> int | str | None:
    """The LESSON a tests file declares, read without running it: a number (LESSON = 11), or a
    side quest's id (LESSON = "S2"); None if it declares none."""
    if not tests.is_file():
        raise UsageError(f"{tests}: no such tests file")
    for node in ast.parse(tests.read_text(encoding="utf-8"), filename=str(tests)).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "LESSON"
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, (int, str))):
            return node.value.value
    return None


if __name__ == "__main__":
    sys.exit(main())
