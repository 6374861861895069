"""The base class of a lab's tests: `import lab`, then `class Lab1(lab.LabCase)`.

A lab test is read by a learner, not by the person who wrote it, so a failure must be one
sentence about their code. unittest's defaults work against that: it appends its own
"a != b" line to the test's message (longMessage) and cuts long differences short (maxDiff).
And an exception raised by the reader's code would end the test as an ERROR with a traceback
into the test file; `call` turns it into a plain FAIL that names what raised and why.

Two more things a lab about a loop needs: `capped(model)`, a model that raises TooManyCalls past a
number of calls, so a runaway fails its test instead of hanging it; and `drain(run)`, a run's
events or the exception that ended it, so the test can say which.
"""

from __future__ import annotations

import unittest
from typing import Any, Callable

from .timers import steps

__all__ = ["LabCase", "TooManyCalls", "Capped", "CappedStream", "capped", "drain"]


class LabCase(unittest.TestCase):
    """A TestCase whose failures are the test's own sentences, whole."""

    longMessage = False
    maxDiff = None

    def call(self, what: str, function: Callable[..., Any], *args: Any, hint: str = "",
             **kwargs: Any) -> Any:
        """function(*args, **kwargs), or a FAIL that says `what` raised, what it raised, and
        `hint`, what to do instead, when the test knows it."""
        try:
            return function(*args, **kwargs)
        except Exception as error:
            self.fail(f"{what} raised {type(error).__name__}: {error}" + (f". {hint}" if hint else ""))


class TooManyCalls(RuntimeError):
    """Raised by a capped model: the harness under test kept calling it."""


class Capped:
    """A model that stops a runaway: past `cap` calls it raises TooManyCalls, so a harness that
    retries for ever fails its test at once instead of hanging it. Made by `capped`."""

    def __init__(self, model: Any, cap: int = 12):
        self.model, self.cap = model, cap

    @property
    def calls(self) -> list:
        return self.model.calls

    def _allow(self) -> None:
        if len(self.model.calls) >= self.cap:
            raise TooManyCalls(f"the model was called more than {self.cap} times")

    def complete(self, system: str, messages: list, tools: list | None = None) -> dict:
        self._allow()
        return self.model.complete(system, messages, tools)


class CappedStream(Capped):
    """A capped model that streams too. Apart from Capped because lesson 14's loop streams any
    model that has stream(): a capped whole-reply model must not seem to have one."""

    def stream(self, system: str, messages: list, tools: list):
        self._allow()
        return self.model.stream(system, messages, tools)


def capped(model: Any, cap: int = 12) -> Capped:
    """`model` stopped past `cap` calls, streaming if and only if `model` streams."""
    return (CappedStream if hasattr(model, "stream") else Capped)(model, cap)


def drain(run: Any) -> tuple[list, BaseException | None]:
    """Every event of a run, sync or async (lab.steps), or the exception that ended it, as
    (events, error): the test then says in a sentence what went wrong."""
    events = []
    try:
        for event in steps(run):
            events.append(event)
    except Exception as error:   # the test says what it was
        return events, error
    return events, None
