"""Run one cell of a lesson, exactly as the build runs it and exactly as the page runs it.

The build runs every cell through `run_cell` under CPython and records what it printed; the page's
worker runs the same file in Pyodide. Both must print the same text, so everything that could
differ between two runs is fixed here: a fresh namespace, fresh imports of `lab` and `harness`,
stdout and stderr captured as one stream, and tracebacks printed in one stable layout (no carets,
no absolute paths) whatever the Python version. Standard library only.
"""
from __future__ import annotations

import ast
import builtins
import functools
import importlib.abc
import importlib.machinery
import importlib.util
import io
import linecache
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

__all__ = ["CellResult", "run_cell", "main"]

HARNESS_NAME = "harness.py"        # how harness frames are named in a traceback
OUTPUT_CAP = 200_000               # characters of a cell's output kept; the rest is only counted


def cap_note(dropped: int, cap: int = OUTPUT_CAP) -> str:
    """The line that ends a capped output: where it stopped and how much was not kept."""
    return "[Output stopped at {:,} characters: {:,} more were not kept.]\n".format(cap, dropped)


@dataclass
class CellResult:
    """What a cell printed (stdout and stderr interleaved, a traceback included), and the last
    line of its exception, or None when it ran to the end. `dropped`: how many characters it
    printed past OUTPUT_CAP, counted and not kept (the output then says so in its last line)."""

    output: str
    error: str | None = None
    dropped: int = 0


class _Stream(io.TextIOBase):
    """stdout and stderr both: one buffer in print order, and an optional callback per write so
    the page can show output while the cell is still running.

    The buffer keeps the first `cap` characters and counts the rest: a cell printing 100 MB
    costs the cap, not 100 MB (and, in the page, not 100 MB sent to the worker's JavaScript).
    The callback is given only what is kept. The traceback a cell ends in is kept whatever the
    cap (`end`), after the note, so a flood never hides why a cell failed."""

    def __init__(self, write: Callable[[str], object] | None, cap: int | None = None,
                 flush: Callable[[], object] | None = None) -> None:
        self.parts: list[str] = []
        self.callback = write
        self.on_flush = flush
        self.cap = OUTPUT_CAP if cap is None else cap
        self.kept = 0
        self.dropped = 0
        self.tail = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        size = len(text)
        if self.kept >= self.cap:       # the common case of a flood: count it and move on
            self.dropped += size
            return size
        room = self.cap - self.kept
        if len(text) > room:
            self.dropped += len(text) - room
            text = text[:room]
        if text:
            self.parts.append(text)
            self.kept += len(text)
            if self.callback is not None:
                self.callback(text)
        return size

    def flush(self) -> None:
        """print(..., flush=True) and sys.stdout.flush() land here: the page is told to show what
        it has been sent so far now, instead of at its next batch (a word printed as a reply
        streams must not wait for the next one)."""
        if self.on_flush is not None:
            self.on_flush()

    def end(self, text: str) -> None:
        """The cell's closing words (its traceback): kept past the cap."""
        self.tail += text
        if self.callback is not None:
            self.callback(text)

    def getvalue(self) -> str:
        text = "".join(self.parts)
        if self.dropped:
            text += ("" if not text or text.endswith("\n") else "\n") + cap_note(self.dropped, self.cap)
        return text + self.tail


class _HarnessFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves `import harness` to the file at `path`, named "harness.py" in tracebacks.

    Loading on import (not before the cell starts) means a cell that never imports harness is not
    hurt by a harness that does not import, and a broken harness fails at the cell's import line."""

    def __init__(self, path: str) -> None:
        self.path = path

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "harness":
            return None
        return importlib.util.spec_from_loader("harness", self, origin=self.path)

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        source = Path(self.path).read_text(encoding="utf-8")
        _remember(HARNESS_NAME, source)
        module.__file__ = self.path
        exec(_compiled(source), module.__dict__)


class _KeptCode(importlib.machinery.SourceFileLoader):
    """The loader of the lab package's modules: it keeps each module's code object, by path and
    source. Every cell imports lab afresh (its modules run again, so no cell sees another's
    state), but compiling the same source again is waste. The codes live in Python's heap, so
    the page's memory snapshot, made after a warm-up cell, carries them compiled."""

    codes: dict[tuple[str, bytes], object] = {}

    def source_to_code(self, data, path, *, _optimize=-1):
        key = (str(path), bytes(data))
        if key not in self.codes:
            self.codes[key] = super().source_to_code(data, path, _optimize=_optimize)
        return self.codes[key]


class _LabFinder(importlib.abc.MetaPathFinder):
    """Finds `lab` and its modules in `lab_dir` as the path finder would, loaded by _KeptCode."""

    def __init__(self, lab_dir: str) -> None:
        self.lab_dir = lab_dir

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "lab" and not fullname.startswith("lab."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path or [self.lab_dir])
        if spec is not None and type(spec.loader) is importlib.machinery.SourceFileLoader:
            spec.loader = _KeptCode(spec.loader.name, spec.loader.path)
        return spec


@functools.lru_cache(maxsize=8)
def _compiled(source: str):
    """The harness's code object. A module is run afresh for every cell, but the same text need
    not be compiled again: a code object is immutable, and the page runs many cells on one file."""
    return compile(source, HARNESS_NAME, "exec")


def _remember(name: str, source: str) -> None:
    """Put `source` in linecache under `name`, so tracebacks can quote its lines."""
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    linecache.cache[name] = (len(source), None, lines, name)


def _forget_modules() -> None:
    for name in list(sys.modules):
        if name in ("lab", "harness") or name.startswith(("lab.", "harness.")):
            del sys.modules[name]


def _display_name(filename: str, lab_dir: str) -> str:
    """A frame's file as the reader should see it: lab/x.py, not /tmp/.../lab/x.py."""
    try:
        relative = Path(filename).resolve().relative_to(Path(lab_dir).resolve())
    except (ValueError, OSError):
        return filename
    return relative.as_posix()


def _asyncio_folder() -> str:
    import asyncio
    return str(Path(asyncio.__file__).parent)


def _format_frames(tb, lab_dir: str, skip: str, cell: str | None = None) -> list[str]:
    frames = list(_walk(tb))
    # Everything before the cell's first frame is what ran the cell (cellrun, and for a cell that
    # awaits, the loop in lab/timers.py): not the reader's.
    outer = next((k for k, (frame, _) in enumerate(frames) if frame.f_code.co_filename == cell),
                 None)
    if outer is not None:
        frames = frames[outer:]
    machinery = _asyncio_folder()
    lines = []
    for frame, lineno in frames:
        code = frame.f_code
        if (code.co_filename == skip or code.co_filename.startswith("<frozen importlib")
                or str(Path(code.co_filename).parent) == machinery):
            continue        # cellrun's, the import system's, asyncio's frames: not the reader's
        name = _display_name(code.co_filename, lab_dir)
        text = linecache.getline(code.co_filename, lineno, frame.f_globals).strip()
        lines.append(f'  File "{name}", line {lineno}, in {code.co_name}\n')
        if text:
            lines.append(f"    {text}\n")
    return lines


def _walk(tb):
    while tb is not None:
        yield tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next


def _format_exception(error: BaseException, lab_dir: str, seen: set[int] | None = None,
                      cell: str | None = None) -> str:
    """CPython's layout, chained exceptions included, without the version-dependent carets.
    Frames inside asyncio are left out: they differ from one Python to the next."""
    import traceback

    seen = seen if seen is not None else set()
    seen.add(id(error))
    text = ""
    cause, context = error.__cause__, error.__context__
    if cause is not None and id(cause) not in seen:
        text += _format_exception(cause, lab_dir, seen, cell)
        text += "\nThe above exception was the direct cause of the following exception:\n\n"
    elif context is not None and not error.__suppress_context__ and id(context) not in seen:
        text += _format_exception(context, lab_dir, seen, cell)
        text += "\nDuring handling of the above exception, another exception occurred:\n\n"
    frames = _format_frames(error.__traceback__, lab_dir, __file__, cell)
    if frames:
        text += "Traceback (most recent call last):\n" + "".join(frames)
    text += "".join(traceback.format_exception_only(type(error), error))
    return text


def _run_code(source: str, name: str, namespace: dict) -> None:
    """Run the cell. A cell may `await` at its top level (lesson 15 on): compiled so, it is a
    coroutine, and it runs to its end on the book's simulated-clock loop (lab/timers.py), the same
    loop in CPython and in Pyodide, so its output is the same text in both."""
    code = compile(source, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    coroutine = eval(code, namespace)
    if coroutine is not None:           # only a cell with a top-level await gives one
        from lab import timers          # the cell's own fresh `lab`, found by _LabFinder
        timers.run(coroutine)


def run_cell(source: str, *, harness_path: str, lab_dir: str, name: str = "cell",
             write: Callable[[str], object] | None = None,
             flush: Callable[[], object] | None = None) -> CellResult:
    """Run `source` as a fresh `__main__`, with `import harness` giving the file at
    `harness_path` and `import lab` the package inside the folder `lab_dir`.

    `name` is the cell's file name in tracebacks ("cell, line N"). `write`, if given, is called
    with each piece of output as it is printed, and `flush`, if given, each time the cell flushes
    its output (print(..., flush=True)). The exception a cell ends in is printed into the
    output as CPython would print it, and its last line is returned as `error`."""
    stream = _Stream(write, flush=flush)
    finders = [_HarnessFinder(str(harness_path)), _LabFinder(str(lab_dir))]
    saved = sys.stdout, sys.stderr, sys.stdin, list(sys.path)
    _forget_modules()
    sys.path.insert(0, str(lab_dir))
    sys.meta_path[:0] = finders
    sys.stdout = sys.stderr = stream
    sys.stdin = io.StringIO("")
    _remember(name, source)
    namespace = {"__name__": "__main__", "__builtins__": builtins, "__file__": name}
    error = None
    try:
        _run_code(source, name, namespace)
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            stream.end(_format_exception(exit_, str(lab_dir), cell=name))
            error = f"SystemExit: {exit_.code}"
    except BaseException as exc:  # noqa: BLE001 - a cell's failure is its output, whatever it is
        stream.end(_format_exception(exc, str(lab_dir), cell=name))
        error = "".join(__import__("traceback").format_exception_only(type(exc), exc)).strip()
        error = error.splitlines()[-1] if error else type(exc).__name__
    finally:
        for handle in (sys.stdout, sys.stderr):
            try:
                handle.flush()
            except Exception:  # noqa: BLE001 - a cell may have replaced them with anything
                pass
        sys.stdout, sys.stderr, sys.stdin = saved[0], saved[1], saved[2]
        sys.path[:] = saved[3]
        for finder in finders:
            if finder in sys.meta_path:
                sys.meta_path.remove(finder)
    return CellResult(output=stream.getvalue(), error=error, dropped=stream.dropped)


def main(argv: list[str] | None = None) -> int:
    """`python cellrun.py --harness H --lab-dir D FILE.py`: run FILE as a cell and print what it
    printed. Exit 1 when it ended in an exception."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--harness", required=True)
    parser.add_argument("--lab-dir", required=True)
    parser.add_argument("file")
    args = parser.parse_args(argv)
    result = run_cell(Path(args.file).read_text(encoding="utf-8"), harness_path=args.harness,
                      lab_dir=args.lab_dir)
    sys.stdout.write(result.output)
    return 1 if result.error else 0


if __name__ == "__main__":
    sys.exit(main())
