"""A model that streams, the faults a real stream has, and the bytes it comes in.

Lesson 14's props. Until now a reply came back whole from complete(). A real provider sends it in
pieces, as the model writes it. `StreamingModel` is a ScriptedModel that can do both: the same
steps, the same replies, and also

    model.stream(system, messages, tools) -> iterator of stream events

where each event is a plain dict (the book's stream events):

    {"type": "text", "text": "Port "}                          a piece of the reply's text
    {"type": "call", "index": 0, "id": "c1", "name": "read"}   tool call 0 of the reply starts
    {"type": "arguments", "index": 0, "json": '{"path":'}      a piece of call 0's arguments,
                                                               as JSON text, not JSON on its own
    {"type": "end", "stop_reason": "toolUse", "usage": {...}}  the reply is complete
    {"type": "error", "message": "529 overloaded_error: Overloaded"}

How a reply is cut (`pieces`): text word by word (a word with the spaces after it), the arguments
of a call ARGUMENT_PIECE characters of JSON at a time, so a piece often ends inside a string or a
number. A failed reply (provider_error) is one error event. The cutting is a rule, not chance:
the same reply gives the same pieces in every process.

The request is made when the stream is first read, not when stream() is called: a real client
sends it when you start reading the response. So a raises() or power_cut() step raises at the
first next().

Faults a stream has and a whole reply does not, as steps wrapped round any other step:
    drop(step, after)                   `after` pieces arrive, then the connection drops: the
                                        stream raises ConnectionError("connection reset by peer")
    no_end(step, after=None)            the pieces (all, or the first `after`) arrive, then the
                                        stream stops with no end event and no error
    error_event(step, after, message=OVERLOADED)
                                        `after` pieces, then an error event: a provider that
                                        fails after it has started to answer
complete() on a fault step answers as a whole-reply client would: drop and no_end raise
ConnectionError, error_event returns provider_error(message).

The bytes (for read_sse, the harness's reader of server-sent events):
    sse(events, newline="\\n") -> bytes      events as server-sent events, UTF-8
    chunks(data, at) -> list[bytes]        `data` cut at byte offsets: a network hands you
                                           chunks that may end anywhere, in a character too

Standard library only; deterministic in CPython and Pyodide.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from .messages import provider_error, validate
from .model import Request, ScriptedModel, ScriptExhausted, _Forever

__all__ = ["StreamingModel", "pieces", "drop", "no_end", "error_event", "OVERLOADED",
           "ARGUMENT_PIECE", "sse", "chunks"]

ARGUMENT_PIECE = 8      # characters of a call's JSON arguments in one piece
OVERLOADED = "529 overloaded_error: Overloaded"
DROPPED = "connection reset by peer"

_WORD = re.compile(r"\s*\S+\s*|\s+")


def pieces(reply: dict) -> list[dict]:
    """The stream events that send `reply`, in order, the final one included: for each content
    block, its text word by word, or a call event and its JSON arguments ARGUMENT_PIECE
    characters at a time; then the end event with the reply's stop_reason and usage. A failed
    reply (stop_reason "error") is sent as one error event carrying its error_message."""
    if reply.get("stop_reason") == "error":
        return [{"type": "error", "message": reply.get("error_message") or "error"}]
    events: list[dict] = []
    index = 0
    for block in reply.get("content") or []:
        if block.get("type") == "text":
            events += [{"type": "text", "text": word} for word in _WORD.findall(block["text"])]
        elif block.get("type") == "toolCall":
            events.append({"type": "call", "index": index, "id": block["id"],
                           "name": block["name"]})
            text = json.dumps(block["arguments"], ensure_ascii=False)
            events += [{"type": "arguments", "index": index, "json": text[k:k + ARGUMENT_PIECE]}
                       for k in range(0, len(text), ARGUMENT_PIECE)]
            index += 1
    events.append({"type": "end", "stop_reason": reply.get("stop_reason", "stop"),
                   "usage": reply.get("usage", {})})
    return events


@dataclass(frozen=True)
class _Fault:
    """A step whose stream breaks: `kind` is "drop", "no_end" or "error"."""
    step: Any
    kind: str
    after: int | None
    message: str = ""

    def whole(self, reply: dict) -> dict:
        """What complete() gives for this step: a whole-reply client sees the same failure."""
        if self.kind == "error":
            return {"role": "assistant", "content": [], "stop_reason": "error",
                    "error_message": self.message, "usage": {"input": 0, "output": 0}}
        raise ConnectionError(DROPPED)

    def send(self, events: list[dict]) -> Iterator[dict]:
        """The events of the reply up to the fault, then the fault."""
        body = [e for e in events if e["type"] not in ("end", "error")]
        yield from body if self.after is None else body[:self.after]
        if self.kind == "drop":
            raise ConnectionError(DROPPED)
        if self.kind == "error":
            yield {"type": "error", "message": self.message}


def _count(after: Any, name: str) -> int:
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        raise ValueError(f"lab.{name}: after={after!r} must be a whole number of pieces, 0 or more")
    return after


def drop(step: Any, after: int) -> _Fault:
    """A step whose connection drops after `after` pieces of its reply (all of them, if it has
    fewer): the stream raises ConnectionError("connection reset by peer") and never ends."""
    return _Fault(step, "drop", _count(after, "drop"))


def no_end(step: Any, after: int | None = None) -> _Fault:
    """A step whose stream stops without an end event: every piece of the reply (or the first
    `after`) arrives, then the iterator is simply exhausted. No error, no stop_reason."""
    return _Fault(step, "no_end", None if after is None else _count(after, "no_end"))


def error_event(step: Any, after: int, message: str = OVERLOADED) -> _Fault:
    """A step whose provider fails after `after` pieces: they arrive, then an error event with
    `message`, in the provider's words."""
    return _Fault(step, "error", _count(after, "error_event"), message)


class StreamingModel(ScriptedModel):
    """ScriptedModel(steps) that can also stream: stream(system, messages, tools) sends the same
    reply complete() would, as stream events (see `pieces`). Every request is recorded in
    `calls`, streamed or not, and uses up one step. Fault steps (drop, no_end, error_event)
    break a stream the ways a network and a provider do. pace=0.05 waits that many seconds
    before each event, as a model writing does; what is sent does not change."""

    def _answer(self, system: str, messages: list, tools: list | None) -> tuple[dict, Any]:
        """Record one request and answer it, as complete() does: (the reply, the fault of its
        step or None)."""
        request = Request.made(type(self).__name__, system, messages, tools, len(self.calls) + 1)
        self.calls.append(request)
        if self.check:
            problems = validate(request.messages)
            if problems:
                reply = provider_error(f"400 invalid transcript: {problems[0]}")
                return self._finish(request, reply), None
        if self._next >= len(self.steps):
            n = len(self.steps)
            raise ScriptExhausted(
                f"StreamingModel: model call {request.number} has no step: the script has {n} "
                f"step{'s' if n != 1 else ''}, {'all used' if n else 'so none to use'}. Add "
                "steps, or end the script with lab.forever(...).")
        step = self.steps[self._next]
        if isinstance(step, _Forever):
            step = step.step
        else:
            self._next += 1
        if callable(step) and not isinstance(step, (type, _Fault)):
            step = step(request)
            if isinstance(step, _Forever):
                step = step.step
        fault = None
        if isinstance(step, _Fault):
            fault, step = step, step.step
        return self._finish(request, self._perform(step, request)), fault

    def __init__(self, steps: Iterable[Any], *, check: bool = False, pace: float = 0.0):
        super().__init__(steps, check=check)
        if isinstance(pace, bool) or not isinstance(pace, (int, float)) or not 0 <= pace <= 1:
            raise ValueError(f"StreamingModel: pace={pace!r} must be seconds, from 0 to 1")
        self.pace = pace

    def complete(self, system: str, messages: list, tools: list | None = None) -> dict:
        reply, fault = self._answer(system, messages, tools)
        return fault.whole(reply) if fault else reply

    def stream(self, system: str, messages: list, tools: list | None = None) -> Iterator[dict]:
        """The reply to this request, as stream events. A generator: the request is made, and a
        raises() or power_cut() step raises, at the first next()."""
        reply, fault = self._answer(system, messages, tools)
        events = fault.send(pieces(reply)) if fault else iter(pieces(reply))
        for event in events:
            if self.pace:
                time.sleep(self.pace)       # a model writing: the page shows each piece arrive
            yield event

    def __repr__(self) -> str:
        return f"StreamingModel({len(self.steps)} steps, {len(self.calls)} calls)"


# -- bytes ------------------------------------------------------------------------------------


def sse(events: Iterable[dict | str], newline: str = "\n") -> bytes:
    """`events` written as server-sent events, in UTF-8. Each event is {"event": name or None,
    "data": text}: an `event:` line if it has a name, one `data:` line per line of its data, and
    a blank line. A plain string is written as a comment line (`: text`), which readers skip.
    `newline` is "\\n", "\\r\\n" or "\\r": the format allows all three."""
    if newline not in ("\n", "\r\n", "\r"):
        raise ValueError(f"lab.sse: newline={newline!r} must be '\\n', '\\r\\n' or '\\r'")
    out = []
    for event in events:
        if isinstance(event, str):
            out.append(f": {event}{newline}")
            continue
        if event.get("event") is not None:
            out.append(f"event: {event['event']}{newline}")
        for line in str(event.get("data", "")).split("\n"):
            out.append(f"data: {line}{newline}")
        out.append(newline)
    return "".join(out).encode("utf-8")


def chunks(data: bytes, at: Iterable[int] | str) -> list[bytes]:
    """`data` cut into chunks at the byte offsets `at` (in any order; 0 and len(data) are
    allowed and cut nothing), or at="every byte": one byte a chunk. A cut may fall inside a
    line, or inside a character that UTF-8 writes as two bytes or more."""
    if at == "every byte":
        return [data[k:k + 1] for k in range(len(data))]
    if isinstance(at, str):
        raise ValueError(f"lab.chunks: at={at!r}; give byte offsets, or 'every byte'")
    offsets = sorted(set(at))
    for offset in offsets:
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= len(data):
            raise ValueError(f"lab.chunks: offset {offset!r} is outside 0..{len(data)}")
    bounds = [0] + [k for k in offsets if 0 < k < len(data)] + [len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:])]
