"""A small shell over a Workspace, for the `bash` tool.

A real shell in a web page is out of reach, and a real shell at home would make every run
different. Shell(ws) understands the few commands the book's models ask for, over the in-memory
disk, and answers the way bash would, output and exit code:

    ls [path ...]          names, one per line, sorted            cat file ...
    echo [-n] words        with > file and >> file                  pwd, true, false, exit [n]
    seq [first] last       numbers, one per line (long output for budget lessons)
    head/tail [-n N] [file], wc -l [file], grep [-c] pattern [file]   also reading a pipe
    pytest [path ...]      runs the test files on the disk (see Shell.pytest)
    a | b, a && b, a || b, a ; b

Anything else is "bash: <name>: command not found", exit code 127, as in bash. Quoting follows the
shell's rules (shlex). There is one directory, the workspace, and no cd: the model is told so by
the error it gets.
"""

from __future__ import annotations

import builtins
import posixpath
import re
import shlex
import sys
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
        data, code = "", 0
        for stage in stages:
            if not stage:
                out.append("bash: syntax error near unexpected token `|'\n")
                return 2
            data, err, code = self._simple(stage, data)
            out.append(err)
        out.append(data)
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
        if target is not None:
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
        there were no tests, as pytest's."""
        files = self._test_files(args or [])
        lines: list[str] = []
        passed = failed = errors = 0
        results: list[str] = []
        for path in files:
            modules: dict[str, types.ModuleType] = {}
            try:
                module = self._load(path, "__test__", modules)
            except Exception as error:   # a test file that does not import
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
                except Exception as error:
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
            for frame in reversed(traceback.extract_tb(error.__traceback__)):
                if frame.filename.startswith("workspace:"):
                    source = self._line(frame.filename[len("workspace:"):], frame.lineno)
                    if source:
                        return f"AssertionError: {source}"
        return message

    def _line(self, path: str, lineno: int | None) -> str:
        if lineno is None or not self.ws.exists(path):
            return ""
        lines = self.ws.read_text(path).splitlines()
        return lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""

    def _load(self, path: str, name: str, modules: dict) -> types.ModuleType:
        """Execute the workspace file `path` as the module `name`. Imports inside it look on the
        disk first (cached in `modules` for this run only: nothing enters sys.modules), then fall
        back to the ordinary import."""
        module = types.ModuleType(name)
        module.__file__ = path
        real_import = builtins.__import__
        shell = self

        def workspace_import(mod, globals=None, locals=None, fromlist=(), level=0):
            top = mod.split(".")[0]
            if level == 0 and mod not in sys.builtin_module_names:
                for candidate in (f"{top}.py", f"{top}/__init__.py"):
                    if candidate in shell.ws.files:
                        if top not in modules:
                            shell._load(candidate, top, modules)
                        return modules[top]
            return real_import(mod, globals, locals, fromlist, level)

        env = dict(vars(builtins))
        env["__import__"] = workspace_import
        module.__dict__["__builtins__"] = env
        modules[name] = module   # before running it, so an import cycle finds it half-made
        code = compile(self.ws.read_text(path), f"workspace:{path}", "exec")
        exec(code, module.__dict__)
        return module
