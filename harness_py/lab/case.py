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


# -- rules a later lab makes the reader rewrite, re-tested once here ----------------------------
#
# From lesson 9 on, some labs ask the reader to write again a function or a class an earlier lab
# built (run_agent, Harness): each such lab re-tests the earlier rules on the new code by calling
# these, so a rule the rewrite drops fails there, in a sentence, instead of passing unnoticed.
# Each takes the test case (any unittest.TestCase) and the reader's harness module; the run may be
# plain or async (lesson 15), and is consumed through `steps`, with a cap on its events, so a
# runaway loop fails at once instead of hanging the test.

EVENT_CAP = 300       # events one re-test run may give before it counts as a runaway


def _tool(name: str, runs: list | None = None, on_run: Callable[[], Any] | None = None) -> dict:
    def execute(arguments):
        if runs is not None:
            runs.append(name)
        if on_run is not None:
            on_run()
        return "done"
    return {"name": name, "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": {}}, "execute": execute}


def run_events(test: unittest.TestCase, start: Callable[[], Any], what: str,
               sofar: Callable[[], Any] | None = None,
               on_event: Callable[[dict], Any] | None = None, cap: int = EVENT_CAP) -> list:
    """start() gives a run (plain or async); its events, each handed to on_event, or a FAIL that
    says `what` raised, or ran past `cap` events (a loop that does not end)."""
    from .messages import shape
    from .model import ScriptExhausted

    events: list = []
    where = (lambda: f" The record by then: {shape(list(sofar())) or '(nothing)'}.") if sofar \
        else (lambda: "")
    try:
        run = steps(start())
        try:
            for event in run:
                events.append(event)
                if on_event is not None:
                    on_event(event)
                if len(events) > cap:
                    test.fail(f"{what}, the run gave more than {cap} events without ending: it "
                              f"went round its loop again and again.{where()}")
        finally:
            if hasattr(run, "close"):
                run.close()
    except AssertionError:
        raise
    except ScriptExhausted:
        test.fail(f"{what}, the run went on asking the model after the test's script had run "
                  f"out: it did not stop where it should have.{where()}")
    except Exception as error:
        test.fail(f"{what}, the run raised {type(error).__name__}: {error}.{where()}")
    return events


def _closes_on(test: unittest.TestCase, events: list, messages: list, what: str) -> None:
    """The run's last turn_end carries the reply that ended it, the last message on the list."""
    ends = [e for e in events if e.get("type") == "turn_end"]
    carried = ends[-1].get("message", "no \"message\" at all") if ends else "no turn_end at all"
    from .messages import show
    said = show([carried]) if isinstance(carried, dict) else str(carried)
    test.assertTrue(bool(ends) and bool(messages) and carried is messages[-1],
                    f"{what} carried {said}; expected the failed reply that ended the run, "
                    "the last message on the list: a turn that ends on a failed reply still "
                    "closes with it as turn_end's \"message\".")


def keeps_loop_rules(test: unittest.TestCase, harness: Any, *, stream: bool = False,
                     retry: bool = False) -> None:
    """The rules of run_agent a rewrite must keep (lessons 4, 5, 7 and 9): events agent_start,
    turn_start ... turn_end and agent_end (with the run's messages) around the run and each turn,
    the turn_end of a max_turns stop or a failed reply carrying that reply;
    a call to a missing tool answered with a result marked is_error; max_turns stopping the run
    with a failed reply before the extra model call; after a failed reply no tool runs and nobody
    is asked for steering or follow-ups; steering asked once with the prompt and once after each
    turn (the last one max_turns allows too, its answer recorded before the limit's stop), and
    follow-ups when the run would end; an exception from the model reaching the caller. With
    retry, lesson 12's prompt None: one model call about the record as it stands. With stream,
    the model streams, and the run must ask its stream(): it yields a message_update."""
    from .messages import call, provider_error, reply, say, shape, user
    from .model import ScriptedModel, raises
    from .stream import StreamingModel

    Model = StreamingModel if stream else ScriptedModel
    kind = "streaming " if stream else ""
    run_agent, system = harness.run_agent, harness.SYSTEM

    # the events of a run of two turns, and agent_end's messages
    messages: list = []
    model = Model([reply(call("ping", {}, id="p1")), say("Done.")])
    events = run_events(test, lambda: run_agent(model, system, messages, [_tool("ping")], "Go."),
                        f"With a {kind}model that calls ping, then answers", lambda: messages)
    frame = {"agent_start", "turn_start", "tool_execution_start", "tool_execution_end",
             "turn_end", "agent_end"}
    kinds = [e.get("type") for e in events if e.get("type") in frame]
    want = ["agent_start", "turn_start", "tool_execution_start", "tool_execution_end", "turn_end",
            "turn_start", "turn_end", "agent_end"]
    if stream and "message_update" not in [e.get("type") for e in events]:
        test.fail("With a streaming model that calls ping, then answers, the run yielded no "
                  "message_update: run_agent never asked model.stream(), and a model that streams "
                  "was asked with complete(). Ask the stream when the model has stream().")
    test.assertEqual(kinds, want, f"A run of two turns (a call to ping, then an answer) gave the "
                     f"events {' '.join(kinds)} (message events left out); expected "
                     f"{' '.join(want)}: the rewritten run_agent still opens and closes the run "
                     "and each turn, and announces each tool call's start and end.")
    test.assertEqual(shape(messages), "U A[p1] R(p1) A",
                     f"The run left the record {shape(messages)}; expected U A[p1] R(p1) A.")
    ended = events[-1].get("messages") if events and events[-1].get("type") == "agent_end" else None
    test.assertEqual(shape(ended or []), "U A[p1] R(p1) A",
                     f"agent_end's messages are {shape(ended or []) or '(none)'}; expected every "
                     "message this run added, U A[p1] R(p1) A.")
    ends = [e for e in events if e.get("type") == "tool_execution_end"]
    test.assertTrue(ends and ends[0].get("result") is messages[2],
                    "tool_execution_end does not carry the call's result (the message recorded "
                    "for it) under \"result\".")

    # a call to a tool that is not there
    messages = []
    model = Model([reply(call("nope", {}, id="n1")), say("No such tool.")])
    run_events(test, lambda: run_agent(model, system, messages, [_tool("ping")], "Go."),
               f"With a {kind}model that calls a tool that does not exist", lambda: messages)
    result = messages[2] if len(messages) > 2 else {}
    test.assertEqual((result.get("content"), result.get("is_error")), ("Tool nope not found", True),
                     f"A call to the missing tool nope was answered {result!r}; expected the "
                     "content 'Tool nope not found', is_error True, and the run going on.")

    # the brake
    messages, runs = [], []
    model = Model([reply(call("ping", {}, id="p1")), say("Never sent.")])
    events = run_events(test, lambda: run_agent(model, system, messages, [_tool("ping", runs)],
                                                "Go.", max_turns=1),
                        f"With max_turns=1 and a {kind}model that calls ping", lambda: messages)
    last = messages[-1] if messages else {}
    test.assertEqual((len(model.calls), shape(messages), last.get("error_message")),
                     (1, "U A[p1] R(p1) A!", "Agent stopped after max_turns=1"),
                     f"With max_turns=1 the model was called {len(model.calls)} time(s) and the "
                     f"record is {shape(messages)}, ending on {last.get('error_message')!r}; "
                     "expected one call and U A[p1] R(p1) A!, the failed reply 'Agent stopped "
                     "after max_turns=1', made before the second model call, never after it.")
    _closes_on(test, events, messages, "With max_turns=1, the stop turn's turn_end")

    # a failed reply: nothing of it acted on, nobody asked
    asked: list = []

    def get_steering():
        asked.append("steering")
        return []

    def get_follow_ups():
        asked.append("follow_ups")
        return [user("Are you there?")]
    messages, runs = [], []
    failed = dict(reply(call("ping", {}, id="p1")), stop_reason="error", error_message="cut off")
    model = Model([failed, say("Never sent.")])
    events = run_events(test, lambda: run_agent(model, system, messages, [_tool("ping", runs)],
                                                "Go.", get_steering=get_steering,
                                                get_follow_ups=get_follow_ups),
                        f"With a {kind}model whose reply fails", lambda: messages)
    left = shape(messages)
    kept = ("U A![p1]", "U A!") if stream else ("U A![p1]",)   # a failed stream may drop the call
    test.assertTrue(not runs and left in kept and asked == ["steering"],
                    f"After a failed reply holding a call, the tools run were {runs}, the record "
                    f"is {left}, and the loop asked {asked}; expected no tool run, the prompt "
                    "and the failed reply only, and only the steering asked with the prompt: "
                    "none of a failed reply is acted on, and after it nobody is asked for more.")
    _closes_on(test, events, messages, "After a failed reply, the last turn_end")

    # steering after each turn, follow-ups when the run would end
    asked = []

    def get_follow_ups_once():
        asked.append("follow_ups")
        return [user("And then?")] if asked.count("follow_ups") == 1 else []
    messages = []
    model = Model([say("One."), say("Two.")])
    run_events(test, lambda: run_agent(model, system, messages, [], "Go.",
                                       get_steering=get_steering,
                                       get_follow_ups=get_follow_ups_once),
               f"With a {kind}model and one follow-up", lambda: messages)
    want = ["steering", "steering", "follow_ups", "steering", "follow_ups"]
    test.assertEqual((asked, shape(messages)), (want, "U A U A"),
                     f"With one follow-up the loop asked {asked} and left {shape(messages)}; "
                     f"expected {want} and U A U A: steering with the prompt and after each turn, "
                     "follow-ups only when the run would otherwise end.")

    # steering typed during the last turn max_turns allows: recorded, then the limit's stop
    asks: list = []

    def steer_on_second_ask():
        asks.append("steering")
        return [user("Use spaces.")] if len(asks) == 2 else []
    messages, runs = [], []
    model = Model([reply(call("ping", {}, id="p1")), say("Never sent.")])
    run_events(test, lambda: run_agent(model, system, messages, [_tool("ping", runs)], "Go.",
                                       max_turns=1, get_steering=steer_on_second_ask),
               f"With max_turns=1, a {kind}model that calls ping, and steering after that turn",
               lambda: messages)
    test.assertEqual((len(model.calls), shape(messages)), (1, "U A[p1] R(p1) U A!"),
                     f"With max_turns=1 and steering given after the first turn, the model was "
                     f"called {len(model.calls)} time(s) and the record is {shape(messages)}; "
                     "expected one call and U A[p1] R(p1) U A!: steering is asked for after every "
                     "turn that did not fail and recorded at the top of the next, and only then "
                     "is the limit checked.")

    # one message per ask, the ask with the prompt included
    queued = [user("Use spaces."), user("Four of them.")]
    messages = []
    model = Model([say("Spaces."), say("Four.")])
    run_events(test, lambda: run_agent(model, system, messages, [], "Go.",
                                       get_steering=lambda: [queued.pop(0)] if queued else []),
               f"With a {kind}model and two steering messages waiting before the prompt",
               lambda: messages)
    test.assertEqual((len(model.calls), shape(messages)), (2, "U U A U A"),
                     f"With two steering messages waiting, one handed over per ask, the model was "
                     f"called {len(model.calls)} time(s) and the record is {shape(messages)}; "
                     "expected two calls and U U A U A: the prompt goes in with one ask's answer, "
                     "and the next ask comes after the turn, not straight away.")

    # an exception from the model
    messages = []
    model = Model([raises(ConnectionError("connection reset"))])
    try:
        list(steps(run_agent(model, system, messages, [], "Go.")))
    except ConnectionError:
        pass
    except Exception as error:
        test.fail(f"When the {kind}model raised ConnectionError, the run raised "
                  f"{type(error).__name__}: {error} instead: let the model's exception reach "
                  "the caller as it is.")
    else:
        test.fail(f"When the {kind}model raised ConnectionError, the run ended quietly with "
                  f"{shape(messages)}; expected the exception to reach the caller.")

    if retry:                           # lesson 12: prompt None sends the record again, once
        messages = [user("Go.")]
        model = Model([say("Here.")])
        run_events(test, lambda: run_agent(model, system, messages, [], None),
                   f"With prompt None (a retry) and a {kind}model", lambda: messages)
        sent = shape(model.calls[0].messages) if model.calls else "(no call)"
        test.assertEqual((len(model.calls), sent, shape(messages)), (1, "U", "U A"),
                         f"A retry (prompt None) on the record U made {len(model.calls)} model "
                         f"call(s), the first sent {sent}, and left {shape(messages)}; expected "
                         "one call, sent the record as it stands (U), and U A: no new message, "
                         "one turn.")


def keeps_harness_rules(test: unittest.TestCase, harness: Any, *, listeners: bool = True) -> None:
    """The rules of Harness a rewrite must keep (lessons 8 and 9): prompt() while a run is going on
    raises RuntimeError("already running; use steer() or follow_up()") and queues nothing, at
    every event of the run; is_running is True from prompt() to the run's end (checked at every
    event) and False after it; steer() and follow_up() queue the user's
    words for the loop. With listeners (lesson 11 on): subscribe(listener) returns unsubscribe,
    which stops the listener's events and may be called twice."""
    from .messages import call, reply, say, shape
    from .model import ScriptedModel

    def users(messages):
        return [m.get("content") for m in messages if m.get("role") == "user"]

    # one run at a time
    h = harness.Harness(ScriptedModel([say("Hello.")]), harness.SYSTEM, [])
    run = h.prompt("Hi")
    test.assertIs(h.is_running, True, f"Right after prompt(), is_running is {h.is_running!r}; "
                  "expected True: the run is going on from the moment prompt() returns it.")
    try:
        h.prompt("Hello?")
    except RuntimeError as error:
        test.assertEqual(str(error), "already running; use steer() or follow_up()",
                         f"prompt() during a run raised RuntimeError({str(error)!r}); expected "
                         "RuntimeError('already running; use steer() or follow_up()').")
    except Exception as error:
        test.fail(f"prompt() during a run raised {type(error).__name__}: {error}; expected "
                  "RuntimeError('already running; use steer() or follow_up()').")
    else:
        test.fail("prompt() during a run returned instead of raising RuntimeError('already "
                  "running; use steer() or follow_up()'): check the running flag in prompt() "
                  "itself, and set it there.")
    seen: list = []

    def mid_run(event):  # at every event the run is paused inside itself: still running
        seen.append(event.get("type"))
        test.assertIs(h.is_running, True, f"Paused at event {len(seen)} ({seen[-1]}) of the run, "
                      f"is_running is {h.is_running!r}; expected True until the run ends: clear the "
                      "flag once, in the finally round the whole run, not round each yield.")
        try:
            h.prompt("Again?")
        except RuntimeError:
            return
        test.fail(f"Paused at event {len(seen)} ({seen[-1]}) of the run, a second prompt() was "
                  "accepted; expected RuntimeError('already running; use steer() or follow_up()'): "
                  "two runs would write one record.")
    run_events(test, lambda: run, "Driving the first prompt's run", lambda: h.messages, mid_run)
    test.assertEqual(users(h.messages), ["Hi"], f"The refused prompt went somewhere: the user "
                     f"messages are {users(h.messages)}; expected ['Hi'].")
    test.assertIs(h.is_running, False, f"After the run ended, is_running is {h.is_running!r}; "
                  "expected False.")

    # steering and follow-ups queue
    model = ScriptedModel([reply(call("edit", {}, id="e1")), say("Spaces."), say("Tests pass.")])
    h = harness.Harness(model, harness.SYSTEM, [_tool("edit")])

    def on_event(event):
        if event.get("type") == "tool_execution_start":
            h.steer("Use spaces.")
            h.follow_up("Run the tests.")
    run_events(test, lambda: h.prompt("Go."), "Steering and a follow-up sent during a tool call",
               lambda: h.messages, on_event)
    want = ["Go.", "Use spaces.", "Run the tests."]
    test.assertEqual((users(h.messages), shape(h.messages)), (want, "U A[e1] R(e1) U A U A"),
                     f"With h.steer() and h.follow_up() sent while the tool ran, the user messages "
                     f"are {users(h.messages)} and the record {shape(h.messages)}; expected {want} "
                     "and U A[e1] R(e1) U A U A: steer(text) and follow_up(text) each queue "
                     "user_message(text), for the loop to ask for.")

    if not listeners:
        return
    # subscribe and unsubscribe
    heard: list = []
    h = harness.Harness(ScriptedModel([say("One."), say("Two.")]), harness.SYSTEM, [])
    unsubscribe = h.subscribe(heard.append)
    events = run_events(test, lambda: h.prompt("First."), "A run with a listener",
                        lambda: h.messages)
    test.assertEqual([e.get("type") for e in heard], [e.get("type") for e in events],
                     "The listener heard other events than the run gave: subscribe(listener) "
                     "hands it every event of every run.")
    test.assertTrue(callable(unsubscribe), f"subscribe() returned {unsubscribe!r}; expected a "
                    "function that unsubscribes the listener.")
    for n in (1, 2):
        try:
            unsubscribe()
        except Exception as error:
            test.fail(f"unsubscribe() number {n} raised {type(error).__name__}: {error}; "
                      "unsubscribing twice is unsubscribing once: remove the listener only if "
                      "it is still there.")
    before = len(heard)
    run_events(test, lambda: h.prompt("Second."), "A run after unsubscribe()", lambda: h.messages)
    test.assertEqual(len(heard), before, f"After unsubscribe() the listener heard "
                     f"{len(heard) - before} more event(s); expected none.")
