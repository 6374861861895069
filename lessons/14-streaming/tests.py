"""Lesson 14's lab tests: a reply that arrives in pieces.

Lab1 checks grow, stream_reply and the streaming branch of run_agent (point 14.1): one message
announced by many updates and recorded once, arguments parsed once at the end, a stream that
breaks ending in a failed reply that keeps what arrived. It re-tests the rules run_agent keeps
from earlier lessons: lesson 05's brake, lesson 09's steering, lesson 10's view, lesson 11's
saver. Lab2 checks Retrying and TerminalRenderer (point 14.2): a retry only before the first
piece, and a frontend that prints each word once. Each test's
docstring is its checklist line on the page, word for word. Run them with

    python lab/lab_check.py --harness harness.py --lesson 14 tests.py [--lab 1|2]
"""
import contextlib
import inspect
import io
import json
import unittest

import harness
import lab

LESSON = 14
LOG = "session.jsonl"
CONFIG = {"config.py": "PORT = 9090\n"}
ANSWER = "The server listens on port 9090, says config.py."
CALL = lab.call("read", {"path": "config.py", "note": "caf\u00e9 \u2615"}, id="c1")


# ------------------------------------------------------------------------------------- helpers

def _read_tool():
    return harness.make_read_tool(lab.Workspace(CONFIG))


def _asker(request):
    """The model of the port question: it reads config.py, then answers."""
    if request.messages[-1]["role"] == "toolResult":
        return lab.say(ANSWER)
    return lab.reply("Let me look at the file.",
                     lab.call("read", {"path": "config.py"}, id=f"c{len(request.messages)}"))


def _collect(generator):
    """(events, return value) of a generator run to its end."""
    events = []
    while True:
        try:
            events.append(next(generator))
        except StopIteration as stop:
            return events, stop.value


def _texts(message):
    return "".join(b.get("text", "") for b in message["content"] if b.get("type") == "text")


def _types(events):
    return [e.get("type") if isinstance(e, dict) else repr(e) for e in events]


class _Raising:
    """A stream, an iterator as model.stream's are: these events, then `error` raised."""

    def __init__(self, events, error):
        self.events, self.error = iter(list(events)), error

    def __iter__(self):
        return self

    def __next__(self):
        for event in self.events:
            return event
        raise self.error


class _LabCase(lab.LabCase):
    def reply_of(self, stream, what="stream_reply"):
        """(events, finished message) of stream_reply over `stream`, or a plain FAIL."""
        try:
            generator = harness.stream_reply(stream)
            return _collect(generator)
        except Exception as error:
            self.fail(f"{what} raised {type(error).__name__}: {error}")

    def run_of(self, model, messages=None, tools=None, prompt="Which port?", **options):
        """(events, messages) of a whole run_agent run, or a plain FAIL."""
        messages = [] if messages is None else messages
        tools = [_read_tool()] if tools is None else tools
        try:
            # lab.drive: the run as it is, or from lesson 15 on (async) stepped to its end
            events = lab.drive(harness.run_agent(model, harness.SYSTEM, messages, tools, prompt,
                                                 **options))
        except lab.ScriptExhausted:
            self.fail(f"the model was asked {len(model.calls)} times, more than its script "
                      f"allows; the record by then: {lab.shape(messages)}")
        except Exception as error:
            recorded = any(inspect.isgenerator(m) for m in messages)
            self.fail(f"the run raised {type(error).__name__}: {error}; the record by then: "
                      f"{lab.shape(messages)}" + (
                          ". The record holds a generator: stream_reply(...) was recorded "
                          "itself; take its return value with reply = yield from "
                          "stream_reply(...)" if recorded else ""))
        return events, messages

    def assert_streamed(self, events, what):
        """A FAIL unless the run yielded a message_update: the model's stream() was asked."""
        self.assertIn("message_update", _types(events),
                      f"{what}: the run yielded no message_update, so your run_agent never asked "
                      "model.stream(); a model that streams was asked with complete(). Ask "
                      "stream_reply(model.stream(...)) when the model has stream().")


# ----------------------------------------------------------------- lab 1: assembling the message

class Lab1(_LabCase):

    def test_grow_returns_a_new_message(self):
        """grow returns a new partial message and changes neither the partial it was given nor any block in it: text goes on the end of a last text block, or into a new one after a call."""
        empty = {"role": "assistant", "content": [], "stop_reason": None}
        one = self.call("grow", harness.grow, empty, {"type": "text", "text": "Port "})
        self.assertEqual(empty, {"role": "assistant", "content": [], "stop_reason": None},
                         f"grow changed the partial it was given: it is now {empty!r}. Build "
                         "a new message (and a new content list) instead.")
        self.assertEqual(one, {"role": "assistant", "content": [{"type": "text", "text": "Port "}],
                               "stop_reason": None},
                         f"grow(<empty>, a text piece 'Port ') gave {one!r}")
        before = json.dumps(one)
        two = self.call("grow", harness.grow, one, {"type": "text", "text": "9090."})
        self.assertEqual(json.dumps(one), before,
                         "grow changed the text block of the partial it was given: a frontend "
                         "that kept the earlier update now sees the later text. Make a new "
                         "block: {'type': 'text', 'text': old + piece}.")
        self.assertEqual(two["content"], [{"type": "text", "text": "Port 9090."}],
                         f"a second text piece should go on the end of the text block; the "
                         f"content is {two['content']!r}")
        three = self.call("grow", harness.grow, two,
                          {"type": "call", "index": 0, "id": "c1", "name": "read"})
        four = self.call("grow", harness.grow, three, {"type": "text", "text": "And"})
        self.assertEqual(four["content"],
                         [{"type": "text", "text": "Port 9090."},
                          {"type": "toolCall", "id": "c1", "name": "read", "arguments": "",
                           "index": 0},
                          {"type": "text", "text": "And"}],
                         f"after a text, a call and a text, the content is "
                         f"{four['content']!r}: a call block holds id, name, arguments '' and "
                         "index, and text after a call starts a new text block")
        same = self.call("grow", harness.grow, four, {"type": "thinking", "text": "hm"})
        self.assertEqual(same["content"], four["content"],
                         "a piece of a type grow does not know should leave the content as it is")

    def test_arguments_stay_text(self):
        """In the partial message a call's arguments are the JSON text received so far, a str that grows piece by piece, each piece going to the call with its index, never parsed; a call block holds exactly type, id, name, arguments and index, nothing beside them."""
        partial = {"role": "assistant", "content": [], "stop_reason": None}
        steps = [{"type": "call", "index": 0, "id": "a", "name": "read"},
                 {"type": "call", "index": 1, "id": "b", "name": "write"},
                 {"type": "arguments", "index": 0, "json": '{"path"'},
                 {"type": "arguments", "index": 1, "json": '{}'},
                 {"type": "arguments", "index": 0, "json": ': "x.py"}'}]
        seen = []
        for piece in steps:
            partial = self.call("grow", harness.grow, partial, piece)
            seen.append([b.get("arguments") for b in partial["content"]])
        for n, args in enumerate(seen):
            for value in args:
                self.assertIsInstance(value, str,
                                      f"after piece {n + 1} a call's arguments are {value!r}, "
                                      "not text: a partial call is not JSON yet; keep its text "
                                      "and parse it once, at the end")
        self.assertEqual(seen[-1], ['{"path": "x.py"}', '{}'],
                         f"the two calls' arguments ended as {seen[-1]!r}: each piece goes on "
                         "the end of the call whose index it carries")
        want = [{"type": "toolCall", "id": "a", "name": "read", "arguments": '{"path": "x.py"}',
                 "index": 0},
                {"type": "toolCall", "id": "b", "name": "write", "arguments": "{}", "index": 1}]
        for got, block in zip(partial["content"], want):
            extra = sorted(set(got) - set(block))
            self.assertEqual(got, block, f"after its pieces a call block is {got!r}; expected "
                             f"{block!r}" + (f": drop {extra}. Nothing is parsed while the call "
                             "arrives, not even a guess beside the text; a frontend could act "
                             "on a guess the finished call contradicts" if extra else ""))

    def test_one_update_per_piece(self):
        """stream_reply yields message_start with the empty partial, then one message_update per piece, carrying the piece itself and the partial message as grow makes it, in order."""
        reply = lab.reply("Let me look.", CALL)
        pieces = lab.pieces(reply)
        events, _ = self.reply_of(iter(pieces))
        self.assertTrue(events and events[0] == {"type": "message_start", "message": {
            "role": "assistant", "content": [], "stop_reason": None}},
            f"the first event should be message_start with the empty partial, got "
            f"{events[:1]!r}")
        updates = events[1:]
        self.assertEqual(_types(updates), ["message_update"] * (len(pieces) - 1),
                         f"{len(pieces) - 1} pieces came before the end event, and "
                         f"stream_reply yielded {_types(updates)}: one message_update per "
                         "piece, and nothing for the end event")
        partial = events[0]["message"]
        for n, (update, piece) in enumerate(zip(updates, pieces)):
            partial = harness.grow(partial, piece)
            self.assertIs(update.get("piece"), piece,
                          f"update {n + 1} should carry the stream's own piece {piece!r}, got "
                          f"{update.get('piece')!r}")
            self.assertEqual(update.get("message"), partial,
                             f"update {n + 1}'s message is {update.get('message')!r}; expected "
                             f"the partial as grow makes it, {partial!r}")

    def test_an_unknown_piece_is_announced_too(self):
        """A piece of a type grow does not know ({"type": "ping"}) still gets its message_update, carrying it and the partial unchanged: one update per piece, whatever its type."""
        ping = {"type": "ping"}
        pieces = lab.pieces(lab.say("Port 8080."))
        stream = pieces[:1] + [ping] + pieces[1:]
        events, message = self.reply_of(iter(stream))
        updates = [e for e in events if e.get("type") == "message_update"]
        self.assertEqual(len(updates), len(stream) - 1,
                         f"{len(stream) - 1} pieces came before the end event, one of them "
                         f"{ping!r}, and stream_reply yielded {len(updates)} message_update(s): "
                         "one update per piece, whatever its type; a frontend may want to see "
                         "a ping or a thinking piece even when the message does not change")
        self.assertIs(updates[1].get("piece"), ping,
                      f"the second update should carry the ping itself, got "
                      f"{updates[1].get('piece')!r}")
        self.assertEqual(updates[1].get("message"), updates[0].get("message"),
                         "the ping's update should carry the partial unchanged (grow leaves it "
                         f"as it is), got {updates[1].get('message')!r} after "
                         f"{updates[0].get('message')!r}")
        self.assertEqual(_texts(message), "Port 8080.",
                         f"the finished reply reads {_texts(message)!r}; the ping adds nothing")

    def test_updates_stay_as_they_were(self):
        """Every update a frontend was handed still holds, after the stream is over, the text it had when it was yielded."""
        reply = lab.say("One two three four five.")
        events, _ = self.reply_of(iter(lab.pieces(reply)))
        texts = [_texts(e["message"]) for e in events if e.get("type") == "message_update"]
        words = [p["text"] for p in lab.pieces(reply) if p["type"] == "text"]
        expected = ["".join(words[:n + 1]) for n in range(len(words))]
        self.assertEqual(texts, expected,
                         f"once the stream was over, the updates' messages held {texts!r}; "
                         f"expected {expected!r}. One partial changed in place is handed out "
                         "again and again: grow must make a new message every time.")

    def test_finished_message(self):
        """At the end event stream_reply returns the finished message: the content as it arrived, each call's arguments parsed once from their whole text, and the end event's stop_reason and usage."""
        model = lab.StreamingModel([lab.reply("Let me look.", CALL)])
        whole = lab.StreamingModel([lab.reply("Let me look.", CALL)]).complete("s", [], [])
        _, message = self.reply_of(model.stream("s", [], []))
        self.assertEqual(message, whole,
                         f"stream_reply returned {message!r}; expected the message complete() "
                         f"gives for the same step, {whole!r}")
        self.assertEqual(list(message["content"][1]), ["type", "id", "name", "arguments"],
                         "a finished call has exactly type, id, name and arguments: the stream "
                         "index belongs to the partial only")
        for text, expected in (("", {}), ('{"path": "a', {"_raw_arguments": '{"path": "a'}),
                               ("[1, 2]", {"_raw_arguments": "[1, 2]"})):
            stream = [{"type": "call", "index": 0, "id": "c1", "name": "read"}]
            stream += [{"type": "arguments", "index": 0, "json": text}] if text else []
            stream += [{"type": "end", "stop_reason": "toolUse", "usage": {}}]
            _, message = self.reply_of(iter(stream))
            got = message["content"][0]["arguments"] if message and message["content"] else None
            self.assertEqual(got, expected,
                             f"arguments whose whole text is {text!r} became {got!r}; expected "
                             f"{expected!r}: use parse_arguments on the whole text")
        cut = [{"type": "text", "text": "Port "},
               {"type": "end", "stop_reason": "length", "usage": {"input": 9, "output": 1}}]
        _, message = self.reply_of(iter(cut))
        got = (message.get("stop_reason"), message.get("usage")) if message else None
        self.assertEqual(got, ("length", {"input": 9, "output": 1}),
                         f"an end event with stop_reason 'length' gave (stop_reason, usage) "
                         f"{got!r}: take both from the end event as it is, never work the stop "
                         "reason out from the content")

    def test_end_without_usage(self):
        """An end event with no usage (a provider sends usage only when asked) still finishes the reply: the content, the end event's stop_reason, and usage {}."""
        stream = [{"type": "text", "text": "Port 9090."}, {"type": "end", "stop_reason": "stop"}]
        try:
            _, message = _collect(harness.stream_reply(iter(stream)))
        except KeyError as error:
            self.fail(f"an end event with no usage made stream_reply raise KeyError: {error}. A "
                      "provider sends usage only when it is asked to; read it with "
                      "piece.get(\"usage\", {}) and finish the reply with usage {}")
        except Exception as error:
            self.fail(f"an end event with no usage made stream_reply raise "
                      f"{type(error).__name__}: {error}")
        want = {"role": "assistant", "content": [{"type": "text", "text": "Port 9090."}],
                "stop_reason": "stop", "usage": {}}
        self.assertEqual(message, want, f"an end event with no usage gave {message!r}; expected "
                         f"{want!r}")

    def test_error_event_keeps_what_arrived(self):
        """An error event after two words ends the reply as a failed message (stop_reason "error", error_message the event's message) that keeps the two words; a failed reply's calls are finished as at the end, arguments parsed and no index."""
        model = lab.StreamingModel([lab.error_event(lab.say("Port 9090 is free."), after=2)])
        events, message = self.reply_of(model.stream("s", [], []))
        self.assertEqual(message, {"role": "assistant", "content": [
            {"type": "text", "text": "Port 9090 "}], "stop_reason": "error",
            "error_message": lab.OVERLOADED},
            f"after 'Port ', '9090 ' and an error event, stream_reply returned {message!r}")
        self.assertEqual(_types(events), ["message_start", "message_update", "message_update"],
                         f"events: {_types(events)}")
        cut = [{"type": "text", "text": "Writing. "},
               {"type": "call", "index": 0, "id": "w1", "name": "write"},
               {"type": "arguments", "index": 0, "json": '{"path":'}]
        want = [{"type": "text", "text": "Writing. "},
                {"type": "toolCall", "id": "w1", "name": "write",
                 "arguments": {"_raw_arguments": '{"path":'}}]
        for how, stream in (
                ("an error event", iter(cut + [{"type": "error", "message": lab.OVERLOADED}])),
                ("no end event", iter(cut)),
                ("a dropped connection", _Raising(cut, ConnectionError("reset")))):
            _, message = self.reply_of(stream)
            got = message.get("content") if isinstance(message, dict) else message
            self.assertEqual(got, want,
                             f"a stream cut by {how} in the middle of a call's arguments gave "
                             f"the content {got!r}; expected {want!r}. A failed reply's calls are "
                             "finished as at the end: arguments parsed once (here "
                             "_raw_arguments), and no stream index")

    def test_error_first_still_starts(self):
        """An error event before any piece still opens the message: message_start, no update, then the failed reply with no content and the event's message."""
        model = lab.StreamingModel([lab.error_event(lab.say("Port 9090 is free."), after=0)])
        events, message = self.reply_of(model.stream("s", [], []))
        self.assertEqual(_types(events), ["message_start"],
                         f"an error event first gave the events {_types(events)}; expected "
                         "message_start alone: every message_end a frontend is handed closes a "
                         "message it was told had begun, a failed one too")
        self.assertEqual(message, {"role": "assistant", "content": [], "stop_reason": "error",
                                   "error_message": lab.OVERLOADED},
                         f"an error event first gave {message!r}")

    def test_no_end_is_a_failure(self):
        """A stream that stops with no end event is a failure, not a success: a failed message with error_message STREAM_ENDED, keeping what arrived, even when nothing did (and then message_start still comes first)."""
        for after, text in ((None, "Port 9090 is free."), (2, "Port 9090 "), (0, "")):
            model = lab.StreamingModel([lab.no_end(lab.say("Port 9090 is free."), after=after)])
            events, message = self.reply_of(model.stream("s", [], []))
            if after == 0:
                self.assertEqual(_types(events), ["message_start"],
                                 f"a stream with no event at all gave the events "
                                 f"{_types(events)}; expected message_start alone. The reply is "
                                 "still a message: announce its start, then return it failed, "
                                 "so that its message_end closes a message_start.")
            self.assertTrue(isinstance(message, dict) and message.get("stop_reason") == "error",
                            f"a stream that stopped with no end event (after {after} pieces) "
                            f"gave {message!r}. With no end event nobody knows the reply was "
                            "complete: it is a failed reply, stop_reason 'error'.")
            self.assertEqual(message.get("error_message"), harness.STREAM_ENDED,
                             f"its error_message is {message.get('error_message')!r}")
            self.assertEqual(_texts(message), text, f"it keeps {_texts(message)!r}; expected "
                             f"{text!r}, what arrived")

    def test_dropped_connection(self):
        """A connection that drops after three words (any OSError, such as ConnectionError) ends the reply as a failed message keeping the three words, with error_message "ConnectionError: connection reset by peer"."""
        model = lab.StreamingModel([lab.drop(lab.say("Port 9090 is free today."), after=3)])
        events, message = self.reply_of(model.stream("s", [], []))
        self.assertEqual(message, {"role": "assistant", "content": [
            {"type": "text", "text": "Port 9090 is "}], "stop_reason": "error",
            "error_message": "ConnectionError: connection reset by peer"},
            f"stream_reply returned {message!r}")
        _, message = self.reply_of(_Raising([{"type": "text", "text": "Hi "}],
                                            TimeoutError("read timed out")))
        self.assertEqual(message.get("error_message"), "TimeoutError: read timed out",
                         f"a TimeoutError after a word gave {message!r}")
        unreachable = OSError(101, "Network is unreachable")
        try:
            _, message = _collect(harness.stream_reply(
                _Raising([{"type": "text", "text": "Hi "}], unreachable)))
        except OSError:
            self.fail("an OSError that is neither a ConnectionError nor a TimeoutError (errno "
                      "101, Network is unreachable) went up after a word: every OSError is a "
                      "dropped connection here. Catch OSError, not lesson 05's two classes.")
        self.assertEqual(message.get("error_message"),
                         "OSError: [Errno 101] Network is unreachable",
                         f"an OSError after a word gave {message!r}")

    def test_exceptions_that_go_up(self):
        """An exception before the first event goes up with nothing announced, and an exception that is not an OSError (a KeyError, a ValueError) goes up even after words: the loop catches only a dropped connection, and only once it has announced something."""
        model = lab.StreamingModel([lab.drop(lab.say("Hello."), after=0)])
        generator = harness.stream_reply(model.stream("s", [], []))
        try:
            first = next(generator)
        except ConnectionError:
            first = None
        except Exception as error:
            self.fail(f"stream_reply raised {type(error).__name__}: {error}")
        self.assertIsNone(first, f"the stream raised ConnectionError before its first event, "
                          f"and stream_reply yielded {first!r}; the error should go up, with "
                          "nothing announced (lesson 05: before anything arrives, an exception "
                          "from the model is not the loop's to catch)")
        for bug in (KeyError("usage"), ValueError("Expecting value: line 1 column 1 (char 0)")):
            generator = harness.stream_reply(_Raising([{"type": "text", "text": "Hi "}], bug))
            try:
                events, message = _collect(generator)
            except type(bug):
                continue
            except Exception as error:
                self.fail(f"stream_reply raised {type(error).__name__}: {error}")
            self.fail(f"a {type(bug).__name__} ({bug}) after one word was turned into "
                      f"{message!r}. Only OSError means a dropped connection; any other "
                      "exception (a ValueError from an adapter's bad JSON as much as a KeyError) "
                      "is a bug and must go up. A call's own arguments never raise here: "
                      "parse_arguments keeps text that does not parse.")

    def test_run_streams(self):
        """run_agent streams a model that has stream(): each streamed reply is message_start, its updates, then message_end, and the record is U A[c1] R(c1) A, one message each, each reply recorded as the finished message stream_reply returns, so the tool runs on parsed arguments."""
        model = lab.StreamingModel([lab.forever(_asker)])
        events, messages = self.run_of(model)
        types = [t for t in _types(events) if t != "message_update"]
        want = ["agent_start", "turn_start", "message_end", "message_start", "message_end",
                "tool_execution_start", "message_end", "tool_execution_end", "turn_end",
                "turn_start", "message_start", "message_end", "turn_end", "agent_end"]
        self.assertEqual(types, want, f"without the updates, the run's events were {types}; "
                         f"expected {want}")
        updates = _types(events).count("message_update")
        pieces = sum(len(lab.pieces(_asker(r))) - 1 for r in model.calls)
        self.assertEqual(updates, pieces, f"the two replies came in {pieces} pieces, and the run "
                         f"yielded {updates} message_update events")
        self.assertEqual(lab.shape(messages), "U A[c1] R(c1) A",
                         f"the record is {lab.shape(messages)}")
        asked = model.calls[0]
        whole = lab.StreamingModel([lab.forever(_asker)]).complete(
            asked.system, asked.messages, asked.tools)
        self.assertEqual(messages[1], whole,
                         f"the first reply was recorded as {messages[1]!r}; expected the finished "
                         f"message, {whole!r}. The last message_update holds a partial (arguments "
                         "still text, the stream index, no stop_reason): record stream_reply's "
                         "return value, reply = yield from stream_reply(...)")
        self.assertFalse(messages[2].get("is_error"),
                         f"the read tool answered {messages[2].get('content')!r}, an error: it "
                         "was given the call as the record holds it")
        self.assertEqual(messages[-1]["content"], [{"type": "text", "text": ANSWER}],
                         f"the last message is {messages[-1]!r}")

    def test_recorded_once_then_announced(self):
        """While a reply streams the record does not grow; it is appended once, whole, and only then is its message_end yielded, holding that very message."""
        model = lab.StreamingModel([lab.forever(_asker)])
        messages = []
        run = lab.steps(harness.run_agent(model, harness.SYSTEM, messages, [_read_tool()],
                                          "Which port?"))   # lab.steps: async from lesson 15
        length, last = None, None
        try:
            for event in run:
                if event["type"] == "message_start":
                    length = len(messages)
                elif event["type"] == "message_update":
                    self.assertEqual(len(messages), length,
                                     f"during the updates of one reply the record grew from "
                                     f"{length} to {len(messages)} messages: a piece is not a "
                                     "message. Record the reply once, when it is finished.")
                elif event["type"] == "message_end" and event["message"]["role"] == "assistant":
                    self.assertEqual(len(messages), length + 1,
                                     "at the reply's message_end the record should hold it, "
                                     f"one message more than at message_start; it went from "
                                     f"{length} to {len(messages)}")
                    self.assertIs(messages[-1], event["message"],
                                  "the reply's message_end should carry the very message "
                                  "just appended to the record")
                    last = event["message"]
        except AssertionError:
            raise
        except Exception as error:
            self.fail(f"the run raised {type(error).__name__}: {error}")
        self.assertIsNotNone(last, "the run announced no assistant message_end")

    def test_saver_hears_one_line_per_message(self):
        """Lesson 11's saver still holds while the reply streams: a Harness saving through persist_to streams the reply (a message_update is yielded), writes one line per message, not one per piece, and the log replays as the record."""
        ws = lab.Workspace(CONFIG)
        log = harness.SessionLog(ws, LOG)
        h = harness.Harness(lab.StreamingModel([lab.forever(_asker)]), harness.SYSTEM,
                            [harness.make_read_tool(ws)])
        h.subscribe(harness.persist_to(log))
        try:
            events = lab.drive(h.prompt("Which port?"))
        except Exception as error:
            self.fail(f"the run raised {type(error).__name__}: {error}")
        self.assert_streamed(events, "with a Harness saving through persist_to")
        lines = len(ws.read_text(LOG).splitlines()) if ws.exists(LOG) else 0
        self.assertEqual((lines, lab.shape(list(h.messages))), (4, "U A[c1] R(c1) A"),
                         f"the log has {lines} lines and the record is "
                         f"{lab.shape(list(h.messages))}; expected 4 lines for U A[c1] R(c1) A: "
                         "only the finished message is announced by message_end, and the saver "
                         "writes one line per message_end")
        self.assertEqual(log.replay(), list(h.messages), "the log does not replay as the record")

    def test_failed_reply_stays_in_view(self):
        """A drop after two words ends the run with a failed reply holding them: no tool runs, and the next request sends that reply (a failed reply that got something out stays in the view)."""
        ran = []
        tool = {"name": "read", "description": "Read.", "parameters": {"type": "object"},
                "execute": lambda arguments: ran.append(arguments) or "PORT = 9090\n"}
        model = lab.StreamingModel([
            lab.drop(lab.reply("Let me look at it.", CALL), after=2),
            lab.error_event(lab.reply(CALL), after=5),
            lab.say("Sorry, the line dropped. Port 9090.")])
        messages = []
        events, messages = self.run_of(model, messages, [tool])
        self.assertEqual(lab.shape(messages), "U A!", f"after a drop the record is "
                         f"{lab.shape(messages)}; expected U A! (the run ends on a failed reply)")
        self.assertEqual(_texts(messages[-1]), "Let me ",
                         f"the failed reply holds {_texts(messages[-1])!r}; expected the two "
                         "words that were shown")
        self.run_of(model, messages, [tool], prompt="Go on.")
        self.assertEqual(ran, [], f"a tool ran ({ran!r}) for a call of a failed reply; none of "
                         "a failed reply is acted on")
        self.run_of(model, messages, [tool], prompt="Go on.")
        sent = [m for m in model.calls[-1].messages if m["role"] == "assistant"]
        self.assertTrue(sent and _texts(sent[0]) == "Let me ",
                        "the third request should still send the first failed reply with its "
                        f"two words; it sent {lab.show(sent)!r}")

    def test_view_is_sent(self):
        """Lesson 10's view holds: the stream is asked (a message_update is yielded) with context_for_model(messages) and with tool_specs(tools), so a call left without a result is sent with its stand-in, the model is told of the read tool, and the record is not changed."""
        read = lab.call("read", {"path": "config.py"}, id="r1")
        messages = [lab.user("Which port?"), lab.reply(read)]
        model = lab.StreamingModel([lab.say("Port 9090.")])
        events, _ = self.run_of(model, messages, prompt="Well?")
        self.assert_streamed(events, "with a record holding a call with no result")
        sent = model.calls[0].messages if model.calls else []
        self.assertEqual(lab.shape(sent), "U A[r1] R(r1) U",
                         f"the stream was sent {lab.shape(sent)}; expected the view, "
                         "U A[r1] R(r1) U")
        told = model.calls[0].tools if model.calls else []
        want = harness.tool_specs([_read_tool()])
        self.assertEqual(told, want,
                         f"the stream was sent the tools {repr(told)[:100]}; "
                         "expected tool_specs(tools), the spec of the read tool. model.stream takes the same three arguments as complete(): "
                         "a model never told of a tool can never call it")
        self.assertEqual(lab.shape(messages), "U A[r1] U A",
                         f"the record became {lab.shape(messages)}; the view is never written "
                         "back")

    def test_brake_and_steering_hold(self):
        """Lesson 05's brake and lesson 09's steering hold for a streaming model, and both runs stream (a message_update is yielded): max_turns=2 makes two requests and ends with the stop, and steering said during a turn waits for its tool batch, U A[c1] R(c1) U A."""
        def runaway(request):
            return lab.reply(lab.call("read", {"path": "config.py"},
                                      id=f"r{len(request.messages)}"))
        model = lab.capped(lab.StreamingModel([lab.forever(runaway)]))
        try:
            events, messages = self.run_of(model, max_turns=2)
        except AssertionError as error:
            if "more than" in str(error):
                self.fail("with max_turns=2 the run kept asking a model that never stops")
            raise
        self.assert_streamed(events, "with max_turns=2")
        self.assertEqual(len(model.calls), 2, f"max_turns=2 made {len(model.calls)} requests")
        self.assertEqual(messages[-1].get("error_message"), "Agent stopped after max_turns=2",
                         f"the record ends {lab.show(messages[-1:])}")
        asks = iter([[], [lab.user("Use spaces.")]])     # said while the first turn ran
        model = lab.StreamingModel([lab.reply(CALL), lab.say("Done, with spaces.")])
        events, messages = self.run_of(model, get_steering=lambda: next(asks, []))
        self.assert_streamed(events, "with steering said during the first turn")
        self.assertEqual(lab.shape(messages), "U A[c1] R(c1) U A",
                         f"steering said during the first turn should go in after the call's "
                         f"result, at the top of the next turn; the record is "
                         f"{lab.shape(messages)}")

    def test_whole_reply_models_unchanged(self):
        """A model with only complete() is asked as before: no message_start, no updates, and lesson 07's twelve events."""
        model = lab.ScriptedModel([lab.reply(lab.call("read", {"path": "config.py"}, id="c1")),
                                   lab.say("Port 9090.")])
        events, messages = self.run_of(model)
        want = ["agent_start", "turn_start", "message_end", "message_end",
                "tool_execution_start", "message_end", "tool_execution_end", "turn_end",
                "turn_start", "message_end", "turn_end", "agent_end"]
        self.assertEqual(_types(events), want, f"with a model that has no stream(), the events "
                         f"were {_types(events)}")


    def test_keeps_the_loop_rules(self):
        """The streaming run_agent keeps the earlier lessons' rules, with a model that streams (whose stream() is asked: a message_update is yielded) and one that does not: agent_start, turn_start, turn_end and agent_end (with the run's messages) frame the run and each turn; a missing tool gets an is_error result; max_turns stops before the extra call; after a failed reply no tool runs and nobody is asked for more; steering and follow-ups are asked where lesson 9 put them; the model's exception reaches the caller; prompt None is one retry."""
        lab.keeps_loop_rules(self, harness, retry=True)
        lab.keeps_loop_rules(self, harness, stream=True, retry=True)


    def test_text_after_a_call(self):
        """Text that comes after a call starts a text block of its own, and its next piece joins that block, not the first one: text, a call, then text in two pieces is finished as the same three blocks complete() gives."""
        step = lab.reply("Reading.", CALL, "Done now.")
        whole = lab.StreamingModel([step]).complete("s", [], [])
        _, message = self.reply_of(lab.StreamingModel([step]).stream("s", [], []))
        self.assertEqual(message, whole,
                         f"stream_reply returned {message!r}; expected {whole!r}: a text piece "
                         "joins the last block only if that block is text (content[-1])")


# ------------------------------------------------------------ lab 2: try again, and show it

class Lab2(_LabCase):

    def retrying(self, steps, retries=3):
        model = lab.StreamingModel(steps)
        slept = []
        wrapped = self.call("Retrying", harness.Retrying, model, retries=retries,
                            sleep=slept.append)
        return model, wrapped, slept

    def stream_of(self, wrapped, what):
        events = []
        try:
            for event in wrapped.stream("s", [lab.user("Hi")], []):
                events.append(event)
        except Exception as error:
            return events, error
        return events, None

    def test_retry_before_the_first_piece(self):
        """A stream that fails before its first piece (a drop, no event at all, a 529) is asked again after sleep(0.25), sleep(0.5), ..., and the reply that then works is sent once."""
        ok = lab.say("Port 9090.")
        model, wrapped, slept = self.retrying([lab.drop(ok, after=0), lab.no_end(ok, after=0),
                                               lab.error_event(ok, after=0), ok])
        events, error = self.stream_of(wrapped, "")
        self.assertIsNone(error, f"Retrying's stream raised {error!r}")
        self.assertEqual(_types(events), _types(lab.pieces(ok)), f"after three failures and a "
                         f"good try, Retrying's stream gave {events!r}")
        self.assertEqual(events[:-1], lab.pieces(ok)[:-1], f"after three failures and a good "
                         f"try, Retrying's stream gave {events!r}")
        self.assertEqual(len(model.calls), 4, f"the model was asked {len(model.calls)} times; "
                         "expected 4: three failures before any piece, then the good one")
        self.assertEqual(slept, [0.25, 0.5, 1.0], f"Retrying slept {slept}; expected "
                         "[0.25, 0.5, 1.0]: BACKOFF before the first retry, doubled each time")

    def test_no_retry_after_a_piece(self):
        """A stream that fails after its first piece is never asked again: the pieces and the failure pass through as they came, so no word is shown twice."""
        ok = lab.say("Port 9090 is free.")
        model, wrapped, slept = self.retrying([lab.drop(ok, after=2), ok])
        events, error = self.stream_of(wrapped, "")
        self.assertEqual(len(model.calls), 1, f"the stream dropped after two pieces and the "
                         f"model was asked {len(model.calls)} times; once a piece is out, a "
                         "retry would show it again")
        self.assertEqual(events, lab.pieces(ok)[:2], f"the stream gave {events!r}")
        self.assertIsInstance(error, ConnectionError, f"the drop after two pieces should pass "
                              f"through as it came, a ConnectionError; got {error!r}")
        self.assertEqual(slept, [], f"Retrying slept {slept} after a piece was out")
        model, wrapped, slept = self.retrying([lab.error_event(ok, after=1), ok])
        events, error = self.stream_of(wrapped, "")
        self.assertEqual((len(model.calls), events[-1:]), (1, [{"type": "error",
                          "message": lab.OVERLOADED}]),
                         f"a 529 after one piece: {len(model.calls)} requests, last event "
                         f"{events[-1:]!r}; expected one request and the error passed through")

    def test_retry_gives_up(self):
        """After `retries` retries that failed, the stream yields one error event with the last failure: "ConnectionError: connection reset by peer", the provider's message, or STREAM_ENDED."""
        ok = lab.say("Hi.")
        for step, message in ((lab.drop(ok, after=0), "ConnectionError: connection reset by peer"),
                              (lab.error_event(ok, after=0), lab.OVERLOADED),
                              (lab.no_end(ok, after=0), harness.STREAM_ENDED)):
            model, wrapped, slept = self.retrying([lab.forever(step)], retries=2)
            events, error = self.stream_of(wrapped, "")
            self.assertIsNone(error, f"after the retries Retrying raised {error!r}; it should "
                              "say the failure as an error event, as an adapter does")
            self.assertEqual(events, [{"type": "error", "message": message}],
                             f"after two retries the stream gave {events!r}")
            self.assertEqual((len(model.calls), slept), (3, [0.25, 0.5]),
                             f"retries=2: {len(model.calls)} requests and sleeps {slept}; "
                             "expected 3 requests and [0.25, 0.5]")

    def test_gives_up_with_the_last_failure(self):
        """When the failures differ, Retrying gives up with the last one, whatever came before it: a drop, a 529, then no event end in STREAM_ENDED; no event, a 529, then a drop in "ConnectionError: connection reset by peer"; a drop, no event, then a 529 in the 529's message; a 529, no event, then a 503 in the 503's."""
        ok = lab.say("Hi.")
        drop, overloaded, none = (lab.drop(ok, after=0), lab.error_event(ok, after=0),
                                  lab.no_end(ok, after=0))
        busy = "503 service_unavailable: try again later"
        for steps, said, last in (([drop, overloaded, none], "a drop, a 529, then no event at all",
                                   harness.STREAM_ENDED),
                                  ([none, overloaded, drop], "no event at all, a 529, then a drop",
                                   "ConnectionError: connection reset by peer"),
                                  ([drop, none, overloaded], "a drop, no event at all, then a 529",
                                   lab.OVERLOADED),
                                  ([overloaded, none, lab.error_event(ok, 0, busy)],
                                   "a 529, no event at all, then a 503", busy)):
            model, wrapped, slept = self.retrying(steps, retries=2)
            events, error = self.stream_of(wrapped, "")
            self.assertEqual((events, error), ([{"type": "error", "message": last}], None),
                             f"{said} gave {events!r}"
                             f"{f' and raised {error!r}' if error else ''}; expected one error "
                             f"event with the last failure, {last!r}: it is the one the provider "
                             "is in now")

    def test_retries_by_default(self):
        """Retrying(model) with no retries given retries RETRIES times: RETRIES failures before the first piece, then a good stream, is sent once, after RETRIES + 1 requests."""
        ok = lab.say("Port 9090.")
        model = lab.StreamingModel([lab.drop(ok, after=0)] * harness.RETRIES + [ok])
        slept = []
        wrapped = self.call("Retrying", harness.Retrying, model, sleep=slept.append)
        events, error = self.stream_of(wrapped, "")
        self.assertEqual((len(model.calls), error, events[:-1]),
                         (harness.RETRIES + 1, None, lab.pieces(ok)[:-1]),
                         f"Retrying(model), its retries left to the default, made "
                         f"{len(model.calls)} request(s) and gave {events!r}"
                         f"{f' and raised {error!r}' if error else ''}; expected "
                         f"{harness.RETRIES + 1} requests (RETRIES = {harness.RETRIES} retries "
                         "after the first) and the good reply: retries defaults to RETRIES")

    def test_empty_answer_passed_through(self):
        """A stream whose first event is its end (a reply with nothing in it) is passed through: one request, no sleep."""
        model, wrapped, slept = self.retrying([lab.reply(), lab.say("Hi.")])
        events, error = self.stream_of(wrapped, "")
        self.assertEqual(([e.get("type") for e in events], error, len(model.calls), slept),
                         (["end"], None, 1, []),
                         f"an end event first gave {events!r} after {len(model.calls)} requests "
                         f"and sleeps {slept}; an end event is an answer, if an empty one: pass "
                         "it on, and try nothing again")

    def test_no_retry_on_a_refusal(self):
        """An error event whose status is not worth another try (a 400), or that has no status at all, is yielded at once, with no retry; 408, 409, 425, 429 and every status of 500 and up are retried."""
        ok = lab.say("Hi.")
        refusal = "400 prompt is too long: 9120 tokens > 8000 maximum"
        model, wrapped, slept = self.retrying([lab.error_event(ok, 0, refusal), ok])
        events, error = self.stream_of(wrapped, "")
        self.assertEqual((events, len(model.calls), slept),
                         ([{"type": "error", "message": refusal}], 1, []),
                         f"a 400 refusal gave {events!r} after {len(model.calls)} requests and "
                         f"sleeps {slept}; a refusal is refused again, so it goes up at once")
        model, wrapped, slept = self.retrying([lab.error_event(ok, 0, "Overloaded"), ok])
        events, error = self.stream_of(wrapped, "")
        self.assertEqual((events, error, len(model.calls)),
                         ([{"type": "error", "message": "Overloaded"}], None, 1),
                         f"an error event with no status, 'Overloaded', gave {events!r}, "
                         f"raised {error!r}, after {len(model.calls)} requests; a message that "
                         "does not start with a status is yielded as it is, once")
        for status in ("408 timeout", "409 conflict", "425 too early",
                       "429 rate_limit_error: slow down", "500 api_error", "503 unavailable",
                       "504 gateway timeout", "529 overloaded_error"):
            model, wrapped, slept = self.retrying([lab.error_event(ok, 0, status), ok])
            events, error = self.stream_of(wrapped, "")
            self.assertEqual(len(model.calls), 2, f"an error event {status!r} before any piece "
                             f"was asked {len(model.calls)} times; expected a retry")

    def test_bugs_are_not_retried(self):
        """An exception that is not an OSError (a KeyError in an adapter is a bug) goes up from Retrying at once: no retry, no sleep, no error event."""
        class Buggy:
            calls = 0

            def stream(self, system, messages, tools):
                Buggy.calls += 1
                return _Raising([], KeyError("usage"))
        slept = []
        wrapped = self.call("Retrying", harness.Retrying, Buggy(), retries=3, sleep=slept.append)
        events, error = self.stream_of(wrapped, "")
        self.assertIsInstance(error, KeyError,
                              f"a stream that raised KeyError gave {events!r} and raised "
                              f"{error!r}; a bug is not a provider failure, so it goes up as "
                              "it came: catch OSError only")
        self.assertEqual((Buggy.calls, slept), (1, []),
                         f"a KeyError was retried: {Buggy.calls} requests, sleeps {slept}")

    def test_any_oserror_is_retried(self):
        """Any OSError before the first piece is worth a retry, not only a ConnectionError: a TimeoutError, then an OSError "Network is unreachable", then a good stream sends the reply once; so does a ConnectionError raised by the call to model.stream(...) itself; when the OSError comes last, the error event says "OSError: [Errno 101] Network is unreachable"."""
        ok = lab.say("Port 9090.")
        unreachable = OSError(101, "Network is unreachable")

        class Flaky:
            """A model whose first streams raise these errors before any event."""

            def __init__(self, errors):
                self.errors, self.calls = list(errors), 0

            def stream(self, system, messages, tools):
                self.calls += 1
                if self.errors:
                    return _Raising([], self.errors.pop(0))
                return iter(lab.pieces(ok))

        model = Flaky([TimeoutError("read timed out"), unreachable])
        wrapped = self.call("Retrying", harness.Retrying, model, retries=3, sleep=[].append)
        events, error = self.stream_of(wrapped, "")
        self.assertEqual((events, error, model.calls), (lab.pieces(ok), None, 3),
                         f"a TimeoutError, then an OSError (errno 101), then a good stream gave "
                         f"{events!r}{f' and raised {error!r}' if error else ''} after "
                         f"{model.calls} request(s); expected the reply after 3 requests. Every "
                         "OSError before the first piece is a failure worth a retry: catch "
                         "OSError, not only ConnectionError")

        class Eager:
            """A model whose stream() connects before it returns: the first call raises."""
            calls = 0

            def stream(self, system, messages, tools):
                Eager.calls += 1
                if Eager.calls == 1:
                    raise ConnectionError("connection refused")
                return iter(lab.pieces(ok))

        wrapped = self.call("Retrying", harness.Retrying, Eager(), retries=3, sleep=[].append)
        events, error = self.stream_of(wrapped, "")
        self.assertEqual((events, error, Eager.calls), (lab.pieces(ok), None, 2),
                         f"a model.stream(...) whose call raised ConnectionError, then a good "
                         f"stream, gave {events!r}{f' and raised {error!r}' if error else ''} "
                         f"after {Eager.calls} request(s); expected the reply after 2. An "
                         "adapter may connect when it is called, before returning its stream: "
                         "call model.stream(...) inside the try too")
        model = Flaky([unreachable] * 3)
        wrapped = self.call("Retrying", harness.Retrying, model, retries=2, sleep=[].append)
        events, error = self.stream_of(wrapped, "")
        want = [{"type": "error", "message": "OSError: [Errno 101] Network is unreachable"}]
        self.assertEqual((events, error), (want, None),
                         f"an OSError (errno 101) three times gave {events!r}"
                         f"{f' and raised {error!r}' if error else ''}; expected {want!r}")

    def test_retrying_in_a_run(self):
        """Retrying passes complete() through, and a run through it shows a reply that failed twice before its first piece once, with one line per message in the record."""
        ok = lab.say("Port 9090.")
        model, wrapped, slept = self.retrying([lab.drop(ok, 0), lab.drop(ok, 0), ok])
        events, messages = self.run_of(wrapped, tools=[])
        words = "".join(e["piece"].get("text", "") for e in events
                        if e["type"] == "message_update")
        self.assertEqual((words, lab.shape(messages)), ("Port 9090.", "U A"),
                         f"the run showed {words!r} and recorded {lab.shape(messages)}")
        whole = lab.StreamingModel([ok])
        got = self.call("Retrying.complete", harness.Retrying(whole).complete, "s", [], [])
        self.assertEqual(got.get("content"), ok["content"], f"complete gave {got!r}")

    def test_retrying_needs_a_stream(self):
        """Retrying refuses a model that has no stream(): a TypeError whose message names stream, when it is made."""
        whole = lab.ScriptedModel([lab.say("Port 9090.")])
        try:
            wrapped = harness.Retrying(whole)
        except TypeError as error:
            self.assertIn("stream", str(error),
                          f"Retrying refused a model with no stream() with {str(error)!r}; say "
                          "that it needs one")
            return
        except Exception as error:
            self.fail(f"Retrying(ScriptedModel(...)) raised {type(error).__name__}: {error}; "
                      "refuse a model with no stream() with a TypeError that says so")
        events, error = self.stream_of(wrapped, "")
        self.fail("Retrying(ScriptedModel(...)) was made, and its stream() gave "
                  f"{events!r}{f' and raised {type(error).__name__}: {error}' if error else ''}. "
                  "The loop streams any model that has stream(), and a ScriptedModel has none: "
                  "refuse it with a TypeError when it is wrapped")

    def render(self, renderer, events):
        """What renderer printed after each event, and what finish() returned and printed."""
        printed = []
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                for event in events:
                    renderer.render(event)
                    printed.append(out.getvalue())
                ok = renderer.finish()
        except Exception as error:
            self.fail(f"{type(renderer).__name__} raised {type(error).__name__}: {error}")
        return printed, ok, out.getvalue()

    def test_terminal_prints_each_word_once(self):
        """TerminalRenderer prints each text piece the moment its update comes, "[read]" when a tool starts, ends the line at message_end, and never prints a streamed text again."""
        events, _ = self.run_of(lab.StreamingModel([lab.forever(_asker)]))
        printed, ok, out = self.render(harness.TerminalRenderer(), events)
        seen = ""
        for event, now in zip(events, printed):
            if event["type"] == "message_update" and event["piece"]["type"] == "text":
                seen += event["piece"]["text"]
                self.assertEqual(now, seen, f"after the update with {event['piece']['text']!r} "
                                 f"the terminal showed {now!r}; expected {seen!r}")
            elif event["type"] == "message_end" and event["message"]["role"] == "assistant":
                seen += "\n"
            elif event["type"] == "tool_execution_start":
                seen += "[read]\n"
                self.assertEqual(now, seen, f"when the tool started the terminal showed {now!r}; "
                                 f"expected {seen!r}: the tool line is printed at "
                                 "tool_execution_start, so the user sees what is running while "
                                 "it runs, not after it is over")
        want = f"Let me look at the file.\n[read]\n{ANSWER}\n"
        self.assertEqual(out, want, f"the terminal showed {out!r}; expected {want!r}")
        self.assertIs(ok, True, f"finish() returned {ok!r} after an answer")

    def test_terminal_flushes(self):
        """Each text piece is flushed as it is printed: a piece waiting in a buffer is a piece the user does not see."""
        class Screen(io.StringIO):
            def __init__(self):
                super().__init__()
                self.shown = ""

            def flush(self):
                self.shown = self.getvalue()
        events, _ = self.run_of(lab.StreamingModel([lab.say("Port 9090 is free.")]), tools=[])
        screen = Screen()
        renderer = harness.TerminalRenderer()
        try:
            with contextlib.redirect_stdout(screen):
                for event in events:
                    renderer.render(event)
                    if event["type"] == "message_update":
                        self.assertEqual(screen.shown, screen.getvalue(),
                                         f"after the piece {event['piece']['text']!r} the "
                                         f"screen shows {screen.shown!r} of "
                                         f"{screen.getvalue()!r}: print it with flush=True")
        except AssertionError:
            raise
        except Exception as error:
            self.fail(f"TerminalRenderer raised {type(error).__name__}: {error}")

    def test_terminal_failures_and_whole_replies(self):
        """A failed stream shows its words, then "Error: <reason>" on a line of its own, and finish() is False; a reply that came whole is printed whole, once, and a failed one with no words shows only its error."""
        model = lab.StreamingModel([lab.drop(lab.say("Port 9090 is free."), after=2)])
        events, _ = self.run_of(model, tools=[])
        _, ok, out = self.render(harness.TerminalRenderer(), events)
        want = "Port 9090 \nError: ConnectionError: connection reset by peer\n"
        self.assertEqual((out, ok), (want, False), f"a drop after two words showed {out!r} and "
                         f"finish() returned {ok!r}; expected {want!r} and False")
        events, _ = self.run_of(lab.ScriptedModel([lab.say("Port 9090.")]), tools=[])
        _, ok, out = self.render(harness.TerminalRenderer(), events)
        self.assertEqual((out, ok), ("Port 9090.\n", True), f"a reply that came whole showed "
                         f"{out!r} and finish() returned {ok!r}")
        events, _ = self.run_of(lab.ScriptedModel([lab.provider_error("503 overloaded")]),
                                tools=[])
        _, ok, out = self.render(harness.TerminalRenderer(), events)
        self.assertEqual((out, ok), ("Error: 503 overloaded\n", False),
                         f"a failed reply with no words showed {out!r} and finish() returned "
                         f"{ok!r}: print a whole reply's text only if it has some")
        _, ok, out = self.render(harness.TerminalRenderer(), [])
        self.assertEqual((out, ok), ("", False), f"with no events the terminal showed {out!r} "
                         f"and finish() returned {ok!r}")

    def test_terminal_line_per_message(self):
        """A reply with no text (a call alone, or a failure before any word) adds no empty line, even after a reply whose words were printed: whether a line is open is worked out for each message."""
        refusal = "400 prompt is too long: 9120 tokens > 8000 maximum"
        model = lab.StreamingModel([
            lab.reply("Let me look.", lab.call("read", {"path": "config.py"}, id="c1")),
            lab.reply(lab.call("read", {"path": "config.py"}, id="c2")),
            lab.error_event(lab.say(ANSWER), after=0, message=refusal)])
        events, _ = self.run_of(model)
        _, ok, out = self.render(harness.TerminalRenderer(), events)
        want = f"Let me look.\n[read]\n[read]\nError: {refusal}\n"
        self.assertEqual((out, ok), (want, False), f"three replies (words and a call, a call "
                         f"alone, a refusal before any word) showed {out!r} and finish() "
                         f"returned {ok!r}; expected {want!r} and False. Once a message_end has "
                         "ended the line of pieces, the line is closed: reset the flag there, "
                         "so the next message's end prints print() only if its own pieces were "
                         "printed")

    def test_other_frontends_fold_updates(self):
        """FinalTextRenderer ignores the updates and still prints one answer; JsonRenderer prints one line per event, the updates included."""
        events, _ = self.run_of(lab.StreamingModel([lab.forever(_asker)]))
        _, ok, out = self.render(harness.FinalTextRenderer(), events)
        self.assertEqual((out, ok), (ANSWER + "\n", True), f"FinalTextRenderer printed {out!r}")
        _, ok, out = self.render(harness.JsonRenderer(), events)
        self.assertEqual(len(out.splitlines()), len(events),
                         f"JsonRenderer printed {len(out.splitlines())} lines for "
                         f"{len(events)} events")

    def test_500_is_the_line(self):
        """Before any piece, an error event is retried only when its message starts with a status in TRANSIENT or of 500 and up: 500 and 599 are retried; 200, 302, 404, 407, 410, 413, 422, 430 and 499 are passed on at once, and so is "Overloaded: try again in 500 ms", whose number is not at its start."""
        ok = lab.say("Hi.")
        for status in ("500 api_error", "599 network timeout"):
            model, wrapped, slept = self.retrying([lab.error_event(ok, 0, status), ok])
            self.stream_of(wrapped, "")
            self.assertEqual(len(model.calls), 2, f"an error event {status!r} before any piece "
                             f"was asked {len(model.calls)} time(s); expected a retry: every "
                             "status of 500 and up is worth another try")
        for status in ("200 ok", "302 found", "404 not_found_error: no such model",
                       "407 proxy authentication required", "410 gone",
                       "413 request_too_large", "422 unprocessable entity", "430 unknown",
                       "499 client closed request", "Overloaded: try again in 500 ms"):
            model, wrapped, slept = self.retrying([lab.error_event(ok, 0, status), ok])
            events, error = self.stream_of(wrapped, "")
            self.assertEqual((events, error, len(model.calls), slept),
                             ([{"type": "error", "message": status}], None, 1, []),
                             f"an error event {status!r} before any piece gave {events!r}"
                             f"{f' and raised {error!r}' if error else ''} after "
                             f"{len(model.calls)} request(s) and sleeps {slept}; expected it "
                             "passed on at once, one request: only a message that starts with a "
                             f"status in TRANSIENT {harness.TRANSIENT} or of 500 and up is "
                             "worth another try")
