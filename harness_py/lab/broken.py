"""Checkpoint B's seven records, built again for the cells that answer a record's question.

Each record's first cell on the page builds it in the open: a run broken on purpose, or a list
written by hand. The cells that come after it want that same record and not the code again, so
they ask for it here: broken_record(n, harness). The code below is the code of record n's first
cell, line for line in what it does, so the record it gives is the one that cell printed.

    broken_record(n, harness, then=()) -> Broken
        n: 1 to 7; harness: the reader's module (lab never imports a harness of its own);
        then: more model steps, after record n's own, for a cell that goes on talking to a
        record made by a run (5, 6, 7).
    Broken.record   the record, a list of messages (for 5, 6, 7: the harness's transcript)
    Broken.harness  the Harness that wrote it (None for a record written by hand)
    Broken.model    its ScriptedModel (None for a record written by hand)
    Broken.ws       its Workspace (None when it had none)
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any, Iterable

from .messages import call, provider_error, reply, say, text, tool_result, user
from .model import ScriptedModel
from .workspace import Workspace

__all__ = ["Broken", "broken_record"]


@dataclass
class Broken:
    """One of checkpoint B's records, and what made it."""
    record: list
    harness: Any = None
    model: Any = None
    ws: Any = None


def _drain(run: Iterable) -> None:
    for _ in run:
        pass


def _record_1(harness: ModuleType, then: list) -> Broken:
    # Saved by a harness that runs a batch's calls side by side and saves each result as it
    # finishes: s2 finished first.
    size = call("bash", {"command": "du -sh ."}, id="s1")
    status = call("bash", {"command": "git status --short"}, id="s2")
    return Broken([user("How big is the repo, and what changed?"),
                   reply(size, status),
                   tool_result(status, " M app.py\n"),
                   tool_result(size, "4.2M\t.\n"),
                   user("Which file changed?")])


def _record_2(harness: ModuleType, then: list) -> Broken:
    a = call("read", {"path": "a.py"}, id="r1")
    b = call("read", {"path": "b.py"}, id="r2")
    return Broken([user("Compare a.py and b.py."),
                   reply(a, b),
                   tool_result(a, "X = 1\n"),
                   user("Ignore the comments."),
                   tool_result(b, "X = 2  # old\n")])


def _record_3(harness: ModuleType, then: list) -> Broken:
    pytest = call("bash", {"command": "pytest -q"}, id="t1")
    return Broken([user("Run the tests."),
                   reply(pytest),
                   tool_result(pytest, harness.INTERRUPTED, is_error=True),
                   tool_result(pytest, "2 passed in 0.03s\n"),
                   user("Did they pass?")])


def _record_4(harness: ModuleType, then: list) -> Broken:
    read = call("read", {"path": "config.py"}, id="c1")
    gone = call("bash", {"command": "curl -u admin:s3cret localhost:9090"}, id="c2")
    return Broken([user("Which port, and is the server up?"),
                   reply(read),
                   tool_result(read, "PORT = 9090\n"),
                   tool_result(gone, "curl: (7) Connection refused\n"),
                   say("Port 9090, and the server is down.")])


def _record_5(harness: ModuleType, then: list) -> Broken:
    ws = Workspace({"notes.md": "Ship on Friday.\n"})
    read = call("read", {"path": "notes.md"}, id="n1")
    model = ScriptedModel([reply(read), provider_error("529 overloaded"), *then])
    h = harness.Harness(model, harness.SYSTEM, [harness.make_read_tool(ws)])
    for event in h.prompt("When do we ship?"):
        if event["type"] == "agent_start":
            h.follow_up("And tell Sam.")
    return Broken(list(h.messages), h, model, ws)


def _record_6(harness: ModuleType, then: list) -> Broken:
    ws = Workspace()
    write = harness.make_write_tool(ws)
    plain = write["execute"]

    def execute(arguments: dict) -> Any:
        said = plain(arguments)
        if arguments["path"] == "b.py":
            raise KeyboardInterrupt
        return said

    write["execute"] = execute
    w1 = call("write", {"path": "a.py", "content": "A = 1\n"}, id="w1")
    w2 = call("write", {"path": "b.py", "content": "B = 2\n"}, id="w2")
    model = ScriptedModel([reply(w1, w2), *then])
    h = harness.Harness(model, harness.SYSTEM, [write])
    try:
        _drain(h.prompt("Write a.py and b.py."))
    except KeyboardInterrupt:
        pass
    return Broken(list(h.messages), h, model, ws)


def _record_7(harness: ModuleType, then: list) -> Broken:
    ws = Workspace({"notes.md": "Release on Friday.\nRename the API on Monday.\n"})
    read = call("read", {"path": "notes.md"}, id="m1")
    cut = {**reply(text("Two things are due: the release on Friday, and")),
           "stop_reason": "error", "error_message": "502 bad gateway"}
    model = ScriptedModel([reply(read), cut, *then])
    h = harness.Harness(model, harness.SYSTEM, [harness.make_read_tool(ws)])
    _drain(h.prompt("What is due this week?"))
    return Broken(list(h.messages), h, model, ws)


_RECORDS = {1: _record_1, 2: _record_2, 3: _record_3, 4: _record_4, 5: _record_5, 6: _record_6,
            7: _record_7}


def broken_record(n: int, harness: ModuleType, then: Iterable = ()) -> Broken:
    """Checkpoint B's record n (1 to 7), built as the page's first cell for it builds it, with
    the reader's `harness` module for the records a run writes (5, 6, 7). `then`: model steps
    to add after the record's own, for a cell that goes on with the same harness."""
    if n not in _RECORDS:
        raise ValueError(f"broken_record: checkpoint B has records 1 to {len(_RECORDS)}, not {n!r}")
    return _RECORDS[n](harness, list(then))
