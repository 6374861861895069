"""The base class of a lab's tests: `import lab`, then `class Lab1(lab.LabCase)`.

A lab test is read by a learner, not by the person who wrote it, so a failure must be one
sentence about their code. unittest's defaults work against that: it appends its own
"a != b" line to the test's message (longMessage) and cuts long differences short (maxDiff).
And an exception raised by the reader's code would end the test as an ERROR with a traceback
into the test file; `call` turns it into a plain FAIL that names what raised and why.
"""

from __future__ import annotations

import unittest
from typing import Any, Callable

__all__ = ["LabCase"]


class LabCase(unittest.TestCase):
    """A TestCase whose failures are the test's own sentences, whole."""

    longMessage = False
    maxDiff = None

    def call(self, what: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """function(*args, **kwargs), or a FAIL that says `what` raised, and what it raised."""
        try:
            return function(*args, **kwargs)
        except Exception as error:
            self.fail(f"{what} raised {type(error).__name__}: {error}")
