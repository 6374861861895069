"""The closing page's lab tests: the reader's harness, spoken to a real provider's wire format.

Lab1 checks Anthropic's Messages spelling (point 16.1), Lab2 the OpenAI-compatible Chat Completions
spelling (16.2), Lab3 the HTTP part both share: server-sent events read from bytes cut anywhere,
failures as replies, retries only before the first
piece, the key kept out of sight (16.3); it also runs the reader's Harness over each adapter, so
lesson 05's rule (a failed reply ends the run, recorded) and lesson 11's log are tested again.
No test opens a socket: every answer comes from lab.Transport, which plays exchanges written from
each provider's documented wire format, so the same tests run in the page and at home. Each
test's docstring is its checklist line on the page, word for word. Run them with

    python lab/lab_check.py --harness harness.py --lesson 16 tests.py [--lab 1|2|3|4]
"""
import inspect
import json
import unittest

import harness
import lab

LESSON = 16
KEY = "sk-test-7d1e0c9b-DO-NOT-PRINT"
TOOLS = [{"name": "read", "description": "Read a file.",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                         "required": ["path"]}}]


# ------------------------------------------------------------------------------------- helpers

def _read(path="calc.py", id="c1"):
    return lab.call("read", {"path": path}, id=id)


def _transcript():
    """A small session: a question, a reply with text and two calls, their results (one
    failed), and the user speaking again."""
    r1, r2 = _read("calc.py", "c1"), _read("nope.py", "c2")
    return [
        lab.user("Why does the test fail?"),
        lab.reply("Reading both.", r1, r2),
        lab.tool_result(r1, "def add(a, b):\n    return a - b\n"),
        lab.tool_result(r2, "File not found: nope.py", is_error=True),
        lab.user("Also check the tests."),
    ]


def _terminal(events):
    """The end and error events of a stream, in order."""
    return [e for e in events if e.get("type") in ("end", "error")]


def _pieces(events):
    return [e for e in events if e.get("type") in ("text", "call", "arguments")]


def _arguments(events, index):
    """The JSON text of call `index`, its pieces joined, as a consumer would."""
    return "".join(e["json"] for e in events if e["type"] == "arguments" and e["index"] == index)


def _edited_choices(stream, edit):
    """`stream`'s SSE items with `edit(choice)` applied to every choice of every chunk ([DONE] kept)."""
    items = []
    for item in lab.sse_events(stream):
        if item["data"] != "[DONE]":
            data = json.loads(item["data"])
            for choice in data.get("choices") or []:
                edit(choice)
            item = {**item, "data": json.dumps(data)}
        items.append(item)
    return items


class _Sleeps(list):
    """An injected sleep that sleeps not at all and remembers how long it was asked to."""

    def __call__(self, seconds):
        self.append(seconds)


class _LabCase(lab.LabCase):
    def events(self, what, function, *args):
        """Every event a stream function yields, as a list; an exception fails the test."""
        try:
            return list(function(*args))
        except Exception as error:
            self.fail(f"{what} raised {type(error).__name__}: {error}; a stream ends with an "
                      "end or an error event, and never raises.")

    def assert_one_terminal_last(self, what, events):
        ends = _terminal(events)
        self.assertEqual(len(ends), 1, f"{what}: {len(ends)} end or error events "
                                       f"({[e['type'] for e in ends]}); expected exactly one.")
        self.assertIs(events[-1], ends[0], f"{what}: the {ends[0]['type']} event is not the last "
                                           "one; nothing may follow it.")


# ------------------------------------------------------------------ lab 1: Anthropic's Messages

class Lab1(_LabCase):

    def body(self, messages=None, system="Be brief.", tools=TOOLS, stream=False):
        return self.call("anthropic_request", harness.anthropic_request, "claude-test", system,
                         _transcript() if messages is None else messages, tools,
                         max_tokens=1000, stream=stream)

    def test_system_is_a_field(self):
        """The system prompt goes in the request's own "system" field, never in messages, and is left out when it is empty; the body also carries the model's name and max_tokens, which Anthropic requires."""
        body = self.body()
        self.assertEqual(body.get("system"), "Be brief.",
                         f"body['system'] is {body.get('system')!r}; expected the system prompt. "
                         "Anthropic takes it as a top-level field.")
        roles = [m.get("role") for m in body.get("messages", [])]
        self.assertNotIn("system", roles, "a message with role 'system' is in messages; "
                                          "Anthropic refuses it: the system prompt is a field.")
        self.assertEqual(body.get("model"), "claude-test", "body['model'] is not the model name.")
        self.assertEqual(body.get("max_tokens"), 1000, "body['max_tokens'] is not max_tokens: "
                                                       "Anthropic requires it.")
        self.assertNotIn("system", self.body(system=""),
                         "with an empty system prompt the body still has a 'system' field.")

    def test_assistant_spelled(self):
        """An assistant message becomes text and tool_use blocks, the arguments as the dict itself; an empty text is left out."""
        call = _read()
        messages = [lab.user("Go."), lab.reply("", "Reading.", call)]
        got = self.call("anthropic_messages", harness.anthropic_messages, messages)
        want = [{"role": "user", "content": "Go."},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "c1", "name": "read", "input": {"path": "calc.py"}}]}]
        block = got[1]["content"][-1] if len(got) > 1 and got[1].get("content") else {}
        if isinstance(block, dict) and isinstance(block.get("input"), str):
            self.fail("the tool_use block's input is a string of JSON; Anthropic wants the "
                      "arguments as an object: the dict itself.")
        self.assertEqual(got, want, f"anthropic_messages gave {got}; expected {want}. An empty "
                                    "text block is refused by Anthropic, so it is left out.")

    def test_empty_assistant_left_out(self):
        """An assistant message with no blocks to send (an empty answer, or one empty text) is left out, and the user messages around it merge."""
        messages = [lab.user("Go."), lab.reply(), lab.user("Well?"), lab.reply(""),
                    lab.user("Hello?")]
        got = self.call("anthropic_messages", harness.anthropic_messages, messages)
        want = [{"role": "user", "content": [{"type": "text", "text": "Go."},
                                             {"type": "text", "text": "Well?"},
                                             {"type": "text", "text": "Hello?"}]}]
        self.assertEqual(got, want, f"anthropic_messages gave {got}; expected {want}. Anthropic "
                                    "refuses a message with empty content (\"all messages must "
                                    "have non-empty content except for the optional final "
                                    "assistant message\"): leave out an assistant message with "
                                    "no blocks, and merge the user messages it stood between.")

    def test_results_keep_id_and_is_error(self):
        """A tool result is a tool_result block in a user message, with its tool_use_id, its content and its is_error."""
        got = self.call("anthropic_messages", harness.anthropic_messages, _transcript())
        blocks = [b for m in got if m.get("role") == "user" and isinstance(m.get("content"), list)
                  for b in m["content"] if b.get("type") == "tool_result"]
        want = [{"type": "tool_result", "tool_use_id": "c1",
                 "content": "def add(a, b):\n    return a - b\n", "is_error": False},
                {"type": "tool_result", "tool_use_id": "c2",
                 "content": "File not found: nope.py", "is_error": True}]
        if len(blocks) == 2 and blocks[1].get("is_error") is not True:
            self.fail("the failed result's is_error did not arrive; Anthropic has the field, so "
                      "keep it: the model must know the read failed.")
        if len(blocks) == 2 and not blocks[0].get("tool_use_id"):
            self.fail("a tool_result block has no tool_use_id: the model cannot tell which "
                      "call it answers, and Anthropic refuses it.")
        self.assertEqual(blocks, want, f"the tool_result blocks are {blocks}; expected {want}.")

    def test_results_of_one_reply_merge(self):
        """The results of one reply go back in one user message, in call order, and a user's text right after them joins it."""
        got = self.call("anthropic_messages", harness.anthropic_messages, _transcript())
        roles = [m.get("role") for m in got]
        self.assertEqual(roles, ["user", "assistant", "user"],
                         f"the roles are {roles}; expected user, assistant, user. Two messages "
                         "with one role in a row are merged into one.")
        kinds = [(b.get("type"), b.get("tool_use_id") or b.get("text")) for b in got[2]["content"]]
        self.assertEqual(kinds, [("tool_result", "c1"), ("tool_result", "c2"),
                                 ("text", "Also check the tests.")],
                         f"the last user message holds {kinds}; expected both results in call "
                         "order, then the user's text as a text block.")

    def test_tools_and_stream_fields(self):
        """Tools are sent with input_schema and left out when there are none; "stream" is in the body only for a stream."""
        body = self.body()
        want = [{"name": "read", "description": "Read a file.",
                 "input_schema": TOOLS[0]["parameters"]}]
        self.assertEqual(body.get("tools"), want, f"body['tools'] is {body.get('tools')}; "
                                                  f"expected {want}.")
        self.assertNotIn("tools", self.body(tools=[]), "with no tools, body still has 'tools'.")
        self.assertNotIn("stream", body, "a request for complete() says 'stream'.")
        self.assertIs(self.body(stream=True).get("stream"), True,
                      "a request for a stream does not say \"stream\": True.")

    def test_reply_text_and_calls(self):
        """An answer becomes the book's message: text and toolCall blocks in order, the call's input as its arguments."""
        got = self.call("anthropic_reply", harness.anthropic_reply, lab.ANTHROPIC_TOOL)
        want = [{"type": "text", "text": "Let me read the file."},
                {"type": "toolCall", "id": "toolu_01", "name": "read",
                 "arguments": {"path": "calc.py"}}]
        self.assertEqual(got.get("role"), "assistant", "the reply's role is not 'assistant'.")
        self.assertEqual(got.get("content"), want, f"content is {got.get('content')}; "
                                                   f"expected {want}.")
        self.assertEqual(got.get("stop_reason"), "toolUse",
                         f"stop_reason is {got.get('stop_reason')!r}; tool_use is 'toolUse'.")

    def test_other_blocks_left_out(self):
        """Blocks the book has no shape for, such as thinking, are left out of the reply and of the stream."""
        thinking = {"type": "thinking", "thinking": "The sign is wrong.", "signature": "EqQB"}
        data = {**lab.ANTHROPIC_TOOL, "content": [thinking] + lab.ANTHROPIC_TOOL["content"]}
        got = self.call("anthropic_reply", harness.anthropic_reply, data)
        kinds = [b.get("type") for b in got.get("content", [])]
        self.assertEqual(kinds, ["text", "toolCall"], f"a reply opening with a thinking block "
                                                      f"became blocks {kinds}; expected text and "
                                                      "toolCall only.")
        sse = lab.sse_events(lab.ANTHROPIC_STREAM_TEXT)
        extra = [{"event": "content_block_start", "data": json.dumps(
                     {"type": "content_block_start", "index": 0,
                      "content_block": {"type": "thinking", "thinking": ""}})},
                 {"event": "content_block_delta", "data": json.dumps(
                     {"type": "content_block_delta", "index": 0,
                      "delta": {"type": "thinking_delta", "thinking": "The sign is wrong."}})}]
        events = self.events("anthropic_events", harness.anthropic_events,
                             sse[:1] + extra + sse[1:])
        self.assertEqual([e["type"] for e in events], ["text", "text", "end"],
                         f"a stream with a thinking block yielded {[e['type'] for e in events]}; "
                         "expected the two text pieces and the end only.")

    def test_reply_stop_reasons(self):
        """end_turn and stop_sequence are "stop", tool_use "toolUse", max_tokens "length"; any other makes a failed reply that keeps its content."""
        for theirs, ours in [("end_turn", "stop"), ("stop_sequence", "stop"),
                             ("max_tokens", "length"), ("tool_use", "toolUse")]:
            got = self.call("anthropic_reply", harness.anthropic_reply,
                            {**lab.ANTHROPIC_TEXT, "stop_reason": theirs})
            self.assertEqual(got.get("stop_reason"), ours, f"stop_reason {theirs!r} became "
                                                           f"{got.get('stop_reason')!r}; "
                                                           f"expected {ours!r}.")
        got = self.call("anthropic_reply", harness.anthropic_reply,
                        {**lab.ANTHROPIC_TEXT, "stop_reason": "refusal"})
        self.assertEqual((got.get("stop_reason"), got.get("error_message")),
                         ("error", "stop_reason refusal"),
                         f"stop_reason 'refusal' gave {got.get('stop_reason')!r}, "
                         f"{got.get('error_message')!r}; expected a failed reply, "
                         "'stop_reason refusal'.")
        self.assertEqual(len(got.get("content") or []), 1, "the refused reply lost its content.")

    def test_reply_usage_counts_cache(self):
        """usage is {"input", "output"}, and input counts the cached tokens too."""
        got = self.call("anthropic_reply", harness.anthropic_reply, lab.ANTHROPIC_TOOL)
        self.assertEqual(got.get("usage"), {"input": 1580, "output": 52},
                         f"usage is {got.get('usage')}; expected input 380 + 1200 read from the "
                         "cache, and output 52.")
        got = self.call("anthropic_reply", harness.anthropic_reply, lab.ANTHROPIC_TEXT)
        self.assertEqual(got.get("usage"), {"input": 412, "output": 11},
                         f"usage is {got.get('usage')}; expected input 412, output 11.")

    def test_events_usage_counts_cache(self):
        """A stream's input usage, in message_start, counts the cached tokens too, as a whole answer's does."""
        sse = []
        for item in lab.sse_events(lab.ANTHROPIC_STREAM_TEXT):
            data = json.loads(item["data"])
            if data.get("type") == "message_start":
                data["message"]["usage"].update(cache_creation_input_tokens=100,
                                                cache_read_input_tokens=1200)
            sse.append({"event": item["event"], "data": json.dumps(data)})
        events = self.events("anthropic_events", harness.anthropic_events, sse)
        got = events[-1].get("usage") if events else None
        self.assertEqual(got, {"input": 1325, "output": 9},
                         f"a stream whose message_start says input_tokens 25, "
                         f"cache_creation_input_tokens 100 and cache_read_input_tokens 1200 "
                         f"ended with usage {got}; expected input 1325, output 9: count the "
                         "input as anthropic_reply does, cached tokens included.")

    def test_events_text(self):
        """A text stream yields its text pieces, then one end with the stop and the usage; a ping yields nothing."""
        events = self.events("anthropic_events", harness.anthropic_events,
                             lab.sse_events(lab.ANTHROPIC_STREAM_TEXT))
        want = [{"type": "text", "text": "Fixed: add() "}, {"type": "text", "text": "now adds. ✓"},
                {"type": "end", "stop_reason": "stop", "usage": {"input": 25, "output": 9}}]
        self.assertEqual(events, want, f"the events are {events}; expected {want}.")

    def test_events_calls_counted_from_zero(self):
        """A tool_use block yields a call counted among the calls from 0, and its partial_json as arguments pieces of that call."""
        events = self.events("anthropic_events", harness.anthropic_events,
                             lab.sse_events(lab.ANTHROPIC_STREAM_TOOL))
        calls = [e for e in events if e["type"] == "call"]
        empty = [e for e in events if e["type"] == "arguments" and not e["json"]]
        self.assertEqual(empty, [], "an arguments event with empty json was yielded; an empty "
                                    "partial_json carries nothing and yields nothing.")
        self.assertEqual(calls, [{"type": "call", "index": 0, "id": "toolu_02", "name": "write"}],
                         f"the call events are {calls}; expected one, index 0: the first call "
                         "of the reply, though it is Anthropic's block 1.")
        try:
            arguments = json.loads(_arguments(events, 0))
        except ValueError:
            self.fail(f"the arguments pieces of call 0 join into {_arguments(events, 0)!r}, "
                      "which is not JSON.")
        self.assertEqual(arguments, {"path": "calc.py", "content": "def add(a, b):\n    return a + b\n"},
                         f"the arguments join into {arguments}.")
        self.assertEqual(events[-1].get("stop_reason"), "toolUse",
                         f"the last event is {events[-1]}; expected an end with 'toolUse'.")

    def test_events_error_and_cut(self):
        """An error event ends the stream with the provider's words; events that stop before message_stop end it with an error, never an end."""
        events = self.events("anthropic_events", harness.anthropic_events,
                             lab.sse_events(lab.ANTHROPIC_STREAM_OVERLOADED))
        self.assert_one_terminal_last("the overloaded stream", events)
        self.assertEqual(events[-1], {"type": "error", "message": "overloaded_error: Overloaded"},
                         f"the last event is {events[-1]}; expected the error in Anthropic's "
                         "words, 'overloaded_error: Overloaded'.")
        whole = lab.sse_events(lab.ANTHROPIC_STREAM_TEXT)
        for cut in (len(whole) - 1, 5, 2):
            events = self.events("anthropic_events", harness.anthropic_events, whole[:cut])
            self.assert_one_terminal_last(f"a stream cut after {cut} events", events)
            self.assertEqual(events[-1].get("type"), "error",
                             f"a stream cut after {cut} of its {len(whole)} events ended with "
                             f"{events[-1]}; without message_stop the reply is not complete.")

    def test_events_no_stop_reason_fails(self):
        """A message_stop with no message_delta before it, so no stop_reason, ends the stream with an error, not an end."""
        sse = [e for e in lab.sse_events(lab.ANTHROPIC_STREAM_TEXT) if e["event"] != "message_delta"]
        events = self.events("anthropic_events", harness.anthropic_events, sse)
        self.assert_one_terminal_last("a stream with no message_delta", events)
        self.assertEqual(events[-1].get("type"), "error",
                         f"a stream with no message_delta ended with {events[-1]}; nobody said "
                         "why the reply stopped, so it is not a finished one: a stop_reason not "
                         "in ANTHROPIC_STOPS, None included, is an error.")

    def test_events_refusal_fails(self):
        """A stop_reason the book has no name for ends the stream with an error naming it."""
        text = lab.ANTHROPIC_STREAM_TEXT.replace('"end_turn"', '"refusal"')
        events = self.events("anthropic_events", harness.anthropic_events, lab.sse_events(text))
        self.assert_one_terminal_last("a refused stream", events)
        self.assertEqual(events[-1], {"type": "error", "message": "stop_reason refusal"},
                         f"the last event is {events[-1]}; expected an error, "
                         "'stop_reason refusal'.")

    def test_events_later_delta_keeps_the_stop(self):
        """A second message_delta that carries only usage (its stop_reason null) keeps the stop_reason of the first and updates the output count."""
        sse = lab.sse_events(lab.ANTHROPIC_STREAM_TEXT)
        second = {"event": "message_delta", "data": json.dumps(
            {"type": "message_delta", "delta": {"stop_reason": None, "stop_sequence": None},
             "usage": {"output_tokens": 12}})}
        sse.insert(len(sse) - 1, second)            # just before message_stop
        events = self.events("anthropic_events", harness.anthropic_events, sse)
        self.assert_one_terminal_last("a stream with two message_delta events", events)
        want = {"type": "end", "stop_reason": "stop", "usage": {"input": 25, "output": 12}}
        self.assertEqual(events[-1], want,
                         f"a stream whose second message_delta has stop_reason null ended with "
                         f"{events[-1]}; expected {want}. Anthropic documents one or more "
                         "message_delta events: keep a stop_reason once seen, as a null one "
                         "says nothing new.")


    def test_request_messages(self):
        """The request's messages are anthropic_messages of the transcript, as they are."""
        want = self.call("anthropic_messages", harness.anthropic_messages, _transcript())
        body = self.body()
        self.assertEqual(body.get("messages"), want, f"body['messages'] is "
                         f"{body.get('messages')!r}; expected anthropic_messages(messages), "
                         f"{want!r}.")

    def test_counts_never_sent_are_zero(self):
        """A reply or a stream with no usage counts 0 and 0, and a reply that stopped as the book names it carries no error_message."""
        data = {k: v for k, v in lab.ANTHROPIC_TEXT.items() if k != "usage"}
        got = self.call("anthropic_reply", harness.anthropic_reply, data)
        self.assertEqual(got.get("usage"), {"input": 0, "output": 0},
                         f"a reply with no usage has usage {got.get('usage')}; expected input 0, "
                         "output 0.")
        self.assertNotIn("error_message", got, f"a reply that stopped with end_turn has "
                         f"error_message {got.get('error_message')!r}; only a failed reply "
                         "has one.")
        quiet = []
        for item in lab.sse_events(lab.ANTHROPIC_STREAM_TEXT):
            data = json.loads(item["data"]) if item["data"] else {}
            data.pop("usage", None)
            data.get("message", {}).pop("usage", None)
            quiet.append({"event": item["event"], "data": json.dumps(data)})
        events = self.events("anthropic_events", harness.anthropic_events, quiet)
        self.assertEqual(events[-1] if events else None,
                         {"type": "end", "stop_reason": "stop", "usage": {"input": 0, "output": 0}},
                         f"a stream with no usage ended with {events[-1] if events else None}; "
                         "expected an end with usage input 0, output 0.")


# ------------------------------------------------------------------- lab 2: Chat Completions

class Lab2(_LabCase):

    def messages(self, system="Be brief.", messages=None):
        return self.call("openai_messages", harness.openai_messages, system,
                         _transcript() if messages is None else messages)

    def test_system_is_the_first_message(self):
        """The system prompt is the first message, role "system", and is left out when it is empty."""
        got = self.messages()
        self.assertEqual(got[0] if got else None, {"role": "system", "content": "Be brief."},
                         f"the first message is {got[0] if got else None}; expected the system "
                         "prompt as a message: Chat Completions has no system field.")
        got = self.messages(system="")
        self.assertNotEqual(got[0].get("role") if got else None, "system",
                            "with an empty system prompt, a system message is still sent.")

    def test_calls_carry_json_text(self):
        """An assistant's calls are tool_calls whose arguments are a JSON string; its content is None when it has no text."""
        call = _read()
        got = self.messages(system="", messages=[lab.user("Go."), lab.reply(call)])
        message = got[1] if len(got) > 1 else {}
        self.assertIn("content", message, "the assistant message has no 'content' key; "
                                          "it is None when there is no text.")
        self.assertIsNone(message["content"], f"content is {message['content']!r}; expected "
                                              "None for a reply with no text.")
        spelled = (message.get("tool_calls") or [{}])[0]
        arguments = (spelled.get("function") or {}).get("arguments")
        if isinstance(arguments, dict):
            self.fail("function.arguments is a dict; Chat Completions wants a JSON string: "
                      "json.dumps(the arguments).")
        function = spelled.get("function") or {}
        self.assertEqual((spelled.get("id"), spelled.get("type"), function.get("name"),
                          json.loads(arguments or "null")),
                         ("c1", "function", "read", {"path": "calc.py"}),
                         f"the tool call is {spelled}; expected its id, \"type\": \"function\", "
                         "and a function with the name and the arguments as JSON text.")
        plain = self.messages(system="", messages=[lab.user("Hi."), lab.say("Hello.")])[1]
        self.assertEqual(plain, {"role": "assistant", "content": "Hello."},
                         f"a reply with only text became {plain}; expected no tool_calls key.")

    def test_empty_assistant_left_out(self):
        """An assistant message with neither text nor calls is left out: the format wants content unless tool_calls is there."""
        for empty in (lab.reply(), lab.say("")):
            got = self.messages(system="", messages=[lab.user("Hi."), empty, lab.user("Well?")])
            self.assertEqual([m.get("role") for m in got], ["user", "user"],
                             f"a transcript whose reply holds {empty['content']} became {got}; "
                             "an assistant message with no text and no tool_calls is refused "
                             "(content is required without tool_calls): leave it out.")

    def test_results_one_message_each(self):
        """Each result is its own "tool" message with its tool_call_id, and a failed one says so in its content, with FAILED_PREFIX in front even when its words already start with "Error"; the message holds no key the format does not define (such as "is_error"), though a "name" may come too."""
        got = [m for m in self.messages() if m.get("role") == "tool"]
        want = [{"role": "tool", "tool_call_id": "c1",
                 "content": "def add(a, b):\n    return a - b\n"},
                {"role": "tool", "tool_call_id": "c2",
                 "content": harness.FAILED_PREFIX + "File not found: nope.py"}]
        if len(got) == 2 and not got[0].get("tool_call_id"):
            self.fail("a tool message has no tool_call_id: the provider refuses it, and the "
                      "model could not tell which call it answers.")
        if len(got) == 2 and got[1].get("content") == "File not found: nope.py":
            self.fail("the failed result went out as if it had worked: there is no is_error "
                      "field here, so put FAILED_PREFIX before its content.")
        for m in got:
            extra = sorted(set(m) - {"role", "tool_call_id", "content", "name"})
            if extra:
                self.fail(f"a tool message has the key(s) {extra}: {m}. The format defines "
                          "role, tool_call_id and content (and a name some servers read); a "
                          "server may drop another key, so the model never sees it, or refuse "
                          "the request. Say a failure in the content, with FAILED_PREFIX.")
        fields = [{k: m.get(k) for k in ("role", "tool_call_id", "content")} for m in got]
        self.assertEqual(fields, want, f"the tool messages are {got}; expected {want} (a "
                                       "\"name\" field with the tool's name may come too).")
        call, words = _read("locked.py", "c3"), "Error reading locked.py: permission denied"
        sent = [m for m in self.messages(system="", messages=[
                    lab.user("Read it."), lab.reply(call),
                    lab.tool_result(call, words, is_error=True)]) if m.get("role") == "tool"]
        self.assertEqual([m.get("content") for m in sent], [harness.FAILED_PREFIX + words],
                         f"a failed result whose words are {words!r} went out as {sent}; "
                         f"expected its content to be FAILED_PREFIX + {words!r}: put the prefix "
                         "in front of every failed result, whatever its words start with.")
        roles = [m.get("role") for m in self.messages()]
        self.assertEqual(roles, ["system", "user", "assistant", "tool", "tool", "user"],
                         f"the roles are {roles}; nothing is merged in this format.")

    def test_request_fields(self):
        """Tools are sent as functions and left out when there are none; a stream asks for its usage."""
        body = self.call("openai_request", harness.openai_request, "gpt-test", "Be brief.",
                         _transcript(), TOOLS, stream=False)
        want = [{"type": "function", "function": {"name": "read", "description": "Read a file.",
                                                  "parameters": TOOLS[0]["parameters"]}}]
        self.assertEqual(body.get("tools"), want, f"body['tools'] is {body.get('tools')}; "
                                                  f"expected {want}.")
        self.assertEqual(body.get("model"), "gpt-test", "body['model'] is not the model name.")
        self.assertNotIn("stream", body, "a request for complete() says 'stream'.")
        streaming = self.call("openai_request", harness.openai_request, "gpt-test", "",
                              [lab.user("Hi.")], [], stream=True)
        self.assertNotIn("tools", streaming, "with no tools, the body still has 'tools'.")
        self.assertEqual((streaming.get("stream"), streaming.get("stream_options")),
                         (True, {"include_usage": True}),
                         "a stream's body needs \"stream\": True and \"stream_options\": "
                         "{\"include_usage\": True}: without it a stream carries no usage.")

    def test_reply_text_and_calls(self):
        """An answer becomes the book's message: its text as a text block, its calls as toolCalls with the JSON parsed, and usage mapped."""
        got = self.call("openai_reply", harness.openai_reply, lab.OPENAI_TEXT)
        self.assertEqual((got.get("content"), got.get("stop_reason"), got.get("usage")),
                         ([{"type": "text", "text": "The test fails because add() subtracts."}],
                          "stop", {"input": 398, "output": 10}),
                         f"the text answer became {got}.")
        got = self.call("openai_reply", harness.openai_reply, lab.OPENAI_TOOL)
        want = [{"type": "toolCall", "id": "call_abc", "name": "read",
                 "arguments": {"path": "calc.py"}}]
        self.assertEqual(got.get("content"), want, f"content is {got.get('content')}; expected "
                                                   f"{want}: no text block for a null content, "
                                                   "and the arguments parsed into a dict.")
        self.assertEqual(got.get("stop_reason"), "toolUse", "tool_calls is 'toolUse'.")

    def test_reply_stops(self):
        """stop, length and tool_calls map to the book's; calls make it "toolUse" whatever known finish_reason comes with them ("stop", "length"); content_filter, a finish the book has no name for, is a failed reply, with calls or without."""
        def choice(finish, calls=False):
            source = lab.OPENAI_TOOL if calls else lab.OPENAI_TEXT
            return {**source, "choices": [{**source["choices"][0], "finish_reason": finish}]}
        for finish, calls, want in [("stop", False, "stop"), ("length", False, "length"),
                                    ("tool_calls", True, "toolUse"), ("stop", True, "toolUse"),
                                    ("length", True, "toolUse")]:
            got = self.call("openai_reply", harness.openai_reply, choice(finish, calls))
            self.assertEqual(got.get("stop_reason"), want,
                             f"finish_reason {finish!r} with{'' if calls else 'out'} calls "
                             f"became {got.get('stop_reason')!r}; expected {want!r}. Some "
                             "local servers say 'stop' for a reply that calls tools.")
        got = self.call("openai_reply", harness.openai_reply, choice("content_filter"))
        self.assertEqual((got.get("stop_reason"), got.get("error_message")),
                         ("error", "finish_reason content_filter"),
                         f"content_filter became {got.get('stop_reason')!r}, "
                         f"{got.get('error_message')!r}; expected a failed reply.")
        got = self.call("openai_reply", harness.openai_reply, choice("content_filter", True))
        self.assertEqual((got.get("stop_reason"), got.get("error_message")),
                         ("error", "finish_reason content_filter"),
                         f"calls with finish_reason content_filter became "
                         f"{got.get('stop_reason')!r}, {got.get('error_message')!r}; expected a "
                         "failed reply: an unknown finish wins over the calls.")

    def test_reply_bad_arguments_fail(self):
        """Arguments that are not a JSON object make a failed reply that calls nothing, not even the reply's other, good call; an empty arguments string is no arguments, {}."""
        for text in ('{"path": "calc.py"', '"calc.py"'):
            data = json.loads(json.dumps(lab.OPENAI_TOOL))
            data["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = text
            got = self.call(f"openai_reply on arguments {text!r}", harness.openai_reply, data,
                            hint="Catch it: such arguments make a failed reply, stop_reason "
                                 "'error', with no toolCall.")
            calls = [b for b in got.get("content", []) if b.get("type") == "toolCall"]
            self.assertEqual(got.get("stop_reason"), "error",
                             f"arguments {text!r} gave stop_reason {got.get('stop_reason')!r}; "
                             "expected 'error': nobody knows what that call asks for.")
            self.assertEqual(calls, [], f"arguments {text!r} still gave a toolCall: {calls}.")
            self.assertIn("call_abc", got.get("error_message", ""),
                          "the error_message does not name the call.")
        data = json.loads(json.dumps(lab.OPENAI_TOOL))
        good = data["choices"][0]["message"]["tool_calls"][0]
        bad = {**good, "id": "call_bad", "function": {**good["function"], "arguments": '"x"'}}
        data["choices"][0]["message"]["tool_calls"] = [good, bad]
        got = self.call("openai_reply on a good call and a bad one", harness.openai_reply, data)
        calls = [b for b in got.get("content", []) if b.get("type") == "toolCall"]
        self.assertEqual((got.get("stop_reason"), calls), ("error", []),
                         f"a good call and a bad one gave stop_reason {got.get('stop_reason')!r} "
                         f"and the calls {calls}; expected a failed reply with no call: a failed "
                         "reply's calls never run, and one kept in it would be left with no result.")
        data = json.loads(json.dumps(lab.OPENAI_TOOL))
        data["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = ""
        got = self.call("openai_reply on arguments ''", harness.openai_reply, data)
        calls = [b.get("arguments") for b in got.get("content", []) if b.get("type") == "toolCall"]
        self.assertEqual((got.get("stop_reason"), calls), ("toolUse", [{}]),
                         f"a call whose arguments are '' gave stop_reason "
                         f"{got.get('stop_reason')!r} and arguments {calls}; expected toolUse "
                         "and {}: a tool that takes no arguments may be sent none, as lesson "
                         "14's parse_arguments reads it.")

    def test_reply_usage_absent(self):
        """A server that sends no usage gives usage {}."""
        data = {k: v for k, v in lab.OPENAI_TEXT.items() if k != "usage"}
        got = self.call("openai_reply", harness.openai_reply, data)
        self.assertEqual(got.get("usage"), {}, f"usage is {got.get('usage')}; expected {{}}: "
                                               "no count is better than a made-up one.")

    def test_events_text(self):
        """A text stream yields its pieces, then one end with the stop and the usage of the last chunk."""
        events = self.events("openai_events", harness.openai_events,
                             lab.sse_events(lab.OPENAI_STREAM_TEXT))
        want = [{"type": "text", "text": "Fixed: add() "}, {"type": "text", "text": "now adds. ✓"},
                {"type": "end", "stop_reason": "stop", "usage": {"input": 31, "output": 8}}]
        self.assertEqual(events, want, f"the events are {events}; expected {want}.")

    def test_events_calls_by_index(self):
        """Pieces of two calls that arrive interleaved are matched to their call by index."""
        events = self.events("openai_events", harness.openai_events,
                             lab.sse_events(lab.OPENAI_STREAM_TOOLS))
        calls = [e for e in events if e["type"] == "call"]
        self.assertEqual(calls, [{"type": "call", "index": 0, "id": "call_r1", "name": "read"},
                                 {"type": "call", "index": 1, "id": "call_b2", "name": "bash"}],
                         f"the call events are {calls}.")
        self.assertEqual((_arguments(events, 0), _arguments(events, 1)),
                         ('{"path": "calc.py"}', '{"command": "python -m pytest -q"}'),
                         f"call 0's pieces join into {_arguments(events, 0)!r} and call 1's into "
                         f"{_arguments(events, 1)!r}; a piece belongs to the call its index "
                         "names, not to the last call that started.")
        self.assertEqual(events[-1], {"type": "end", "stop_reason": "toolUse",
                                      "usage": {"input": 402, "output": 40}},
                         f"the last event is {events[-1]}.")

    def test_events_calls_out_of_order(self):
        """Calls whose first pieces arrive out of index order keep the index their pieces name, so each call's pieces join that call."""
        def pieces(*tool_calls):
            return {"choices": [{"index": 0, "delta": {"tool_calls": list(tool_calls)},
                                 "finish_reason": None}]}
        chunks = [pieces({"index": 1, "id": "call_b2", "type": "function",
                          "function": {"name": "bash", "arguments": ""}}),
                  pieces({"index": 0, "id": "call_r1", "type": "function",
                          "function": {"name": "read", "arguments": ""}}),
                  pieces({"index": 1, "function": {"arguments": '{"command": '}}),
                  pieces({"index": 0, "function": {"arguments": '{"path": "calc.py"}'}}),
                  pieces({"index": 1, "function": {"arguments": '"python -m pytest -q"}'}}),
                  {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]
        items = [{"event": None, "data": json.dumps(c)} for c in chunks]
        items.append({"event": None, "data": "[DONE]"})
        events = self.events("openai_events", harness.openai_events, items)
        calls = [e for e in events if e["type"] == "call"]
        want = [{"type": "call", "index": 1, "id": "call_b2", "name": "bash"},
                {"type": "call", "index": 0, "id": "call_r1", "name": "read"}]
        joined = {c["id"]: _arguments(events, c["index"]) for c in calls}
        self.assertEqual(calls, want,
                         f"call 1 (bash) started before call 0 (read) and the call events are "
                         f"{calls}, so their arguments join as {joined}; expected {want}: a call "
                         "keeps the index its pieces name, whatever order the calls start in.")

    def test_events_id_repeated(self):
        """A server that repeats a call's id and name on every piece still makes one call event per index, at its first piece."""
        def repeat_id_and_name(choice):
            for piece in (choice.get("delta") or {}).get("tool_calls") or []:
                piece["id"] = ("call_r1", "call_b2")[piece["index"]]
                piece.setdefault("function", {})["name"] = ("read", "bash")[piece["index"]]
        sse = _edited_choices(lab.OPENAI_STREAM_TOOLS, repeat_id_and_name)
        events = self.events("openai_events", harness.openai_events, sse)
        calls = [e for e in events if e["type"] == "call"]
        self.assertEqual(calls, [{"type": "call", "index": 0, "id": "call_r1", "name": "read"},
                                 {"type": "call", "index": 1, "id": "call_b2", "name": "bash"}],
                         f"with the id on every piece the call events are {calls}; expected one "
                         "per index: a call starts at the first piece of its index, whatever "
                         "the later pieces repeat.")

    def test_events_finish_and_usage_kept(self):
        """finish_reason and usage are kept for the end: a later chunk where they are null does not erase them."""
        chunks = [{"choices": [{"index": 0, "delta": {"content": "Done."}, "finish_reason": None}],
                   "usage": None},
                  {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 31, "completion_tokens": 2}},
                  {"choices": [{"index": 0, "delta": {}, "finish_reason": None}], "usage": None}]
        items = [{"event": None, "data": json.dumps(c)} for c in chunks]
        items.append({"event": None, "data": "[DONE]"})
        events = self.events("openai_events", harness.openai_events, items)
        want = {"type": "end", "stop_reason": "stop", "usage": {"input": 31, "output": 2}}
        self.assertEqual(events[-1] if events else None, want,
                         f"a stream whose last chunk before [DONE] has finish_reason null and "
                         f"usage null ended with {events[-1] if events else None}; expected "
                         f"{want}: keep a finish_reason and a usage once seen, and let a null "
                         "one change nothing.")

    def test_events_calls_with_a_stop(self):
        """A stream that brings calls and then says finish_reason "stop", as some local servers do, ends with stop_reason "toolUse"."""
        def finish_with_stop(choice):
            if choice.get("finish_reason"):
                choice["finish_reason"] = "stop"
        sse = _edited_choices(lab.OPENAI_STREAM_TOOLS, finish_with_stop)
        events = self.events("openai_events", harness.openai_events, sse)
        self.assert_one_terminal_last("a stream of calls ending in 'stop'", events)
        self.assertEqual(events[-1].get("stop_reason"), "toolUse",
                         f"calls and finish_reason 'stop' ended with {events[-1]}; expected "
                         "stop_reason 'toolUse': the calls were asked for, and 'stop' is a "
                         "finish in OPENAI_STOPS.")

    def test_events_error_and_cut(self):
        """A chunk with an error ends the stream with its words; chunks that stop before [DONE] end it with an error."""
        whole = lab.sse_events(lab.OPENAI_STREAM_TEXT)
        for cut in (len(whole) - 1, 3):
            events = self.events("openai_events", harness.openai_events, whole[:cut])
            self.assert_one_terminal_last(f"a stream cut after {cut} events", events)
            self.assertEqual(events[-1].get("type"), "error",
                             f"a stream cut before [DONE] ended with {events[-1]}; it is not "
                             "complete.")
        broken = whole[:2] + [{"event": None, "data": json.dumps(
            {"error": {"type": "server_error", "message": "The model crashed."}})}] + whole[2:]
        events = self.events("openai_events", harness.openai_events, broken)
        self.assert_one_terminal_last("a stream with an error chunk", events)
        self.assertEqual(events[-1], {"type": "error", "message": "server_error: The model crashed."},
                         f"the last event is {events[-1]}.")

    def test_events_error_as_text(self):
        """An error chunk whose "error" is a plain string ends the stream with one error event holding that string."""
        whole = lab.sse_events(lab.OPENAI_STREAM_TEXT)
        broken = whole[:2] + [{"event": None, "data": json.dumps(
            {"error": "The model crashed."})}] + whole[2:]
        events = self.events("openai_events", harness.openai_events, broken)
        self.assert_one_terminal_last("a stream with an error chunk that is a string", events)
        self.assertTrue(events[-1].get("type") == "error"
                        and "The model crashed." in str(events[-1].get("message")),
                        f"a chunk {{'error': 'The model crashed.'}} ended the stream with "
                        f"{events[-1]}; expected an error event whose message holds the string. "
                        "Some servers send the error as text, not as an object with a type.")


    def test_reply_counts_partly_sent(self):
        """A usage that names only one count gives 0 for the other."""
        for usage, want in (({"prompt_tokens": 5}, {"input": 5, "output": 0}),
                            ({"completion_tokens": 3}, {"input": 0, "output": 3})):
            got = self.call("openai_reply", harness.openai_reply,
                            {**lab.OPENAI_TEXT, "usage": usage})
            self.assertEqual(got.get("usage"), want, f"usage {usage} became {got.get('usage')}; "
                                                     f"expected {want}.")

    def test_failed_reply_keeps_its_text(self):
        """A reply that fails (a finish_reason the book has no name for) keeps its text and holds no call."""
        data = {"choices": [{"index": 0, "finish_reason": "content_filter", "message": {
            "role": "assistant", "content": "Partly said.", "tool_calls": [
                {"id": "call_r1", "type": "function",
                 "function": {"name": "read", "arguments": '{"path": "calc.py"}'}}]}}]}
        got = self.call("openai_reply", harness.openai_reply, data)
        self.assertEqual((got.get("stop_reason"), got.get("content")),
                         ("error", [{"type": "text", "text": "Partly said."}]),
                         f"a reply cut by content_filter became {got}; expected a failed reply "
                         "whose content is its text block only.")

    def test_events_unnamed_finish_fails(self):
        """A stream whose finish_reason the book has no name for ends with an error naming it; a call piece with no index is call 0, and an empty arguments text yields no arguments event."""
        chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [
                      {"id": "call_r1", "type": "function",
                       "function": {"name": "read", "arguments": ""}}]}}]},
                  {"choices": [{"index": 0, "delta": {"tool_calls": [
                      {"function": {"arguments": '{"path": "calc.py"}'}}]}}]},
                  {"choices": [{"index": 0, "delta": {}, "finish_reason": "content_filter"}]}]
        items = [{"event": None, "data": json.dumps(c)} for c in chunks]
        items.append({"event": None, "data": "[DONE]"})
        events = self.events("openai_events", harness.openai_events, items)
        want = [{"type": "call", "index": 0, "id": "call_r1", "name": "read"},
                {"type": "arguments", "index": 0, "json": '{"path": "calc.py"}'},
                {"type": "error", "message": "finish_reason content_filter"}]
        self.assertEqual(events, want, f"the events are {events}; expected {want}.")

    def test_events_no_finish_fails(self):
        """A stream that reaches [DONE] with no finish_reason at all ends with an error, not an end: nobody said why it stopped."""
        def forget(choice):
            choice["finish_reason"] = None
        items = _edited_choices(lab.OPENAI_STREAM_TEXT, forget)
        events = self.events("openai_events", harness.openai_events, items)
        self.assert_one_terminal_last("a stream with no finish_reason", events)
        self.assertEqual(events[-1], {"type": "error", "message": "finish_reason None"},
                         f"a stream with no finish_reason ended with {events[-1]}; expected the "
                         "error 'finish_reason None': a reply nobody said was finished may have "
                         "been cut, and is not recorded as a whole one.")


# ---------------------------------------------- labs 3 and 4: bytes on the wire, failures are replies

def _anthropic(answers, environ=None, size=7, **options):
    wire, sleeps = lab.Transport(answers, size=size), _Sleeps()
    model = harness.AnthropicModel("claude-test", transport=wire, sleep=sleeps,
                                   environ={"ANTHROPIC_API_KEY": KEY} if environ is None
                                   else environ, **options)
    return model, wire, sleeps


def _openai(answers, environ=None, **options):
    wire, sleeps = lab.Transport(answers), _Sleeps()
    model = harness.OpenAIModel("gpt-test", transport=wire, sleep=sleeps,
                                environ={} if environ is None else environ, **options)
    return model, wire, sleeps


def _ask_read():
    return [lab.user("Why does the test fail?")]


EVENTS = [{"event": "message_start", "data": '{"type": "message_start"}'},
          {"event": None, "data": "caf\u00e9 \u2615 \U0001F600\nsecond line"},
          {"event": "content_block_delta", "data": '{"text": "\u00e9t\u00e9"}'},
          {"event": "message_stop", "data": ""}]


class _Chunks:
    """An iterable of chunks that counts how many have been read."""

    def __init__(self, chunks):
        self.chunks, self.read = list(chunks), 0

    def __iter__(self):
        for chunk in self.chunks:
            self.read += 1
            yield chunk


class Lab3(_LabCase):

    def sse(self, chunks, what):
        try:
            return list(harness.read_sse(chunks))
        except Exception as error:
            self.fail(f"read_sse raised {type(error).__name__}: {error}, {what}")

    def test_events_come_back(self):
        """read_sse gives back each event with its name (None without an event line) and its data, several data lines joined with a newline."""
        got = self.sse([lab.sse(EVENTS)], "on the whole stream in one chunk")
        self.assertEqual(got, EVENTS, f"read_sse gave {got!r}; expected {EVENTS!r}")

    def test_cut_anywhere(self):
        """Cut at any byte, the bytes give the same events, even when the cut splits a character that UTF-8 writes as two, three or four bytes."""
        data = lab.sse(EVENTS)
        for offset in range(1, len(data)):
            got = self.sse(lab.chunks(data, [offset]), f"with the bytes cut at {offset}")
            if got != EVENTS:
                self.fail(f"with the bytes cut at offset {offset} ({data[:offset][-12:]!r} | "
                          f"{data[offset:][:12]!r}) read_sse gave {got!r}. Decode with one "
                          "incremental decoder for the whole stream: a chunk may end inside a "
                          "character.")
        got = self.sse(lab.chunks(data, "every byte"), "one byte a chunk")
        self.assertEqual(got, EVENTS, f"one byte a chunk, read_sse gave {got!r}")

    def test_line_endings(self):
        """A line may end in \\n, \\r\\n or \\r, and a cut between \\r and \\n is one line ending, not two."""
        for newline in ("\r\n", "\r"):
            data = lab.sse(EVENTS, newline=newline)
            for at in ([], "every byte"):
                got = self.sse(lab.chunks(data, at), f"with lines ending {newline!r}")
                self.assertEqual(got, EVENTS, f"with lines ending in {newline!r} "
                                 f"({'one byte a chunk' if at else 'one chunk'}), read_sse "
                                 f"gave {got!r}")

    def test_comments_and_fields(self):
        """Comment lines are skipped, one space after the colon is dropped, a field with no colon counts as empty, other fields are ignored, and an event with no data line is not yielded."""
        data = (b": keep-alive\n\nevent: ping\n\nid: 7\nretry: 100\ndata:x\ndata:  two\ndata\n\n"
                b"event: only\ndata: 1\n\n")
        got = self.sse([data], "on comments and fields")
        want = [{"event": None, "data": "x\n two\n"}, {"event": "only", "data": "1"}]
        self.assertEqual(got, want, f"read_sse gave {got!r}; expected {want!r}")
        data = b"event: only\n: a comment\ndata: 1\n:\ndata: 2\n\n: ping\n\n"
        got = self.sse([data], "on comments among data lines")
        want = [{"event": "only", "data": "1\n2"}]
        self.assertEqual(got, want, f"on {data!r} read_sse gave {got!r}; expected {want!r}: a "
                         "line that starts with a colon is a comment, and adds nothing to the "
                         "event it sits in, nor makes an event of its own")

    def test_cut_tail_not_yielded(self):
        """An event with no blank line after it, at the end of the bytes, is not yielded: the stream was cut before it was whole."""
        data = lab.sse(EVENTS)
        for tail in (1, 2, 9):
            got = self.sse([data[:-tail]], f"with the last {tail} bytes missing")
            self.assertEqual(got, EVENTS[:-1], f"with the last {tail} bytes cut off, read_sse "
                             f"gave {got!r}; the last event had no blank line after it yet, so "
                             "it is not whole and must not be yielded")

    def test_a_lone_cr_at_the_end(self):
        """A stream that ends on a lone \\r: that \\r ends its line, so data: one\\r\\r yields its event, while data: one\\rdata: two\\r and data: one\\r:\\r, cut before their blank line, yield none."""
        for data, want in ((b"data: one\r\r", [{"event": None, "data": "one"}]),
                           (b"data: one\rdata: two\r", []), (b"data: one\r:\r", [])):
            got = self.sse([data], f"on {data!r}")
            self.assertEqual(got, want, f"on {data!r} read_sse gave {got!r}; expected {want!r}: "
                             "at the end of the stream, a line that ends in \\r is the line "
                             "without its \\r, no more and no less")

    def test_events_as_they_arrive(self):
        """read_sse is a generator that yields each event as soon as its blank line has arrived, before it reads the next chunk."""
        data = lab.sse(EVENTS[:2])
        first_end = lab.sse(EVENTS[:1])
        source = _Chunks(lab.chunks(data, [len(first_end)]))
        try:
            events = harness.read_sse(source)
            first = next(events)
        except Exception as error:
            self.fail(f"read_sse raised {type(error).__name__}: {error}")
        self.assertEqual(first, EVENTS[0], f"the first event was {first!r}")
        self.assertEqual(source.read, 1, f"to hand out the first event read_sse read "
                         f"{source.read} chunks; the first chunk already held it whole. Yield "
                         "each event as it ends: a reader waiting for the whole stream shows "
                         "nothing until the reply is over.")


# -------------------------------------------------------------- lab 4: failures are replies

class Lab4(_LabCase):

    def complete(self, model):
        return self.call("complete", model.complete, "Be brief.", _ask_read(), TOOLS)

    def stream(self, model):
        return self.events("stream", model.stream, "Be brief.", _ask_read(), TOOLS)

    def test_one_request_each_way(self):
        """complete sends one request, the provider's URL, headers and body, and returns the reply; the key goes only in the header."""
        model, wire, _ = _anthropic([lab.answer(200, lab.ANTHROPIC_TOOL)])
        got = self.complete(model)
        self.assertEqual(got.get("stop_reason"), "toolUse", f"complete returned {got}.")
        self.assertEqual(len(wire.requests), 1, f"{len(wire.requests)} requests were sent.")
        sent = wire.requests[0]
        self.assertEqual((sent.method, sent.url), ("POST", "https://api.anthropic.com/v1/messages"),
                         f"the request went to {sent.method} {sent.url}.")
        self.assertEqual(sent.headers.get("x-api-key"), KEY, "the key is not in x-api-key.")
        self.assertEqual(sent.body.get("system"), "Be brief.", "the body is not body()'s.")
        self.assertNotIn(KEY, json.dumps(sent.body), "the key is in the request's body.")
        model, wire, _ = _openai([lab.answer(200, lab.OPENAI_TEXT)])
        got = self.complete(model)
        self.assertEqual(got.get("stop_reason"), "stop", f"complete returned {got}.")
        self.assertNotIn("authorization", wire.requests[0].headers,
                         "with OPENAI_API_KEY unset an Authorization header went out; a local "
                         "server needs none.")

    def test_refusal_is_a_reply(self):
        """An HTTP error is a failed reply with the status and the provider's words, never an exception, and a 400 is not sent again."""
        model, wire, sleeps = _anthropic([lab.answer(400, lab.ANTHROPIC_BAD_REQUEST)] * 5)
        got = self.complete(model)
        want = "400 invalid_request_error: " + lab.ANTHROPIC_BAD_REQUEST["error"]["message"]
        self.assertEqual((got.get("stop_reason"), got.get("error_message")), ("error", want),
                         f"a 400 gave {got}; expected a failed reply whose error_message is "
                         f"{want!r}.")
        self.assertEqual(got.get("content"), [], "a failed reply holds no content.")
        self.assertEqual((len(wire.requests), sleeps), (1, []),
                         f"a 400 was sent {len(wire.requests)} times: the same request will be "
                         "refused again, so it is not retried.")

    def test_busy_is_retried_with_backoff(self):
        """A 529, a 429 or a 5xx is sent again after a pause that doubles, or as long as Retry-After asks."""
        model, wire, sleeps = _anthropic([lab.answer(529, lab.ANTHROPIC_OVERLOADED),
                                          lab.answer(503, "upstream connect error"),
                                          lab.answer(200, lab.ANTHROPIC_TEXT)])
        got = self.complete(model)
        self.assertEqual(got.get("stop_reason"), "stop",
                         f"after 529, 503, 200 complete returned {got}; expected the answer.")
        self.assertEqual(sleeps, [harness.BACKOFF, 2 * harness.BACKOFF],
                         f"the pauses were {sleeps}; expected BACKOFF, then twice it, through "
                         "the injected sleep.")
        model, wire, sleeps = _openai([lab.answer(429, lab.OPENAI_RATE_LIMITED,
                                                  {"Retry-After": "20"}),
                                       lab.answer(200, lab.OPENAI_TEXT)])
        self.complete(model)
        self.assertEqual(sleeps, [20.0], f"after a 429 with Retry-After: 20 the pause was "
                                         f"{sleeps}; expected 20 seconds.")

    def test_gives_up_with_the_words(self):
        """After RETRIES retries the failure is returned, in the provider's words."""
        model, wire, sleeps = _anthropic([lab.answer(529, lab.ANTHROPIC_OVERLOADED)] * 5)
        got = self.complete(model)
        self.assertEqual(got.get("error_message"), "529 overloaded_error: Overloaded",
                         f"the reply is {got}; expected error_message "
                         "'529 overloaded_error: Overloaded'.")
        self.assertEqual(len(wire.requests), harness.RETRIES + 1,
                         f"{len(wire.requests)} requests were sent; expected 1 + RETRIES.")
        model, wire, sleeps = _openai([lab.answer(429, lab.OPENAI_RATE_LIMITED)] * 5)
        got = self.complete(model)
        self.assertTrue(str(got.get("error_message")).startswith(
            "429 requests: Rate limit reached"),
            f"the reply is {got}; expected '429 requests: Rate limit reached...'.")

    def test_connection_failures(self):
        """A refused or timed-out connection, or one that breaks while the body is read, is retried, and at last is a failed reply saying so."""
        model, wire, sleeps = _openai([lab.refused(), lab.answer(200, lab.OPENAI_TEXT)])
        got = self.complete(model)
        self.assertEqual(got.get("stop_reason"), "stop",
                         f"a refused connection, then an answer, gave {got}.")
        model, wire, sleeps = _openai([lab.timed_out()] * 4)
        got = self.complete(model)
        self.assertEqual((got.get("stop_reason"), got.get("error_message")),
                         ("error", "connection failed: timed out"),
                         f"four time-outs gave {got}; expected error_message "
                         "'connection failed: timed out'.")
        text = json.dumps(lab.OPENAI_TEXT)
        model, wire, sleeps = _openai([lab.answer(200, lab.OPENAI_TEXT, drop_after=len(text) // 2),
                                       lab.answer(200, lab.OPENAI_TEXT)])
        got = self.complete(model)
        self.assertEqual((len(wire.requests), got.get("stop_reason")), (2, "stop"),
                         f"a connection that broke while the body was read, then an answer: "
                         f"{len(wire.requests)} requests and {got}; expected the answer after a "
                         "retry. Reading the body is part of the request: keep it in the try.")

    def test_stream_never_connected(self):
        """A stream whose connection is refused on every attempt ends, after the retries, with one error event "connection failed: ...": nothing was received, so nothing was lost ("connection lost" is for a drop after a piece)."""
        model, wire, sleeps = _openai([lab.refused()] * 5)
        got = self.stream(model)
        self.assert_one_terminal_last("a stream refused every time", got)
        self.assertEqual(len(wire.requests), 1 + harness.RETRIES,
                         f"{len(wire.requests)} requests were sent; expected 1 + RETRIES.")
        self.assertTrue(got[-1].get("type") == "error"
                        and got[-1].get("message", "").startswith("connection failed"),
                        f"a stream refused on every attempt ended with {got[-1]}; expected an "
                        "error, 'connection failed: ...': no piece ever came, so say 'failed', "
                        "and keep 'connection lost' for a drop after a piece.")

    def test_each_pause_from_its_own_answer(self):
        """A retry's pause reads the headers of the answer just refused: after a refused connection, which has none, it is the doubling again, not the Retry-After of an answer before."""
        model, wire, sleeps = _openai([lab.answer(429, lab.OPENAI_RATE_LIMITED,
                                                  {"Retry-After": "20"}),
                                       lab.refused(), lab.answer(200, lab.OPENAI_TEXT)])
        self.complete(model)
        self.assertEqual(sleeps, [20.0, 2 * harness.BACKOFF],
                         f"a 429 with Retry-After: 20, then a refused connection: the pauses were "
                         f"{sleeps}; expected 20 seconds, then 2 * BACKOFF. A refused connection "
                         "has no headers: the 429's were for the answer before.")

    def test_retries_setting_is_read(self):
        """The model's own retries setting, not the module's RETRIES, bounds the attempts, in complete and in stream."""
        for retries in (0, 1):
            for way in ("complete", "stream"):
                model, wire, sleeps = _openai([lab.answer(429, lab.OPENAI_RATE_LIMITED)] * 5,
                                              retries=retries)
                getattr(self, way)(model)
                self.assertEqual(len(wire.requests), retries + 1,
                                 f"with retries={retries}, {way} sent {len(wire.requests)} "
                                 f"requests to a provider always busy; expected {retries + 1}: "
                                 "compare the attempt with self.retries, not RETRIES.")

    def test_stream_each_pause_from_its_own_answer(self):
        """stream too reads each pause from the answer just refused: after a Retry-After, a refused connection pauses by the doubling."""
        model, wire, sleeps = _anthropic([lab.answer(529, lab.ANTHROPIC_OVERLOADED,
                                                     {"Retry-After": "20"}),
                                          lab.refused(),
                                          lab.answer(200, lab.ANTHROPIC_STREAM_TEXT)])
        self.stream(model)
        self.assertEqual(sleeps, [20.0, 2 * harness.BACKOFF],
                         f"stream: a 529 with Retry-After: 20, then a refused connection: the "
                         f"pauses were {sleeps}; expected 20 seconds, then 2 * BACKOFF. Start "
                         "each attempt with headers = {}.")

    def test_unreadable_answer_is_a_reply(self):
        """A 200 whose body reply cannot read (not JSON, no choices, choices null) is a failed reply, "unreadable answer", never an exception."""
        for make, body in ((_anthropic, "<html>Bad gateway</html>"), (_openai, {"choices": []}),
                           (_openai, {"choices": None})):
            model, wire, sleeps = make([lab.answer(200, body)])
            got = self.complete(model)
            self.assertTrue(got.get("stop_reason") == "error"
                            and str(got.get("error_message")).startswith("unreadable answer"),
                            f"a 200 whose body is {body!r} gave {got}; expected a failed reply, "
                            "'unreadable answer: ...': catch what reply raises on a body it "
                            "cannot read (ValueError, KeyError, TypeError, IndexError).")

    def test_stream_reads_cut_bytes(self):
        """stream yields the provider's events from bytes cut anywhere, a character split in two included."""
        for make, text in [(_anthropic, lab.ANTHROPIC_STREAM_TOOL),
                           (_openai, lab.OPENAI_STREAM_TOOLS), (_openai, lab.OPENAI_STREAM_TEXT)]:
            model, wire, _ = make([lab.answer(200, text)])
            got = self.stream(model)
            want = list(model.events(lab.sse_events(text)))
            self.assertEqual(got, want, f"stream yielded {got}; expected {want}.")
            self.assertIs(wire.requests[0].body.get("stream"), True,
                          "stream() did not ask for a stream.")
        crlf = lab.ANTHROPIC_STREAM_TEXT.replace("\n", "\r\n")
        model, wire, _ = _anthropic([lab.answer(200, crlf)], size=1)
        got = self.stream(model)
        want = list(model.events(lab.sse_events(lab.ANTHROPIC_STREAM_TEXT)))
        self.assertEqual(got, want, f"a stream with \\r\\n line ends, one byte a chunk, "
                                    f"yielded {got}; expected {want}.")

    def test_stream_retries_before_the_first_piece(self):
        """Before any piece is out, a busy status, an error event or a dropped connection is retried."""
        early_drop = lab.ANTHROPIC_STREAM_TEXT.index("content_block_delta")
        model, wire, sleeps = _anthropic([lab.answer(529, lab.ANTHROPIC_OVERLOADED),
                                          lab.answer(200, lab.ANTHROPIC_STREAM_OVERLOADED),
                                          lab.answer(200, lab.ANTHROPIC_STREAM_TEXT,
                                                     drop_after=early_drop),
                                          lab.answer(200, lab.ANTHROPIC_STREAM_TEXT)])
        got = self.stream(model)
        self.assertEqual(len(wire.requests), 4, f"{len(wire.requests)} requests were sent; "
                                                "expected 4: three failures, then the answer.")
        self.assertEqual("".join(e["text"] for e in got if e["type"] == "text"),
                         "Fixed: add() now adds. ✓", f"the stream yielded {got}.")
        self.assert_one_terminal_last("the retried stream", got)
        self.assertEqual(got[-1].get("type"), "end", f"the stream ended with {got[-1]}.")

    def test_stream_waits_as_asked(self):
        """stream pauses as complete does: BACKOFF, then twice it, or as long as Retry-After asks."""
        model, wire, sleeps = _anthropic([lab.answer(529, lab.ANTHROPIC_OVERLOADED),
                                          lab.answer(529, lab.ANTHROPIC_OVERLOADED),
                                          lab.answer(200, lab.ANTHROPIC_STREAM_TEXT)])
        self.stream(model)
        self.assertEqual(sleeps, [harness.BACKOFF, 2 * harness.BACKOFF],
                         f"after two 529s the stream's pauses were {sleeps}; expected BACKOFF, "
                         "then twice it, through the injected sleep.")
        model, wire, sleeps = _openai([lab.answer(429, lab.OPENAI_RATE_LIMITED,
                                                  {"Retry-After": "20"}),
                                       lab.answer(200, lab.OPENAI_STREAM_TEXT)])
        self.stream(model)
        self.assertEqual(sleeps, [20.0], f"after a 429 with Retry-After: 20 the stream's pause "
                                         f"was {sleeps}; expected 20 seconds: read the headers "
                                         "of the answer that was refused.")

    def test_stream_never_retries_after_a_piece(self):
        """Once a piece is out, a dropped connection is one error event, "connection lost", and nothing is sent again."""
        late_drop = lab.OPENAI_STREAM_TEXT.index("now adds")
        model, wire, sleeps = _openai([lab.answer(200, lab.OPENAI_STREAM_TEXT,
                                                  drop_after=late_drop),
                                       lab.answer(200, lab.OPENAI_STREAM_TEXT)])
        got = self.stream(model)
        self.assertEqual(len(wire.requests), 1,
                         f"{len(wire.requests)} requests were sent; after text is out a retry "
                         "writes a second answer onto the first.")
        self.assertEqual(_pieces(got), [{"type": "text", "text": "Fixed: add() "}],
                         f"the pieces are {_pieces(got)}.")
        self.assert_one_terminal_last("the dropped stream", got)
        self.assertTrue(got[-1].get("type") == "error"
                        and got[-1].get("message", "").startswith("connection lost"),
                        f"the stream ended with {got[-1]}; expected an error, "
                        "'connection lost: ...'.")
        # A call is a piece too: the loop has announced it, so a second answer would call twice.
        after_call = lab.OPENAI_STREAM_TOOLS.index("data: ", 1)    # the first chunk, whole
        model, wire, sleeps = _openai([lab.answer(200, lab.OPENAI_STREAM_TOOLS,
                                                  drop_after=after_call),
                                       lab.answer(200, lab.OPENAI_STREAM_TOOLS)])
        got = self.stream(model)
        self.assertEqual((len(wire.requests), [e["type"] for e in _pieces(got)]), (1, ["call"]),
                         f"a stream cut after its first call event: {len(wire.requests)} "
                         f"requests, pieces {_pieces(got)}. A call event is a piece like text: "
                         "once it is out, a retry would announce the call a second time.")
        self.assertTrue(got[-1].get("type") == "error"
                        and got[-1].get("message", "").startswith("connection lost"),
                        f"the stream cut after a call ended with {got[-1]}; expected an error, "
                        "'connection lost: ...'.")
        text = lab.ANTHROPIC_STREAM_TEXT.replace(
            'event: content_block_stop', 'event: error\ndata: {"type": "error", "error": '
            '{"type": "overloaded_error", "message": "Overloaded"}}\n\nevent: content_block_stop', 1)
        model, wire, sleeps = _anthropic([lab.answer(200, text), lab.answer(200, text)])
        got = self.stream(model)
        self.assertEqual((len(wire.requests), got[-1]),
                         (1, {"type": "error", "message": "overloaded_error: Overloaded"}),
                         f"an error after text: {len(wire.requests)} requests, last event "
                         f"{got[-1]}; expected 1 request and the provider's error.")

    def test_stream_unreadable_is_an_event(self):
        """A stream whose data is not JSON ends with one error event, "unreadable stream", and is not sent again."""
        garbage = "event: message_start\ndata: {not json\n\n"
        model, wire, sleeps = _anthropic([lab.answer(200, garbage), lab.answer(200, garbage)])
        got = self.stream(model)
        self.assertTrue(len(got) == 1 and got[0].get("type") == "error"
                        and got[0].get("message", "").startswith("unreadable stream"),
                        f"a stream of garbage gave {got}; expected one error event, "
                        "'unreadable stream: ...'.")
        self.assertEqual(len(wire.requests), 1, "an unreadable stream was asked for again; the "
                                                "same server will send the same garbage.")

    def test_stream_answers_not_retried(self):
        """An error event that is an answer, not a passing fault (a content filter, a refusal, a request refused in the stream), is yielded at once and not sent again, as complete() returns it at once."""
        filtered = ('data: {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, '
                    '"finish_reason": null}]}\n\n'
                    'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": '
                    '"content_filter"}]}\n\ndata: [DONE]\n\n')
        start = lab.ANTHROPIC_STREAM_OVERLOADED.split("event: error")[0]
        refusal = (start + 'event: message_delta\ndata: {"type": "message_delta", "delta": '
                   '{"stop_reason": "refusal"}, "usage": {"output_tokens": 1}}\n\n'
                   'event: message_stop\ndata: {"type": "message_stop"}\n\n')
        refused = (start + 'event: error\ndata: {"type": "error", "error": {"type": '
                   '"invalid_request_error", "message": "prompt is too long"}}\n\n')
        for what, make, text, words in (
                ("a content_filter finish", _openai, filtered, "finish_reason content_filter"),
                ("a refusal stop", _anthropic, refusal, "stop_reason refusal"),
                ("an invalid_request_error event", _anthropic, refused,
                 "invalid_request_error: prompt is too long")):
            model, wire, sleeps = make([lab.answer(200, text)] * 5)
            got = self.stream(model)
            self.assertEqual((len(wire.requests), sleeps, got[-1:]),
                             (1, [], [{"type": "error", "message": words}]),
                             f"a stream with {what} before any piece was sent "
                             f"{len(wire.requests)} times, with the pauses {sleeps}, and ended "
                             f"with {got[-1:]}; expected one request and the error {words!r}: "
                             "the provider gave its answer, and would give it again. Retry an "
                             "error event only when passing(message) is True.")

    def test_stream_refusal_is_an_event(self):
        """A status that is not retried is one error event with the provider's words."""
        model, wire, sleeps = _openai([lab.answer(401, lab.OPENAI_UNAUTHORIZED)])
        got = self.stream(model)
        self.assertEqual(got, [{"type": "error", "message": "401 invalid_request_error: "
                                + lab.OPENAI_UNAUTHORIZED["error"]["message"]}],
                         f"a 401 gave {got}.")
        self.assertEqual(len(wire.requests), 1, "a 401 was sent again.")

    def test_not_implemented_not_retried(self):
        """A 501 or a 505 is a 5xx that will not pass: one request, and a failed reply or error event with the provider's words at once, from complete and from stream."""
        for status in (501, 505):
            body = {"type": "error", "error": {"type": "api_error",
                                               "message": f"status {status}, not passing"}}
            words = f"{status} api_error: status {status}, not passing"
            model, wire, sleeps = _anthropic([lab.answer(status, body)] * 5)
            got = self.complete(model)
            self.assertEqual((len(wire.requests), sleeps, got.get("error_message")),
                             (1, [], words),
                             f"complete() with a {status}: {len(wire.requests)} requests, "
                             f"pauses {sleeps}, error_message {got.get('error_message')!r}; "
                             f"expected 1 request and {words!r} at once. Retry only a status "
                             "in RETRY_STATUSES: not every 5xx is a passing fault.")
            model, wire, sleeps = _anthropic([lab.answer(status, body)] * 5)
            got = self.stream(model)
            self.assertEqual((len(wire.requests), sleeps, got),
                             (1, [], [{"type": "error", "message": words}]),
                             f"stream() with a {status}: {len(wire.requests)} requests, pauses "
                             f"{sleeps}, events {got}; expected 1 request and one error event, "
                             f"{words!r}. Retry only a status in RETRY_STATUSES.")

    def test_a_bug_goes_up(self):
        """A transport that raises something other than OSError (a bug, not the network) is not a connection failure: the exception goes up from complete and from stream, after one try."""
        tries = []

        def transport(method, url, headers, body):
            tries.append(url)
            raise RuntimeError("a bug in the transport")

        model = harness.AnthropicModel("claude-test", transport=transport, sleep=_Sleeps(),
                                       environ={"ANTHROPIC_API_KEY": KEY})
        for what, go in (("complete()", lambda: model.complete("Be brief.", _ask_read(), TOOLS)),
                         ("stream()", lambda: list(model.stream("Be brief.", _ask_read(), TOOLS)))):
            tries.clear()
            try:
                got = go()
            except RuntimeError:
                self.assertEqual(len(tries), 1, f"{what} tried {len(tries)} times before the "
                                                "bug went up; a bug is not retried.")
                continue
            self.fail(f"{what} caught a RuntimeError from the transport and gave {got!r} after "
                      f"{len(tries)} tries: catch OSError, the network's failures, and let a "
                      "bug go up where it can be seen.")

    def test_a_body_bug_goes_up(self):
        """An exception raised while the request body is built (a bug in body(), before anything is sent) goes up from complete and from stream: it is not reported as an unreadable answer or stream."""
        class Broken(harness.AnthropicModel):
            def body(self, system, messages, tools, stream):
                raise KeyError("tool_use_id")

        model = Broken("claude-test", transport=lab.Transport([]), sleep=_Sleeps(),
                       environ={"ANTHROPIC_API_KEY": KEY})
        for what, go in (("complete()", lambda: model.complete("Be brief.", _ask_read(), TOOLS)),
                         ("stream()", lambda: list(model.stream("Be brief.", _ask_read(), TOOLS)))):
            try:
                got = go()
            except KeyError:
                continue
            self.fail(f"{what} gave {got!r} when body() raised KeyError('tool_use_id'): nothing "
                      "was sent, so nothing was read. Catch what reading the answer raises around "
                      "the reading only, and let an exception from self._post other than an "
                      "OSError go up: it is a bug in your request, not the provider's answer.")

    def test_key_never_shown(self):
        """The key is in no error message, no event (a stream's error event included, in both formats) and no repr, and is not kept on the model."""
        echo = {"error": {"type": "authentication_error", "message": f"invalid x-api-key {KEY}"}}
        model, wire, _ = _anthropic([lab.answer(401, echo), lab.answer(401, echo)])
        got = self.complete(model)
        self.assertEqual(got.get("stop_reason"), "error", f"a 401 gave {got}.")
        self.assertNotIn(KEY, json.dumps(got), "the key is in the failed reply: the provider "
                                               "quoted it back, and it must be taken out.")
        self.assertNotIn(KEY, json.dumps(self.stream(model)), "the key is in a stream's error.")
        self.assertNotIn(KEY, repr(model), "the key is in repr(model).")
        garbled = ('{"note": "from a proxy", "key": "%s"}' % KEY).encode() + b"\xff"
        model_b, _, _ = _anthropic([lab.answer(200, garbled)])
        got = self.complete(model_b)
        self.assertTrue(str(got.get("error_message")).startswith("unreadable answer"),
                        f"a 200 whose body is not UTF-8 gave {got}; expected a failed reply, "
                        "'unreadable answer: ...'.")
        self.assertNotIn(KEY, json.dumps(got), "the key is in an 'unreadable answer' failed "
                         "reply: the exception's repr quoted the body, key and all. Pass that "
                         "message through self._hide too.")
        quoted = lab.ANTHROPIC_STREAM_OVERLOADED.replace(
            '"overloaded_error", "message": "Overloaded"',
            f'"invalid_request_error", "message": "bad key {KEY}"')
        first = lab.OPENAI_STREAM_TEXT.split("\n\n")[0]
        chunk = json.dumps({"error": {"type": "invalid_request_error", "message": f"bad key {KEY}"}})
        for make, body, name in [(_anthropic, quoted, "ANTHROPIC_API_KEY"),
                                 (_openai, f"{first}\n\ndata: {chunk}\n\n", "OPENAI_API_KEY")]:
            streamed, _, _ = make([lab.answer(200, body)], environ={name: KEY})
            self.assertNotIn(KEY, json.dumps(self.stream(streamed)), "an error event inside a 200 "
                             "stream quoted the key and it reached the events: take the key out "
                             "of a stream's error words too, as out of a failed status's.")
        kept = [name for name, value in vars(model).items() if value == KEY]
        self.assertEqual(kept, [], f"the model keeps the key in {kept}; read it from the "
                                   "environment for each request, and keep it nowhere.")

    def test_harness_runs_on_each_adapter(self):
        """Your Harness runs a tool call through each adapter, streamed as lesson 14's loop asks for it: the second request answers the call by its id."""
        ws = lab.Workspace({"calc.py": "def add(a, b):\n    return a - b\n"})
        for make, answers in [
                (_anthropic, [lab.answer(200, lab.ANTHROPIC_STREAM_TOOL),
                              lab.answer(200, lab.ANTHROPIC_STREAM_TEXT)]),
                (_openai, [lab.answer(200, lab.OPENAI_STREAM_TOOLS),
                           lab.answer(200, lab.OPENAI_STREAM_TEXT)])]:
            model, wire, _ = make(answers)
            h = harness.Harness(model, "Be brief.", [harness.make_read_tool(ws)])
            events = self.call("the run", lab.drive, h.prompt("Why does the test fail?"))
            shape = lab.shape(h.messages)
            self.assertTrue(shape.startswith("U A[") and shape.endswith("A"),
                            f"the run left {shape}.")
            second = json.dumps(wire.requests[1].body) if len(wire.requests) > 1 else ""
            call_id = harness.tool_calls(h.messages[1])[0]["id"]
            self.assertIn(f'"{call_id}"', second.split('"messages"')[-1],
                          f"the second request does not carry the id {call_id} of the call it "
                          "answers.")
            self.assertEqual(events[-1]["type"], "agent_end", "the run did not end.")

    def test_failed_reply_ends_run_and_key_stays_out_of_the_log(self):
        """A provider failure ends the run as lesson 05's failed reply, recorded in lesson 11's log, with no key in it."""
        ws = lab.Workspace({})
        log = harness.SessionLog(ws, "session.jsonl")
        echo = {"error": {"type": "permission_error", "message": f"key {KEY} may not use this"}}
        model, wire, _ = _anthropic([lab.answer(403, echo)])
        h = harness.Harness(model, "Be brief.", [])
        h.subscribe(harness.persist_to(log))
        self.call("the run", lab.drive, h.prompt("Hello?"))
        self.assertEqual(lab.shape(log.replay()), "U A!", f"the log holds "
                                                          f"{lab.shape(log.replay())}.")
        self.assertNotIn(KEY, ws.read_text("session.jsonl"), "the key is in the session file.")

    def test_whole_or_streamed(self):
        """complete() asks for a whole answer (its body sets no stream), stream() for a stream (its body sets stream: true)."""
        for make, whole, streamed in ((_anthropic, lab.ANTHROPIC_TEXT, lab.ANTHROPIC_STREAM_TEXT),
                                      (_openai, lab.OPENAI_TEXT, lab.OPENAI_STREAM_TEXT)):
            model, wire, _ = make([lab.answer(200, whole), lab.answer(200, streamed)])
            self.complete(model)
            self.stream(model)
            flags = [sent.body.get("stream") if isinstance(sent.body, dict) else None
                     for sent in wire.requests]
            self.assertEqual(flags, [None, True], f"{type(model).__name__}: the bodies' stream "
                             f"fields were {flags}, complete's first; expected none for "
                             "complete, True for stream: complete posts with stream=False.")

    def test_stream_first_failures_retried(self):
        """stream() retries what fails before any piece as complete() does: an error event first, then a refused connection, each after a pause that doubles (BACKOFF, then twice it), and then yields the answer; a refused first request is retried too."""
        model, wire, sleeps = _anthropic([lab.answer(200, lab.ANTHROPIC_STREAM_OVERLOADED),
                                          lab.refused(),
                                          lab.answer(200, lab.ANTHROPIC_STREAM_TEXT)])
        got = self.stream(model)
        self.assertEqual((len(wire.requests), sleeps), (3, [harness.BACKOFF, 2 * harness.BACKOFF]),
                         f"{len(wire.requests)} requests were sent, with the pauses {sleeps}; "
                         "expected 3, and BACKOFF, then twice it: count the attempts from 0, "
                         "one more each failure, and sleep backoff(attempt, headers) between.")
        self.assertEqual(got[-1].get("type") if got else None, "end",
                         f"the stream ended with {got[-1] if got else None}.")
        model, wire, sleeps = _anthropic([lab.refused(),
                                          lab.answer(200, lab.ANTHROPIC_STREAM_TEXT)])
        got = self.stream(model)
        self.assertEqual((len(wire.requests), sleeps, got[-1].get("type") if got else None),
                         (2, [harness.BACKOFF], "end"),
                         f"a refused first request, then the answer: {len(wire.requests)} "
                         f"requests, pauses {sleeps}, the stream ended with "
                         f"{got[-1] if got else None}; expected 2 requests, one pause of BACKOFF, "
                         "and an end: a failure with no answer has no headers, so start each "
                         "attempt with headers = {}.")

    def test_ask_first(self):
        """ask_first asks before each tool not on the allow list: a no is an is_error result and the tool does not run, a yes runs it, a tool on the list runs unasked, and an async tool stays async and is handed the run's token."""
        asked, ran = [], []

        def plain(name):
            return {"name": name, "description": name, "parameters": {"type": "object"},
                    "execute": lambda arguments: ran.append(name) or f"{name} done"}

        async def slow(arguments, signal):
            ran.append(f"slow, token {'given' if signal is not None else 'missing'}")
            return "slow done"
        tools = [plain("read"), plain("write"), plain("bash"),
                 {"name": "slow", "description": "slow", "parameters": {"type": "object"},
                  "execute": slow}]
        wrapped = self.call("ask_first", harness.ask_first, tools,
                            lambda name, arguments: asked.append(name) or name != "write",
                            allow=("read",))
        self.assertTrue(inspect.iscoroutinefunction(wrapped[3]["execute"]),
                        "ask_first made the async tool a plain def: run_tool would not await it, "
                        "nor hand it the run's token")
        model = lab.ScriptedModel([lab.reply(lab.call("read", {}, id="r1"),
                                             lab.call("write", {}, id="w1"),
                                             lab.call("bash", {}, id="b1"),
                                             lab.call("slow", {}, id="s1")),
                                   lab.say("Done.")])
        h = harness.Harness(model, "Be brief.", wrapped)
        try:
            self.call("the run", lab.drive, h.prompt("Go."))
        except KeyboardInterrupt:
            self.fail("a no raised KeyboardInterrupt through the run: the call is left with no "
                      "result and the model never reads the answer. Raise an Exception "
                      "(PermissionError), which run_tool turns into an is_error result.")
        failed = {m["tool_call_id"]: m["is_error"] for m in h.messages
                  if m["role"] == "toolResult"}
        self.assertEqual((asked, ran, failed),
                         (["write", "bash", "slow"], ["read", "bash", "slow, token given"],
                          {"r1": False, "w1": True, "b1": False, "s1": False}),
                         f"with read allowed and a no for write: asked {asked}, ran {ran}, "
                         f"is_error by call {failed}; expected write, bash and slow asked, write "
                         "refused as an is_error result and not run, the others run, and the "
                         "async tool handed the run's token.")

    def test_ctrl_c_goes_up(self):
        """Ctrl-C while the provider is asked (KeyboardInterrupt from the transport) goes up from complete() and from stream(): only an OSError is a connection failure."""
        def transport(method, url, headers, body):
            raise KeyboardInterrupt
        model = harness.AnthropicModel("claude-test", transport=transport, sleep=_Sleeps(),
                                       environ={"ANTHROPIC_API_KEY": KEY})
        for what, go in (("complete()", lambda: model.complete("Be brief.", _ask_read(), TOOLS)),
                         ("stream()", lambda: list(model.stream("Be brief.", _ask_read(), TOOLS)))):
            try:
                got = go()
            except KeyboardInterrupt:
                continue
            except Exception as error:
                self.fail(f"{what} turned Ctrl-C into {type(error).__name__}: {error}; let "
                          "KeyboardInterrupt go up as it is.")
            self.fail(f"{what} caught Ctrl-C and gave {got!r}: catch OSError, not BaseException, "
                      "so the user can stop a request that hangs.")


if __name__ == "__main__":
    unittest.main()
