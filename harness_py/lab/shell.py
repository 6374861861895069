"""A small shell over a Workspace, for the `bash` tool.

A real shell in a web page is out of reach, and a real shell at home would make every run
different. Shell(ws) understands the few commands the book's models ask for, over the in-memory
disk, and answers the way bash would, output and exit code:

    ls [path ...]          names, one per line, sorted            cat file ...
    echo [-n] words        with > file and >> file                  pwd, true, false, exit [n]
    seq [first] last       numbers, one per line (long output for budget lessons)
    head/tail [-n N] [file], wc -l [file], grep [-c] pattern [file]   also reading a pipe
    pytest [path ...]      runs the test files on the disk (see Shell.pytest)
    python file.py, python -c "code"   runs Python over the disk (see _Runner)
    a | b, a && b, a || b, a ; b, > /dev/null, and 2>&1 (a no-op: stderr is always in the output)

Anything else is "bash: <name>: command not found", exit code 127, as in bash. Quoting follows the
shell's rules (shlex). There is one directory, the workspace, and no cd: the model is told so by
the error it gets.
"""

from __future__ import annotations

import builtins
import io
import posixpath
import re
import shlex
import traceback
import types
from typing import Callable

from .workspace import CWD, Workspace

__all__ = ["Shell"]


class _Exit(Exception):
    def __init__(self, code: int):
        self.code = code


class Shell:
    """Shell(ws).run(command) -> (output, exit_code). Output is stdout and stderr together, in the
    order the commands produced them; writes made with > and >> go into `ws`, and so show up in
    ws.writes like any other."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self.commands: dict[str, Callable[[list[str], str], tuple[str, str, int]]] = {
            "ls": self._ls, "cat": self._cat, "echo": self._echo, "pwd": self._pwd,
            "true": lambda a, i: ("", "", 0), "false": lambda a, i: ("", "", 1),
            "exit": self._exit, "seq": self._seq, "head": self._head, "tail": self._tail,
            "wc": self._wc, "grep": self._grep, "pytest": self._pytest, "cd": self._cd,
            "python": self._python, "python3": self._python,
        }

    # -- the command line ---------------------------------------------------------------------

    def run(self, command: str) -> tuple[str, int]:
        """Run one command line; returns (output, exit_code). A line bash could not parse (an
        open quote) gives bash's syntax error and code 2."""
        try:
            lexer = shlex.shlex(command, posix=True, punctuation_chars="|&;<>")
            lexer.whitespace_split = True
            words = list(lexer)
        except ValueError as error:
            return f"bash: syntax error: {error}\n", 2
        # "2>&1" asks for what this shell always does: stderr is already in the output.
        k = 0
        while k + 2 < len(words):
            if words[k:k + 3] == ["2", ">&", "1"]:
                del words[k:k + 3]
            else:
                k += 1
        out: list[str] = []
        code = 0
        chain: list[list[str]] = []   # pipelines, each a list of words; joined by operators
        ops: list[str] = []
        current: list[str] = []
        for w in words:
            if w in ("&&", "||", ";"):
                chain.append(current)
                ops.append(w)
                current = []
            else:
                current.append(w)
        chain.append(current)
        run_next = True
        try:
            for k, pipeline in enumerate(chain):
                if run_next and pipeline:
                    code = self._pipeline(pipeline, out)
                elif run_next and not pipeline and k < len(chain) - 1:
                    return f"bash: syntax error near unexpected token `{ops[k]}'\n", 2
                op = ops[k] if k < len(ops) else None
                if op == "&&":
                    run_next = code == 0
                elif op == "||":
                    run_next = code != 0
                else:
                    run_next = True
        except _Exit as stop:
            code = stop.code
        return "".join(out), code

    def _pipeline(self, words: list[str], out: list[str]) -> int:
        """Run `a | b | c`: each command's stdout is the next one's input; stderr goes straight
        to the output. Returns the last command's exit code."""
        stages: list[list[str]] = [[]]
        for w in words:
            if w == "|":
                stages.append([])
            else:
                stages[-1].append(w)
        if not all(stages):
            out.append("bash: syntax error near unexpected token `|'\n")
            return 2
        data, err, code = "", "", 0
        for k, stage in enumerate(stages):
            data, err, code = self._simple(stage, data)
            if k < len(stages) - 1:
                out.append(err)         # an earlier command's complaints come out first
        out.append(data)
        out.append(err)                 # the last command printed, then complained
        return code

    def _simple(self, words: list[str], stdin: str) -> tuple[str, str, int]:
        """One command with its redirections. Returns (stdout, stderr, code); stdout is "" when
        it went into a file."""
        args, target, mode = [], None, None
        k = 0
        while k < len(words):
            w = words[k]
            if w in (">", ">>"):
                if k + 1 >= len(words) or words[k + 1] in (">", ">>", "<"):
                    return "", "bash: syntax error near unexpected token `newline'\n", 2
                target, mode = words[k + 1], w
                k += 2
                continue
            if w == "<":
                if k + 1 >= len(words):
                    return "", "bash: syntax error near unexpected token `newline'\n", 2
                name = words[k + 1]
                if not self.ws.exists(name):
                    return "", f"bash: {name}: No such file or directory\n", 1
                stdin = self.ws.read_text(name)
                k += 2
                continue
            args.append(w)
            k += 1
        if not args:
            stdout, err, code = "", "", 0
        else:
            name = args[0]
            command = self.commands.get(name)
            if command is None:
                return "", f"bash: {name}: command not found\n", 127
            stdout, err, code = command(args[1:], stdin)
        if target == "/dev/null":
            stdout = ""
        elif target is not None:
            if mode == ">":
                self.ws.write_text(target, stdout)
            else:
                self.ws.append_text(target, stdout)
            stdout = ""
        return stdout, err, code

    # -- files --------------------------------------------------------------------------------

    def _read(self, name: str, path: str) -> tuple[str | None, str]:
        """The text of `path`, or None and the error line `name` prints."""
        if not self.ws.exists(path):
            return None, f"{name}: {path}: No such file or directory\n"
        try:
            return self.ws.read_text(path), ""
        except IsADirectoryError:
            return None, f"{name}: {path}: Is a directory\n"

    def _inputs(self, name: str, files: list[str], stdin: str) -> tuple[str, str, int]:
        """The text a filter reads: its files, one after the other, or the pipe."""
        if not files:
            return stdin, "", 0
        texts, errs, code = [], [], 0
        for path in files:
            text, err = self._read(name, path)
            if text is None:
                errs.append(err)
                code = 1
            else:
                texts.append(text)
        return "".join(texts), "".join(errs), code

    def _ls(self, args: list[str], stdin: str) -> tuple[str, str, int]:
        paths = [a for a in args if not a.startswith("-")] or ["."]
        out, err, code = [], [], 0
        for path in paths:
            if not self.ws.exists(path):
                err.append(f"ls: cannot access '{path}': No such file or directory\n")
                code = 2
                continue
            try:
                names = self.ws.listdir(path)
            except NotADirectoryError:
                names = [path]
            if len(paths) > 1:
                out.append(f"{path}:\n")
            out.extend(n + "\n" for n in names)
        return "".join(out), "".join(err), code

    def _cat(self, args: list[str], stdin: str) -> tuple[str, str, int]:
        return self._inputs("cat", args, stdin)

    def _echo(self, args: list[str], stdin: str) -> tuple[str, str, int]:
        newline = "\n"
        if args[:1] == ["-n"]:
            args, newline = args[1:], ""
        return " ".join(args) + newline, "", 0

    def _pwd(self, args: list[str], stdin: str) -> tuple[str, str, int]:
        return CWD + "\n", "", 0

    def _cd(self, args: list[str], stdin: str) -> tuple[str, str, int]:
        if not args or posixpath.normpath(args[0]) in (".", CWD):
            return "", "", 0
        return "", f"bash: cd: {args[0]}: this shell has one directory, {CWD}\n", 1

    def _exit(self, args: list[str], stdin: str) -> tuple[str, str, int]:
        code = int(args[0]) if args and args[0].isdigit() else 0
        raise _Exit(code)

    def _seq(self, args: list[str], stdin: str) -> tuple[str, str, int]:
        try:
            numbers = [int(a) for a in args]
        except ValueError:
            return "", f"seq: invalid argument: {' '.join(args)}\n", 1
        if len(numbers) == 1:
            first, step, last = 1, 1, numbers[0]
        elif len(numbers) == 2:
            first, step, last = numbers[0], 1, numbers[1]
        elif len(numbers) == 3:
            first, step, last = numbers
        else:
            return "", "seq: usage: seq [first [step]] last\n", 1
        if step == 0:
            return "", "seq: invalid zero increment\n", 1
        return "".join(f"{n}\n" for n in range(first, last + (1 if step > 0 else -1), step)), "", 0

    def _count(self, args: list[str]) -> tuple[int, list[str]]:
        """-n N (or -N) and the file names of head and tail."""
        n, files, k = 10, [], 0
        while k < len(args):
            a = args[k]
            if a == "-n" and k + 1 < len(args):
                n, k = int(args[k + 1]), k + 2
                continue
            if re.fullmatch(r"-n?\d+", a):
                n = int(a.lstrip("-n"))
            else:
                files.append(a)
            k += 1
        return n, files

    def _head(self, args: list[str], stdin: str) -> tuple[str, str, int]:
        n, files = self._count(args)
        text, err, code = self._inputs("head", files, stdin)
        return "".join(text.splitlines(keepends=True)[:n]), err, code

    def _tail(self, args: list[str], stdin: str) -> tuple[str, str, int]:
        n, files = self._count(args)
        text, err, code = self._inputs("tail", files, stdin)
        lines = text.splitlines(keepends=True)
        return "".join(lines[len(lines) - n:] if n else []), err, code

    def _wc(self, args: list[str], stdin: str) -> tuple[str, str, int]:
        files = [a for a in args if not a.startswith("-")]
        text, err, code = self._inputs("wc", files, stdin)
        count = text.count("\n")
        if "-l" not in args:
            return "", "wc: only wc -l is available here\n", 1
        label = f" {files[0]}" if len(files) == 1 else ""
        return f"{count}{label}\n", err, code

    def _grep(self, args: list[str], stdin: str) -> tuple[str, str, int]:
        flags = [a for a in args if a.startswith("-")]
        rest = [a for a in args if not a.startswith("-")]
        if not rest:
            return "", "grep: usage: grep [-c] [-i] pattern [file ...]\n", 2
        pattern, files = rest[0], rest[1:]
        text, err, code = self._inputs("grep", files, stdin)
        try:
            regex = re.compile(pattern, re.IGNORECASE if "-i" in flags else 0)
        except re.error as error:
            return "", f"grep: {error}\n", 2
        hits = [line for line in text.splitlines(keepends=True) if regex.search(line)]
        if "-c" in flags:
            return f"{len(hits)}\n", err, code or (0 if hits else 1)
        return "".join(h if h.endswith("\n") else h + "\n" for h in hits), err, code or (0 if hits else 1)

    # -- pytest -------------------------------------------------------------------------------

    def _pytest(self, args: list[str], stdin: str) -> tuple[str, str, int]:
        missing = [a for a in args if not a.startswith("-") and not self.ws.exists(a)]
        if missing:     # as pytest's: a usage error, exit 4, before any test is collected
            return "\nno tests ran\n", f"ERROR: file or directory not found: {missing[0]}\n\n", 4
        report, code = self.pytest(args)
        return report, "", code

    def pytest(self, args: list[str] | None = None) -> tuple[str, int]:
        """Run the tests on the disk, for real, and report like `pytest -q` (without timings,
        which would make every run different).

        Test files are the workspace's files named test_*.py or *_test.py (under the paths given,
        if any). Each is executed as Python; every top-level function whose name starts with
        "test" is called; it passes if it returns, and fails if it raises (the report quotes the
        failing line, as pytest does for a bare assert). `import name` inside a test finds
        name.py (or name/__init__.py) on this disk first, then the standard library. Exit code 0
        when every test passed, 1 when one failed, 2 when a test file would not import, 5 when
        there were no tests, as pytest's. (A path that does not exist is caught before this, in
        the shell's pytest command: exit 4, pytest's usage error.)"""
        files = self._test_files(args or [])
        lines: list[str] = []
        passed = failed = errors = 0
        results: list[str] = []
        for path in files:
            runner = _Runner(self.ws)       # a fresh set of modules for every test file
            try:
                module = runner.load(path, "__test__")
            except (Exception, SystemExit) as error:   # a test file that does not import
                errors += 1
                results.append(f"ERROR {path} - {self._why(error, path)}")
                continue
            tests = [(name, f) for name, f in vars(module).items()
                     if name.startswith("test") and callable(f)
                     and getattr(f, "__module__", None) == "__test__"]
            marks = []
            for name, f in tests:
                try:
                    f()
                except (Exception, SystemExit) as error:
                    failed += 1
                    marks.append("F")
                    results.append(f"FAILED {path}::{name} - {self._why(error, path)}")
                else:
                    passed += 1
                    marks.append(".")
            lines.append(f"{path} {''.join(marks)}" if marks else f"{path}")
        total = passed + failed
        summary = ", ".join(part for part in (
            f"{failed} failed" if failed else "", f"{passed} passed" if passed else "",
            f"{errors} error{'s' if errors != 1 else ''}" if errors else "") if part)
        code = 2 if errors else 1 if failed else 5 if total == 0 else 0
        head = f"collected {total} item{'s' if total != 1 else ''}\n"
        body = "".join(line + "\n" for line in lines)
        tail = "".join(r + "\n" for r in results)
        report = head + ("\n" + body if body else "") + ("\n" + tail if tail else "") + \
            "\n" + (summary or "no tests ran") + "\n"
        return report, code

    def _test_files(self, args: list[str]) -> list[str]:
        roots = [posixpath.normpath(a) for a in args if not a.startswith("-")]
        found = []
        for path in self.ws.files:
            name = posixpath.basename(path)
            if not (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))):
                continue
            if roots and not any(r == "." or path == r or path.startswith(r + "/") for r in roots):
                continue
            found.append(path)
        return found

    def _why(self, error: BaseException, path: str) -> str:
        """One line on why a test failed: the error, and for a bare assert the line it stopped
        on, found in the traceback's frames inside the workspace file."""
        message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        if isinstance(error, AssertionError) and not str(error):
            frames = _Runner(self.ws).frames(error)
            if frames and frames[-1][3]:
                return f"AssertionError: {frames[-1][3]}"
        return message

    # -- python -------------------------------------------------------------------------------

    def _python(self, args: list[str], stdin: str) -> tuple[str, str, int]:
        """python file.py, or python -c "code": run it over the workspace and return what it
        printed. An uncaught exception prints a traceback in CPython's layout and exits 1."""
        if not args:
            return "", "python: no interactive Python here; give a file or -c \"code\"\n", 2
        runner = _Runner(self.ws, stdin)
        if args[0] == "-c":
            if len(args) < 2:
                return "", "Argument expected for the -c option\n", 2
            path, source = "<string>", args[1]
        else:
            path = args[0]
            if not self.ws.exists(path):
                return "", (f"python: can't open file '{CWD}/{path}': [Errno 2] No such file "
                            "or directory\n"), 2
            source = None
        try:
            runner.load(path, "__main__", source)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            err = "" if isinstance(stop.code, int) or stop.code is None else f"{stop.code}\n"
            return runner.output(), err, code
        except Exception as error:
            return runner.output(), runner.traceback(error), 1
        return runner.output(), "", 0



class _Runner:
    """Runs Python files from the workspace, inside this process, as if they ran on that disk.

    Inside the code, `import name` finds name.py (or name/__init__.py) on the workspace first and
    the standard library after it; the modules are this runner's own and never enter
    sys.modules. open() opens workspace files (text only; "w" empties the file at once and the
    text arrives when the file is closed, as with a real buffered file), print() writes to the
    runner's output, and input() reads the piped stdin. os and pathlib still see the real
    machine: code meant for the workspace should use open()."""

    def __init__(self, ws: Workspace, stdin: str = ""):
        self.ws = ws
        self.modules: dict[str, types.ModuleType] = {}
        self.out = io.StringIO()
        self.stdin = io.StringIO(stdin)
        env = dict(vars(builtins))
        env.update(__import__=self._import, print=self._print, open=self._open, input=self._input)
        self.builtins = env

    def output(self) -> str:
        return self.out.getvalue()

    def load(self, path: str, name: str, source: str | None = None) -> types.ModuleType:
        """Execute `path` (or `source`, named `path`) as the module `name` and return it."""
        module = types.ModuleType(name)
        module.__file__ = path
        module.__dict__["__builtins__"] = self.builtins
        self.modules[name] = module   # before running it, so an import cycle finds it half-made
        text = self.ws.read_text(path) if source is None else source
        exec(compile(text, f"workspace:{path}", "exec"), module.__dict__)
        return module

    def _import(self, name, globals=None, locals=None, fromlist=(), level=0):
        top = name.split(".")[0]
        if level == 0:
            for candidate in (f"{top}.py", f"{top}/__init__.py"):
                try:
                    self.ws.read_text(candidate)
                except OSError:         # not a file on this disk: try the next, then the stdlib
                    continue
                if top not in self.modules:
                    self.load(candidate, top)
                return self.modules[top]
        return builtins.__import__(name, globals, locals, fromlist, level)

    def _print(self, *args, sep=" ", end="\n", file=None, flush=False):
        builtins.print(*args, sep=sep, end=end, file=self.out if file is None else file)

    def _input(self, prompt=""):
        self.out.write(str(prompt))
        line = self.stdin.readline()
        if not line:
            raise EOFError("EOF when reading a line")
        return line.rstrip("\n")

    def _open(self, file, mode="r", *args, **kwargs):
        if "b" in mode:
            raise ValueError("this workspace holds text: open it in text mode")
        if "r" in mode and "+" not in mode:
            return io.StringIO(self.ws.read_text(file))
        if mode.startswith("w"):
            self.ws.write_text(file, "")
        elif mode.startswith("x"):
            if self.ws.exists(file):
                raise FileExistsError(17, "File exists", file)
            self.ws.write_text(file, "")
        elif not mode.startswith("a"):
            raise ValueError(f"open(): mode {mode!r} is not available on this workspace")
        return _WorkspaceFile(self.ws, file)

    def frames(self, error: BaseException) -> list[tuple[str, int, str, str]]:
        """(path, line number, function, source line) of each traceback frame in workspace
        code, outermost first."""
        frames = []
        for frame in traceback.extract_tb(error.__traceback__):
            if frame.filename.startswith("workspace:"):
                path = frame.filename[len("workspace:"):]
                frames.append((path, frame.lineno or 0, frame.name, self._line(path, frame.lineno)))
        return frames

    def _line(self, path: str, lineno: int | None) -> str:
        if not lineno or not self.ws.exists(path):
            return ""
        try:
            lines = self.ws.read_text(path).splitlines()
        except OSError:
            return ""
        return lines[lineno - 1].strip() if lineno <= len(lines) else ""

    def traceback(self, error: BaseException) -> str:
        """A traceback in CPython's layout, with only the workspace's frames in it."""
        lines = ["Traceback (most recent call last):\n"]
        for path, lineno, function, source in self.frames(error):
            lines.append(f'  File "{path}", line {lineno}, in {function}\n')
            if source:
                lines.append(f"    {source}\n")
        text = str(error)
        lines.append(f"{type(error).__name__}: {text}\n" if text else f"{type(error).__name__}\n")
        return "".join(lines)


class _WorkspaceFile(io.StringIO):
    """A file opened for writing on the workspace: the text is buffered, and appended to the
    file when it is closed (or leaves its `with` block)."""

    def __init__(self, ws: Workspace, path: str):
        super().__init__()
        self._ws, self._path = ws, path

    def close(self) -> None:
        if not self.closed:
            text = self.getvalue()
            super().close()
            if text:
                self._ws.append_text(self._path, text)
