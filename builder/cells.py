"""Stage 3, execute: run every cell of a lesson under CPython and prove what the page will show.

The cells of one lesson run in one fresh subprocess (builder/cellhost.py), one after another,
each through harness_py/cellrun.py with the lesson's reference harness as `harness` and our `lab`
package, the same function the page's worker calls. The output recorded here is the output the
page shows. A declared ```output that differs, an exception in a cell not marked `raises`, a
`raises` cell that finished, or a cell over its timeout stops the build at the cell's line."""
from __future__ import annotations

import difflib
import json
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from .errors import BuildError
from .names import CELL_NAME
from .project import Project
from .source import Cell

STARTUP = 10.0          # seconds the host may take to start, on top of the first cell's timeout
CELL_FRAME = re.compile(rf'^  File "{re.escape(CELL_NAME)}", line (\d+)', re.M)


class ProcessDied(Exception):
    """The cell process ended while cell `args[0]` ran (os._exit, a crash); args[1] is its stderr."""


@dataclass
class Recorded:
    """What a cell printed at build time, and the last line of its exception (or None)."""

    output: str
    error: str | None


class Sandbox:
    """A folder laid out as a reader's lab folder: harness.py and lab/. Cells run inside it."""

    def __init__(self, project: Project, harness_text: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="book-cells-"))
        shutil.copytree(project.lab_package, self.dir / "lab",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        self.harness = self.dir / "harness.py"
        self.harness.write_text(harness_text, encoding="utf-8")

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _pump(stream, lines: queue.Queue) -> None:
    """Move the host's result lines into a queue, so the reader can wait with a timeout."""
    for line in stream:
        lines.put(line)
    lines.put(None)


def run_sources(project: Project, harness_text: str,
                cells: list[tuple[str, str, float]]) -> dict[str, Recorded]:
    """Run [(id, source, timeout)] in one subprocess, in order; {id: Recorded}.

    Raises TimeoutError(id) when a cell runs past its timeout (the process is killed), and
    ProcessDied(id, stderr) when a cell ends the process itself."""
    results: dict[str, Recorded] = {}
    if not cells:
        return results
    with Sandbox(project, harness_text) as box:
        request = {"cellrun": str(project.cellrun), "harness": str(box.harness), "name": CELL_NAME,
                   "lab_dir": str(box.dir), "cells": [{"id": i, "source": s} for i, s, _ in cells]}
        process = subprocess.Popen([sys.executable, "-X", "utf8", str(Path(__file__).with_name("cellhost.py"))],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, cwd=box.dir, text=True, encoding="utf-8")
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True).start()
        try:
            process.stdin.write(json.dumps(request))
            process.stdin.close()
            for n, (cell_id, _, timeout) in enumerate(cells):
                try:
                    line = lines.get(timeout=timeout + (STARTUP if n == 0 else 0))
                except queue.Empty:
                    raise TimeoutError(cell_id) from None
                if line is None:
                    process.wait(timeout=5)
                    raise ProcessDied(cell_id, process.stderr.read()[-2000:].strip())
                data = json.loads(line)
                results[data["id"]] = Recorded(data["output"], data["error"])
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
            process.stdout.close()
            process.stderr.close()
    return results


def execute(project: Project, rel: str, harness_text: str, cells: list[Cell]) -> dict[str, Recorded]:
    """Run the cells of one lesson and check each against what its source declares."""
    try:
        results = run_sources(project, harness_text, [(c.id, c.source, c.timeout) for c in cells])
    except TimeoutError as error:
        cell = next(c for c in cells if c.id == error.args[0])
        raise BuildError(rel, cell.line, f"cell {cell.id} timed out after {cell.timeout:g} s "
                                         f"(give it timeout=S if it needs longer)") from None
    except ProcessDied as error:
        cell = next(c for c in cells if c.id == error.args[0])
        raise BuildError(rel, cell.line, f"cell {cell.id} ended the Python process it ran in "
                                         f"(a cell must return, or raise)", error.args[1]) from None
    for cell in cells:
        verify(rel, cell, results[cell.id])
    return results


def _exception_line(cell: Cell, output: str) -> int:
    frames = CELL_FRAME.findall(output)
    return cell.line + int(frames[-1]) if frames else cell.line


def verify(rel: str, cell: Cell, recorded: Recorded) -> None:
    """The three promises a cell's source makes: it raises or not, as marked, and it prints what
    its ```output says."""
    tail = "\n".join(recorded.output.rstrip("\n").splitlines()[-12:])
    if recorded.error and not cell.raises:
        raise BuildError(rel, _exception_line(cell, recorded.output),
                         f"cell {cell.id} raised {recorded.error} (mark the cell `raises` if it "
                         f"is meant to)", tail)
    if cell.raises and not recorded.error:
        raise BuildError(rel, cell.line, f"cell {cell.id} is marked `raises` and did not raise", tail)
    if cell.expected is None:
        return
    want = cell.expected.rstrip("\n").splitlines()
    got = recorded.output.rstrip("\n").splitlines()
    if want == got:
        return
    first = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    diff = list(difflib.unified_diff(want, got, "declared", "printed", n=1, lineterm=""))
    detail = "\n".join(diff[:30] + (["..."] if len(diff) > 30 else []))
    raise BuildError(rel, cell.expected_line + 1 + first, "cell output differs", detail)
