"""A small provider on 127.0.0.1 that speaks both wire formats, for running agent.py end to end.

WireServer(script) listens on a free port of 127.0.0.1 and answers
    POST /v1/messages           as Anthropic's Messages API does (JSON, or SSE with "stream")
    POST /v1/chat/completions   as OpenAI's Chat Completions does (JSON, or SSE with "stream")
The replies come from `script(turn, request) -> dict`: a book-shaped assistant message (built with
lab.reply / lab.call / lab.say), where `turn` counts the assistant messages already in the
request's transcript, so a session resumed after a kill carries on at the right step. The server
spells the reply in the format it was asked in, and checks each request the way the provider
does where the closing page says it matters: a system role in Anthropic's messages, a tool result
whose call is not in the message before it, arguments of the wrong type, a missing
anthropic-version. A bad request gets a 400 in the provider's error format.

`server.requests` keeps (path, headers, body) of every request; `server.hold(turn)` makes the
request of that turn wait until `server.release()`, and sets `server.holding` when it arrives, so
a test can kill or interrupt the client mid-task at a known place. `server.cut(turn)` ends that
turn's stream after its first piece, once, as a dropped connection does. `server.require_key(key)`
answers any other key with a 401 in the body the provider sends (Anthropic's does not quote the
key; OpenAI's shows only its first and last characters). `server.limit(chars)` refuses any request
whose body is longer than `chars` with the 400 each provider sends when the prompt is over the
model's context window (a stand-in for counting tokens: the body's length). Like Anthropic's API for current models,
the server refuses a request that ends on an assistant message (a prefill), and both refuse an
empty list of messages.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANTHROPIC_STOPS = {"stop": "end_turn", "toolUse": "tool_use", "length": "max_tokens"}
OPENAI_STOPS = {"stop": "stop", "toolUse": "tool_calls", "length": "length"}


class WireServer:
    def __init__(self, script):
        self.script, self.requests = script, []
        self.holding, self._released, self._hold_turn = threading.Event(), threading.Event(), None
        self._cut_turn, self._key, self._limit = None, None, None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                server._answer(self)

            def log_message(self, *args):
                pass

        self.httpd = _Quiet(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.release()
        self.httpd.shutdown()
        self.httpd.server_close()

    def hold(self, turn):
        self._hold_turn = turn
        self.holding.clear()
        self._released.clear()

    def cut(self, turn):
        self._cut_turn = turn

    def require_key(self, key):
        self._key = key

    def limit(self, chars):
        self._limit = chars

    def release(self):
        self._hold_turn = None
        self._released.set()

    # -- one request ----------------------------------------------------------------------------

    def _answer(self, handler):
        length = int(handler.headers.get("content-length", 0))
        raw = handler.rfile.read(length)
        body = json.loads(raw)
        headers = {k.lower(): v for k, v in handler.headers.items()}
        self.requests.append((handler.path, headers, body))
        wire = "anthropic" if handler.path.endswith("/messages") else "openai"
        if self._key is not None:
            sent = (headers.get("x-api-key") if wire == "anthropic"
                    else headers.get("authorization", "").removeprefix("Bearer "))
            if sent != self._key:
                return _send_json(handler, 401, _unauthorized(wire, sent or ""))
        problem = (_anthropic_problem if wire == "anthropic" else _openai_problem)(headers, body)
        if problem:
            return _send_json(handler, 400, _error(wire, "invalid_request_error", problem))
        if self._limit is not None and len(raw) > self._limit:
            return _send_json(handler, 400, _too_long(wire, len(raw), self._limit))
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turn == self._hold_turn:
            self.holding.set()
            self._released.wait(30)
        reply = self.script(turn, body)
        cut = body.get("stream") and turn == self._cut_turn
        if cut:
            self._cut_turn = None
        if wire == "anthropic":
            data = _anthropic_message(reply)
            if body.get("stream"):
                events = list(_anthropic_stream(data))
                return _send_sse(handler, events[:3] if cut else events)
        else:
            data = _openai_completion(reply)
            if body.get("stream"):
                events = list(_openai_stream(data))
                return _send_sse(handler, events[:1] if cut else events)
        return _send_json(handler, 200, data)


class _Quiet(ThreadingHTTPServer):
    """A client killed mid-request is part of the test, not an error to print."""

    def handle_error(self, request, client_address):
        pass


def _send_json(handler, status, data):
    raw = json.dumps(data).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


def _send_sse(handler, events):
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.end_headers()
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        handler.wfile.write(((f"event: {name}\n" if name else "") + f"data: {text}\n\n").encode())
        handler.wfile.flush()
    handler.close_connection = True


def _error(wire, kind, message):
    if wire == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _too_long(wire, used, limit):
    """The 400 each provider sends for a prompt over the context window (counted here in the
    body's characters, not tokens)."""
    if wire == "anthropic":
        return _error(wire, "invalid_request_error",
                      f"prompt is too long: {used} tokens > {limit} maximum")
    return {"error": {"message": f"This model's maximum context length is {limit} tokens. However, "
                                 f"your messages resulted in {used} tokens. Please reduce the "
                                 "length of the messages.",
                      "type": "invalid_request_error", "param": "messages",
                      "code": "context_length_exceeded"}}


def _unauthorized(wire, sent):
    """The 401 each provider sends for a wrong key."""
    if wire == "anthropic":
        return {"type": "error", "error": {"type": "authentication_error",
                                           "message": "invalid x-api-key"}}
    shown = f"{sent[:3]}*****{sent[-4:]}" if len(sent) > 8 else sent
    return {"error": {"message": f"Incorrect API key provided: {shown}. You can find your API key "
                                 "at https://platform.openai.com/account/api-keys.",
                      "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}


# -- Anthropic --------------------------------------------------------------------------------

def _anthropic_problem(headers, body):
    if headers.get("anthropic-version") != "2023-06-01":
        return "anthropic-version: header is required"
    if not body.get("messages"):
        return "messages: at least one message is required"
    if body["messages"][-1].get("role") == "assistant":
        return ("This model does not support assistant message prefill. The conversation must "
                "end with a user message.")
    previous_calls = set()
    for n, m in enumerate(body.get("messages", [])):
        if m.get("role") not in ("user", "assistant"):
            return f"messages.{n}.role: Input should be 'user' or 'assistant'"
        blocks = m["content"] if isinstance(m["content"], list) else []
        for block in blocks:
            if block.get("type") == "tool_use" and not isinstance(block.get("input"), dict):
                return f"messages.{n}: tool_use.input: Input should be a valid dictionary"
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in previous_calls:
                return (f"messages.{n}: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{block.get('tool_use_id')}")
        previous_calls = {b["id"] for b in blocks if b.get("type") == "tool_use"}
    return None


def _anthropic_message(reply):
    content = []
    for block in reply["content"]:
        if block["type"] == "text":
            content.append({"type": "text", "text": block["text"]})
        else:
            content.append({"type": "tool_use", "id": block["id"], "name": block["name"],
                            "input": block["arguments"]})
    return {"id": "msg_local", "type": "message", "role": "assistant", "model": "local",
            "content": content, "stop_reason": ANTHROPIC_STOPS[reply["stop_reason"]],
            "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 10}}


def _anthropic_stream(message):
    yield "message_start", {"type": "message_start", "message": {
        **message, "content": [], "stop_reason": None,
        "usage": {"input_tokens": 100, "output_tokens": 1}}}
    for index, block in enumerate(message["content"]):
        start = dict(block, **({"input": {}} if block["type"] == "tool_use" else {"text": ""}))
        yield "content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": start}
        if block["type"] == "text":
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                      "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "delta": {
        "stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": 10}}
    yield "message_stop", {"type": "message_stop"}


# -- OpenAI-compatible ------------------------------------------------------------------------

def _openai_problem(headers, body):
    messages = body.get("messages", [])
    if not any(m.get("role") != "system" for m in messages):
        return "messages: the conversation has no message but the system prompt"
    previous_calls = set()
    for n, m in enumerate(messages):
        if m.get("role") == "tool":
            if m.get("tool_call_id") not in previous_calls:
                return (f"messages.[{n}].tool_call_id: a tool message must answer a tool call of "
                        "the assistant message before it")
            continue
        if m.get("role") == "assistant":
            for call in m.get("tool_calls") or []:
                if not isinstance(call["function"].get("arguments"), str):
                    return f"messages.[{n}].tool_calls: arguments must be a string"
            previous_calls = {c["id"] for c in m.get("tool_calls") or []}
        else:
            previous_calls = set()
    return None


def _openai_completion(reply):
    text = "".join(b["text"] for b in reply["content"] if b["type"] == "text")
    calls = [{"id": b["id"], "type": "function",
              "function": {"name": b["name"], "arguments": json.dumps(b["arguments"])}}
             for b in reply["content"] if b["type"] == "toolCall"]
    message = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return {"id": "chatcmpl-local", "object": "chat.completion", "model": "local",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": OPENAI_STOPS[reply["stop_reason"]]}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}


def _openai_stream(completion):
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta, finish=None):
        return None, {"object": "chat.completion.chunk",
                      "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if message.get("content"):
        yield chunk({"role": "assistant", "content": message["content"]})
    for index, call in enumerate(message.get("tool_calls") or []):
        yield chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                     "function": {"name": call["function"]["name"],
                                                  "arguments": ""}}]})
        yield chunk({"tool_calls": [{"index": index, "function": {
            "arguments": call["function"]["arguments"]}}]})
    yield chunk({}, choice["finish_reason"])
    yield None, {"object": "chat.completion.chunk", "choices": [], "usage": completion["usage"]}
    yield None, "[DONE]"
