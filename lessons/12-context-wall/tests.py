"""Lesson 12's lab tests: a long session and the model's window.

Lab1 checks find_cut, summarise and the log's compaction entry (point 12.1). Lab2 checks
is_overflow, compact and Session: when to compact, and retrying once (point 12.2), and re-tests
the rules lab 2 rewrites: lesson 05's max_turns brake and lesson 11's log. Each test's docstring
is its checklist line on the page, word for word. Run them with

    python lab/lab_check.py --harness harness.py --lesson 12 tests.py [--lab 1|2]
"""
import json
import unittest

import harness
import lab

LESSON = 12
LOG = "session.jsonl"
FILES = {f"m{n}.py": "".join(f"value_{n}_{k} = {k}  # uses PORT\n" for k in range(40))
         for n in range(1, 10)}
TASK = "Rename PORT to HTTP_PORT in m1.py. Never touch tests/."


# ------------------------------------------------------------------------------------- helpers

def _worker(request):
    """The model at work. A user message naming a file gets a read of it; anything else, a
    sentence. It goes only by the request it is sent."""
    last = request.messages[-1]
    if last["role"] == "user":
        names = [w.strip(".,") for w in last["content"].split() if w.strip(".,").endswith(".py")]
        if names:
            return lab.reply(lab.call("read", {"path": names[0]}, id=f"r{len(request.messages)}"))
        return lab.say("Which file next?")
    return lab.say("Decision: rename in place. That file is done.")


def _model(window=100_000, worker=_worker):
    """One model for both jobs: it works when offered tools and summarises when not."""
    return lab.WindowedModel([lab.forever(lab.summariser(otherwise=worker))], window=window)


def _prompts(count):
    return [TASK] + [f"Now m{n}.py." for n in range(2, count + 1)]


def _session_messages(count=6):
    """The record of `count` prompts of the job, built by lesson 11's harness and no compaction."""
    ws = lab.Workspace(FILES)
    h = harness.Harness(_model(), harness.SYSTEM, [harness.make_read_tool(ws)])
    for text in _prompts(count):
        lab.drive(h.prompt(text))
    return list(h.messages)


def _logged(count=6, window=100_000):
    """A disk, a log holding `count` prompts of the job, and the tools."""
    ws = lab.Workspace(FILES)
    log = harness.SessionLog(ws, LOG)
    h = harness.Harness(_model(window), harness.SYSTEM, [harness.make_read_tool(ws)])
    h.subscribe(harness.persist_to(log))
    for text in _prompts(count):
        lab.drive(h.prompt(text))
    return ws, log


def _expected_cut(messages, keep_recent):
    """The rule of the spec, worked out here on its own: count back to keep_recent, then on to
    the first user message at or after that point, never index 0."""
    total, start = 0, None
    for index in range(len(messages) - 1, -1, -1):
        total += harness.estimate_tokens([messages[index]])
        if total >= keep_recent:
            start = index
            break
    if start is None:
        return 0
    for later in range(max(start, 1), len(messages)):
        if messages[later]["role"] == "user":
            return later
    return 0


def _noted(request):
    """The model at work on a job that needs no tools: it answers every request in words."""
    return lab.say("Noted, and the tests pass.")


def _chat_log(turns):
    """A disk and a log of `turns` short prompts, each answered in words: small turns, so a
    compaction can keep several whole."""
    ws = lab.Workspace(FILES)
    log = harness.SessionLog(ws, LOG)
    for n in range(1, turns + 1):
        log.append_message(lab.user(f"Step {n}: rename PORT in m{n}.py. Never touch tests/."))
        log.append_message(_noted(None))
    return ws, log


def _shape(messages):
    return lab.shape(list(messages)) or "(nothing)"


def _session_estimate(messages, text):
    """The estimate a Session makes before a prompt: lesson 12's, and from lesson 13 on (when the
    harness has build_system_prompt) with the system prompt counted as one more message."""
    system = [harness.user_message(harness.SYSTEM)] if hasattr(harness, "build_system_prompt") else []
    return harness.estimate_tokens(system + messages + [harness.user_message(text)])


class _Passed:
    """A model that notes the tools argument each complete() call was given, as passed, before
    the stage's Request tidies it, then hands the call on."""

    def __init__(self, model):
        self.model, self.tools = model, []

    def complete(self, system, messages, tools):
        self.tools.append(tools)
        return self.model.complete(system, messages, tools)


def _summary_requests(model):
    return [r for r in model.calls if r.system == harness.SUMMARY_SYSTEM]


def _work_requests(model):
    return [r for r in model.calls if r.system != harness.SUMMARY_SYSTEM]


def _refusing(worker=_worker):
    """Refuses every request that offers tools, as a provider refuses a prompt that is too long,
    and summarises every request that offers none."""
    def step(request):
        if request.tools:
            return lab.provider_error("400 prompt is too long: 9120 tokens > 8000 maximum")
        return lab.summariser()(request)
    return lab.ScriptedModel([lab.forever(step)])


class _LabCase(lab.LabCase):
    def assert_appends_only(self, ws, before):
        text = ws.read_text(LOG)
        self.assertTrue(text.startswith(before),
                        "the session file no longer begins with what it held before: a "
                        "compaction appends a line and never rewrites the ones already there.")
        ops = {op for op, path, _ in ws.writes if path == LOG and op != "fsync"}
        self.assertTrue(ops <= {"append"},
                        f"the session file was changed with {sorted(ops)}; expected appends "
                        "only. Writing it over starts by emptying it: a power cut then takes "
                        "the whole session.")


# ---------------------------------------------------------------- lab 1: where to cut, and how

class Lab1(_LabCase):

    def test_cut_lands_on_user(self):
        """For every keep_recent from 1 to one past the size of a six-prompt session, find_cut returns the
        first user message at or after the point where the newest messages reach keep_recent
        tokens: never a tool result, never an assistant message, never index 0."""
        messages = _session_messages(6)
        total = harness.estimate_tokens(messages)
        for keep in range(1, total + 2):
            got = self.call(f"find_cut(messages, {keep})", harness.find_cut, messages, keep)
            want = _expected_cut(messages, keep)
            if got == want:
                continue
            inside = isinstance(got, int) and 0 <= got < len(messages)
            role = messages[got]["role"] if inside else None
            if role == "toolResult":
                self.fail(f"find_cut(messages, {keep}) returned {got}, a tool result: the kept "
                          "part would start with a result whose call was summarised away, and a "
                          "provider refuses it (lesson 10's 400). Move on to a user message.")
            if role == "assistant":
                self.fail(f"find_cut(messages, {keep}) returned {got}, an assistant message in "
                          f"the middle of a turn; expected {want}, the next user message.")
            self.fail(f"find_cut(messages, {keep}) returned {got!r}; expected {want}. Count back "
                      "from the newest message until the estimate reaches keep_recent, then "
                      "forward to the first user message at or after it.")

    def test_nothing_to_cut(self):
        """find_cut returns 0 when the whole session is under keep_recent, when no user message
        follows the point reached, and when the only user message is the first."""
        messages = _session_messages(3)
        total = harness.estimate_tokens(messages)
        got = self.call("find_cut", harness.find_cut, messages, total + 1)
        self.assertEqual(got, 0, f"the session is {total} tokens and keep_recent {total + 1}: "
                         f"find_cut returned {got!r}; expected 0, nothing to summarise.")
        one_turn = messages[:4]          # U A[r] R A: the only user message is index 0
        got = self.call("find_cut", harness.find_cut, one_turn, 1)
        self.assertEqual(got, 0, f"for {_shape(one_turn)}, find_cut(..., 1) returned {got!r}; "
                         "expected 0. A cut at 0 summarises nothing, and no later user message "
                         "exists to cut at.")
        read = lab.call("read", {"path": "m1.py"}, id="r9")
        tail = messages + [lab.reply(read), lab.tool_result(read, FILES["m1.py"]),
                           lab.say("Done.")]
        got = self.call("find_cut", harness.find_cut, tail, 5)
        self.assertEqual(got, 0, f"for {_shape(tail)} with keep_recent 5, find_cut returned "
                         f"{got!r}; expected 0: no user message follows the newest messages, "
                         "and a cut never lands on anything else.")

    def test_cut_where_the_total_reaches(self):
        """find_cut stops on the message at which the newest messages reach keep_recent exactly,
        not one message further back: for U U U A with keep_recent the size of the last two, it
        returns 2."""
        messages = [lab.user("First, m1.py."), lab.user("Then m2.py."), lab.user("Now m3.py."),
                    lab.say("Decision: rename in place.")]
        keep = harness.estimate_tokens(messages[2:])
        got = self.call(f"find_cut(messages, {keep})", harness.find_cut, messages, keep)
        self.assertEqual(got, 2, f"for U U U A with keep_recent {keep}, the estimate of the last "
                         f"two messages exactly, find_cut returned {got!r}; expected 2. The count "
                         "stops when the total reaches keep_recent (>=), not when it passes it.")

    def test_summary_request(self):
        """summarise(model, messages) makes one request: SUMMARY_SYSTEM, no tools (the empty list
        [], not None), and one user message of plain text, conversation_text(context_for_model(messages)) (a dangling
        call answered), a blank line, then SUMMARY_PROMPT; it returns the reply's text, stripped."""
        messages = _session_messages(2)
        read = lab.call("read", {"path": "m3.py"}, id="r99")
        messages = messages + [lab.user("Now m3.py."), lab.reply(read)]      # no result: kill -9
        model = _Passed(lab.ScriptedModel(["  ## Goal\nRename PORT.\n\n"], check=True))
        got = self.call("summarise", harness.summarise, model, messages)
        passed = model.tools[0] if model.tools else "nothing"
        self.assertTrue(type(passed) is list and passed == [],
                        f"summarise passed {passed!r} as the tools of its request; expected the "
                        "empty list [], as the spec writes it: model.complete(SUMMARY_SYSTEM, "
                        "[...], []).")
        model = model.model
        self.assertEqual(len(model.calls), 1,
                         f"summarise called the model {len(model.calls)} times; expected once.")
        request = model.calls[0]
        self.assertEqual(request.tools, [],
                         f"the summary request offered {len(request.tools)} tools; expected "
                         "none. A model offered tools carries on the work instead of "
                         "summarising it.")
        self.assertEqual(request.system, harness.SUMMARY_SYSTEM,
                         "the summary request was not sent SUMMARY_SYSTEM as its system prompt.")
        sent = request.messages
        one_text = len(sent) == 1 and sent[0]["role"] == "user" and isinstance(
            sent[0]["content"], str)
        self.assertTrue(one_text,
                        f"the summary request sent {_shape(sent)}; expected one user message of "
                        "plain text. Tool calls and results in a request that offers no tools "
                        "may be refused (Anthropic's Messages API has answered 400): send them "
                        "as text, with conversation_text.")
        text = sent[0]["content"]
        conversation = harness.conversation_text(harness.context_for_model(messages))
        self.assertFalse(text.startswith(harness.conversation_text(messages)),
                         "the summary request's text is conversation_text(messages): the call "
                         "left without a result is sent unanswered. Pass the messages through "
                         "context_for_model first.")
        self.assertTrue(text.startswith(conversation),
                        "the summary request's text does not begin with "
                        "conversation_text(context_for_model(messages)).")
        self.assertEqual(text[len(conversation):], "\n\n" + harness.SUMMARY_PROMPT,
                         "after the conversation the summary request's text should hold a blank "
                         "line and SUMMARY_PROMPT, and nothing else.")
        self.assertEqual(got, "## Goal\nRename PORT.",
                         f"summarise returned {got!r}; expected the reply's text, stripped.")

    def test_summary_in_two_text_blocks(self):
        """A reply whose text comes in two blocks is summarised by all of its text, joined as
        text_of joins it, not by its first block alone; a reply holding text and a tool call is
        summarised by its text, the call ignored."""
        reply = lab.say("## Goal\n")
        reply = {**reply, "content": reply["content"] + [{"type": "text", "text": "Rename PORT.\n"}]}
        model = lab.ScriptedModel([reply])
        got = self.call("summarise", harness.summarise, model, _session_messages(2))
        self.assertEqual(got, "## Goal\nRename PORT.", f"summarise returned {got!r} for a reply in "
                         "two text blocks; expected '## Goal\\nRename PORT.': every text block "
                         "of the reply is the summary.")
        reply = lab.reply(lab.call("read", {"path": "m1.py"}, id="s1"))
        reply = {**reply, "content": [{"type": "text", "text": "## Goal\nRename PORT.\n"}]
                 + reply["content"]}
        model = lab.ScriptedModel([reply])
        try:
            got = harness.summarise(model, _session_messages(2))
        except Exception as error:
            self.fail(f"summarise raised {type(error).__name__}({str(error)!r}) for a reply holding "
                      "text and a tool call; expected it to return the text, '## Goal\\nRename "
                      "PORT.'. Only a reply with no text is empty: judge the reply by text_of, "
                      "not by whether it holds a call.")
        self.assertEqual(got, "## Goal\nRename PORT.", f"summarise returned {got!r} for a reply "
                         "holding text and a tool call; expected its text, '## Goal\\nRename "
                         "PORT.'.")

    def test_empty_summary_is_error(self):
        """A reply of only spaces, a reply with a tool call and no text, a failed reply, and a
        failed reply that holds part of a summary (a stream cut short) each make summarise raise
        RuntimeError (the failed ones with their error message in it), after one request."""
        messages = _session_messages(2)
        cases = [("a reply of only spaces", lab.say("   \n"), "empty"),
                 ("a reply holding only a tool call",
                  lab.reply(lab.call("read", {"path": "m1.py"}, id="s1")), "empty"),
                 ("a failed reply", lab.provider_error("503 overloaded"), "503 overloaded"),
                 ("a failed reply holding part of a summary",
                  {**lab.say("## Goal\nRename PORT to HT"), "stop_reason": "error",
                   "error_message": "the stream ended before the reply did"},
                  "the stream ended before the reply did")]
        for what, answer, words in cases:
            model = lab.ScriptedModel([answer, lab.say("## Goal\nAsked a second time.")])
            try:
                got = harness.summarise(model, messages)
            except RuntimeError as error:
                self.assertIn(words, str(error),
                              f"given {what}, summarise raised RuntimeError({str(error)!r}); "
                              f"expected its words to say {words!r}.")
                self.assertEqual(len(model.calls), 1,
                                 f"given {what}, summarise asked the model {len(model.calls)} "
                                 "times; expected once. Raise, and leave another try to the "
                                 "caller: each request is paid for.")
                continue
            except Exception as error:
                self.fail(f"given {what}, summarise raised {type(error).__name__}: {error}; "
                          "expected RuntimeError.")
            self.fail(f"given {what}, summarise returned {got!r}; expected RuntimeError. An "
                      "empty or failed summary saved as a success throws the history away: "
                      "test stop_reason first, whatever text the reply holds.")

    def test_compaction_appends(self):
        """append_compaction(summary, replaces) appends one line, {"id", "type": "compaction",
        "summary", "replaces"}, with the next id, and every line already in the file stays as it
        was."""
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)
        for n in range(1, 5):
            log.append_message(lab.user(f"message {n}"))
        before = ws.read_text(LOG)
        got = self.call("append_compaction", log.append_compaction, "## Goal\nx", ["e1", "e2"])
        self.assertEqual(got, "e5", f"append_compaction returned {got!r}; expected 'e5', the "
                         "next line's id.")
        self.assert_appends_only(ws, before)
        lines = ws.read_text(LOG).splitlines()
        self.assertEqual(len(lines), 5, f"the file has {len(lines)} lines; expected 5.")
        self.assertEqual(json.loads(lines[-1]),
                         {"id": "e5", "type": "compaction", "summary": "## Goal\nx",
                          "replaces": ["e1", "e2"]},
                         f"the new line is {lines[-1][:120]}; expected exactly id, type "
                         "\"compaction\", summary and replaces.")
        again = log.append_message(lab.user("after"))
        self.assertEqual(again, "e6", f"the next append_message returned {again!r}; expected "
                         "'e6': a compaction is a line like any other.")

    def test_compaction_refuses(self):
        """An empty (or all-space) summary, an empty replaces, and a torn last line each make
        append_compaction raise ValueError, and the file is left as it was."""
        text = "".join(json.dumps({"id": f"e{n}", "type": "message",
                                   "message": lab.user(f"m{n}")}) + "\n" for n in (1, 2))
        for what, summary, replaces, start in (
                ("an empty summary", "", ["e1"], text),
                ("a summary of spaces", "  \n", ["e1"], text),
                ("an empty replaces", "## Goal\nx", [], text),
                ("a file whose last line is torn", "## Goal\nx", ["e1"], text[:-9])):
            ws = lab.Workspace({LOG: start})
            log = harness.SessionLog(ws, LOG)
            try:
                log.append_compaction(summary, replaces)
            except ValueError:
                pass
            except Exception as error:
                self.fail(f"with {what}, append_compaction raised {type(error).__name__}: "
                          f"{error}; expected ValueError.")
            else:
                self.fail(f"with {what}, append_compaction wrote a compaction; expected "
                          "ValueError and nothing written.")
            self.assertEqual(ws.read_text(LOG), start,
                             f"with {what}, append_compaction changed the file.")

    def test_lesson11_rules(self):
        """Lesson 11's rules still hold for the rewritten log: with no file, entries(), rows() and
        replay() are [] and create nothing; messages get e1, e2, ...; a torn line 3 makes
        entries(), rows(), replay() and append_message raise ValueError naming "line 3"."""
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)
        for name in ("entries", "rows", "replay"):
            got = self.call(f"{name}()", getattr(log, name))
            self.assertTrue(isinstance(got, list) and got == [],
                            f"{name}() with no file returned {got!r}; expected [].")
        self.assertFalse(ws.exists(LOG), "reading the log created the file.")
        ids = [self.call("append_message", log.append_message, lab.user(f"m{n}"))
               for n in (1, 2)]
        self.assertEqual(ids, ["e1", "e2"], f"append_message returned {ids}; expected e1, e2.")
        text = "".join(json.dumps({"id": f"e{n}", "type": "message",
                                   "message": lab.user(f"m{n}")}) + "\n" for n in (1, 2, 3))
        torn = text[:-20]
        ws = lab.Workspace({LOG: torn})
        log = harness.SessionLog(ws, LOG)
        for name, call in (("entries()", log.entries), ("rows()", log.rows),
                           ("replay()", log.replay),
                           ("append_message", lambda: log.append_message(lab.user("x")))):
            try:
                call()
            except ValueError as error:
                self.assertIn("line 3", str(error), f"{name} on a file torn in line 3 raised "
                              f"ValueError({str(error)!r}); expected it to name 'line 3'.")
                continue
            except Exception as error:
                self.fail(f"{name} on a torn file raised {type(error).__name__}: {error}; "
                          "expected ValueError naming line 3.")
            self.fail(f"{name} on a file torn in line 3 did not raise; a torn line is never "
                      "skipped.")
        self.assertEqual(ws.read_text(LOG), torn, "append_message changed a torn file.")

    def test_torn_compaction_line(self):
        """A power cut during append_compaction leaves a torn compaction line; entries(), rows(),
        replay(), append_message and append_compaction then raise ValueError naming its line, and
        the file is left as it was."""
        text = "".join(json.dumps({"id": f"e{n}", "type": "message",
                                   "message": lab.user(f"m{n}")}) + "\n" for n in (1, 2, 3))
        line = json.dumps({"id": "e4", "type": "compaction", "summary": "## Goal\nRename PORT.",
                           "replaces": ["e1", "e2"]})
        torn = text + line[:-12]
        ws = lab.Workspace({LOG: torn})
        log = harness.SessionLog(ws, LOG)
        for name, call in (("entries()", log.entries), ("rows()", log.rows),
                           ("replay()", log.replay),
                           ("append_message", lambda: log.append_message(lab.user("next"))),
                           ("append_compaction",
                            lambda: log.append_compaction("## Goal\nx", ["e1"]))):
            try:
                call()
            except ValueError as error:
                self.assertIn("line 4", str(error), f"{name} on a file whose compaction line 4 "
                              f"is torn raised ValueError({str(error)!r}); expected it to name "
                              "'line 4'.")
                continue
            except Exception as error:
                self.fail(f"{name} on a file whose compaction line 4 is torn raised "
                          f"{type(error).__name__}: {error}; expected ValueError naming line 4.")
            self.fail(f"{name} on a file whose compaction line 4 is torn did not raise; expected "
                      "ValueError naming line 4. A torn line is refused whatever kind of entry "
                      "it was: skipped, the next append is glued onto it and lost with it.")
        self.assertEqual(ws.read_text(LOG), torn, "an append changed a file with a torn "
                         "compaction line.")

    def test_replay_puts_summary_in_place(self):
        """Replay puts the summary, as the user message SUMMARY_PREFIX + summary, where the first
        replaced entry was: the replaced messages go, the others stay in order, a later
        compaction can replace an earlier summary, and the rebooted disk replays the same."""
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)
        messages = [lab.user(f"message {n}") for n in range(1, 7)]
        for message in messages:
            log.append_message(message)
        summary = lambda text: harness.user_message(harness.SUMMARY_PREFIX + text)
        self.call("append_compaction", log.append_compaction, "first", ["e3", "e4"])
        got = self.call("replay", log.replay)
        want = messages[:2] + [summary("first")] + messages[4:]
        self.assertEqual(got, want,
                         f"after a compaction replacing e3 and e4, replay() gave "
                         f"{[str(m.get('content'))[:12] for m in got]}; expected 5: message 1, "
                         "message 2, the "
                         "summary in their place, message 5, message 6. A compaction that "
                         "replay ignores keeps every message; one that drops them without the "
                         "summary loses them.")
        rows = [row[0] for row in self.call("rows", log.rows)]
        self.assertEqual(rows, ["e1", "e2", "e7", "e5", "e6"],
                         f"rows() gave ids {rows}; expected e1, e2, e7 (the compaction's own "
                         "id, for the summary), e5, e6.")
        log.append_message(lab.user("message 8"))
        self.call("append_compaction", log.append_compaction, "second", ["e1", "e2", "e7", "e5"])
        got = self.call("replay", log.replay)
        want = [summary("second"), messages[5], lab.user("message 8")]
        self.assertEqual(got, want,
                         f"after a second compaction replacing e1, e2, e7 (the first summary) "
                         f"and e5, replay() gave {[m['content'][:30] for m in got]}; expected "
                         "the second summary, message 6, message 8.")
        again = harness.SessionLog(ws.reboot(), LOG).replay()
        self.assertEqual(again, want, "a new SessionLog on the rebooted disk replays "
                         f"{len(again)} messages, not the {len(want)} the first one did.")


    def test_compaction_where_it_stands(self):
        """A compaction takes effect where it stands in the file: one that names none of the
        rows so far (an id already replaced, an id not yet written) puts its summary after them,
        and a message written after it stays after it, even one whose id it names."""
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)
        messages = [lab.user(f"message {n}") for n in range(1, 5)]
        for message in messages:
            log.append_message(message)
        self.call("append_compaction", log.append_compaction, "first", ["e2", "e3"])
        log.append_message(lab.user("message 6"))
        self.call("append_compaction", log.append_compaction, "stale", ["e2", "e8"])
        log.append_message(lab.user("message 8"))
        rows = [row[0] for row in self.call("rows", log.rows)]
        want = ["e1", "e5", "e4", "e6", "e7", "e8"]
        self.assertEqual(rows, want,
                         f"with e7 a compaction naming only e2 (already replaced by e5) and e8 "
                         f"(not yet written), rows() gave ids {rows}; expected {want}. A compaction "
                         "acts on the rows built so far, where it stands in the file: with none "
                         "of them named, its summary goes after them, and e8, written later, "
                         "comes after it and stays, though e7 names it.")

    def test_other_entry_types_skipped(self):
        """rows() reads two types of entry, "message" and "compaction", and skips an entry of
        any other type: a file of three messages with a "label" entry between the first two
        replays the three messages, and a compaction after it still works."""
        lines = [{"id": "e1", "type": "message", "message": lab.user("message 1")},
                 {"id": "e2", "type": "label", "label": "before the rename", "target": "e1"},
                 {"id": "e3", "type": "message", "message": lab.user("message 3")},
                 {"id": "e4", "type": "message", "message": lab.user("message 4")}]
        ws = lab.Workspace({LOG: "".join(json.dumps(line) + "\n" for line in lines)})
        log = harness.SessionLog(ws, LOG)
        want = [lab.user("message 1"), lab.user("message 3"), lab.user("message 4")]
        got = self.call("replay of a file holding a \"label\" entry", log.replay,
                        hint="rows() obeys \"message\" and \"compaction\" entries and skips any "
                        "other type: test the type for \"compaction\" too, not just for "
                        "\"message\"")
        self.assertEqual(got, want, f"a file of three messages and one \"label\" entry replayed "
                         f"{[str(m.get('content'))[:12] if isinstance(m, dict) else m for m in got]};"
                         " expected the three messages. rows() obeys \"message\" and "
                         "\"compaction\" entries and skips any other type: test the type "
                         "for \"compaction\" too, not just for \"message\".")
        self.call("append_compaction", log.append_compaction, "first", ["e1", "e3"])
        got = self.call("replay", log.replay)
        want = [harness.user_message(harness.SUMMARY_PREFIX + "first"), lab.user("message 4")]
        self.assertEqual(got, want, "after a compaction replacing e1 and e3, a file that also "
                         f"holds a \"label\" entry replayed {len(got)} messages; expected 2, the "
                         "summary and message 4.")

    def test_compaction_of_rows_apart(self):
        """A compaction whose rows are not next to each other puts its summary where the first
        of them, in the order of the rows, was: replacing e1 and e3 of five messages replays the
        summary, message 2, message 4, message 5; replacing ["e4", "e2"] replays message 1, the
        summary, message 3, message 5."""
        messages = [lab.user(f"message {n}") for n in range(1, 6)]
        summary = harness.user_message(harness.SUMMARY_PREFIX + "apart")
        for replaces, want in ((["e1", "e3"], [summary] + [messages[n] for n in (1, 3, 4)]),
                               (["e4", "e2"], [messages[0], summary] + [messages[n]
                                                                        for n in (2, 4)])):
            ws = lab.Workspace()
            log = harness.SessionLog(ws, LOG)
            for message in messages:
                log.append_message(message)
            self.call("append_compaction", log.append_compaction, "apart", replaces)
            got = self.call("replay", log.replay)
            self.assertEqual(got, want,
                             f"after a compaction replacing {replaces} of five messages, replay() "
                             f"gave {[str(m.get('content'))[:12] for m in got]}; expected "
                             f"{[str(m.get('content'))[:12] for m in want]}. The summary takes "
                             "the place of the first replaced row in the rows' order, not the "
                             "last one, nor the first id in the list.")

    def test_cut_at_exactly_keep_recent(self):
        """When the newest messages add up to keep_recent exactly, find_cut cuts at the first of
        them, even right after another user message; and when everything must be kept from the
        start, the cut moves on to index 1 if that is a user message."""
        u0, u1, u2 = lab.user("Rename PORT."), lab.user("In m1.py."), lab.user("Now m2.py.")
        a1, a2 = lab.say("Renamed in m1.py, tests pass."), lab.say("Renamed in m2.py as well.")
        for messages, keep, want in (
                ([u0, a1, u1, u2, a2], [u2, a2], 3),
                ([u0, u1, a1], [u0, u1, a1], 1)):
            keep_recent = harness.estimate_tokens(keep)
            got = self.call("find_cut", harness.find_cut, messages, keep_recent)
            self.assertEqual(got, want, f"find_cut of {_shape(messages)} with keep_recent="
                             f"{keep_recent} (exactly the last {len(keep)} messages' estimate) "
                             f"returned {got}; expected {want}: count from 0 back from the end, "
                             "stop once the total reaches keep_recent (>=), then move on from "
                             "max(index, 1) to a user message.")

    def test_cut_on_a_user_message_keeps_it(self):
        """When the count stops on a user message, the cut is that message, though the kept part
        then passes keep_recent: for U A U(2,000 characters) A with keep_recent 100, find_cut
        returns 2, and 510 tokens are kept; for U A U(2,000 characters), a log that ends on the
        user's message (its reply never came), it returns 2 as well, the newest message."""
        messages = [lab.user("Rename PORT."), lab.say("Which file?"), lab.user("x" * 2000),
                    lab.say("Done.")]
        got = self.call("find_cut(messages, 100)", harness.find_cut, messages, 100)
        kept = harness.estimate_tokens(messages[2:])
        self.assertEqual(got, 2, f"for {_shape(messages)} (the third message 2,000 characters) "
                         f"with keep_recent 100, find_cut returned {got!r}; expected 2. The count "
                         "stops on that user message, and a user message is a safe cut: keep it, "
                         f"though the kept part is then {kept} tokens. keep_recent is where the "
                         "count stops, not a cap on what is kept.")
        ending = messages[:3]
        got = self.call("find_cut(messages, 100)", harness.find_cut, ending, 100)
        self.assertEqual(got, 2, f"for {_shape(ending)} (the last message 2,000 characters, its "
                         f"reply never came) with keep_recent 100, find_cut returned {got!r}; "
                         "expected 2. The newest message is a user message too: the cut can land "
                         "on it, and everything before it is summarised.")


# ---------------------------------------------------------- lab 2: when, and the Session

class Lab2(_LabCase):

    def test_is_overflow(self):
        """is_overflow is True for failed replies worded as Anthropic, OpenAI and others word a
        request that is too long, and False for other failures (among them 400s about something
        else, one saying a tool's name is "too long", one about a "context_management"
        parameter, and a 503 after text that says those words), for a reply that succeeded
        while saying those words (in its text, or in an error_message field), for a failed reply
        with no error_message at all, and for a user message."""
        yes = ["prompt is too long: 208310 tokens > 200000 maximum",
               "This model's maximum context length is 128000 tokens. However, your messages "
               "resulted in 130512 tokens.",
               "Input is too long for requested model.",
               "400 Request exceeds the context window"]
        no = [lab.provider_error("529 Overloaded"), lab.provider_error("429 rate limit"),
              lab.provider_error("400 invalid transcript: messages[0]: the first message must "
                                 "be the user's, not 'toolResult'"),
              lab.provider_error("400 invalid_request_error: messages.0.content.1.image: image "
                                 "exceeds 5 MB maximum"),
              lab.provider_error("400 Invalid 'tools[0].function.name': string too long. "
                                 "Expected a string with maximum length 64, but got a string "
                                 "with length 71 instead."),
              lab.provider_error("400 invalid_request_error: context_management: Extra inputs "
                                 "are not permitted"),
              lab.say("Your prompt is too long; shall I shorten it?"),
              {**lab.say("Done."), "error_message": "prompt is too long"},
              {**lab.say("The files fill the context window, so I will read"),
               "stop_reason": "error", "error_message": "503 overloaded"},
              lab.user("the context window is full")]
        for words in yes:
            got = self.call("is_overflow", harness.is_overflow, lab.provider_error(words))
            self.assertTrue(got is True, f"is_overflow of a failed reply saying {words[:60]!r} "
                            f"returned {got!r}; expected True.")
        bare = {"role": "assistant", "content": [], "stop_reason": "error"}
        got = self.call("is_overflow of a failed reply with no error_message key",
                        harness.is_overflow, bare,
                        hint="Expected False: a failed reply is known by its stop_reason, and "
                        "its error_message is not promised; read it with .get().")
        self.assertTrue(got is False, f"is_overflow of a failed reply with no error_message key "
                        f"returned {got!r}; expected False: nothing says it was too long.")
        for message in no:
            got = self.call("is_overflow", harness.is_overflow, message)
            self.assertTrue(got is False, f"is_overflow of {lab.show([message])[:80]} returned "
                            f"{got!r}; expected False: only a failed reply whose error_message "
                            "says the request was too long. A 400 is any bad request, and a "
                            "reply's own text is the model's words, not the provider's: "
                            "compacting cannot mend a failure that is not about length.")

    def test_compact_replaces_exactly(self):
        """compact(log, model, keep_recent) appends one compaction entry replacing exactly the
        rows before find_cut's cut, asks one summary with no tools, of exactly those rows'
        messages, returns True, and replay keeps the recent messages word for word."""
        ws, log = _logged(6)
        rows = log.rows()
        messages = [m for _, m in rows]
        cut = harness.find_cut(messages, 600)
        before = ws.read_text(LOG)
        model = _model()
        got = self.call("compact", harness.compact, log, model, 600)
        self.assertIs(got, True, f"compact returned {got!r}; expected True.")
        self.assert_appends_only(ws, before)
        new = log.entries()[len(rows):]
        self.assertEqual([e.get("type") for e in new], ["compaction"],
                         f"compact appended {[e.get('type') for e in new]}; expected one "
                         "compaction entry.")
        self.assertEqual(new[0].get("replaces"), [row_id for row_id, _ in rows[:cut]],
                         f"the compaction replaces {new[0].get('replaces')}; expected the ids "
                         f"of the {cut} rows before the cut, {rows[0][0]} to {rows[cut - 1][0]}.")
        asked = _summary_requests(model)
        self.assertTrue(len(asked) == 1 and asked[0].tools == [],
                        f"compact made {len(asked)} summary requests ({len(model.calls)} "
                        "requests in all); expected one, with no tools.")
        sent = asked[0].messages[0]["content"] if asked[0].messages else ""
        want = harness.conversation_text(harness.context_for_model(messages[:cut]))
        self.assertTrue(str(sent).startswith(want + "\n\n"),
                        f"the summary request did not hold the {cut} messages before the cut and "
                        f"nothing else: summarise exactly the messages of rows[:cut], the rows the "
                        "compaction replaces. A message summarised and also kept is sent twice.")
        self.assertEqual(log.replay()[1:], messages[cut:],
                         "after compact, replay() does not end with the recent messages word "
                         "for word.")

    def test_compact_twice(self):
        """compact on a log that already holds a compaction: the new entry replaces the ids of
        the rows before the cut, the first summary's row included, and replay holds one
        summary, then the recent messages word for word."""
        ws, log = _logged(8)
        model = _model()
        self.call("compact", harness.compact, log, model, 1500)
        rows = log.rows()
        messages = [m for _, m in rows]
        cut = harness.find_cut(messages, 600)
        got = self.call("compact", harness.compact, log, model, 600)
        self.assertIs(got, True, f"the second compact returned {got!r}; expected True.")
        new = log.entries()[-1]
        want = [row_id for row_id, _ in rows[:cut]]
        self.assertEqual(new.get("replaces"), want,
                         f"the second compaction replaces {new.get('replaces')}; expected {want}: "
                         "the ids of log.rows() before the cut, the first summary's row ("
                         f"{rows[0][0]}) among them. Entry ids and row ids part ways after a "
                         "compaction.")
        replayed = log.replay()
        summaries = [m for m in replayed if m["role"] == "user"
                     and str(m["content"]).startswith(harness.SUMMARY_PREFIX)]
        self.assertEqual(len(summaries), 1, f"after two compactions replay() holds "
                         f"{len(summaries)} summaries; expected one, the newest.")
        self.assertEqual(replayed[1:], messages[cut:], "after the second compact, replay() does "
                         "not end with the recent messages word for word.")

    def test_compact_nothing(self):
        """When find_cut finds nothing to cut, compact returns False, asks the model nothing and
        writes nothing."""
        ws, log = _logged(2)
        before = ws.read_text(LOG)
        model = _model()
        got = self.call("compact", harness.compact, log, model, 100_000)
        self.assertIs(got, False, f"compact returned {got!r}; expected False.")
        self.assertEqual(len(model.calls), 0, f"compact asked the model {len(model.calls)} "
                         "times with nothing to cut; expected none.")
        self.assertEqual(ws.read_text(LOG), before, "compact wrote to the log with nothing "
                         "to cut.")

    def test_compaction_power_cut(self):
        """The power goes out during the summary request, or the summary fails: the log is
        untouched, and on the rebooted disk it replays exactly as before."""
        for what, step in (("a power cut", lab.power_cut()),
                           ("a failed summary", lab.provider_error("503 overloaded"))):
            ws, log = _logged(5)
            before, replayed = ws.read_text(LOG), log.replay()
            model = lab.ScriptedModel([step])
            try:
                harness.compact(log, model, 600)
            except (lab.PowerCut, RuntimeError):
                pass
            except Exception as error:
                self.fail(f"with {what}, compact raised {type(error).__name__}: {error}.")
            else:
                self.fail(f"{what}: compact returned instead of raising; expected the "
                          "error to go up.")
            self.assertEqual(ws.read_text(LOG), before,
                             f"with {what} during the summary, the log changed: ask for the "
                             "summary first, and append only once you have it.")
            again = harness.SessionLog(ws.reboot(), LOG).replay()
            self.assertEqual(again, replayed, f"after {what}, the rebooted log replays "
                             f"{len(again)} messages; expected the {len(replayed)} of before.")

    def test_no_compaction_below(self):
        """Nine prompts in a window they all fit: no compaction event, no compaction entry, no
        summary request, and the log equals the record after each prompt."""
        ws = lab.Workspace(FILES)
        log = harness.SessionLog(ws, LOG)
        model = _model(100_000)
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=100_000, reserve=1000,
                            keep_recent=600)
        for text in _prompts(9):
            events, error = lab.drain(session.prompt(text))
            self.assertIsNone(error, f"prompt {text!r} raised {error!r}.")
            kinds = [e["type"] for e in events if e["type"] == "compaction"]
            self.assertEqual(kinds, [], f"prompt {text!r} compacted with the window far from "
                             "full; compact only when the estimate passes window - reserve.")
            self.assertTrue(events and events[-1]["type"] == "agent_end",
                            f"prompt {text!r}: the run's events did not end with agent_end.")
            self.assertEqual(log.replay(), list(session.messages),
                             "the log and the Session's messages differ.")
        types = {e["type"] for e in log.entries()}
        self.assertEqual(types, {"message"}, f"the log holds entries of types {sorted(types)}; "
                         "expected messages only.")
        self.assertEqual(_summary_requests(model), [], "a summary was asked for although "
                         "nothing had to be compacted.")

    def test_threshold(self):
        """When the estimate of the messages plus the new prompt passes window - reserve, the
        Session compacts first: a compaction event with reason "threshold" comes before
        agent_start, and the prompt's first request starts with the summary."""
        ws, log = _logged(6)
        estimate = harness.estimate_tokens(log.replay() + [harness.user_message("Now m7.py.")])
        model = _model(100_000)
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=estimate + 400,
                            reserve=500, keep_recent=600)
        events, error = lab.drain(session.prompt("Now m7.py."))
        self.assertIsNone(error, f"the prompt raised {error!r}.")
        types = [e["type"] for e in events]
        self.assertTrue(types[:2] == ["compaction", "agent_start"]
                        and events[0].get("reason") == "threshold",
                        f"the events began {types[:2]}; expected a compaction event, reason "
                        "'threshold', then agent_start: the estimate was "
                        f"{estimate}, over window - reserve = {estimate - 100}, though under the "
                        "window itself. The reserve is for what the estimate misses.")
        work = _work_requests(model)
        first = work[0].messages[0] if work else None
        self.assertTrue(first and str(first.get("content", "")).startswith(harness.SUMMARY_PREFIX),
                        "the prompt's first request did not start with the summary.")

    def test_threshold_on_a_later_prompt(self):
        """A Session whose second prompt crosses the threshold compacts then, and that prompt's
        first request starts with the summary: each prompt's run is made from the transcript as
        it stands after the compaction. (A Harness made once and kept across prompts still holds
        the old messages, and sends them.)"""
        def session(window):
            ws, log = _logged(6)
            model = _model(100_000)
            return log, model, self.call("Session", harness.Session, model, harness.SYSTEM,
                                         [harness.make_read_tool(ws)], log, window=window,
                                         reserve=500, keep_recent=600)
        log, _, probe = session(100_000)
        lab.drive(probe.prompt("Now m7.py."))
        second = _session_estimate(log.replay(), "Now m8.py.")
        log, model, session = session(second + 400)          # window - reserve = second - 100
        events, error = lab.drain(session.prompt("Now m7.py."))
        self.assertIsNone(error, f"the first prompt raised {error!r}.")
        early = [e.get("reason") for e in events if e["type"] == "compaction"]
        self.assertEqual(early, [], f"the first prompt compacted ({early}); its estimate was under "
                         f"window - reserve = {second - 100}, so expected no compaction yet.")
        before = len(model.calls)
        events, error = lab.drain(session.prompt("Now m8.py."))
        self.assertIsNone(error, f"the second prompt raised {error!r}.")
        reasons = [e.get("reason") for e in events if e["type"] == "compaction"]
        self.assertEqual(reasons, ["threshold"], f"the second prompt's compaction events were "
                         f"{reasons}; expected one, reason 'threshold': its estimate was {second}, "
                         f"over window - reserve = {second - 100}.")
        work = [r for r in model.calls[before:] if r.system != harness.SUMMARY_SYSTEM]
        first = work[0].messages[0] if work else None
        self.assertTrue(first and str(first.get("content", "")).startswith(harness.SUMMARY_PREFIX),
                        "the second prompt compacted, but its first request did not start with "
                        "the summary: the run was not made from the compacted transcript. Make "
                        "each prompt's Harness from the messages as they stand, not once for the "
                        "Session.")

    def test_threshold_is_strictly_over(self):
        """An estimate exactly at window - reserve is not over it: no compaction event, no
        summary asked, and the run's first event is agent_start."""
        ws, log = _logged(6)
        estimate = _session_estimate(log.replay(), "Now m7.py.")
        model = _model(100_000)
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=estimate + 500,
                            reserve=500, keep_recent=600)
        events, error = lab.drain(session.prompt("Now m7.py."))
        self.assertIsNone(error, f"the prompt raised {error!r}.")
        reasons = [e.get("reason") for e in events if e["type"] == "compaction"]
        self.assertEqual(reasons, [], f"compaction events: {reasons}; expected none. The "
                         f"estimate was {estimate}, exactly window - reserve: compact only when "
                         "it is over (>), not when it is equal.")
        self.assertEqual(_summary_requests(model), [], "a summary was asked for with the "
                         "estimate exactly at window - reserve; expected none.")
        self.assertEqual(events[:1] and events[0]["type"], "agent_start", "the run did not "
                         "start with agent_start.")

    def test_threshold_with_nothing_to_cut(self):
        """Over the threshold with nothing to cut (keep_recent larger than the session): compact
        returns False, no compaction event is yielded, and the run goes ahead."""
        ws, log = _logged(3)
        estimate = harness.estimate_tokens(log.replay() + [harness.user_message("Now m4.py.")])
        model = _model(100_000)
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=estimate + 100,
                            reserve=500, keep_recent=100_000)
        events, error = lab.drain(session.prompt("Now m4.py."))
        self.assertIsNone(error, f"the prompt raised {error!r}.")
        types = [e["type"] for e in events]
        self.assertEqual(types[:1], ["agent_start"], f"the events began {types[:2]}; expected "
                         "agent_start. Nothing was cut, so nothing was compacted: yield a "
                         "compaction event only when compact returns True.")

    def test_failed_summary_goes_up(self):
        """A summary that fails during the Session's threshold compaction goes up out of
        prompt as the RuntimeError it is; no run starts and the log is unchanged."""
        ws, log = _logged(6)
        before = ws.read_text(LOG)
        estimate = harness.estimate_tokens(log.replay() + [harness.user_message("Now m7.py.")])
        model = lab.capped(lab.ScriptedModel([lab.provider_error("503 overloaded")]))
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=estimate,
                            reserve=500, keep_recent=600)
        events, error = lab.drain(session.prompt("Now m7.py."))
        self.assertIsInstance(error, RuntimeError,
                              f"with the summary failing, the prompt ended with {error!r} and "
                              f"events {[e['type'] for e in events][:3]}; expected the "
                              "RuntimeError from summarise to go up. Catching it sends a request "
                              "the estimate says will not fit.")
        self.assertEqual(ws.read_text(LOG), before, "with the summary failing, the log changed.")

    def test_threshold_counts_the_prompt(self):
        """The new prompt is part of the estimate: with the messages alone exactly at
        window - reserve and the prompt tipping them over, the Session compacts first."""
        ws, log = _logged(6)
        alone = harness.estimate_tokens(log.replay())
        model = _model(100_000)
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=alone + 500,
                            reserve=500, keep_recent=600)
        events, error = lab.drain(session.prompt("Now m7.py."))
        self.assertIsNone(error, f"the prompt raised {error!r}.")
        reasons = [e.get("reason") for e in events if e["type"] == "compaction"]
        self.assertEqual(reasons, ["threshold"], f"compaction events: {reasons}; expected one, "
                         f"reason 'threshold'. The messages alone come to {alone}, exactly "
                         "window - reserve, and the new prompt tips them over: estimate "
                         "messages + [the prompt], the request you are about to send.")

    def test_old_refusal_is_not_overflow(self):
        """Only the run's last message is tested for an overflow: a refusal for length left
        in the record by an earlier prompt does not make the next prompt compact."""
        ws, log = _logged(6)
        h = harness.Harness(lab.ScriptedModel([lab.provider_error(
            "400 prompt is too long: 9120 tokens > 8000 maximum")]), harness.SYSTEM,
            [harness.make_read_tool(ws)], messages=log.replay())
        h.subscribe(harness.persist_to(log))
        lab.drive(h.prompt("Now m7.py."))
        model = lab.capped(_model(100_000))
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=100_000, reserve=0,
                            keep_recent=600)
        events, error = lab.drain(session.prompt("Now m8.py."))
        self.assertIsNone(error, f"the prompt raised {error!r}.")
        reasons = [e.get("reason") for e in events if e["type"] == "compaction"]
        self.assertEqual(reasons, [], f"compaction events: {reasons}; expected none. The "
                         "refusal is an earlier prompt's, and this run ended with an answer: "
                         "test only the last message of the run, after it, for an overflow.")
        self.assertEqual(_summary_requests(model), [], "a summary was asked for although this "
                         "prompt's run was not refused.")

    def test_overflow_retry_once(self):
        """A request refused for length mid-run: the Session compacts once (event reason
        "overflow"), then retries once with prompt(None), no new user message, and the record
        ends with the model's answer; the log equals the record."""
        ws, log = _logged(6)
        real = lab.request_tokens(lab.Request(harness.SYSTEM, log.replay(),
                                              harness.tool_specs([harness.make_read_tool(ws)])))
        model = _model(window=real + 300)
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=real + 300, reserve=0,
                            keep_recent=600)
        events, error = lab.drain(session.prompt("Now m7.py."))
        self.assertIsNone(error, f"the prompt raised {error!r}.")
        reasons = [e.get("reason") for e in events if e["type"] == "compaction"]
        self.assertEqual(reasons, ["overflow"], f"compaction events: {reasons}; expected one, "
                         "reason 'overflow', after the refusal.")
        at = next(n for n, e in enumerate(events) if e["type"] == "compaction")
        self.assertTrue(any(e["type"] == "agent_end" for e in events[:at])
                        and events[-1]["type"] == "agent_end",
                        "expected the first run to end, then the compaction, then a second run.")
        retry = [e["message"] for e in events[at:] if e["type"] == "message_end"]
        self.assertTrue(retry and retry[0]["role"] != "user",
                        f"the retry began with {_shape(retry[:1])}; expected no new user "
                        "message: harness.prompt(None) sends the record as it stands.")
        users = [m for m in session.messages if m["role"] == "user"]
        self.assertEqual(sum(m["content"] == "Now m7.py." for m in users), 1,
                         "the prompt is in the record more than once: retry with prompt(None).")
        last = session.messages[-1]
        self.assertTrue(last["role"] == "assistant" and last.get("stop_reason") != "error",
                        f"the record ends {_shape(session.messages[-3:])}; expected the answer. "
                        "If the retry ran on a Harness made before the compaction, that Harness "
                        "still holds the messages the summary replaced, and is refused again: "
                        "build the retry's Harness from log.replay().")
        again = harness.SessionLog(ws.reboot(), LOG).replay()
        self.assertEqual(again, session.messages, "the rebooted log differs from the record.")

    def test_retry_only_once(self):
        """A provider that refuses every request for length: one compaction, two refused
        requests, no third, and the record ends with the refusal for the caller to see."""
        ws, log = _logged(6)
        model = lab.capped(_refusing())
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=100_000, reserve=0,
                            keep_recent=50)
        events, error = lab.drain(session.prompt("Now m7.py."))
        self.assertIsNone(error, f"the prompt raised {type(error).__name__}: {error}; expected "
                          "one compaction, one retry, and the refusal left in the record. "
                          "Compact once and retry once, never in a loop.")
        self.assertEqual(len(_summary_requests(model)), 1,
                         f"{len(_summary_requests(model))} summaries were asked for; expected "
                         "one: compact once, retry once, never in a loop.")
        self.assertEqual(len(_work_requests(model)), 2,
                         f"the refused request was sent {len(_work_requests(model))} times; "
                         "expected twice, the request and its one retry.")
        self.assertTrue(harness.is_overflow(session.messages[-1]),
                        f"the record ends {_shape(session.messages[-2:])}; expected the second "
                        "refusal, for the caller to see.")

    def test_overflow_with_nothing_to_cut(self):
        """A refusal for length when there is nothing to cut: no compaction event, no retry (one
        request), and the record ends with the refusal."""
        ws, log = _logged(3)
        model = lab.capped(_refusing())
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=100_000, reserve=0,
                            keep_recent=100_000)
        events, error = lab.drain(session.prompt("Now m4.py."))
        self.assertIsNone(error, f"the prompt raised {error!r}.")
        reasons = [e.get("reason") for e in events if e["type"] == "compaction"]
        self.assertEqual(reasons, [], f"compaction events: {reasons}; expected none: nothing "
                         "was cut.")
        self.assertEqual(len(_work_requests(model)), 1,
                         f"the refused request was sent {len(_work_requests(model))} times; "
                         "expected once. A retry after a compaction that did nothing is the same "
                         "request again: retry only when compact returns True.")
        self.assertTrue(harness.is_overflow(session.messages[-1]),
                        f"the record ends {_shape(session.messages[-2:])}; expected the refusal.")

    def test_other_errors_no_retry(self):
        """A reply that failed for another reason (503 overloaded) is not compacted away or
        retried: one request, no summary, and the record ends with that failure."""
        ws, log = _logged(6)
        model = lab.capped(lab.ScriptedModel([lab.provider_error("503 overloaded"),
                                           lab.forever(lab.summariser(otherwise=_worker))]))
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=100_000,
                            keep_recent=600)
        events, error = lab.drain(session.prompt("Now m7.py."))
        self.assertIsNone(error, f"the prompt raised {error!r}.")
        self.assertEqual(len(model.calls), 1, f"the model was asked {len(model.calls)} times; "
                         "expected once: only a refusal for length is compacted and retried.")
        self.assertEqual(session.messages[-1].get("error_message"), "503 overloaded",
                         "the record does not end with the 503.")

    def test_power_cut_in_session(self):
        """The power goes out during the summary a Session asks for before a prompt: on the
        rebooted disk the log replays as before the prompt, and a new Session answers it."""
        ws, log = _logged(6)
        replayed = log.replay()
        estimate = harness.estimate_tokens(replayed + [harness.user_message("Now m7.py.")])
        model = lab.ScriptedModel([lab.power_cut()])
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=estimate,
                            reserve=200, keep_recent=600)
        try:
            lab.drive(session.prompt("Now m7.py."))
        except lab.PowerCut:
            pass
        except Exception as error:
            self.fail(f"the prompt raised {type(error).__name__}: {error}; expected the power "
                      "cut scripted for the summary request.")
        else:
            self.fail("the prompt finished; expected a summary request, cut by the power.")
        disk = ws.reboot()
        log = harness.SessionLog(disk, LOG)
        self.assertEqual(log.replay(), replayed, "after the cut, the log does not replay as "
                         "before the prompt.")
        session = harness.Session(_model(), harness.SYSTEM, [harness.make_read_tool(disk)],
                                  log, window=estimate, reserve=200, keep_recent=600)
        events, error = lab.drain(session.prompt("Now m7.py."))
        self.assertIsNone(error, f"the new Session's prompt raised {error!r}.")
        self.assertTrue(session.messages[-1]["role"] == "assistant",
                        f"the new Session's record ends {_shape(session.messages[-2:])}.")

    def test_max_turns_still_brakes(self):
        """Lesson 05's brake holds: with max_turns=2 and a model that never stops calling, the
        Session's run and a prompt(None) retry each make two model calls and end with "Agent
        stopped after max_turns=2"."""
        def runaway(request):
            return lab.reply(lab.call("read", {"path": "m1.py"}, id=f"r{len(request.messages)}"))
        ws = lab.Workspace(FILES)
        log = harness.SessionLog(ws, LOG)
        model = lab.capped(lab.ScriptedModel([lab.forever(runaway)]))
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=100_000, max_turns=2)
        events, error = lab.drain(session.prompt(TASK))
        if isinstance(error, lab.TooManyCalls):
            self.fail("with max_turns=2 the Session's run kept calling a model that never "
                      "stops; expected 2 calls. Pass max_turns to the Harness it builds.")
        self.assertIsNone(error, f"the prompt raised {error!r}.")
        self.assertTrue(session.messages, "after the prompt the Session's record is empty: its "
                        "Harness must save every message to the log (persist_to).")
        self.assertEqual(len(model.calls), 2, f"the Session's run made {len(model.calls)} model "
                         "calls with max_turns=2; expected 2. Pass max_turns to the Harness.")
        stop = session.messages[-1].get("error_message")
        self.assertEqual(stop, "Agent stopped after max_turns=2",
                         f"the record ends with {stop!r}; expected the max_turns stop.")
        h = harness.Harness(model, harness.SYSTEM, [harness.make_read_tool(ws)],
                            messages=[lab.user(TASK)], max_turns=2)
        events, error = lab.drain(h.prompt(None))
        if isinstance(error, lab.TooManyCalls):
            self.fail("Harness.prompt(None) with max_turns=2 kept calling the model; "
                      "expected 2 calls.")
        self.assertIsNone(error, f"Harness.prompt(None) raised {error!r}.")
        self.assertEqual(len(model.calls), 4, f"prompt(None) made {len(model.calls) - 2} model "
                         "calls with max_turns=2; expected 2.")
        types = [e["type"] for e in events]
        self.assertEqual(types.count("turn_start"), types.count("turn_end"),
                         "prompt(None)'s turns are not balanced.")
        self.assertFalse(any(e["type"] == "message_end" and e["message"]["role"] == "user"
                             for e in events), "prompt(None) added a user message.")

    def test_retry_keeps_the_brake(self):
        """The retry after an overflow keeps lesson 05's brake: with max_turns=2 and a model
        that never stops calling once the refusal is behind it, the retry makes two model calls
        and the record ends with "Agent stopped after max_turns=2"."""
        refused = []
        def step(request):
            """Refuses the first request for length, summarises when offered no tools, and
            otherwise calls a tool for ever."""
            if not request.tools:
                return lab.summariser()(request)
            if not refused:
                refused.append(request)
                return lab.provider_error("400 prompt is too long: 9120 tokens > 8000 maximum")
            return lab.reply(lab.call("read", {"path": "m1.py"}, id=f"r{len(request.messages)}"))
        ws, log = _logged(6)
        model = lab.capped(lab.ScriptedModel([lab.forever(step)]), 12)
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=100_000, reserve=0,
                            keep_recent=600, max_turns=2)
        events, error = lab.drain(session.prompt("Now m7.py."))
        if isinstance(error, lab.TooManyCalls):
            self.fail("with max_turns=2, the retry after the overflow kept calling a model that "
                      "never stops; expected 2 calls. Build the retry's Harness as the first "
                      "one, with max_turns.")
        self.assertIsNone(error, f"the prompt raised {error!r}.")
        reasons = [e.get("reason") for e in events if e["type"] == "compaction"]
        self.assertEqual(reasons, ["overflow"], f"compaction events: {reasons}; expected one, "
                         "reason 'overflow'.")
        work = len(_work_requests(model))
        self.assertEqual(work, 3, f"the prompt made {work} work requests; expected 3: the one "
                         "refused, then two for the retry with max_turns=2.")
        stop = session.messages[-1].get("error_message")
        self.assertEqual(stop, "Agent stopped after max_turns=2",
                         f"the record ends with {stop!r}; expected the max_turns stop.")

    def test_failed_overflow_summary_goes_up(self):
        """A summary that fails during the compaction after a refusal for length goes up out of
        prompt as the RuntimeError it is: no retry, no compaction written, and the log ends with
        the refusal."""
        ws, log = _logged(6)
        model = lab.capped(lab.ScriptedModel([
            lab.provider_error("400 prompt is too long: 9120 tokens > 8000 maximum"),
            lab.provider_error("503 overloaded")]))
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=100_000, reserve=0,
                            keep_recent=600)
        events, error = lab.drain(session.prompt("Now m7.py."))
        self.assertIsInstance(error, RuntimeError,
                              f"with the summary after the refusal failing, the prompt ended "
                              f"with {error!r}; expected the RuntimeError from summarise to go "
                              "up. Caught, it turns a failed summary into a quiet stop that "
                              "looks like the refusal alone.")
        self.assertEqual(len(model.calls), 2, f"the model was asked {len(model.calls)} times; "
                         "expected 2, the refused request and the failed summary.")
        kinds = [e["type"] for e in log.entries()]
        self.assertNotIn("compaction", kinds, "a compaction was written though its summary "
                         "failed.")
        self.assertTrue(harness.is_overflow(log.replay()[-1]),
                        f"the log ends {_shape(log.replay()[-2:])}; expected the refusal.")

    def test_one_writer(self):
        """One writer: while a prompt of a Session is running, is_running is True and a second
        prompt() on it raises RuntimeError("already running") when called and writes nothing to the
        log; after the first run ends, is_running is False and the next prompt() runs; a run closed
        after its first event leaves is_running False too."""
        ws, log = _logged(6)
        session = self.call("Session", harness.Session, _model(), harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=100_000)
        first = lab.steps(session.prompt("Now m7.py."))
        try:
            next(first)
        except StopIteration:
            self.fail("the first prompt gave no event at all.")
        running = getattr(session, "is_running", None)
        self.assertIs(running, True, f"mid-run, session.is_running is {running!r}; expected True.")
        before = ws.read_text(LOG)
        error = None
        try:
            second = session.prompt("And m8.py.")
        except RuntimeError as raised:
            error = raised
        except Exception as raised:
            self.fail(f"a second prompt while the first was running raised "
                      f"{type(raised).__name__}: {raised}; expected RuntimeError('already "
                      "running').")
        else:
            try:
                lab.drive(second)
            except RuntimeError as raised:
                self.fail(f"the second prompt raised {raised!r} only once its events were pulled, "
                          "not when prompt() was called: check the flag in prompt() itself, "
                          "before the run's generator is made, so a caller knows at once.")
        self.assertIsNotNone(error, "a second prompt ran while the first was still running: "
                             "two runs now write to one log, and it replays their messages "
                             "interleaved. Each prompt builds a new Harness, whose own guard "
                             "cannot see the other run: keep a running flag on the Session, "
                             "checked when prompt() is called.")
        self.assertEqual(str(error), "already running", f"the second prompt raised {error!r}; "
                         "expected RuntimeError('already running'), those words and no more: a "
                         "Session has no steer() or follow_up() to point the caller to.")
        self.assertEqual(ws.read_text(LOG), before, "the refused second prompt wrote to the log.")
        for _ in first:
            pass
        self.assertIs(session.is_running, False, f"after the run, session.is_running is "
                      f"{session.is_running!r}; expected False.")
        try:
            run = session.prompt("And m8.py.")
        except RuntimeError as raised:
            self.fail(f"after the first run ended, the next prompt raised {raised!r}: clear the "
                      "running flag when the run ends, however it ends.")
        events, error = lab.drain(run)
        self.assertIsNone(error, f"after the first run ended, the next prompt raised {error!r}: "
                          "clear the running flag when the run ends, however it ends.")
        self.assertEqual(session.messages[-1]["role"], "assistant",
                         f"the next prompt's record ends {_shape(session.messages[-2:])}.")
        early = lab.steps(session.prompt("And m9.py."))
        next(early)
        early.close()
        self.assertIs(session.is_running, False, "a run closed after its first event left "
                      f"session.is_running {session.is_running!r}: clear the flag in a finally, "
                      "so a run that is closed early or raises clears it too.")

    def test_threshold_compacts_once(self):
        """Before a prompt the Session compacts once, even if the estimate is still over
        window - reserve afterwards: one compaction event, one summary asked, then the run."""
        ws, log = _chat_log(12)
        model = lab.capped(_model(100_000, worker=_noted), 20)
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=100_000, reserve=99_950,
                            keep_recent=30)
        events, error = lab.drain(session.prompt("Now m13.py."))
        if isinstance(error, lab.TooManyCalls):
            self.fail("with window - reserve at 50 tokens, the Session kept compacting before "
                      "the prompt; expected one compaction, then the run.")
        self.assertIsNone(error, f"the prompt raised {error!r}.")
        reasons = [e.get("reason") for e in events if e["type"] == "compaction"]
        asked = len(_summary_requests(model))
        self.assertTrue(reasons == ["threshold"] and asked == 1,
                        f"with window - reserve at 50 tokens, below anything the log can shrink "
                        f"to, the prompt made compaction events {reasons} and asked {asked} "
                        "summaries; expected one of each. Compact once before a prompt: each "
                        "pass more is one more request, and a summary of a summary loses more.")
        self.assertEqual(session.messages[-1]["role"], "assistant",
                         f"the record ends {_shape(session.messages[-2:])}; expected the answer.")

    def test_overflow_retry_each_prompt(self):
        """Once is per prompt: with a provider that refuses the first request of every prompt
        for length, each of three prompts compacts once for the overflow and retries once, the
        first after a compaction at the threshold too, and each ends with the answer."""
        refused = set()
        def step(request):
            """Refuses the first request for each prompt; summarises when offered no tools."""
            if not request.tools:
                return lab.summariser()(request)
            prompt = [m["content"] for m in request.messages if m["role"] == "user"][-1]
            if prompt not in refused:
                refused.add(prompt)
                return lab.provider_error("400 prompt is too long: 9120 tokens > 8000 maximum")
            return _noted(request)
        ws, log = _chat_log(12)
        # just under the estimate of the messages and the prompt, lesson 12's or (with the system
        # prompt counted too) lesson 13's: the first prompt is over it, and once compacted the
        # record is far under it
        estimate = harness.estimate_tokens(log.replay() + [harness.user_message("Now m13.py.")])
        model = lab.capped(lab.ScriptedModel([lab.forever(step)]), 30)
        session = self.call("Session", harness.Session, model, harness.SYSTEM,
                            [harness.make_read_tool(ws)], log, window=100_000,
                            reserve=100_000 - estimate + 1, keep_recent=30)
        for text, want in (("Now m13.py.", ["threshold", "overflow"]),
                           ("Now m14.py.", ["overflow"]), ("Now m15.py.", ["overflow"])):
            events, error = lab.drain(session.prompt(text))
            self.assertIsNone(error, f"prompt {text!r} raised {error!r}.")
            reasons = [e.get("reason") for e in events if e["type"] == "compaction"]
            self.assertEqual(reasons, want, f"prompt {text!r} made compaction events {reasons}; "
                             f"expected {want}. Its first request was refused for length: "
                             "compact once and retry once in every prompt so refused, whatever "
                             "happened before the prompt or in an earlier one.")
            last = session.messages[-1]
            self.assertTrue(last["role"] == "assistant" and last.get("stop_reason") != "error",
                            f"prompt {text!r}: the record ends {_shape(session.messages[-2:])}; "
                            "expected the answer after the retry.")
