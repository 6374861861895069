"""Lesson 07's lab tests: events and renderers (point 7.1).

Lab1 checks run_agent as a generator of events (balanced pairs, mutate then announce, events as
things happen, no printing) and FinalTextRenderer, a frontend that keeps the newest assistant
message and answers at finish().
Each test's docstring is its checklist line on the page, word for word; the tests run in the order
they are written.

    python lab/lab_check.py --harness harness.py --lesson 7 tests.py
"""
import contextlib
import inspect
import io
import json
import unittest

import harness
import lab

LESSON = 7

ONE_CALL_RUN = ["agent_start", "turn_start", "message_end", "message_end", "tool_execution_start",
                "message_end", "tool_execution_end", "turn_end", "turn_start", "message_end",
                "turn_end", "agent_end"]


def _echo(runs):
    def execute(arguments):
        runs.append(arguments)
        return "pong"
    return {"name": "ping", "description": "Answers pong.",
            "parameters": {"type": "object", "properties": {}}, "execute": execute}


def _types(events):
    return [event.get("type") if isinstance(event, dict) else repr(event) for event in events]


def _one_call_run(messages=None, runs=None):
    """A run of one tool call and an answer: (run, messages, model, call)."""
    call = lab.call("ping", {}, id="p1")
    model = lab.ScriptedModel([lab.reply(call), lab.say("It said pong.")])
    messages = [] if messages is None else messages
    runs = [] if runs is None else runs
    run = _a_generator(harness.run_agent(model, harness.SYSTEM, messages, [_echo(runs)],
                                         "Ping it."))
    # lab.steps: the run as it is, or, from lesson 15 on (async), stepped one event per next()
    return lab.steps(run), messages, model, call


def _a_generator(run):
    """`run` itself, if it is a generator (or, from lesson 15 on, an async one); otherwise a FAIL
    that says so, the same words for every test that meets it."""
    if not (inspect.isgenerator(run) or inspect.isasyncgen(run)):
        raise AssertionError(f"run_agent returned a {type(run).__name__}, not a generator: put "
                             "a `yield` in it for each event, so that it hands the events out "
                             "one by one as the run goes, instead of returning at the end")
    return run


def _carried(event):
    """What an event carries as "message", in a few words."""
    if "message" not in event:
        return "no \"message\" at all"
    message = event["message"]
    return lab.show([message]) if isinstance(message, dict) else repr(message)


def _first_difference(got, want):
    """Where two lists of event types part, in a sentence."""
    for n, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"event {n + 1} is {a!r}, expected {b!r}"
    if len(got) < len(want):
        return f"the run ended after {len(got)} events; event {len(got) + 1} should be {want[len(got)]!r}"
    return f"{len(got) - len(want)} events too many, starting with {got[len(want)]!r}"


class Lab1(unittest.TestCase):
    longMessage = False

    def _drive(self, run, what="the run"):
        """Every event of `run`, or a plain FAIL naming the exception."""
        try:
            return lab.drive(_a_generator(run))
        except AssertionError:
            raise
        except Exception as error:  # the reader's code: say what happened, do not crash
            self.fail(f"{what} raised {type(error).__name__}: {error}")

    def _leave(self, run, where):
        """Close a run its consumer left `where`, as Python does once nothing refers to it; a run
        that yields while it is being closed is a plain FAIL here, not a warning later."""
        close = getattr(run, "close", None)
        if close is None:
            return
        try:
            close()
        except RuntimeError as error:
            for _ in range(3):       # paused in its finally now: close it again, quietly
                try:
                    close()
                    break
                except RuntimeError:
                    pass
            self.fail(f"a consumer that left {where} closed the run, and closing it raised "
                      f"RuntimeError: {error}. A `yield` in a `finally` runs while the generator "
                      "is being closed, and a closed generator may yield nothing more: yield "
                      "agent_end once, after the loop, not in a finally")
        except Exception as error:
            self.fail(f"a consumer that left {where} closed the run, and closing it raised "
                      f"{type(error).__name__}: {error}")

    def _render_until(self, frontend, run, leave):
        """Hand each event of `run` to frontend.render until leave(event) says the consumer is
        done (the user pressed q, or it has the answer), then close the run as Python would."""
        def show():
            for event in run:
                frontend.render(event)
                if leave(event):
                    break
        self._call(show)
        self._leave(run, "part-way through")

    def _call(self, function, *args):
        """(value, printed) of function(*args), or a plain FAIL naming the exception. What it
        printed to stdout is `printed`; what it printed to stderr is kept in self.stderr."""
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                value = function(*args)
        except AssertionError:
            raise
        except Exception as error:
            self.fail(f"{getattr(function, '__qualname__', 'it')} raised "
                      f"{type(error).__name__}: {error}")
        self.stderr = err.getvalue()
        return value, out.getvalue()

    def _finished(self, replies, prompt="Hi", tools=()):
        """(returned, printed) of finish() on a new FinalTextRenderer that rendered a whole run of
        run_agent over a model scripted with `replies`."""
        frontend, _ = self._call(harness.FinalTextRenderer)
        run = lab.steps(harness.run_agent(lab.ScriptedModel(list(replies)), harness.SYSTEM, [],
                                          list(tools), prompt))
        self._call(lambda: [frontend.render(event) for event in run])
        return self._call(frontend.finish)

    def _run(self, model, tools, what, hint="", **options):
        """(events, messages) of a whole run of "Go.", or a plain FAIL naming the exception."""
        messages = []
        try:
            events = lab.drive(_a_generator(harness.run_agent(model, harness.SYSTEM, messages,
                                                              tools, "Go.", **options)))
        except AssertionError:
            raise
        except lab.ScriptExhausted:
            self.fail(f"{what}, the model was called {len(model.calls)} times, more than it "
                      f"should have been; the transcript by then: {lab.shape(messages)}")
        except Exception as error:
            self.fail(f"{what}, the run raised {type(error).__name__}: {error}{hint}")
        return events, messages

    def test_a_generator(self):
        """run_agent is a generator: calling it calls no model and appends nothing, and the first event it yields is agent_start."""
        messages, model = [], lab.ScriptedModel([lab.reply(lab.call("ping", {}, id="p1")),
                                                 lab.say("It said pong.")])
        run = lab.steps(_a_generator(harness.run_agent(model, harness.SYSTEM, messages,
                                                       [_echo([])], "Ping it.")))
        self.assertEqual((len(model.calls), len(messages)), (0, 0),
                         f"calling run_agent already made {len(model.calls)} model call(s) and "
                         f"appended {len(messages)} message(s): nothing should happen until the "
                         "first event is pulled")
        first, _ = self._call(next, run)
        self._leave(run, "after the first event")
        self.assertEqual(first, {"type": "agent_start"},
                         f"the first event should be {{'type': 'agent_start'}}, got {first!r}")

    def test_event_order(self):
        """A run with one call yields agent_start, turn_start, message_end (prompt), message_end (reply), tool_execution_start, message_end (result), tool_execution_end, turn_end, turn_start, message_end, turn_end, agent_end."""
        run, _, _, _ = _one_call_run()
        types = _types(self._drive(run))
        if types != ONE_CALL_RUN:
            self.fail("wrong order: " + _first_difference(types, ONE_CALL_RUN))

    def test_events_as_it_happens(self):
        """Each event comes when its moment comes: at tool_execution_start the tool has not run, at tool_execution_end it has, and the model's second call comes after the first turn_end; with two calls in one reply, each call's start, result and end come before the next call's start."""
        runs = []
        run, _, model, _ = _one_call_run(runs=runs)
        seen = []
        try:
            for event in run:
                seen.append((event["type"], len(runs), len(model.calls)))
        except Exception as error:
            self.fail(f"the run raised {type(error).__name__}: {error}")
        at = {kind: (ran, calls) for kind, ran, calls in seen if kind != "turn_end"}
        first_turn_end = next(((ran, calls) for kind, ran, calls in seen if kind == "turn_end"),
                              None)
        self.assertEqual(at.get("tool_execution_start"), (0, 1),
                         "at tool_execution_start the tool should not have run yet, and the model "
                         "should have been called once; the run had done (tool runs, model calls) "
                         f"= {at.get('tool_execution_start')}. Yield each event when it happens, "
                         "not all of them at the end")
        self.assertEqual(at.get("tool_execution_end"), (1, 1),
                         "at tool_execution_end the tool should have run once; (tool runs, model "
                         f"calls) was {at.get('tool_execution_end')}")
        self.assertEqual(first_turn_end, (1, 1),
                         "at the first turn_end the model should have been called once, not yet "
                         f"for the answer; (tool runs, model calls) was {first_turn_end}")
        c1, c2 = lab.call("ping", {}, id="c1"), lab.call("ping", {}, id="c2")
        model = lab.ScriptedModel([lab.reply(c1, c2), lab.say("Both said pong.")])
        runs, order = [], []
        try:
            for event in lab.steps(harness.run_agent(model, harness.SYSTEM, [], [_echo(runs)],
                                                     "Go.")):
                kind, message = event["type"], event.get("message") or {}
                if kind.startswith("tool_execution"):
                    order.append(f"{kind[15:]}({event['call']['id']}) after {len(runs)} run(s)")
                elif message.get("role") == "toolResult":
                    order.append(f"result({message['tool_call_id']})")
        except Exception as error:
            self.fail(f"with a reply of two calls the run raised {type(error).__name__}: {error}")
        want = ["start(c1) after 0 run(s)", "result(c1)", "end(c1) after 1 run(s)",
                "start(c2) after 1 run(s)", "result(c2)", "end(c2) after 2 run(s)"]
        self.assertEqual(order, want,
                         "with a reply of two calls, each call's start, result and end should "
                         "come before the next call's start: expected " + ", ".join(want)
                         + "; got " + (", ".join(order) or "no tool events"))

    def test_consumer_stops_early(self):
        """A consumer that stops at the first tool_execution_start stops the run: the tool never runs, the model is not called again, and the record stays U A[p1], with nothing appended once the consumer has gone."""
        runs = []
        run, messages, model, _ = _one_call_run(runs=runs)
        try:
            for event in run:
                if event["type"] == "tool_execution_start":
                    break
        except Exception as error:
            self.fail(f"the run raised {type(error).__name__}: {error}")
        self._leave(run, "at the first tool_execution_start")
        self.assertEqual((len(runs), len(model.calls)), (0, 1),
                         f"after the consumer stopped, the tool had run {len(runs)} time(s) and "
                         f"the model been called {len(model.calls)} time(s); expected 0 and 1: the "
                         "loop should do nothing its consumer has not pulled")
        self.assertEqual(lab.shape(messages), "U A[p1]",
                         f"after the consumer stopped at the first tool_execution_start the record "
                         f"is {lab.shape(messages)}; expected U A[p1], as far as the run got: a "
                         "run that is closed may append nothing, since nobody hears a message_end "
                         "for it (lesson 10 deals with such a record)")

    def test_event_contents(self):
        """Each event carries what it announces: message_end its message, the tool events the call (and the end its result), turn_end the turn's reply, agent_end this run's messages."""
        earlier = [lab.user("Hi"), lab.say("Hello.")]
        run, messages, _, call = _one_call_run(list(earlier))
        events = self._drive(run)
        if _types(events) != ONE_CALL_RUN:
            self.fail("wrong order: " + _first_difference(_types(events), ONE_CALL_RUN))
        ends = [e.get("message") for e in events if e["type"] == "message_end"]
        mine = messages[2:]
        self.assertTrue(len(ends) == len(mine) and all(a is b for a, b in zip(ends, mine)),
                        "the message_end events should carry this run's messages, the very "
                        f"objects on your list, in order; they carried {lab.shape(ends)} for "
                        f"{lab.shape(mine) or 'an empty list'}")
        start, end = events[4], events[6]
        self.assertEqual(start.get("call"), call,
                         f"tool_execution_start should carry the call, got {start!r}")
        self.assertEqual(end.get("call"), call,
                         f"tool_execution_end should carry the call, got {end!r}")
        self.assertIs(end.get("result"), messages[4],
                      "tool_execution_end's \"result\" should be the toolResult message on your "
                      f"list, got {end.get('result')!r}")
        self.assertIs(events[7].get("message"), messages[3],
                      "the first turn_end's \"message\" should be that turn's reply")
        self.assertIs(events[10].get("message"), messages[5],
                      "the last turn_end's \"message\" should be the answer")
        got = events[-1].get("messages")
        self.assertEqual(got, mine,
                         "agent_end's \"messages\" should be this run's messages, "
                         f"{lab.shape(mine)}; it carried {lab.shape(got or [])}")

    def test_mutate_then_announce(self):
        """Mutate, then announce: at every message_end its message is already the last on your list, and at tool_execution_end so is the result it carries."""
        run, messages, _, _ = _one_call_run()
        problem = None
        try:
            for event in run:
                kind = event["type"]
                if kind in ("message_end", "tool_execution_end"):
                    announced = event.get("message" if kind == "message_end" else "result")
                    if messages and messages[-1] == announced and messages[-1] is not announced:
                        problem = (f"{kind} for {lab.show([announced])} carries a copy of the "
                                   "message on your list: yield the very object you appended")
                        break
                    if not (messages and messages[-1] is announced):
                        problem = (f"{kind} for {lab.show([announced])} came while the last "
                                   "message on the list was "
                                   f"{lab.show(messages[-1:]) or 'nothing (the list was empty)'}"
                                   ": append first, then yield")
                        break
        except Exception as error:
            self.fail(f"the run raised {type(error).__name__}: {error}")
        self._leave(run, "at the first event out of order")
        if problem:
            self.fail(problem)

    def test_list_changes_only_with_a_message_end(self):
        """The list changes only with a message_end: at agent_start and the first turn_start the caller's list is as it was (the prompt goes on at the top of the first turn, just before its own message_end), and at every event this run's part of the list is exactly the messages announced so far, a max_turns stop included."""
        runaway = lab.reply(lab.call("ping", {}, id="p1"))
        for what, model, options in (
                ("a run with one tool call", lab.ScriptedModel([runaway, lab.say("Pong.")]), {}),
                ("a max_turns=1 stop", lab.ScriptedModel([runaway] * 3), {"max_turns": 1})):
            earlier = [lab.user("Hi"), lab.say("Hello.")]
            messages = list(earlier)
            run = lab.steps(_a_generator(harness.run_agent(model, harness.SYSTEM, messages,
                                                           [_echo([])], "Ping it.", **options)))
            heard, problem = [], None
            try:
                for n, event in enumerate(run, 1):
                    if event.get("type") == "message_end":
                        heard.append(event.get("message"))
                    mine = messages[len(earlier):]
                    if problem is None and not (
                            all(a is b for a, b in zip(messages, earlier))
                            and len(mine) == len(heard) and all(a is b for a, b in zip(mine, heard))):
                        problem = (f"in {what}, at event {n} ({event.get('type')}) this run had put "
                                   f"{lab.shape(mine) or 'nothing'} on the list after the caller's "
                                   f"{lab.shape(earlier)}, and the message_end events so far had "
                                   f"announced {lab.shape(heard) or 'nothing'}")
            except Exception as error:
                self.fail(f"{what} raised {type(error).__name__}: {error}")
            if problem:
                self.fail(problem + ": append each message, the prompt too, just before its own "
                          "message_end, with no other event in between, and announce every "
                          "message you append")

    def test_every_exit_balanced(self):
        """A max_turns stop and a provider error still end with turn_end, agent_end, every turn_start is closed by its turn_end before the next one, the run has one agent_start and one agent_end, and the last turn_end's message and agent_end's last message are the failed reply."""
        runaway = lab.reply(lab.call("ping", {}, id="p1"))
        for name, model, options in (
                ("a max_turns=1 stop", lab.ScriptedModel([runaway] * 3), {"max_turns": 1}),
                ("a provider error", lab.ScriptedModel([lab.provider_error("503")]), {})):
            messages = []
            events = self._drive(harness.run_agent(model, harness.SYSTEM, messages, [_echo([])],
                                                   "Go.", **options), f"the run with {name}")
            types = _types(events)
            self.assertEqual(types[-2:], ["turn_end", "agent_end"],
                             f"after {name} the run should end turn_end, agent_end; it ended "
                             f"{types[-2:]} (all: {' '.join(types)})")
            depth = 0
            for kind in types:
                depth += {"turn_start": 1, "turn_end": -1}.get(kind, 0)
                if depth not in (0, 1):
                    self.fail(f"after {name}, turn_start and turn_end do not pair up: "
                              f"{' '.join(types)}")
            self.assertEqual(depth, 0, f"after {name}, a turn_start has no turn_end: "
                             f"{' '.join(types)}")
            self.assertEqual((types.count("agent_start"), types.count("agent_end")), (1, 1),
                             f"after {name} the run yielded {types.count('agent_start')} "
                             f"agent_start and {types.count('agent_end')} agent_end: "
                             f"{' '.join(types)}; expected one of each: a stop leaves the loop, "
                             "and the one agent_end after it closes the run")
            last = (events[-1].get("messages") or [{}])[-1]
            self.assertEqual(last.get("stop_reason"), "error",
                             f"after {name} the last of agent_end's messages should be the failed "
                             f"reply (stop_reason \"error\"), got {lab.show([last])}")
            failed = messages[-1] if messages else None
            self.assertIs(events[-2].get("message"), failed,
                          f"after {name} the last turn_end carried {_carried(events[-2])}, not "
                          "the failed reply on your list: a turn that ends on a failed reply "
                          "still closes with it as turn_end's \"message\"")

    def test_two_runs_on_one_list(self):
        """A second run on the same list, with the same prompt "Ping it." and max_turns=2, is a run of its own: its two model calls are allowed again, it ends on the answer, and its agent_end carries its own four messages, not the first run's."""
        messages = []
        for n in (1, 2):
            model = lab.ScriptedModel([lab.reply(lab.call("ping", {}, id=f"p{n}")),
                                       lab.say("It said pong.")])
            before = len(messages)
            try:
                events = lab.drive(_a_generator(harness.run_agent(
                    model, harness.SYSTEM, messages, [_echo([])], "Ping it.", max_turns=2)))
            except AssertionError:
                raise
            except Exception as error:
                self.fail(f"run {n} on the list raised {type(error).__name__}: {error}")
            mine = messages[before:]
            self.assertEqual((len(model.calls), lab.shape(mine)), (2, f"U A[p{n}] R(p{n}) A"),
                             f"run {n} on one list, with max_turns=2, made {len(model.calls)} "
                             f"model call(s) and added {lab.shape(mine) or 'nothing'}; expected 2 "
                             f"and U A[p{n}] R(p{n}) A: each run counts its own turns from 0")
            got = events[-1].get("messages") if events else None
            self.assertTrue(isinstance(got, list) and len(got) == len(mine)
                            and all(a is b for a, b in zip(got, mine)),
                            f"run {n}'s agent_end carried {lab.shape(got or [])}; expected "
                            f"{lab.shape(mine)}, the messages this run added and no others: "
                            "keep them as you append them")

    def test_model_sent_what_it_was(self):
        """Each model call is sent what lesson 5's was: the `system` it was given, the whole list as it stands (the caller's earlier messages first), and the specs of the tools."""
        earlier = [lab.user("Hi"), lab.say("Hello.")]
        messages = list(earlier)
        system = "You are a terse test assistant."
        tools = [_echo([])]
        specs = [{key: tool[key] for key in ("name", "description", "parameters")}
                 for tool in tools]
        model = lab.ScriptedModel([lab.reply(lab.call("ping", {}, id="p1")), lab.say("Pong.")])
        self._drive(harness.run_agent(model, system, messages, tools, "Ping it."))
        want = ["U A U", "U A U A[p1] R(p1)"]
        for n, request in enumerate(model.calls[:2], 1):
            self.assertEqual(request.system, system,
                             f"model call {n} was sent the system prompt {request.system[:40]!r}; "
                             f"expected the `system` passed to run_agent, {system!r}")
            self.assertEqual(lab.shape(request.messages), want[n - 1],
                             f"on a list that already held U A, model call {n} was sent "
                             f"{lab.shape(request.messages) or 'nothing'}; expected "
                             f"{want[n - 1]}: pass `messages` itself, the whole list as it "
                             "stands, earlier runs included")
            self.assertEqual(request.tools, specs,
                             f"model call {n} was sent the tool specs "
                             f"{[t.get('name') if isinstance(t, dict) else t for t in request.tools]}"
                             "; expected tool_specs(tools), the name, description and "
                             "parameters of the one tool, ping")
        self.assertEqual(len(model.calls), 2,
                         f"a run of one tool call and an answer made {len(model.calls)} model "
                         "call(s); expected 2")

    def test_prints_nothing(self):
        """run_agent prints nothing: a whole run pulled to its end with no frontend writes nothing to stdout."""
        run, _, _, _ = _one_call_run()
        _, printed = self._call(self._drive, run)
        self.assertEqual(printed, "", "run_agent printed "
                         f"{printed.splitlines()[0] if printed.strip() else repr(printed)!r}...: "
                         "drawing is a frontend's job; the loop only yields events")

    def test_returns_nothing(self):
        """run_agent returns nothing: a whole run pulled to its end stops with no value (its StopIteration carries None); the run's messages go out in agent_end, not in a `return`."""
        run, _, _, _ = _one_call_run()
        try:
            while True:
                next(run)
        except StopIteration as stop:
            value = stop.value
        except Exception as error:
            self.fail(f"the run raised {type(error).__name__}: {error}")
        if value is not None:
            try:
                shown = f"a list of messages, {lab.shape(value)}"
            except Exception:
                shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
            self.fail(f"run_agent returned {shown}, at its end; it should return nothing. "
                      "A `for` never sees a generator's return value, so lesson 5's `return "
                      "new` tells nobody anything: agent_end carries the messages, and the "
                      "generator ends with a bare `return` or by running off its end")

    def test_final_text_renderer(self):
        """FinalTextRenderer prints nothing while rendering a run, then finish() prints "It said pong." and returns True; an answer in two text blocks is printed whole; an answer with no words is an answer too, and finish() returns True for it."""
        run, _, _, _ = _one_call_run()
        frontend, _ = self._call(harness.FinalTextRenderer)
        _, during = self._call(lambda: [frontend.render(event) for event in run])
        self.assertEqual(during, "", "render() printed "
                         f"{during!r} while the run went on; FinalTextRenderer prints only in "
                         "finish()")
        ok, printed = self._call(frontend.finish)
        self.assertEqual((printed, ok), ("It said pong.\n", True),
                         f"finish() printed {printed!r} and returned {ok!r}; expected "
                         "'It said pong.\\n' and True")
        self.assertEqual(self.stderr, "", f"finish() wrote {self.stderr!r} to stderr after a "
                         "run that ended well; expected nothing there")
        two = lab.reply(lab.text("The server listens "), lab.text("on port 9090."))
        ok, printed = self._finished([two], "Which port?")
        self.assertEqual((printed, ok), ("The server listens on port 9090.\n", True),
                         f"after an answer in two text blocks, finish() printed {printed!r} and "
                         f"returned {ok!r}; expected 'The server listens on port 9090.\\n' and "
                         "True: print text_of the answer, all of its words")
        ok, printed = self._finished([lab.say("")], "Say nothing.")
        self.assertEqual((printed.strip(), ok), ("", True),
                         f"after an answer with no words finish() printed {printed!r} and "
                         f"returned {ok!r}; expected no words and True: the run ended well, on an "
                         "answer that happens to be empty. Test stop_reason and tool calls, not "
                         "whether there is text")

    def test_final_text_renderer_on_failure(self):
        """After a run that failed, finish() prints "Error: 503 overloaded" and returns False, and a failed reply that got words out first ("I'll clear out the old build first.", then "connection reset") prints "Error: connection reset", not its words, and so does one that got a call out before it failed ("Error: cut off"); a failed reply whose error_message is empty prints "Error: " and returns False; with no assistant message at all it prints nothing and returns False."""
        ok, printed = self._finished([lab.provider_error("503 overloaded")])
        self.assertEqual((printed, ok), ("Error: 503 overloaded\n", False),
                         f"after a failed run finish() printed {printed!r} to stdout (and "
                         f"{self.stderr!r} to stderr) and returned {ok!r}; expected "
                         "'Error: 503 overloaded\\n' on stdout and False: this lab wants the "
                         "Error: line on stdout, where print() puts it")
        half = dict(lab.say("I'll clear out the old build first."), stop_reason="error",
                    error_message="connection reset")
        ok, printed = self._finished([half])
        self.assertEqual((printed, ok), ("Error: connection reset\n", False),
                         f"after a failed reply that had words in it, finish() printed {printed!r} "
                         f"and returned {ok!r}; expected 'Error: connection reset\\n' and False: "
                         "look at stop_reason before the text, since half a reply is no answer")
        cut = dict(lab.reply(lab.call("ping", {}, id="p1")), stop_reason="error",
                   error_message="cut off")
        ok, printed = self._finished([cut], tools=[_echo([])])
        self.assertEqual((printed, ok), ("Error: cut off\n", False),
                         f"after a failed reply that held a call, finish() printed {printed!r} "
                         f"and returned {ok!r}; expected 'Error: cut off\\n' and False: keep "
                         "every assistant message, the failed one with a call too, and look at "
                         "stop_reason first")
        bare = dict(lab.provider_error("x"), error_message="")    # failed, with no reason given
        ok, printed = self._finished([bare])
        self.assertEqual((printed, ok), ("Error: \n", False),
                         f"after a failed reply whose error_message is empty, finish() printed "
                         f"{printed!r} and returned {ok!r}; expected 'Error: \\n' and False: "
                         "stop_reason \"error\" is what says a reply failed, whatever its "
                         "error_message holds")
        frontend, _ = self._call(harness.FinalTextRenderer)
        ok, printed = self._call(frontend.finish)
        self.assertEqual((printed, self.stderr, ok), ("", "", False),
                         f"with no events at all finish() printed {printed!r} (stderr "
                         f"{self.stderr!r}) and returned {ok!r}; expected nothing and False: "
                         "a frontend that saw no answer cannot vouch for the run")

    def test_final_text_renderer_run_left(self):
        """A run its consumer left before the answer has none: stopped at the first tool_execution_start after the reply "Let me check the config." and its call, or just after that call's result, finish() prints nothing and returns False; so too when that reply holds its call but ended with stop_reason "length", not "toolUse"."""
        for stop_at, what in (("tool_execution_start", "at the first tool_execution_start"),
                              ("toolResult", "just after the call's result")):
            call = lab.call("ping", {}, id="p1")
            model = lab.ScriptedModel([lab.reply(lab.text("Let me check the config."), call),
                                       lab.say("It said pong.")])
            frontend, _ = self._call(harness.FinalTextRenderer)
            run = lab.steps(harness.run_agent(model, harness.SYSTEM, [], [_echo([])], "Ping it."))
            self._render_until(frontend, run, lambda event: (     # the user pressed q
                event["type"] == stop_at or (event.get("message") or {}).get("role") == stop_at))
            try:
                ok, printed = self._call(frontend.finish)
            except AssertionError as failure:
                self.fail(f"with the consumer gone {what}, {failure}: keep only the message of "
                          "an assistant's message_end (a toolResult has no stop_reason)")
            self.assertEqual((printed, self.stderr, ok), ("", "", False),
                             f"with the consumer gone {what}, finish() printed {printed!r} "
                             f"(stderr {self.stderr!r}) and returned {ok!r}; expected nothing "
                             "and False: the newest reply asked for a tool, so it is not the "
                             "answer, and a run left before its answer did not end well")
        call = lab.call("ping", {}, id="p1")    # cut off at its token limit, call already out
        long = dict(lab.reply(lab.text("Let me check the config."), call), stop_reason="length")
        model = lab.ScriptedModel([long, lab.say("It said pong.")])
        frontend, _ = self._call(harness.FinalTextRenderer)
        run = lab.steps(harness.run_agent(model, harness.SYSTEM, [], [_echo([])], "Ping it."))
        self._render_until(frontend, run, lambda event: event["type"] == "tool_execution_start")
        ok, printed = self._call(frontend.finish)
        self.assertEqual((printed, self.stderr, ok), ("", "", False),
                         f"with the consumer gone at the first tool_execution_start, after a "
                         f"reply that holds a call but has stop_reason \"length\", finish() "
                         f"printed {printed!r} and returned {ok!r}; expected nothing and False: "
                         "a reply asks for tools when tool_calls(message) is not empty, whatever "
                         "its stop_reason says (the loop ran that call)")

    def test_final_text_renderer_left_after_the_answer(self):
        """A consumer that stops reading at the answer's own message_end (as the page's cell does) still has it: finish() prints "It said pong." and returns True."""
        call = lab.call("ping", {}, id="p1")
        model = lab.ScriptedModel([lab.reply(lab.text("Let me check the config."), call),
                                   lab.say("It said pong.")])
        frontend, _ = self._call(harness.FinalTextRenderer)
        run = lab.steps(harness.run_agent(model, harness.SYSTEM, [], [_echo([])], "Ping it."))

        def the_answer(event):   # here: the consumer has what it wanted
            message = event.get("message") or {}
            return (event["type"] == "message_end" and message.get("role") == "assistant"
                    and not harness.tool_calls(message))
        self._render_until(frontend, run, the_answer)
        ok, printed = self._call(frontend.finish)
        self.assertEqual((printed, ok), ("It said pong.\n", True),
                         f"left right after the answer's message_end, finish() printed "
                         f"{printed!r} and returned {ok!r}; expected 'It said pong.\\n' and True: "
                         "keep the message of each assistant's message_end as it comes, not "
                         "the one turn_end or agent_end carries later, which this consumer "
                         "never reads")

    def test_stop_is_a_turn(self):
        """A max_turns stop is a turn of its own, announced like any reply: with max_turns=1 a runaway's run ends turn_end, turn_start, message_end (the stop), turn_end, agent_end; with max_turns=0 the model is never called and the run is agent_start, turn_start, message_end (prompt), message_end (the stop), turn_end, agent_end; that last turn_end carries the stop as its "message"."""
        want = {1: ["turn_end", "turn_start", "message_end", "turn_end", "agent_end"],
                0: ["agent_start", "turn_start", "message_end", "message_end", "turn_end",
                    "agent_end"]}
        for limit, tail in want.items():
            model = lab.ScriptedModel([lab.reply(lab.call("ping", {}, id="p1"))] * 3)
            events, messages = self._run(model, [_echo([])], f"with max_turns={limit} and a "
                                         "runaway", max_turns=limit)
            self.assertEqual(len(model.calls), limit,
                             f"with max_turns={limit} the model was called {len(model.calls)} "
                             f"time(s); expected {limit}: the turn that would be number "
                             f"{limit + 1} calls nothing, its reply is the error message")
            types = _types(events)
            if types[-len(tail):] != tail:
                self.fail(f"with max_turns={limit} the run ended {' '.join(types[-len(tail):])}; "
                          f"expected {' '.join(tail)}: the stop opens a turn of its own, and its "
                          "error message is that turn's reply, with its message_end")
            record = {1: "U A[p1] R(p1) A!", 0: "U A!"}[limit]
            self.assertEqual(lab.shape(messages), record,
                             f"with max_turns={limit} the record is {lab.shape(messages)}; "
                             f"expected {record}: the prompt goes in first, at the top of the "
                             "first turn, and the stop is that turn's reply, last")
            last_end = [e for e in events if e["type"] == "message_end"][-1].get("message")
            self.assertIs(last_end, messages[-1] if messages else None,
                          f"with max_turns={limit} the last message_end carried "
                          f"{lab.show([last_end or {}])}, not the stop on your list: announce "
                          "the stop like any message")
            turn_end = events[-2] if len(events) > 1 else {}
            self.assertIs(turn_end.get("message"), messages[-1] if messages else None,
                          f"with max_turns={limit} the stop turn's turn_end carried "
                          f"{_carried(turn_end)}, not the stop on your list: the stop is that "
                          "turn's reply, and turn_end carries it as \"message\" like any other")

    def test_brake_still_holds(self):
        """Lesson 5's brake still holds: with max_turns=2 a model that never stops asking is called twice and the run ends on "Agent stopped after max_turns=2"; so is one that asks for two tools at a time (max_turns counts model calls, not tools); an answer in the second allowed turn ends the run well; without max_turns a run of three model calls is not cut short."""
        ping = lab.call("ping", {}, id="p1")
        model = lab.ScriptedModel([lab.reply(ping)] * 3)    # a limit dropped fails, fast
        events, messages = self._run(model, [_echo([])], "with max_turns=2 and a runaway",
                                     max_turns=2)
        self.assertEqual(len(model.calls), 2,
                         f"with max_turns=2 the model was called {len(model.calls)} time(s); "
                         "expected 2. Count the turns and check before the call: when a turn "
                         "would be number max_turns + 1, its reply is the error message")
        last = messages[-1] if messages else {}
        self.assertEqual(last.get("error_message"), "Agent stopped after max_turns=2",
                         "the run should end on error_message(\"Agent stopped after "
                         f"max_turns=2\"); it ended on {lab.show(messages[-1:]) or 'nothing'}")
        model = lab.ScriptedModel([lab.reply(ping), lab.say("Done.")])
        events, messages = self._run(model, [_echo([])], "with max_turns=2 and an answer in "
                                     "turn 2", max_turns=2)
        self.assertEqual(lab.shape(messages), "U A[p1] R(p1) A",
                         "an answer in the last allowed turn should end the run well, U A[p1] "
                         f"R(p1) A; it left {lab.shape(messages)}: the check comes before a "
                         "call, never after one")
        two = lab.reply(lab.call("ping", {}, id="p1"), lab.call("ping", {}, id="p2"))
        model = lab.ScriptedModel([two] * 3)
        events, messages = self._run(model, [_echo([])], "with max_turns=2 and a runaway that "
                                     "asks for two tools at a time", max_turns=2)
        self.assertEqual(len(model.calls), 2,
                         f"with max_turns=2 and replies of two calls each, the model was called "
                         f"{len(model.calls)} time(s); expected 2: max_turns counts model calls, "
                         "and a reply's tools all belong to its one turn")
        model = lab.ScriptedModel([lab.reply(ping), lab.reply(ping), lab.say("Done.")])
        events, messages = self._run(model, [_echo([])], "without max_turns")
        self.assertEqual((len(model.calls), lab.shape(messages)),
                         (3, "U A[p1] R(p1) A[p1] R(p1) A"),
                         f"without max_turns the run made {len(model.calls)} model calls and "
                         f"left {lab.shape(messages)}; expected 3 calls and U A[p1] R(p1) A[p1] "
                         "R(p1) A: max_turns=None means no limit")

    def test_failures_still_results(self):
        """Lessons 4 and 5 still hold: a tool that raises becomes a result marked is_error, announced with its message_end and carried by its tool_execution_end, the reply's next call still runs, and the run goes on; a failed reply that holds a call runs no tool; an exception from model.complete is not caught: it reaches the consumer with no turn_end or agent_end before it, and the record keeps the prompt."""
        def broken(arguments):
            raise ValueError("disk on fire")
        tool = {"name": "ping", "description": "Breaks.",
                "parameters": {"type": "object", "properties": {}}, "execute": broken}
        model = lab.ScriptedModel([lab.reply(lab.call("ping", {}, id="p1"),
                                             lab.call("ping", {}, id="p2")), lab.say("It broke.")])
        events, messages = self._run(model, [tool], "with a tool that raises",
                                     hint=". A tool's exception should become a result: run "
                                          "every call through run_tool, as lesson 4 does")
        starts, ends = (_types(events).count(kind) for kind in ("tool_execution_start",
                                                                "tool_execution_end"))
        self.assertEqual((starts, ends), (2, 2),
                         f"with a reply of two calls to a tool that raises, the run yielded "
                         f"{starts} tool_execution_start and {ends} tool_execution_end; expected "
                         "two of each: a call whose tool failed still ends, and the next call "
                         "still runs")
        result = messages[2] if len(messages) > 2 else {}
        self.assertEqual((result.get("is_error"), result.get("content"), lab.shape(messages)),
                         (True, "disk on fire", "U A[p1,p2] R(p1) R(p2) A"),
                         "a tool that raises should become a toolResult with is_error True and "
                         "the error's words, every call of the reply get its result, and the run "
                         f"go on to the answer; got {lab.show(messages)}. Run every call through "
                         "run_tool")
        ends = [e for e in events if e["type"] == "tool_execution_end"]
        self.assertIs(ends[0].get("result"), messages[2],
                      "with a tool that raises, tool_execution_end's \"result\" should be the "
                      f"error result on your list, got {ends[0].get('result', 'no result at all')!r}")
        announced = [e.get("message") for e in events if e["type"] == "message_end"]
        self.assertTrue(len(announced) == len(messages)
                        and all(a is b for a, b in zip(announced, messages)),
                        f"with a tool that raises, the message_end events announced "
                        f"{lab.shape(announced)} for the record {lab.shape(messages)}: a result "
                        "marked is_error is a message like any other, announced when appended")
        runs = []
        failed = dict(lab.reply(lab.call("ping", {}, id="p1")), stop_reason="error",
                      error_message="cut off")
        model = lab.ScriptedModel([failed])
        events, messages = self._run(model, [_echo(runs)], "with a failed reply holding a call")
        self.assertEqual((runs, lab.shape(messages)), ([], "U A![p1]"),
                         f"a failed reply that holds a call ran the tool {len(runs)} time(s) and "
                         f"left {lab.shape(messages)}; expected no tool run and U A![p1]: none "
                         "of a failed reply is acted on")
        model = lab.ScriptedModel([lab.raises(ConnectionError("connection reset"))])
        messages, seen = [], []
        try:
            for event in lab.steps(harness.run_agent(model, harness.SYSTEM, messages, [], "Go.")):
                seen.append(event["type"])
        except ConnectionError:
            pass
        except Exception as error:
            self.fail(f"when model.complete raised ConnectionError, the run raised "
                      f"{type(error).__name__}: {error} instead")
        else:
            self.fail("when model.complete raised ConnectionError, the run ended quietly with "
                      f"{lab.shape(messages)}; expected the exception to reach the consumer: "
                      "lesson 5 lets it go up to the caller")
        self.assertEqual(lab.shape(messages), "U",
                         f"after model.complete raised, the record is {lab.shape(messages)}; "
                         "expected U, the prompt and nothing more")
        closed = [kind for kind in seen if kind in ("turn_end", "agent_end")]
        self.assertEqual(closed, [],
                         f"before model.complete's ConnectionError reached the consumer, the run "
                         f"yielded {' and '.join(closed)}: the events said the run ended, and "
                         "then it raised. Let the exception go straight up, with nothing yielded "
                         "for it")

    def test_ctrl_c_goes_straight_through(self):
        """Lesson 4's rule holds in the generator: a KeyboardInterrupt raised inside a tool goes straight up to the consumer, with no turn_end or agent_end yielded for it, and the record stops at U A[p1]."""
        def interrupted(arguments):
            raise KeyboardInterrupt()
        tool = {"name": "ping", "description": "Interrupted.",
                "parameters": {"type": "object", "properties": {}}, "execute": interrupted}
        model = lab.ScriptedModel([lab.reply(lab.call("ping", {}, id="p1")), lab.say("Done.")])
        messages, seen = [], []
        try:
            for event in lab.steps(harness.run_agent(model, harness.SYSTEM, messages, [tool],
                                                     "Go.")):
                seen.append(event["type"])
        except KeyboardInterrupt:
            pass
        except Exception as error:
            self.fail(f"when a tool raised KeyboardInterrupt the run raised "
                      f"{type(error).__name__}: {error} instead; let the KeyboardInterrupt through")
        else:
            self.fail("when a tool raised KeyboardInterrupt the run ended quietly, with "
                      f"{' '.join(seen[-3:])}; expected the KeyboardInterrupt to reach the "
                      "consumer: Ctrl-C asks the program to stop, and no event says the run ended")
        closed = [kind for kind in seen if kind in ("turn_end", "agent_end")]
        self.assertEqual(closed, [], f"the run yielded {' and '.join(closed)} before the "
                         "KeyboardInterrupt: nothing may claim the turn or the run ended when "
                         "Ctrl-C cut it")
        self.assertEqual(lab.shape(messages), "U A[p1]",
                         f"after Ctrl-C in the tool the record is {lab.shape(messages)}; "
                         "expected U A[p1], nothing after the call that was cut off")

    def test_json_renderer_beside_it(self):
        """The same kind of run through the given JsonRenderer prints one JSON line per event, 12 lines, and finish() returns True."""
        run, _, _, _ = _one_call_run()
        frontend = harness.JsonRenderer()
        _, printed = self._call(lambda: [frontend.render(event) for event in run])
        lines = printed.splitlines()
        self.assertEqual(len(lines), 12, f"JsonRenderer printed {len(lines)} lines, expected 12, "
                         "one per event")
        try:
            kinds = [json.loads(line).get("type") for line in lines]
        except ValueError:
            self.fail("a line JsonRenderer printed is not JSON")
        if kinds != ONE_CALL_RUN:
            self.fail("the JSON lines are not the run's events: "
                      + _first_difference(kinds, ONE_CALL_RUN))
        self.assertTrue(frontend.finish(), "JsonRenderer.finish() should return True after a run "
                        "that ended well")


    def test_brake_ends_the_run(self):
        """With max_turns=1 and a model that asks for a tool every time, the run ends by itself after one model call, on the failed reply "Agent stopped after max_turns=1", and gives a handful of events, not an endless stream."""
        model, messages = lab.ScriptedModel([lab.reply(lab.call("ping", {}, id="p1"))] * 3), []
        lab.run_events(self, lambda: harness.run_agent(model, harness.SYSTEM, messages,
                                                       [_echo([])], "Go.", max_turns=1),
                       "With max_turns=1 and a model that always calls ping",
                       lambda: messages, cap=40)
        last = messages[-1] if messages else {}
        self.assertEqual((len(model.calls), last.get("error_message")),
                         (1, "Agent stopped after max_turns=1"),
                         f"the model was called {len(model.calls)} time(s) and the run ended on "
                         f"{last.get('error_message')!r}; expected one call, and the failed "
                         "reply error_message(\"Agent stopped after max_turns=1\") recorded "
                         "in place of the second call.")


if __name__ == "__main__":
    unittest.main()
