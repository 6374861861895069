"""The one kind of error a build stops on: a place in a source and what is wrong there.

Every stage raises BuildError instead of printing, so that `build.py` can report it in one format,
`lessons/<file>:<line>: <what is wrong>`, and exit 1 before anything is written. A tool that fails
(Node, esbuild, npm's files) raises a ToolError, which `build.py` and `make serve` say in one line
too."""
from __future__ import annotations


class ToolError(Exception):
    """A tool the build runs could not do its part (npm's files, Node, esbuild, the zip): not a
    place in a source, so no line; the message says what is missing and what to run."""


class BuildError(Exception):
    """A problem in a source file, at a line (1-based; 0 when the problem is the file itself)."""

    def __init__(self, path: str, line: int, message: str, detail: str = "") -> None:
        self.path, self.line, self.message, self.detail = path, line, message, detail
        super().__init__(str(self))

    def __str__(self) -> str:
        place = f"{self.path}:{self.line}" if self.line else self.path
        text = f"{place}: {self.message}"
        return f"{text}\n{self.detail}" if self.detail else text
