"""A provider on a wire that is not there: recorded exchanges and a transport that plays them.

The closing page's adapters talk HTTP to Anthropic's Messages API and to the OpenAI-compatible
Chat Completions API. A web page has no sockets, and a test must not need a key or a network, so
an adapter takes its transport as an argument, and the stage gives it this one:

    wire = Transport([answer(200, ANTHROPIC_TOOL), answer(529, ANTHROPIC_OVERLOADED)])
    wire("POST", url, headers, body) -> (status, headers, chunks)

Each call takes the next answer, in order, and records what was sent in `wire.requests`
(method, url, headers, and the body parsed back from JSON). The body comes back cut into small
chunks at fixed places (`size` bytes each), so a reader of the bytes meets a line, and a UTF-8
character, split in two. Faults: answer(..., drop_after=N) breaks the connection after N bytes
(ConnectionResetError, from the chunk iterator, as a real socket does); refused() and timed_out()
fail before any answer.

The recorded exchanges below are written from each provider's documentation of its wire
format: Anthropic's Messages API (anthropic-version 2023-06-01) and OpenAI's Chat Completions,
which Ollama, llama.cpp's server and vLLM also speak. Ids and counts are made up; the shapes are
the documented ones. A stream is its server-sent-events text, as it crosses the wire.

Standard library only; nothing here keeps state at module level.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterator

__all__ = [
    "Transport", "Sent", "answer", "refused", "timed_out", "sse_events", "NoAnswer",
    "ANTHROPIC_TEXT", "ANTHROPIC_TOOL", "ANTHROPIC_STREAM_TEXT", "ANTHROPIC_STREAM_TOOL",
    "ANTHROPIC_STREAM_OVERLOADED", "ANTHROPIC_OVERLOADED", "ANTHROPIC_BAD_REQUEST",
    "OPENAI_TEXT", "OPENAI_TOOL", "OPENAI_STREAM_TEXT", "OPENAI_STREAM_TOOLS",
    "OPENAI_RATE_LIMITED", "OPENAI_UNAUTHORIZED",
]


class NoAnswer(RuntimeError):
    """The transport was asked more times than it has answers: a bug in the cell or the test."""


@dataclass(frozen=True)
class _Answer:
    status: int
    body: bytes
    headers: dict
    drop_after: int | None = None


@dataclass(frozen=True)
class _Fails:
    error: BaseException


def answer(status: int, body: Any, headers: dict | None = None, *,
           drop_after: int | None = None) -> _Answer:
    """One HTTP answer: `body` is a dict (sent as JSON), a str (sent as UTF-8: a stream's SSE
    text) or bytes. drop_after=N: the connection breaks after N bytes of the body."""
    if isinstance(body, dict):
        data = json.dumps(body).encode("utf-8")
    elif isinstance(body, str):
        data = body.encode("utf-8")
    else:
        data = bytes(body)
    if drop_after is not None and not 0 <= drop_after <= len(data):
        raise ValueError(f"answer(drop_after={drop_after}): the body is {len(data)} bytes long")
    return _Answer(status, data, {k.lower(): v for k, v in (headers or {}).items()}, drop_after)


def refused() -> _Fails:
    """No answer at all: the connection is refused (nothing listens there)."""
    return _Fails(ConnectionRefusedError(111, "Connection refused"))


def timed_out() -> _Fails:
    """No answer in time: the request times out before a byte comes back."""
    return _Fails(TimeoutError("timed out"))


@dataclass
class Sent:
    """One request as the adapter made it: the body is parsed back from its JSON bytes."""
    method: str
    url: str
    headers: dict
    body: Any


@dataclass
class Transport:
    """Plays `answers` in order, one per request; records each request in `requests`. `size` is
    how many bytes each chunk of a body holds (the last one may hold fewer)."""
    answers: list
    size: int = 7
    requests: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.answers = list(self.answers)
        self._next = 0

    def __call__(self, method: str, url: str, headers: dict, body: bytes):
        try:
            parsed = json.loads(body)
        except (TypeError, ValueError):
            parsed = body
        self.requests.append(Sent(method, url, dict(headers), parsed))
        if self._next >= len(self.answers):
            raise NoAnswer(f"Transport: request {len(self.requests)} has no answer: the script has "
                           f"{len(self.answers)}, all used: the harness sent more requests than this "
                           "exchange has answers for (a retry where none was due, or a request "
                           "sent twice?)")
        step = self.answers[self._next]
        self._next += 1
        if isinstance(step, _Fails):
            raise step.error
        return step.status, dict(step.headers), self._chunks(step)

    def _chunks(self, step: _Answer) -> Iterator[bytes]:
        end = len(step.body) if step.drop_after is None else step.drop_after
        for start in range(0, end, self.size):
            yield step.body[start:min(start + self.size, end)]
        if step.drop_after is not None:
            raise ConnectionResetError(104, "Connection reset by peer")


def sse_events(text: str) -> list[dict]:
    """The events of a whole, well-formed SSE text, {"event": name or None, "data": text}: for a
    test of what an adapter makes of events, apart from how it reads bytes."""
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        event, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            out.append({"event": event, "data": "\n".join(data)})
    return out


def _sse(*events: tuple) -> str:
    """Write events as SSE text: (name, data) with a name, or (data,) for a bare data line."""
    out = []
    for event in events:
        *name, data = event
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name[0]}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out)


# -- Anthropic's Messages API -----------------------------------------------------------------

ANTHROPIC_TEXT = {
    "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "The test fails because add() subtracts."}],
    "stop_reason": "end_turn", "stop_sequence": None,
    "usage": {"input_tokens": 412, "output_tokens": 11, "cache_creation_input_tokens": 0,
              "cache_read_input_tokens": 0},
}

ANTHROPIC_TOOL = {
    "id": "msg_02", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "content": [
        {"type": "text", "text": "Let me read the file."},
        {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"path": "calc.py"}},
    ],
    "stop_reason": "tool_use", "stop_sequence": None,
    "usage": {"input_tokens": 380, "output_tokens": 52, "cache_read_input_tokens": 1200},
}

ANTHROPIC_STREAM_TEXT = _sse(
    ("message_start", {"type": "message_start", "message": {
        "id": "msg_03", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 25, "output_tokens": 1}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0,
                             "content_block": {"type": "text", "text": ""}}),
    ("ping", {"type": "ping"}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": "Fixed: add() "}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": "now adds. ✓"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("message_delta", {"type": "message_delta",
                       "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                       "usage": {"output_tokens": 9}}),
    ("message_stop", {"type": "message_stop"}),
)

ANTHROPIC_STREAM_TOOL = _sse(
    ("message_start", {"type": "message_start", "message": {
        "id": "msg_04", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 472, "output_tokens": 2}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0,
                             "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": "I'll fix it."}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
        "type": "tool_use", "id": "toolu_02", "name": "write", "input": {}}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 1,
                             "delta": {"type": "input_json_delta", "partial_json": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 1,
                             "delta": {"type": "input_json_delta",
                                       "partial_json": "{\"path\": \"calc"}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 1,
                             "delta": {"type": "input_json_delta",
                                       "partial_json": ".py\", \"content\": \"def add(a, b):\\n"}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 1,
                             "delta": {"type": "input_json_delta",
                                       "partial_json": "    return a + b\\n\"}"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 1}),
    ("message_delta", {"type": "message_delta",
                       "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                       "usage": {"output_tokens": 61}}),
    ("message_stop", {"type": "message_stop"}),
)

ANTHROPIC_STREAM_OVERLOADED = _sse(
    ("message_start", {"type": "message_start", "message": {
        "id": "msg_05", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 25, "output_tokens": 1}}}),
    ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
)

ANTHROPIC_OVERLOADED = {"type": "error",
                        "error": {"type": "overloaded_error", "message": "Overloaded"}}

ANTHROPIC_BAD_REQUEST = {"type": "error", "error": {
    "type": "invalid_request_error",
    "message": "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
               "toolu_09. Each `tool_result` block must have a corresponding `tool_use` block "
               "in the previous message."}}


# -- OpenAI-compatible Chat Completions ---------------------------------------------------------

OPENAI_TEXT = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1767225600, "model": "gpt-4.1",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": "The test fails because add() subtracts."}}],
    "usage": {"prompt_tokens": 398, "completion_tokens": 10, "total_tokens": 408},
}

OPENAI_TOOL = {
    "id": "chatcmpl-2", "object": "chat.completion", "created": 1767225601, "model": "gpt-4.1",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "tool_calls": [
            {"id": "call_abc", "type": "function",
             "function": {"name": "read", "arguments": "{\"path\": \"calc.py\"}"}}]}}],
    "usage": {"prompt_tokens": 371, "completion_tokens": 17, "total_tokens": 388},
}


def _chunk(delta: dict, finish: str | None = None) -> dict:
    return {"id": "chatcmpl-3", "object": "chat.completion.chunk", "created": 1767225602,
            "model": "gpt-4.1", "choices": [{"index": 0, "delta": delta,
                                             "finish_reason": finish}]}


OPENAI_STREAM_TEXT = _sse(
    (_chunk({"role": "assistant", "content": ""}),),
    (_chunk({"content": "Fixed: add() "}),),
    (_chunk({"content": "now adds. ✓"}),),
    (_chunk({}, "stop"),),
    ({"id": "chatcmpl-3", "object": "chat.completion.chunk", "created": 1767225602,
      "model": "gpt-4.1", "choices": [],
      "usage": {"prompt_tokens": 31, "completion_tokens": 8, "total_tokens": 39}},),
    ("[DONE]",),
)

OPENAI_STREAM_TOOLS = _sse(
    (_chunk({"role": "assistant", "content": None, "tool_calls": [
        {"index": 0, "id": "call_r1", "type": "function",
         "function": {"name": "read", "arguments": ""}}]}),),
    (_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{\"pa"}}]}),),
    (_chunk({"tool_calls": [{"index": 1, "id": "call_b2", "type": "function",
                             "function": {"name": "bash", "arguments": ""}}]}),),
    (_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "th\": \"calc.py\"}"}}]}),),
    (_chunk({"tool_calls": [{"index": 1, "function": {
        "arguments": "{\"command\": \"python -m pytest -q\"}"}}]}),),
    (_chunk({}, "tool_calls"),),
    ({"id": "chatcmpl-3", "object": "chat.completion.chunk", "created": 1767225602,
      "model": "gpt-4.1", "choices": [],
      "usage": {"prompt_tokens": 402, "completion_tokens": 40, "total_tokens": 442}},),
    ("[DONE]",),
)

OPENAI_RATE_LIMITED = {"error": {
    "message": "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. "
               "Please try again in 20s.",
    "type": "requests", "param": None, "code": "rate_limit_exceeded"}}

OPENAI_UNAUTHORIZED = {"error": {
    "message": "Incorrect API key provided: sk-test-…-KEY. You can find your API key at "
               "https://platform.openai.com/account/api-keys.",
    "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}
