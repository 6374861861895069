"""Lesson 11's lab tests: a session that outlives its process.

Lab1 checks SessionLog, the append-only file (point 11.1). Lab2 checks Harness.subscribe with
notify-then-yield, and persist_to (point 11.2). Each test's docstring is its checklist line on the
page, word for word; the tests run in the order they are written. Run them with

    python lab/lab_check.py --harness harness.py --lesson 11 tests.py [--lab 1|2]

Every message a check fails with is written for the reader: what was expected, what happened,
and where to look.
"""
import contextlib
import inspect
import io
import json
import re
import unittest

import harness
import lab

LESSON = 11
LOG = "session.jsonl"
FILES = {"a.py": "A = 1\n", "b.py": "B = 2\n", "c.py": "C = 3\n"}
JOB = "Write a.py, b.py and c.py."
DONE = "All three files are written."


# ------------------------------------------------------------------------------------- helpers

def _writer(request):
    """The model of the three-file job. It goes only by the transcript it is sent: a file is done
    if the transcript holds a write call for it."""
    done = [block["arguments"]["path"]
            for m in request.messages if m["role"] == "assistant"
            for block in m["content"] if block["type"] == "toolCall"]
    todo = [path for path in FILES if path not in done]
    if not todo:
        return lab.say(DONE)
    arguments = {"path": todo[0], "content": FILES[todo[0]]}
    return lab.reply(lab.call("write", arguments, id=f"w{len(done) + 1}"))


def _job(ws, steps=None):
    """A harness for the three-file job over the disk `ws`, resumed from the log on that disk."""
    log = harness.SessionLog(ws, LOG)
    model = lab.ScriptedModel(steps if steps is not None else [lab.forever(_writer)])
    h = harness.Harness(model, harness.SYSTEM, [harness.make_write_tool(ws)],
                        messages=log.replay())
    return h, log, model


def _consume(run):
    """The plainest consumer: pull every event, show nothing, save nothing."""
    return [event for event in lab.steps(run)]    # lab.steps: the run is async from lesson 15


def _line(n):
    """Line n of a session file in the spec's format, newline included."""
    entry = {"id": f"e{n}", "type": "message", "message": lab.user(f"message {n}")}
    return json.dumps(entry) + "\n"


def _four_messages():
    """Four messages of a real session: a call, its result (with a newline and an accent in it),
    and assistant replies that carry usage numbers."""
    read = lab.call("read", {"path": "config.py"}, id="c1")
    return [lab.user("Which port does config.py use?"),
            {**lab.reply(lab.text("Let me look."), read),
             "usage": {"input": 1204, "output": 17}},
            lab.tool_result(read, "PORT = 9090\nHOST = 'café'\u2028# end\n"),
            {**lab.say("It uses 9090."), "usage": {"input": 1288, "output": 6}}]


def _shape(messages):
    return lab.shape(list(messages)) or "(nothing)"


def _what(value):
    """A short description of a returned value, for a failure message."""
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if hasattr(value, "__next__"):
        return f"a {type(value).__name__}, not a list"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _ops(ws, path=None):
    """The operations ws.writes recorded (on `path`, if given)."""
    return [write[0] for write in ws.writes if path is None or write[1] == path]


def _append_op():
    """What ws.writes calls an append: asked of the lab's own Workspace, not assumed."""
    probe = lab.Workspace()
    probe.append_text("probe.txt", "x")
    return probe.writes[-1][0]


def _py_writes(ws, since=0):
    return [write[1] for write in ws.writes[since:] if write[1].endswith(".py")]


class _LabCase(unittest.TestCase):
    """Shared checks. Messages are the whole story, so unittest's own prefix is switched off."""
    longMessage = False
    maxDiff = None

    def assert_torn(self, what, call, line):
        """`call()` must raise ValueError naming `line`."""
        said = f"{LOG}, line {line}: not a complete log entry"
        want = f"ValueError({said!r})"
        try:
            got = call()
        except ValueError as error:
            if not re.search(rf"\bline {line}\b", str(error)):
                self.fail(f"{what} raised ValueError({str(error)!r}), which does not say "
                          f"'line {line}'. Expected {want}: count the file's lines from 1 "
                          "yourself; the JSON parser's line number is about the one line it "
                          "was given.")
            if str(error) != said:
                self.fail(f"{what} raised ValueError({str(error)!r}); expected the spec's words, "
                          f"{want}: the file's path, the line, and what is wrong with it, so "
                          "that a person knows where to look.")
            return
        except Exception as error:
            self.fail(f"{what} raised {type(error).__name__}: {error}. Expected {want}.")
        self.fail(f"{what} returned {_what(got)} although line {line} of the file is not a complete log entry. "
                  f"Expected {want}: a line that is not JSON is never skipped.")

    def append(self, ws, log, message, number):
        """log.append_message(message), the number-th append; a raise is a FAIL that says why a
        log may refuse its own file."""
        try:
            return log.append_message(message)
        except Exception as error:
            if not isinstance(error, ValueError):
                self.fail(f"append {number} raised {type(error).__name__}: {error}; expected "
                          "the entry's id back.")
            lines = len(ws.read_text(LOG).splitlines()) if ws.exists(LOG) else 0
            self.fail(f"append {number} raised {type(error).__name__}: {error}. After "
                      f"{number - 1} append(s) of your own, the file has {lines} lines and your "
                      "log cannot read it back. Each entry must be exactly one line: "
                      "json.dumps(entry) with its default settings (no indent; ensure_ascii "
                      "left on, so that a U+2028 in a message is written as \\u2028 and "
                      "splitlines() cannot split there), then \"\\n\".")

    def assert_answered(self, h, when):
        last = h.messages[-1] if h.messages else None
        if not (last and last["role"] == "assistant" and last.get("stop_reason") != "error"):
            self.fail(f"{when}, the record ends {_shape(h.messages[-3:])}; expected it to end "
                      "with the model's answer.")


# ------------------------------------------------------------------------ lab 1: the log itself

class Lab1(_LabCase):

    def test_ids_and_lines(self):
        """Append four messages: they get the ids e1, e2, e3 and e4, and the file has four lines,
        each one a JSON object holding "id", "type": "message" and "message"."""
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)
        messages = _four_messages()
        ids = [self.append(ws, log, message, n) for n, message in enumerate(messages, 1)]
        self.assertEqual(ids, ["e1", "e2", "e3", "e4"],
                         f"append_message returned {ids}; expected ['e1', 'e2', 'e3', 'e4']: "
                         '"e" plus the number of the line it has just written.')
        self.assertTrue(ws.exists(LOG), f"after four appends there is no {LOG} on the disk.")
        text = ws.read_text(LOG)
        lines = text.splitlines()
        self.assertEqual(len(lines), 4,
                         f"the file has {len(lines)} lines after four appends; expected 4, one "
                         "per message. json.dumps with its default settings never writes a "
                         "line break, so each entry plus one \"\\n\" is exactly one line.")
        self.assertTrue(text.endswith("\n"), "the file does not end with a newline: every "
                        "entry is its JSON text followed by \"\\n\".")
        for number, (line, message) in enumerate(zip(lines, messages), 1):
            try:
                entry = json.loads(line)
            except ValueError:
                self.fail(f"line {number} of the file is not JSON: {line[:80]!r}")
            want = {"id": f"e{number}", "type": "message", "message": message}
            self.assertEqual(entry, want,
                             f"line {number} holds {_what(entry)}; expected exactly the keys "
                             f"id, type and message: {json.dumps(want)[:120]}...")

    def test_appends_only(self):
        """Every write that ws.writes records is an append (an fsync aside, which changes nothing),
        and after each message the file begins with exactly the file as it stood before."""
        append = _append_op()
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)
        for number, message in enumerate(_four_messages(), 1):
            before = ws.read_text(LOG) if ws.exists(LOG) else ""
            self.append(ws, log, message, number)
            after = ws.read_text(LOG)
            self.assertTrue(after.startswith(before) and len(after) > len(before),
                            f"after message {number} the file no longer begins with what it "
                            "held before: a line, once written, is never touched again.")
            ops = [op for op in _ops(ws) if op != "fsync"]     # an fsync changes nothing
            self.assertEqual(ops, [append] * number,
                             f"after message {number}, ws.writes records {ops}; expected "
                             f"{number} x {append!r} and nothing else. Add one line with "
                             "ws.append_text; writing the file over starts by emptying it, and "
                             "a power cut then takes every message, not just the last.")

    def test_replay_round_trip(self):
        """replay() returns the four messages unchanged, usage numbers included; rows() pairs each
        with its id; and a new SessionLog over the rebooted disk gives the same answers."""
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)
        messages = _four_messages()
        for number, message in enumerate(messages, 1):
            self.append(ws, log, message, number)
        want_rows = [(f"e{n}", message) for n, message in enumerate(messages, 1)]
        for where, reader in (("the SessionLog that wrote them", log),
                              ("a new SessionLog on the rebooted disk",
                               harness.SessionLog(ws.reboot(), LOG))):
            replayed = reader.replay()
            self.assertEqual(replayed, messages,
                             f"replay() of {where} gave {_shape(replayed)}; expected the four "
                             "messages exactly as appended (U A[c1] R(c1) A), usage and all.")
            rows = [tuple(row) for row in reader.rows()]
            self.assertEqual(rows, want_rows,
                             f"rows() of {where} gave ids {[row[0] for row in rows]}; expected "
                             "(id, message) pairs: ('e1', the first message), ('e2', ...), ...")

    def test_no_file(self):
        """On a disk with no log file, entries(), rows() and replay() each return [], and asking
        did not create the file."""
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)
        for name in ("entries", "rows", "replay"):
            value = getattr(log, name)()
            self.assertTrue(isinstance(value, list) and value == [],
                            f"{name}() returned {_what(value)} with no file on the disk; "
                            "expected the empty list []. A generator is not a list: callers "
                            "take len() of it.")
        self.assertFalse(ws.exists(LOG), f"reading the log created {LOG}: check ws.exists "
                         "first and read nothing when it says no.")
        self.assertEqual(ws.writes, [], f"reading the log wrote to the disk: {ws.writes}")

    def test_two_logs(self):
        """Two SessionLog objects over one file append in turn, and both are read after every
        append: the ids run e1, e2, e3, e4, and each replays everything either of them has
        written."""
        ws = lab.Workspace()
        first, second = harness.SessionLog(ws, LOG), harness.SessionLog(ws, LOG)
        written = []
        for number, (name, log) in enumerate((("first", first), ("second", second),
                                              ("first", first), ("second", second)), 1):
            message = lab.user(f"message {number}, from the {name} log")
            got = self.append(ws, log, message, number)
            written.append(message)
            self.assertEqual(got, f"e{number}",
                             f"append {number} (by the {name} log) returned {got!r}; expected "
                             f"'e{number}'. Count the entries in the file on every append: a "
                             "count kept in the object cannot know what another log wrote.")
            for reader_name, reader in (("first", first), ("second", second)):
                replayed = reader.replay()
                self.assertEqual(replayed, written,
                                 f"after append {number}, the {reader_name} log replays "
                                 f"{len(replayed)} messages; expected all {number} written so "
                                 "far, by either log.")

    def test_hand_written(self):
        """A two-line file written by hand in the spec's format: replay() returns its two messages,
        and the next append gets e3."""
        name = lab.user("My name is Ada.")
        noted = lab.say("Noted.")
        text = "".join(json.dumps({"id": f"e{n}", "type": "message", "message": m}) + "\n"
                       for n, m in ((1, name), (2, noted)))
        ws = lab.Workspace({LOG: text})
        log = harness.SessionLog(ws, LOG)
        replayed = log.replay()
        self.assertEqual(replayed, [name, noted],
                         f"replay() of the hand-written file gave {_shape(replayed)}; expected "
                         "its two messages, U A, oldest first.")
        got = log.append_message(lab.user("What is my name?"))
        self.assertEqual(got, "e3", f"the next append returned {got!r}; expected 'e3': the file "
                         "already had two lines, whoever wrote them.")

    def test_replay_keeps_damage(self):
        """replay() is the record, damage and all: an empty failed reply and a result whose call is not in the log come back exactly as they were appended."""
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)
        stray = lab.tool_result(lab.call("bash", {"command": "curl localhost"}, id="c9"),
                                "curl: (7) Connection refused\n")
        messages = [lab.user("Is the server up?"), lab.provider_error("503 overloaded"),
                    lab.user("Try again."), stray, lab.say("It is down.")]
        for number, message in enumerate(messages, 1):
            self.append(ws, log, message, number)
        replayed = log.replay()
        self.assertEqual(replayed, messages,
                         f"replay() gave {_shape(replayed)}; expected the five messages as "
                         f"appended, {_shape(messages)}. replay() gives the record; what a "
                         "request may not carry is left out by context_for_model, for each "
                         "request, and never by the log.")

    def test_only_message_entries(self):
        """An entry whose type is not "message" is not part of the transcript, whatever keys it holds: rows() and replay() pass by a "note" entry and an "error" entry that has a "message" of its own (a string), and each still counts as a line, so the next append gets the next number."""
        name, noted = lab.user("My name is Ada."), lab.say("Noted.")
        text = (json.dumps({"id": "e1", "type": "message", "message": name}) + "\n"
                + json.dumps({"id": "e2", "type": "note", "text": "the user gave a name"}) + "\n"
                + json.dumps({"id": "e3", "type": "error", "message": "disk nearly full"}) + "\n"
                + json.dumps({"id": "e4", "type": "message", "message": noted}) + "\n")
        ws = lab.Workspace({LOG: text})
        log = harness.SessionLog(ws, LOG)
        rows = [tuple(row) for row in log.rows()]
        self.assertEqual(rows, [("e1", name), ("e4", noted)],
                         f"rows() of a file whose line 2 is a note and line 3 an error entry "
                         f"gave ids {[r[0] for r in rows]}; expected e1 and e4: (id, message) "
                         "for each entry whose type is \"message\", and nothing for the others. "
                         "Ask the entry's type; a \"message\" key alone does not make an entry a "
                         "message (line 3 has one, holding a string).")
        self.assertEqual(log.replay(), [name, noted],
                         f"replay() gave {_shape(log.replay())}; expected the two messages, U A.")
        got = log.append_message(lab.user("What is my name?"))
        self.assertEqual(got, "e5", f"the next append returned {got!r}; expected 'e5': the "
                         "file has four lines, whatever their type.")

    def test_rows_read_ids(self):
        """rows() pairs each message with the id written in its entry, whatever that id is: a file whose two entries are called "x7" and "x9" gives x7 and x9."""
        name, noted = lab.user("My name is Ada."), lab.say("Noted.")
        text = "".join(json.dumps({"id": key, "type": "message", "message": m}) + "\n"
                       for key, m in (("x7", name), ("x9", noted)))
        log = harness.SessionLog(lab.Workspace({LOG: text}), LOG)
        rows = [tuple(row) for row in log.rows()]
        self.assertEqual(rows, [("x7", name), ("x9", noted)],
                         f"rows() gave ids {[row[0] for row in rows]}; expected ['x7', 'x9'], the "
                         "ids the entries carry. An entry's id is read from its line, never "
                         "worked out again from where the line sits.")

    def test_next_id_counts_lines(self):
        """The next id is "e" + the number of the line it goes on, whatever the ids before it: after two entries called "x7" and "x9", append_message returns "e3"."""
        name, noted = lab.user("My name is Ada."), lab.say("Noted.")
        text = "".join(json.dumps({"id": key, "type": "message", "message": m}) + "\n"
                       for key, m in (("x7", name), ("x9", noted)))
        ws = lab.Workspace({LOG: text})
        log = harness.SessionLog(ws, LOG)
        got = self.append(ws, log, lab.user("What is my name?"), 1)
        self.assertEqual(got, "e3", f"after entries called x7 and x9, append_message returned "
                         f"{got!r}; expected 'e3': the new entry is line 3 of the file. Count the "
                         "lines, len(self.entries()) + 1; do not add one to the last id.")

    def test_message_untouched(self):
        """append_message leaves the message it is handed as it was: no key added, none changed."""
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)
        messages = _four_messages()
        before = json.loads(json.dumps(messages))
        for number, message in enumerate(messages, 1):
            self.append(ws, log, message, number)
        for number, (now, then) in enumerate(zip(messages, before), 1):
            self.assertEqual(now, then,
                             f"append_message (append {number}) changed the message it was handed: it now has "
                             f"the keys {sorted(now)}, and had {sorted(then)}. That dict is the "
                             "harness's record too; put the id in the entry, around the "
                             "message, and leave the message alone.")

    def test_torn_tail(self):
        """The power went out halfway through line 5: entries(), rows() and replay() each raise an
        error naming "line 5", and append_message raises as well, leaving the file as it was.
        Torn at line 2 of 4, the error names "line 2"."""
        lines = [_line(n) for n in range(1, 6)]
        torn = "".join(lines)[:-(len(lines[4]) // 2)]
        ws = lab.Workspace({LOG: torn})
        log = harness.SessionLog(ws, LOG)
        for name in ("entries", "rows", "replay"):
            self.assert_torn(f"{name}() on a file torn in line 5", getattr(log, name), 5)
        writes = len(ws.writes)
        self.assert_torn("append_message on a file torn in line 5",
                         lambda: log.append_message(lab.user("Carry on.")), 5)
        self.assertEqual(ws.read_text(LOG), torn, "append_message changed a torn file. Ask "
                         "entries() first, before writing anything: that is what refuses.")
        self.assertEqual(len(ws.writes), writes,
                         f"append_message wrote to the torn file: {ws.writes[writes:]}")

        middle = [_line(n) for n in range(1, 5)]
        torn_inside = middle[0] + middle[1][:len(middle[1]) // 2] + "\n" + middle[2] + middle[3]
        log = harness.SessionLog(lab.Workspace({LOG: torn_inside}), LOG)
        self.assert_torn("entries() on a file of 4 lines whose line 2 is torn", log.entries, 2)

    def test_torn_inside_refuses_append(self):
        """Torn at line 2 of 4 (the file still ends in a newline): append_message raises the error naming "line 2" and writes nothing."""
        middle = [_line(n) for n in range(1, 5)]
        torn_inside = middle[0] + middle[1][:len(middle[1]) // 2] + "\n" + middle[2] + middle[3]
        ws = lab.Workspace({LOG: torn_inside})
        log = harness.SessionLog(ws, LOG)
        writes = len(ws.writes)
        self.assert_torn("append_message on a file of 4 lines whose line 2 is torn",
                         lambda: log.append_message(lab.user("Carry on.")), 2)
        self.assertEqual((ws.read_text(LOG), ws.writes[writes:]), (torn_inside, []),
                         "append_message wrote to a file whose line 2 is not a complete entry. "
                         "Refuse by reading every line, through entries(), before writing: a "
                         "file that ends in a newline can still be torn inside.")

    def test_blank_line(self):
        """A blank line is not a complete log entry either, between two entries or at the very start of the file: entries() raises the same error, naming that line."""
        ws = lab.Workspace({LOG: _line(1) + "\n" + _line(2)})
        log = harness.SessionLog(ws, LOG)
        self.assert_torn("entries() on a file whose line 2 is blank", log.entries, 2)
        ws = lab.Workspace({LOG: "\n" + _line(1) + _line(2)})
        log = harness.SessionLog(ws, LOG)
        try:
            self.assert_torn("entries() on a file whose line 1 is blank", log.entries, 1)
        except AssertionError as error:
            self.fail(f"{error} Strip nothing from the file's text before splitting it: "
                      "strip() removes the blank lines at its edges, and every line number after "
                      "them shifts with them.")

    def test_dangling_call(self):
        """The log ends on a tool call that never got its result (kill -9). On the rebooted disk,
        replay() gives the two logged messages as they are, U A[c1], and writes nothing;
        Harness(..., messages=log.replay()) answers the next prompt, and the model is sent the
        whole earlier session."""
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)
        pytest = lab.call("bash", {"command": "pytest"}, id="c1")
        earlier = [lab.user("Run the tests."), lab.reply(lab.text("Running them."), pytest)]
        for number, message in enumerate(earlier, 1):
            self.append(ws, log, message, number)

        disk = ws.reboot()
        log = harness.SessionLog(disk, LOG)
        since = len(disk.writes)
        replayed = log.replay()
        self.assertEqual(replayed, earlier,
                         f"replay() of a log that ends on a dangling call gave {_shape(replayed)}; "
                         "expected the two logged messages as they are, U A[c1]. replay() reads "
                         "back what happened; the stand-in for c1 is made for each request by "
                         "context_for_model, and never enters the record.")
        self.assertEqual(disk.writes[since:], [],
                         f"replay() wrote to the disk: {disk.writes[since:]}. Reading the log "
                         "never mends it: a stand-in result in the file would claim a result "
                         "nobody ever had.")
        answer = lab.say("I can't tell whether the tests ran. Shall I run them?")
        model = lab.ScriptedModel([answer])
        bash = harness.make_bash_tool(lab.Shell(disk))
        h = harness.Harness(model, harness.SYSTEM, [bash], messages=log.replay())
        _consume(h.prompt("Are you still there?"))

        self.assertEqual(len(model.calls), 1,
                         f"the model was called {len(model.calls)} times; expected once.")
        sent = list(model.calls[0].messages)
        self.assertEqual(sent[:2], earlier,
                         f"the model was sent {_shape(sent)}; expected it to begin with the "
                         "whole earlier session, U A[c1], as read back from the log.")
        self.assertEqual(sent[-1], lab.user("Are you still there?"),
                         f"the model was sent {_shape(sent)}; expected the new prompt last.")
        problems = lab.validate(sent)
        self.assertEqual(problems, [],
                         f"the model was sent an invalid transcript, {_shape(sent)}: "
                         f"{problems}. Lesson 10's context_for_model answers the dangling c1 "
                         "in the view; the log itself needs no mending.")
        last = h.messages[-1]
        said = harness.text_of(last) if last["role"] == "assistant" else None
        self.assertEqual(said, harness.text_of(answer),
                         f"the record ends {_shape(h.messages)}, the last message saying "
                         f"{said!r}; expected the model's answer, {harness.text_of(answer)!r}.")


# ------------------------------------------------------------------- lab 2: nobody's loop saves

class Lab2(_LabCase):

    def setUp(self):
        """Each Harness keeps its listeners to itself. A list shared between harnesses would
        carry every earlier test's listeners into this one, so it is refused before anything
        runs."""
        one, two = (harness.Harness(lab.ScriptedModel([]), harness.SYSTEM, []) for _ in "12")
        shared = sorted(name for name, value in vars(one).items()
                        if isinstance(value, list) and any(value is v for v in vars(two).values()))
        shared += sorted(name for name, value in vars(harness.Harness).items()
                         if isinstance(value, list))
        if shared:
            self.fail(f"two new Harness objects share the list {shared[0]}: a list made once, on "
                      "the class, is every harness's list, and a saver subscribed to one session "
                      "hears all the others. Make the list of listeners in __init__, on self.")

    def subscribe(self, h, listener):
        """h.subscribe(listener), which must hand back the listener's own undo."""
        undo = h.subscribe(listener)
        if not callable(undo):
            self.fail(f"h.subscribe(listener) returned {_what(undo)}; expected a function that "
                      "takes that listener off again, for the subscriber to keep.")
        return undo

    def test_saver_only(self):
        """The three-file job with h.subscribe(persist_to(log)) as the only saving: the log holds
        one entry for each message_end, in the same order, and log.replay() equals
        list(h.messages)."""
        ws = lab.Workspace()
        h, log, _ = _job(ws)
        h.subscribe(harness.persist_to(log))
        ended = [event["message"] for event in _consume(h.prompt(JOB))
                 if event["type"] == "message_end"]
        entries = log.entries()
        logged = [entry.get("message") for entry in entries]
        self.assertEqual(logged, ended,
                         f"the log holds {_shape(logged)}; the run announced {_shape(ended)} "
                         "as message_end events. Expected one entry per message_end, in order, "
                         "and none for any other event.")
        self.assertEqual([entry["id"] for entry in entries],
                         [f"e{n}" for n in range(1, len(entries) + 1)],
                         "the entry ids are not e1, e2, ... in order.")
        self.assertEqual(log.replay(), list(h.messages),
                         f"log.replay() is {_shape(log.replay())} but the record is "
                         f"{_shape(h.messages)}; expected them equal.")

    def test_power_cut(self):
        """power_cut() strikes during model call 3, once a.py and b.py are written. On the rebooted
        disk, Harness(..., messages=log.replay()) sends the model all five finished messages,
        writes c.py and no other .py file, and the log still equals the record."""
        ws = lab.Workspace()
        h, log, _ = _job(ws, [_writer, _writer, lab.power_cut()])
        h.subscribe(harness.persist_to(log))
        try:
            _consume(h.prompt(JOB))
        except lab.PowerCut:
            pass
        else:
            self.fail("the power cut scripted for model call 3 never happened: the run ended "
                      f"with {_shape(h.messages)}.")
        finished = list(h.messages)
        self.assertEqual(len(finished), 5,
                         f"at the cut the record held {_shape(finished)}; expected five "
                         "finished messages, U A[w1] R(w1) A[w2] R(w2).")
        self.assertEqual(_py_writes(ws), ["a.py", "b.py"],
                         f"before the cut the job wrote {_py_writes(ws)}; expected a.py, b.py.")

        disk = ws.reboot()
        since = len(disk.writes)
        h, log, model = _job(disk)
        h.subscribe(harness.persist_to(log))
        resumed = _shape(log.replay())
        try:
            _consume(h.prompt("The power went out. Carry on."))
        except Exception as error:
            self.fail(f"after the reboot the resumed run raised {type(error).__name__}: {error}. "
                      f"It started from log.replay(), {resumed}; expected the "
                      f"{len(finished)} finished messages, {_shape(finished)}, and nothing "
                      "that is not a message.")
        sent = list(model.calls[0].messages) if model.calls else []
        self.assertEqual(sent[:-1], finished,
                         f"after the reboot the model was first sent {_shape(sent)}; expected "
                         f"the {len(finished)} messages finished before the cut, "
                         f"{_shape(finished)}, then the new prompt. Is every message_end "
                         "appended to the log?")
        self.assertEqual(_py_writes(disk, since), ["c.py"],
                         f"after the reboot the agent wrote {_py_writes(disk, since)}; expected "
                         "only c.py: the log says a.py and b.py are done.")
        self.assertEqual(log.replay(), list(h.messages),
                         f"log.replay() is {_shape(log.replay())} but the record is "
                         f"{_shape(h.messages)}; expected them equal.")

    def test_three_consumers(self):
        """One job, consumed three ways: by a bare lab.drive(h.prompt(...)), by a loop that passes
        each event to JsonRenderer, and by one that passes each to FinalTextRenderer. The three
        session files are identical and complete."""
        files = {}
        for way in ("lab.drive", "JsonRenderer", "FinalTextRenderer"):
            ws = lab.Workspace()
            h, log, _ = _job(ws)
            h.subscribe(harness.persist_to(log))
            with contextlib.redirect_stdout(io.StringIO()):    # the renderers' output
                if way == "lab.drive":
                    lab.drive(h.prompt(JOB))
                else:
                    frontend = getattr(harness, way)()
                    for event in lab.steps(h.prompt(JOB)):
                        frontend.render(event)
                    frontend.finish()
            self.assertEqual(log.replay(), list(h.messages),
                             f"consumed by {way}, the log replays {_shape(log.replay())} but "
                             f"the record is {_shape(h.messages)}; expected every message.")
            self.assertTrue(h.messages and harness.text_of(h.messages[-1]) == DONE,
                            f"consumed by {way}, the job did not finish: {_shape(h.messages)}.")
            files[way] = ws.read_text(LOG) if ws.exists(LOG) else ""
        sizes = {way: len(text.splitlines()) for way, text in files.items()}
        self.assertEqual(len(set(files.values())), 1,
                         f"the three session files differ (lines: {sizes}); expected the same "
                         "file whoever consumes the run: the saver is not in anybody's loop.")

    def test_listener_first(self):
        """Each event reaches every listener before the consumer is handed it: when the consumer gets event k, the listener has heard exactly events 1 to k."""
        h, _, _ = _job(lab.Workspace())
        heard = []
        h.subscribe(heard.append)
        for k, event in enumerate(lab.steps(h.prompt(JOB)), 1):
            if len(heard) != k or heard[-1] is not event:
                self.fail(f"when the consumer was handed event {k} ({event['type']}), the "
                          f"listener had heard {len(heard)} events"
                          f"{', not that one' if heard and heard[-1] is not event else ''}; "
                          "expected it to have heard that very event already. In _run, call the "
                          "listeners, then yield.")

    def test_close_after_k(self):
        """The consumer closes the run after k events, for every possible k: the listener has heard
        exactly those k events, and whenever it heard a message_end, that message was already
        the last of h.messages."""
        h, _, _ = _job(lab.Workspace())
        total = len(_consume(h.prompt(JOB)))
        # k from 1: closing a run before its first event runs none of its code at all.
        for k in range(1, total + 1):
            h, _, _ = _job(lab.Workspace())
            heard, late = [], []

            def listener(event, h=h, heard=heard, late=late):
                heard.append(event)
                if event["type"] == "message_end" and (
                        not h.messages or h.messages[-1] is not event["message"]):
                    late.append(len(heard))

            h.subscribe(listener)
            run = lab.steps(h.prompt(JOB))
            taken = [next(run) for _ in range(k)]
            run.close()
            self.assertTrue(len(heard) == k and all(a is b for a, b in zip(heard, taken)),
                            f"closed after {k} of {total} events (the last handed over: "
                            f"{taken[-1]['type']}), the listener had heard {len(heard)} of "
                            f"them; expected exactly those {k}. Call the listeners before the "
                            "yield: a consumer that closes the run never asks for the line "
                            "after it.")
            self.assertEqual(late, [],
                             f"closed after {k} events, the listener heard a message_end "
                             f"(event {late[:1]}) whose message was not yet the last of "
                             "h.messages. The record changes first, then listeners hear of it.")

    def test_close_after_k_saved(self):
        """Close after every k with persist_to subscribed: list(h.messages) equals log.replay() at
        each k, two more prompts get answers, and the log on the rebooted disk still equals the
        record."""
        h, _, _ = _job(lab.Workspace())
        total = len(_consume(h.prompt(JOB)))
        for k in range(1, total + 1):
            ws = lab.Workspace()
            h, log, _ = _job(ws)
            h.subscribe(harness.persist_to(log))
            run = lab.steps(h.prompt(JOB))
            last = [next(run) for _ in range(k)][-1]
            run.close()
            self.assertEqual(log.replay(), list(h.messages),
                             f"closed after {k} of {total} events (the last: {last['type']}), "
                             f"the log replays {_shape(log.replay())} but the record is "
                             f"{_shape(h.messages)}; expected them equal at every event.")
            for prompt in ("Carry on.", "Anything left?"):
                try:
                    _consume(h.prompt(prompt))
                except RuntimeError as error:
                    self.fail(f"closed after {k} events, the next prompt raised "
                              f"RuntimeError: {error}. A closed run must leave the harness idle.")
                self.assert_answered(h, f"closed after {k} events, then prompted {prompt!r}")
            again = harness.SessionLog(ws.reboot(), LOG).replay()
            self.assertEqual(again, list(h.messages),
                             f"closed after {k} events and prompted twice, the log on the "
                             f"rebooted disk replays {_shape(again)} but the record is "
                             f"{_shape(h.messages)}.")

    def test_close_closes_run_agent(self):
        """A run closed by its consumer after any event also closes run_agent's generator at once, as lesson 10's _run did: the new _run's finally still calls run.close() before it clears the running flag."""
        original = harness.run_agent
        made = []                                 # held here, so dropping one does not close it
        running_at_close = []                     # h.is_running as run_agent's generator ends
        owner = []

        def spy(*args, **kwargs):
            def watched():
                try:
                    yield from original(*args, **kwargs)
                finally:
                    running_at_close.append(owner[-1].is_running)
            generator = original(*args, **kwargs) if inspect.isasyncgenfunction(original) \
                else watched()                    # lesson 15 on: watched as it is
            made.append(generator)
            return generator

        h, _, _ = _job(lab.Workspace())
        total = len(_consume(h.prompt(JOB)))
        harness.run_agent = spy
        try:
            for k in range(1, total + 1):
                made.clear()
                running_at_close.clear()
                h, _, _ = _job(lab.Workspace())
                owner.append(h)
                h.subscribe(lambda event: None)
                run = lab.steps(h.prompt(JOB))
                last = [next(run) for _ in range(k)][-1]
                try:
                    run.close()
                except Exception as error:
                    self.fail(f"closed after {k} of {total} events (the last: {last['type']}), "
                              f"closing the run raised {type(error).__name__}: {error}. A "
                              "finally that runs on a close closes run_agent's generator and "
                              "clears the flag, nothing that can fail.")
                if not made:
                    self.fail("Harness._run never called run_agent; it must loop over "
                              "run_agent's generator, as lesson 10's did.")
                if getattr(made[-1], "gi_frame", getattr(made[-1], "ag_frame", None)) is not None:
                    self.fail(f"closed after {k} of {total} events (the last: {last['type']}), "
                              "the run is closed but run_agent's generator is still paused at "
                              "its yield. Keep lesson 10's finally in your new _run: "
                              "run.close(), then the running flag cleared.")
                if running_at_close and running_at_close[-1] is not True:
                    self.fail(f"closed after {k} of {total} events (the last: {last['type']}), "
                              "run_agent's generator was closed after the running flag was "
                              "cleared; expected the flag still set while run.close() runs. "
                              "Keep lesson 10's order in your new _run's finally: "
                              "run.close() first, then the running flag cleared.")
        finally:
            harness.run_agent = original

    def test_unsubscribe_mid_event(self):
        """Two listeners, and the first unsubscribes itself on the first event it hears: the second
        still hears every event, that first one included."""
        h, _, _ = _job(lab.Workspace())
        first_heard, second_heard = [], []

        def first(event):
            first_heard.append(event)
            undo_first()

        undo_first = self.subscribe(h, first)
        h.subscribe(second_heard.append)
        events = _consume(h.prompt(JOB))
        self.assertTrue(len(first_heard) == 1 and first_heard[0] is events[0],
                        f"the first listener heard {len(first_heard)} events; expected just "
                        "the first, after which it unsubscribed.")
        missed = [n for n, event in enumerate(events, 1)
                  if not any(event is heard for heard in second_heard)]
        self.assertEqual(missed, [],
                         f"the second listener missed event(s) {missed} of {len(events)} "
                         f"(the first: {events[missed[0] - 1]['type'] if missed else ''}). "
                         "Expected it to hear every one. Walk a copy of the listener list: "
                         "removing from the list a for loop is walking makes it skip the next.")
        self.assertEqual(len(second_heard), len(events),
                         f"the second listener heard {len(second_heard)} events; the run had "
                         f"{len(events)}.")

    def test_unsubscribe_another(self):
        """A listener that unsubscribes another listener while it is being called: the other one still hears that event, and none after it."""
        h, _, _ = _job(lab.Workspace())
        second_heard = []

        def first(event):
            if event["type"] == "agent_start":
                undo_second()

        h.subscribe(first)
        undo_second = self.subscribe(h, second_heard.append)
        events = _consume(h.prompt(JOB))
        if not second_heard or second_heard[0] is not events[0]:
            self.fail(f"the second listener heard {len(second_heard)} events; expected the first "
                      "event, agent_start, during which the first listener took it off. Walk a "
                      "copy of the listener list, made before anyone is called, and call every "
                      "listener on that copy.")
        if len(second_heard) != 1:
            self.fail(f"the second listener heard {len(second_heard)} events; expected only the "
                      "one during which it was taken off, and none after.")

    def test_unsubscribe_earlier(self):
        """A listener that unsubscribes one subscribed before it: that one still hears the event, and the one that did it hears it exactly once."""
        h, _, _ = _job(lab.Workspace())
        first_heard, second_heard = [], []

        def second(event):
            second_heard.append(event)
            if event["type"] == "agent_start":
                undo_first()

        undo_first = self.subscribe(h, first_heard.append)
        h.subscribe(second)
        events = _consume(h.prompt(JOB))
        if not events:
            self.fail("the run yielded no events.")
        start = events[0]
        heard_first = sum(e is start for e in first_heard)
        heard_second = sum(e is start for e in second_heard)
        if (heard_first, heard_second) != (1, 1):
            self.fail(f"during agent_start the second listener took the first one off; the first "
                      f"heard agent_start {heard_first} time(s) and the second {heard_second}; "
                      "expected once each. Walk a copy of the listener list, in the order they "
                      "subscribed, made before anyone is called.")
        if len(second_heard) != len(events):
            self.fail(f"the second listener heard {len(second_heard)} events of the run's "
                      f"{len(events)}; expected each exactly once.")

    def test_listeners_in_order(self):
        """Listeners hear each event in the order they subscribed, the same function subscribed twice hears it twice, and one subscribed during a run hears every event after that."""
        h, _, _ = _job(lab.Workspace())
        heard = []
        saver = lambda event: heard.append(("saver", event["type"]))
        screen = lambda event: heard.append(("screen", event["type"]))
        late = lambda event: heard.append(("late", event["type"]))
        h.subscribe(saver)
        h.subscribe(screen)
        h.subscribe(screen)
        run = lab.steps(h.prompt(JOB))
        first = next(run)
        try:
            h.subscribe(late)
        except Exception as error:
            self.fail(f"h.subscribe() during a run raised {type(error).__name__}: {error}. Anyone "
                      "may subscribe at any time; the new listener hears the events after it.")
        events = [first] + _consume(run)
        start = [who for who, kind in heard if kind == "agent_start"]
        self.assertEqual(start, ["saver", "screen", "screen"],
                         f"agent_start was heard by {start}; expected saver, screen, screen: the "
                         "listeners in the order they subscribed, each subscription called once. "
                         "Keep them in a list and append each new one at its end.")
        late_heard = [kind for who, kind in heard if who == "late"]
        self.assertEqual(late_heard, [event["type"] for event in events[1:]],
                         f"a listener subscribed after the first event heard {len(late_heard)} of "
                         f"the {len(events) - 1} events that followed; expected all of them.")

    def test_undo_one_of_two(self):
        """One function subscribed twice, and the first subscription's undo called once: the function still hears each event of the next run once, through the second subscription."""
        h, _, _ = _job(lab.Workspace())
        heard = []
        undo = self.subscribe(h, heard.append)
        h.subscribe(heard.append)
        undo()
        events = _consume(h.prompt(JOB))
        self.assertEqual(len(heard), len(events),
                         f"after one of its two subscriptions was undone, the function heard "
                         f"{len(heard)} events of a run of {len(events)}; expected each once. An "
                         "undo takes off one subscription, its own: remove the listener once, "
                         "not every time it is on the list.")

    def test_undo_both_of_two(self):
        """Two different listeners A and B, subscribed in that order; A's undo is called, then B's: nobody hears the next run, since each undo takes off its own listener wherever it now sits on the list."""
        h, _, _ = _job(lab.Workspace())
        heard = []
        undo_a = self.subscribe(h, lambda event: heard.append("A"))
        undo_b = h.subscribe(lambda event: heard.append("B"))
        undo_a()
        undo_b()
        events = _consume(h.prompt(JOB))
        self.assertEqual(heard, [],
                         f"subscribed A then B, then undid A, then B: the next run of "
                         f"{len(events)} events was still heard {heard.count('A')} times by A "
                         f"and {heard.count('B')} times by B; expected nobody. Once A is gone, "
                         "B has moved up the list: an undo must find its own subscription "
                         "where it is now, not where it was when it subscribed.")

    def test_undo_twice_of_one_function_twice(self):
        """One function subscribed twice, and the first subscription's undo called twice: the second call does nothing, so the function still hears each event of the next run once, through the second subscription."""
        h, _, _ = _job(lab.Workspace())
        heard = []
        undo = self.subscribe(h, heard.append)
        h.subscribe(heard.append)
        undo()
        undo()
        events = _consume(h.prompt(JOB))
        self.assertEqual(len(heard), len(events),
                         f"one function subscribed twice, and the first subscription's undo "
                         f"called twice: the function heard {len(heard)} events of a run of "
                         f"{len(events)}; expected each once, through the second subscription. An "
                         "undo takes off its own subscription and no other, and a second call "
                         "of it does nothing: look for the one its subscribe added, not for any "
                         "equal function (wrap the listener in a function made for this "
                         "subscription, and take off that).")

    def test_undo_takes_off_its_own(self):
        """Subscribed in the order f, g, f, and the second f's undo called: the listeners left hear each event in the order f, g, since the f taken off is the second one, not the first."""
        h, _, _ = _job(lab.Workspace())
        heard = []
        f = lambda event: heard.append(("f", event["type"]))
        g = lambda event: heard.append(("g", event["type"]))
        h.subscribe(f)
        h.subscribe(g)
        undo = self.subscribe(h, f)
        undo()
        _consume(h.prompt(JOB))
        start = [who for who, kind in heard if kind == "agent_start"]
        self.assertEqual(start, ["f", "g"],
                         f"subscribed f, g, f, then the second f's undo called: agent_start was "
                         f"heard by {start}; expected f, g: the two subscriptions never undone, "
                         "in the order they subscribed. An undo must take off its own "
                         "subscription, the one its subscribe added, and not the first equal "
                         "function on the list.")

    def test_undo_twice(self):
        """Two listeners on one harness, and the first one's undo is called twice: the second still
        hears the next run, the first hears none of it, and a listener on another harness hears
        nothing of this one."""
        h, _, _ = _job(lab.Workspace())
        other, _, _ = _job(lab.Workspace())
        first, second, elsewhere = [], [], []
        undo = h.subscribe(first.append)
        h.subscribe(second.append)
        other.subscribe(elsewhere.append)
        if not callable(undo):
            self.fail(f"h.subscribe(listener) returned {_what(undo)}; expected a function that "
                      "takes that listener off again, for the subscriber to keep.")
        undo()
        try:
            undo()
        except Exception as error:
            self.fail(f"calling the undo a second time raised {type(error).__name__}: {error}. "
                      "Expected it to do nothing: take the listener off only if it is still "
                      "on the list.")
        events = _consume(h.prompt(JOB))
        self.assertEqual(first, [], f"the undone listener heard {len(first)} events of the "
                         "next run; expected none.")
        self.assertTrue(len(second) == len(events)
                        and all(a is b for a, b in zip(second, events)),
                        f"the second listener heard {len(second)} of the run's {len(events)} "
                        "events; expected all of them. Did the second undo take off a listener "
                        "that was not its own?")
        self.assertEqual(elsewhere, [],
                         f"a listener on another harness heard {len(elsewhere)} events of this "
                         "one; expected none. Keep the listeners on the instance (self), made "
                         "in __init__, not on the class.")
        other_events = _consume(other.prompt(JOB))
        self.assertEqual(len(elsewhere), len(other_events),
                         f"the other harness's listener heard {len(elsewhere)} of its own run's "
                         f"{len(other_events)} events; expected all of them.")

    def test_brakes_still_hold(self):
        """The rewritten _run keeps lesson 5's brake (max_turns=2 stops a model that never stops, and the listener hears the stop), lesson 4's failures as results, and lesson 9's follow-ups, each logged by persist_to."""
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)

        def broken(arguments):
            raise OSError("read-only disk")

        def never_stops(request):
            """Always asks for the tool again; gives up by itself after six calls, so that a
            harness with no brake fails here instead of running for ever."""
            asked = sum(m["role"] == "assistant" for m in request.messages)
            if asked >= 6:
                return lab.say("I give up.")
            return lab.reply(lab.call("write", {"path": "a.py", "content": ""},
                                      id=f"w{asked + 1}"))

        tool = {**harness.make_write_tool(ws), "execute": broken}
        model = lab.ScriptedModel([lab.forever(never_stops)], check=True)
        h = harness.Harness(model, harness.SYSTEM, [tool], max_turns=2)
        h.subscribe(harness.persist_to(log))
        try:
            _consume(h.prompt("Write a.py."))
        except Exception as error:
            self.fail(f"the run raised {type(error).__name__}: {error}; expected the tool's "
                      "OSError to become a result marked is_error, and the run to go on.")
        self.assertEqual(len(model.calls), 2,
                         f"with max_turns=2 and a model that always asks for a tool, the model "
                         f"was called {len(model.calls)} times; expected 2. Pass max_turns on to "
                         "run_agent from _run, as lesson 10's _run did.")
        results = [m for m in h.messages if m["role"] == "toolResult"]
        self.assertTrue(results and all(m.get("is_error") for m in results),
                        f"the tool raised OSError, and the record is {_shape(h.messages)}; "
                        "expected a result marked is_error for each call.")
        self.assertEqual(log.replay(), list(h.messages),
                         f"the log replays {_shape(log.replay())} but the record is "
                         f"{_shape(h.messages)}; expected the brake's message logged too.")
        model = lab.ScriptedModel([lab.say("First."), lab.say("Second.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        log = harness.SessionLog(lab.Workspace(), LOG)
        h.subscribe(harness.persist_to(log))
        run = lab.steps(h.prompt("One."))
        next(run)
        h.follow_up("Two.")
        _consume(run)
        said = [harness.text_of(m) for m in log.replay() if m["role"] == "assistant"]
        self.assertEqual(said, ["First.", "Second."],
                         f"a follow-up queued during the run left the log {_shape(log.replay())}; "
                         "expected it answered and logged in the same run, U A U A. Pass "
                         "get_follow_ups (and get_steering) on to run_agent from _run.")

    def test_repeated_and_empty_saved(self):
        """A message equal to one already saved ("Again." asked twice, answered the same) and an empty failed reply are each saved as lines of their own, and so is a steered "Yes." right after the prompt "Yes.": the log replays exactly the record."""
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)
        model = lab.ScriptedModel([lab.say("Same."), lab.say("Same."),
                                   lab.provider_error("503 overloaded")])
        h = harness.Harness(model, harness.SYSTEM, [])
        h.subscribe(harness.persist_to(log))
        for prompt in ("Again.", "Again.", "Once more."):
            _consume(h.prompt(prompt))
        self.assertEqual(log.replay(), list(h.messages),
                         f"the log replays {_shape(log.replay())} but the record is "
                         f"{_shape(h.messages)}. Every message_end is one new line, whatever the "
                         "message says: one equal to an earlier message, or an empty failed "
                         "reply, still happened, and the record keeps it.")
        log = harness.SessionLog(lab.Workspace(), LOG)
        h = harness.Harness(lab.ScriptedModel([lab.say("Done.")]), harness.SYSTEM, [])
        h.subscribe(harness.persist_to(log))
        h.steer("Yes.")
        _consume(h.prompt("Yes."))
        self.assertEqual(log.replay(), list(h.messages),
                         f"prompted \"Yes.\" with \"Yes.\" steered in right behind it, the log "
                         f"replays {_shape(log.replay())} but the record is {_shape(h.messages)}. "
                         "A message equal to the one just logged is still a message of its "
                         "own: save every message_end, even one the log's last line matches.")

    def test_flag_still_set_by_prompt(self):
        """The rewritten _run, with a saver subscribed, keeps lesson 8's rule: prompt() sets is_running at once, so a second prompt() before the first run's first event raises RuntimeError."""
        h, log, _ = _job(lab.Workspace())
        self.subscribe(h, harness.persist_to(log))
        run = h.prompt(JOB)
        self.assertTrue(h.is_running,
                        "straight after h.prompt(), before any event is pulled, h.is_running is "
                        "False. Keep setting the flag in prompt(), which runs at once, not in "
                        "_run, whose body waits for the first next().")
        try:
            h.prompt("And again.")
        except RuntimeError:
            pass
        else:
            self.fail("a second h.prompt() before the first run was pulled was accepted, so two "
                      "runs could write one record and one log. prompt() checks and sets the "
                      "flag itself.")
        _consume(run)

    def test_steering_still_reaches_the_model(self):
        """The rewritten _run, with a saver subscribed, keeps lesson 9's steering: a message steered before the prompt is sent with it in the first model call (U U) and saved to the log."""
        model = lab.ScriptedModel([lab.say("Spaces it is.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        log = harness.SessionLog(lab.Workspace(), "session.jsonl")
        self.subscribe(h, harness.persist_to(log))
        h.steer("Use spaces.")
        _consume(h.prompt("Indent the file."))
        sent = lab.shape(model.calls[0].messages) if model.calls else "nothing"
        self.assertEqual(sent, "U U", f"the first model call was sent {sent}; expected the prompt "
                         "and the steered message (U U): keep passing get_steering on to "
                         "run_agent from the rewritten _run, and steer() queueing the message.")
        self.assertEqual(lab.shape(log.replay()), "U U A", f"the log holds "
                         f"{lab.shape(log.replay())}; expected U U A.")

    def test_listener_raises(self):
        """A listener raises OSError("disk full") at the first message_end: the error reaches the
        run's consumer, the record holds just the message that was announced, the harness is idle
        again, and the next prompt is accepted."""
        h, _, _ = _job(lab.Workspace())
        raised = []

        def full_disk(event):
            if event["type"] == "message_end" and not raised:
                raised.append(event)
                raise OSError("disk full")

        h.subscribe(full_disk)
        caught = None
        try:
            _consume(h.prompt(JOB))
        except OSError as error:
            caught = error
        self.assertTrue(raised, "the listener never heard a message_end.")
        self.assertTrue(caught is not None and "disk full" in str(caught),
                        "the listener raised OSError('disk full') and the run went on as if "
                        "nothing had happened; expected the error to reach the consumer. Catch "
                        "nothing around the listeners: a saver that cannot save must not be "
                        "silent.")
        announced = [raised[0]["message"]] if raised else []
        self.assertEqual(list(h.messages), announced,
                         f"after the listener failed at the first message_end, the record is "
                         f"{_shape(h.messages)}; expected {_shape(announced)}, the one message "
                         "the run had announced. A listener's error is not a message: nothing "
                         "announces it, so no saver could log it, and the log and the record "
                         "would part.")
        self.assertFalse(h.is_running,
                         "after the listener's error ended the run, h.is_running is still "
                         "True; expected False. Reset it in a finally, which runs however the "
                         "run ends.")
        try:
            _consume(h.prompt("Try again."))
        except RuntimeError as error:
            self.fail(f"the next prompt raised RuntimeError: {error}; expected it accepted.")
        self.assert_answered(h, "after the listener's error, the next prompt ran, and")

    def test_listener_error_before_handover(self):
        """A listener raises at the first message_end: neither a listener subscribed after it nor the consumer is handed that message_end; the error comes in its place."""
        h, _, _ = _job(lab.Workspace())
        raised, later = [], []

        def full_disk(event):
            if event["type"] == "message_end" and not raised:
                raised.append(event)
                raise OSError("disk full")

        h.subscribe(full_disk)
        h.subscribe(later.append)
        handed, caught = [], None
        try:
            for event in lab.steps(h.prompt(JOB)):
                handed.append(event)
        except OSError as error:
            caught = error
        if not raised:
            self.fail("the listener never heard a message_end.")
        if caught is None:
            self.fail("the listener raised OSError('disk full') and the consumer's loop ended "
                      "without it; expected the error to come out of the run.")
        if any(e is raised[0] for e in later):
            self.fail("the first listener raised OSError('disk full') on a message_end, and the "
                      "listener subscribed after it still heard that message_end. The saver "
                      "subscribed first has saved before anyone else hears; when it cannot, "
                      "nobody hears. Let the error out of _notify at once: no try around the "
                      "listeners.")
        if raised and any(e is raised[0] for e in handed):
            self.fail("the listener raised OSError('disk full') on a message_end, and the "
                      "consumer was still handed that message_end. A consumer that closes the "
                      "run there never hears the error. Let it out of _notify at once, before "
                      "the yield: hold nothing back.")

    def test_torn_log_stops_run(self):
        """The session file ends in a torn line, so the log refuses every append. With
        h.subscribe(persist_to(log)), the first prompt ends with that error in front of the
        run's consumer, and the file is left untouched."""
        lines = [_line(n) for n in range(1, 4)]
        torn = "".join(lines)[:-(len(lines[2]) // 2)]
        ws = lab.Workspace({LOG: torn})
        log = harness.SessionLog(ws, LOG)
        model = lab.ScriptedModel([lab.forever(_writer)])
        h = harness.Harness(model, harness.SYSTEM, [harness.make_write_tool(ws)])
        h.subscribe(harness.persist_to(log))
        writes = len(_ops(ws, LOG))
        caught = None
        try:
            _consume(h.prompt(JOB))
        except ValueError as error:
            caught = error
        self.assertTrue(caught is not None and re.search(r"\bline 3\b", str(caught)),
                        f"the run ended with {_shape(h.messages)} and "
                        f"{'no error' if caught is None else repr(caught)}; expected the log's "
                        "ValueError naming line 3 to reach the consumer. persist_to catches "
                        "nothing, and neither does _notify.")
        self.assertEqual(ws.read_text(LOG), torn, "the torn session file was changed; expected "
                         "it untouched.")
        self.assertEqual(len(_ops(ws, LOG)), writes, "the torn session file was written to; "
                         "expected no writes.")
