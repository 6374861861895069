"""Lesson 09's lab tests: steering and follow-ups (point 9.1).

Lab1 checks that what the user says during a run waits in a queue and reaches the transcript only
where a user message keeps it valid: steering once a turn's tool batch is answered, follow-ups only
when the run would otherwise end, nothing after a failed reply. Each test's docstring is its
checklist line on the page, word for word; the tests run in the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 9 tests.py

Every run is consumed through Lab1._drive, which turns anything the reader's code raises (a
TypeError, a script that ran out because the run went on too long) into a plain failure with a
sentence, so a wrong design fails and never errors.
"""
import traceback
import unittest
from collections import deque
from pathlib import Path

import harness
import lab

LESSON = 9


def _tool(name, on_run=None):
    """A tool that answers "done" and, while it runs, calls on_run(): a user typing mid-call."""
    def execute(arguments):
        if on_run:
            on_run()
        return "done"
    return {"name": name, "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": {}}, "execute": execute}


def _shape(messages):
    return lab.shape(list(messages)) or "(nothing)"


def _users(messages):
    """The text of every user message, in order."""
    return [m["content"] for m in messages if m["role"] == "user"]


def _new_users(request):
    """The user messages a request holds after its last assistant message: what is new to it."""
    tail = []
    for m in request.messages:
        tail = [] if m["role"] == "assistant" else tail + [m]
    return _users(tail)


class Lab1(unittest.TestCase):
    longMessage = False

    def _drive(self, start, on_event=None, sofar=None, exhausted=None):
        """Call start() to get a run, consume it, hand each event to on_event; return the events.
        Whatever the code under test raises becomes a failure that says what happened."""
        events = []
        try:
            for event in lab.steps(start()):     # lab.steps: the run is async from lesson 15
                events.append(event)
                if on_event:
                    on_event(event)
        except lab.ScriptExhausted:
            where = f" The transcript by then: {_shape(sofar())}." if sofar else ""
            self.fail((exhausted or "The run went on asking the model after this test's script "
                       "had run out: a queued message was taken where it should not have been, "
                       "or taken twice.") + where)
        except Exception as error:       # the reader's code raised: say so, do not error
            mine = [f for f in traceback.extract_tb(error.__traceback__)
                    if Path(f.filename).name == Path(harness.__file__).name]
            where = f" (at line {mine[-1].lineno} of your harness)" if mine else ""
            self.fail(f"The run raised {type(error).__name__}: {error}{where}")
        return events

    def test_drain_hands_a_list(self):
        """_drain(queue) returns a list: [the oldest message], taken off the queue, or [] when the queue is empty."""
        h = harness.Harness(lab.ScriptedModel([]), harness.SYSTEM, [])
        first, second = lab.user("First."), lab.user("Second.")
        queue = deque([first, second])
        for given, want, left in ((queue, [first], 1), (queue, [second], 0), (queue, [], 0)):
            try:
                got = h._drain(given)
            except Exception as error:
                self.fail(f"h._drain() on a queue of {len(given)} raised "
                          f"{type(error).__name__}: {error}; on an empty queue it should "
                          "return [].")
            if not (isinstance(got, list) and len(got) == len(want)
                    and all(a is b for a, b in zip(got, want))):
                self.fail(f"h._drain() on a queue of {len(want) + left} gave {got!r}; expected "
                          f"{want!r}. The loop adds what _drain gives to a list, so _drain "
                          "returns a list: [queue.popleft()] if queue else [].")
            self.assertEqual(len(queue), left,
                             f"after h._drain() the queue holds {len(queue)} message(s); "
                             f"expected {left}: take the message off the queue as you hand it "
                             "over.")

    def test_steer_while_idle(self):
        """A message steered while no run is going on goes in right after the next prompt, in the first turn, and the first model call is sent both."""
        model = lab.ScriptedModel([lab.say("Tabs it is... spaces, then.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        h.steer("Use spaces.")
        self._drive(lambda: h.prompt("Indent the file."), sofar=lambda: h.messages)
        odd = [m for m in h.messages if not isinstance(m, dict)]
        if odd:
            self.fail(f"The transcript holds {odd[0]!r}, a {type(odd[0]).__name__}, not a "
                      "message: steer(text) and follow_up(text) queue user_message(text).")
        self.assertEqual(_shape(model.calls[0].messages), "U U",
                         "The first model call should be sent the prompt and the steering (U U); "
                         f"it was sent {_shape(model.calls[0].messages)}.")
        self.assertEqual(_users(h.messages), ["Indent the file.", "Use spaces."],
                         "The user messages should be the prompt, then the steering; they are "
                         f"{_users(h.messages)}.")

    def test_steering_waits_for_the_batch(self):
        """Steering sent while the first of two calls runs reaches the model only after both calls have their results, and opens the next turn."""
        calls = [lab.call("edit", {}, id="e1"), lab.call("edit", {}, id="e2")]
        model = lab.ScriptedModel([lab.reply(*calls), lab.say("Switched to spaces.")])
        typed = []

        def type_once():                 # the user types while the first edit runs
            if not typed:
                typed.append(True)
                h.steer("Use spaces.")
        h = harness.Harness(model, harness.SYSTEM, [_tool("edit", type_once)])
        early = []

        def on_event(event):             # mutate, then announce: the user's words too
            said = event.get("message") or {}
            if event["type"] == "message_end" and said.get("role") == "user" and not (
                    h.messages and h.messages[-1] is said):
                early.append(said.get("content"))
        events = self._drive(lambda: h.prompt("Indent both files."), on_event,
                             sofar=lambda: h.messages)
        self.assertEqual(early, [],
                         f"The message_end of the user message(s) {early} came before the "
                         "message was on h.messages: append what the queue gives, then yield "
                         "its message_end, as for every other message.")
        self.assertEqual(_shape(h.messages), "U A[e1,e2] R(e1) R(e2) U A",
                         "Expected U A[e1,e2] R(e1) R(e2) U A, got " + _shape(h.messages) +
                         ": a user message may not come between a call and its result.")
        self.assertEqual(_shape(model.calls[1].messages), "U A[e1,e2] R(e1) R(e2) U",
                         "The second model call should end on the steering, after both results; "
                         f"it was sent {_shape(model.calls[1].messages)}.")
        kinds = [e["type"] for e in events]
        steered = next(k for k, e in enumerate(events) if e["type"] == "message_end"
                       and e["message"]["role"] == "user" and e["message"]["content"] == "Use spaces.")
        self.assertEqual(kinds[steered - 2:steered], ["turn_end", "turn_start"],
                         "The steering's message_end should come straight after a turn_end and "
                         "the next turn_start; before it came " + ", ".join(kinds[max(0, steered - 2):steered]) + ".")

    def test_one_message_per_ask(self):
        """Two messages steered at once are handed over one per ask, oldest first: the first opens the next turn, the second the turn after that."""
        model = lab.ScriptedModel([lab.reply(lab.call("edit", {}, id="e1")), lab.say("One."),
                                   lab.say("Two.")])
        h = harness.Harness(model, harness.SYSTEM, [_tool("edit")])

        def on_event(event):
            if event["type"] == "tool_execution_start":
                h.steer("First.")
                h.steer("Second.")
        self._drive(lambda: h.prompt("Start."), on_event, sofar=lambda: h.messages)
        new = [_new_users(request) for request in model.calls]
        self.assertEqual(new, [["Start."], ["First."], ["Second."]],
                         "Each model call should bring one new user message: 'Start.', then "
                         f"'First.', then 'Second.', oldest first; they brought {new}.")
        self.assertEqual(_shape(h.messages), "U A[e1] R(e1) U A U A",
                         f"Expected U A[e1] R(e1) U A U A, got {_shape(h.messages)}.")

    def test_follow_up_when_it_would_end(self):
        """A follow-up queued during a run is taken only when the run would otherwise end: the model answers the prompt first, then the follow-up, in the same run."""
        model = lab.ScriptedModel([lab.reply(lab.call("edit", {}, id="e1")),
                                   lab.say("Edited."), lab.say("Tests pass.")])
        h = harness.Harness(model, harness.SYSTEM, [_tool("edit")])

        def on_event(event):
            if event["type"] == "agent_start":
                h.follow_up("Now run the tests.")
        events = self._drive(lambda: h.prompt("Edit the file."), on_event,
                             sofar=lambda: h.messages)
        sent = [_shape(request.messages) for request in model.calls]
        self.assertEqual(sent[:2], ["U", "U A[e1] R(e1)"],
                         "Until the model has answered the prompt, the follow-up must wait: "
                         f"the first two calls should be sent U, then U A[e1] R(e1); they were sent {sent[:2]}.")
        self.assertEqual(_shape(h.messages), "U A[e1] R(e1) A U A",
                         f"Expected U A[e1] R(e1) A U A, got {_shape(h.messages)}.")
        self.assertEqual(_users(h.messages)[-1], "Now run the tests.")
        ran = _shape(events[-1].get("messages", [])) if events else "(no events)"
        self.assertEqual(ran, "U A[e1] R(e1) A U A",
                         "The follow-up and its answer belong to the same run: agent_end's "
                         f"messages should be U A[e1] R(e1) A U A; they are {ran}.")
        kinds = [e["type"] for e in events]
        self.assertEqual((kinds.count("agent_start"), kinds.count("agent_end"), kinds[-1]),
                         (1, 1, "agent_end"),
                         "A follow-up opens one more turn of the same run, not a new run: "
                         "expected one agent_start and one agent_end, at the end; the events "
                         f"were {' '.join(kinds)}.")
        follow = next(k for k, e in enumerate(events) if e["type"] == "message_end"
                      and e["message"].get("content") == "Now run the tests.")
        self.assertEqual(kinds[follow - 2:follow], ["turn_end", "turn_start"],
                         "The follow-up's message_end should open a turn, straight after "
                         "turn_end and turn_start; before it came "
                         f"{', '.join(kinds[max(0, follow - 2):follow])}.")

    def test_steering_before_follow_ups(self):
        """Steering and a follow-up both typed during a reply with no calls: the steering opens the next turn alone, and the follow-up goes in only after the model has answered it."""
        typed = []

        def typing(request):             # while the first call is out, the user types both
            if not typed:
                typed.append(True)
                h.steer("Use spaces.")
                h.follow_up("Now run the tests.")
            return lab.say("Tabs.")
        model = lab.ScriptedModel([typing, lab.say("Spaces."), lab.say("Tests pass.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        self._drive(lambda: h.prompt("Indent a.py."), sofar=lambda: h.messages)
        new = [_new_users(request) for request in model.calls]
        self.assertEqual(new, [["Indent a.py."], ["Use spaces."], ["Now run the tests."]],
                         "Each model call should bring one new user message: the prompt, then "
                         "the steering, then the follow-up; they brought "
                         f"{new}. Ask for follow-ups only when the turn had no calls and "
                         "steering gave nothing: a correction is answered before the next job "
                         "goes in.")
        self.assertEqual(_shape(h.messages), "U A U A U A",
                         f"Expected U A U A U A, got {_shape(h.messages)}.")

    def test_queues_per_harness(self):
        """Each Harness has its own two queues: a message steered into one harness, or queued as its follow-up, is taken by that harness's next run and never by another's."""
        mine = harness.Harness(lab.ScriptedModel([lab.say("Spaces."), lab.say("Ran.")]),
                               harness.SYSTEM, [])
        other = harness.Harness(lab.ScriptedModel([lab.say("Hello."), lab.say("Extra.")]),
                                harness.SYSTEM, [])
        mine.steer("Use spaces.")
        mine.follow_up("Now run the tests.")
        self._drive(lambda: other.prompt("Hi."), sofar=lambda: other.messages,
                    exhausted="Another harness's run took the messages queued on this one.")
        self.assertEqual(_users(other.messages), ["Hi."],
                         "A message steered into one harness reached another: its user messages "
                         f"are {_users(other.messages)}. Make the two deques in __init__, on "
                         "self; deques made once, on the class, are every harness's queues.")
        self._drive(lambda: mine.prompt("Indent a.py."), sofar=lambda: mine.messages)
        expected = ["Indent a.py.", "Use spaces.", "Now run the tests."]
        self.assertEqual(_users(mine.messages), expected,
                         f"The harness the messages were queued on should take them: its user "
                         f"messages should be {expected}; they are {_users(mine.messages)}.")

    def test_two_follow_ups_one_run(self):
        """Two follow-ups queued during one run are both answered in that run, one turn each, oldest first, and the run ends once the queue is empty."""
        model = lab.ScriptedModel([lab.say("Edited."), lab.say("Tests pass."), lab.say("Pushed.")])
        h = harness.Harness(model, harness.SYSTEM, [])

        def on_event(event):
            if event["type"] == "agent_start":
                h.follow_up("Now run the tests.")
                h.follow_up("Then push.")
        events = self._drive(lambda: h.prompt("Edit the file."), on_event,
                             sofar=lambda: h.messages)
        self.assertEqual(_users(h.messages), ["Edit the file.", "Now run the tests.", "Then push."],
                         "Both follow-ups should be answered in the run, oldest first; the user "
                         f"messages are {_users(h.messages)}.")
        self.assertEqual(_shape(h.messages), "U A U A U A",
                         f"Expected U A U A U A, one turn per follow-up, got {_shape(h.messages)}: "
                         "ask for follow-ups again each time the run would end.")
        kinds = [e["type"] for e in events]
        self.assertEqual((kinds.count("agent_start"), kinds.count("agent_end")), (1, 1),
                         "Both follow-ups belong to the one run: expected one agent_start and "
                         f"one agent_end; the events were {' '.join(kinds)}.")

    def test_every_user_message_announced(self):
        """Each user message the loop is given is announced: the prompt and a message steered while idle each get a message_end of their own, while each is the last message on h.messages: recorded, then announced, one at a time."""
        model = lab.ScriptedModel([lab.say("Spaces.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        h.steer("Use spaces.")
        last_then = []   # at each user message_end: (its content, the record's last content)

        def on_event(event):
            if event.get("type") == "message_end" and event["message"].get("role") == "user":
                last = h.messages[-1] if h.messages else None
                last_then.append((event["message"].get("content"),
                                  "it" if last is event["message"] else
                                  repr(last.get("content")) if last else "nothing"))
        events = self._drive(lambda: h.prompt("Indent a.py."), on_event, sofar=lambda: h.messages)
        said = [e["message"].get("content") for e in events
                if e.get("type") == "message_end" and e["message"].get("role") == "user"]
        self.assertEqual(said, ["Indent a.py.", "Use spaces."],
                         f"The run announced the user messages {said}; expected a message_end for "
                         "the prompt and one for 'Use spaces.'. Record every message the queue "
                         "gives with its own message_end, or no frontend or saver hears it.")
        for content, last in last_then:
            if last != "it":
                self.fail(f"At the message_end of the user message {content!r}, the last message "
                          f"on h.messages was {last}, not that message itself. Record one "
                          "message and announce it before you record the next: a consumer that "
                          "stops at this event would leave a message on the record that nobody "
                          "heard.")

    def test_steering_costs_no_turn(self):
        """A user message opens a turn but is not a model call: with max_turns=1, a prompt with steering waiting still gets its one model call; with max_turns=2, steering typed while the first reply's call runs still leaves the second call, U A[e1] R(e1) U A."""
        model = lab.ScriptedModel([lab.say("Spaces.")])
        h = harness.Harness(model, harness.SYSTEM, [], max_turns=1)
        h.steer("Use spaces.")
        self._drive(lambda: h.prompt("Indent a.py."), sofar=lambda: h.messages)
        self.assertEqual((len(model.calls), _shape(h.messages)), (1, "U U A"),
                         f"With max_turns=1 and steering waiting, the model was called "
                         f"{len(model.calls)} time(s) and the record is {_shape(h.messages)}; "
                         "expected one call and U U A. max_turns counts model calls, not the user "
                         "messages that open a turn.")
        typed = []

        def type_once():
            if not typed:
                typed.append(True)
                h.steer("Use spaces.")
        model = lab.ScriptedModel([lab.reply(lab.call("edit", {}, id="e1")), lab.say("Done.")])
        h = harness.Harness(model, harness.SYSTEM, [_tool("edit", type_once)], max_turns=2)
        self._drive(lambda: h.prompt("Indent a.py."), sofar=lambda: h.messages)
        self.assertEqual((len(model.calls), _shape(h.messages)), (2, "U A[e1] R(e1) U A"),
                         f"With max_turns=2 and steering typed during e1, the model was called "
                         f"{len(model.calls)} time(s) and the record is {_shape(h.messages)}; "
                         "expected two calls and U A[e1] R(e1) U A. Steering handed over between "
                         "turns opens the next turn; it does not use one up: count a turn only "
                         "where the loop is about to call the model.")

    def test_steering_at_the_limit(self):
        """With max_turns=1, steering typed while the first reply's call runs is not lost: it opens turn 2 and is recorded, and turn 2's reply is the limit's stop, U A[e1] R(e1) U A!, after one model call."""
        typed = []

        def type_once():
            if not typed:
                typed.append(True)
                h.steer("Use spaces.")
        model = lab.ScriptedModel([lab.reply(lab.call("edit", {}, id="e1"))])
        h = harness.Harness(model, harness.SYSTEM, [_tool("edit", type_once)], max_turns=1)
        self._drive(lambda: h.prompt("Indent a.py."), sofar=lambda: h.messages)
        self.assertEqual((len(model.calls), _shape(h.messages)), (1, "U A[e1] R(e1) U A!"),
                         f"With max_turns=1 and steering typed during e1, the model was called "
                         f"{len(model.calls)} time(s) and the record is {_shape(h.messages)}; "
                         "expected one call and U A[e1] R(e1) U A!. Steering is asked for after "
                         "every turn that did not fail, and recorded at the top of the next one; "
                         "the limit is checked after that, and writes the stop instead of calling.")

    def test_two_steered_while_idle(self):
        """Two messages steered while no run is going on are handed over one per ask too: the first goes in with the prompt, the second opens the next turn."""
        model = lab.ScriptedModel([lab.say("Spaces."), lab.say("Four.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        h.steer("Use spaces.")
        h.steer("Four of them.")
        self._drive(lambda: h.prompt("Indent a.py."), sofar=lambda: h.messages)
        new = [_new_users(request) for request in model.calls]
        self.assertEqual(new, [["Indent a.py.", "Use spaces."], ["Four of them."]],
                         f"Each ask hands over one message, the ask with the prompt included: the "
                         f"model calls should bring ['Indent a.py.', 'Use spaces.'], then "
                         f"['Four of them.']; they brought {new}.")

    def test_busy_message(self):
        """While a run is going on, prompt() raises RuntimeError("already running; use steer() or follow_up()") and queues nothing."""
        h = harness.Harness(lab.ScriptedModel([lab.say("Hello.")]), harness.SYSTEM, [])
        run = h.prompt("Hi")
        try:
            h.prompt("Hello?")
        except RuntimeError as error:
            self.assertEqual(str(error), "already running; use steer() or follow_up()",
                             f"prompt() raised RuntimeError({str(error)!r}); expected "
                             "RuntimeError('already running; use steer() or follow_up()').")
        else:
            self.fail("prompt() during a run returned instead of raising RuntimeError: the caller "
                      "has to choose, steer() or follow_up().")
        self._drive(lambda: run, sofar=lambda: h.messages)
        self.assertEqual(_users(h.messages), ["Hi"],
                         f"The refused prompt went somewhere: the user messages are {_users(h.messages)}.")

    def test_queues_outlive_runs(self):
        """A follow-up queued after a run has ended waits: it is asked for at the end of the next run, after that run's prompt is answered."""
        model = lab.ScriptedModel([lab.say("A."), lab.say("B."), lab.say("C.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        self._drive(lambda: h.prompt("First."), sofar=lambda: h.messages)
        h.follow_up("Later.")
        self.assertEqual(len(h.messages), 2, "A queued message is not history yet: h.messages "
                         f"should still hold 2 messages; it holds {len(h.messages)}.")
        self._drive(lambda: h.prompt("Second."), sofar=lambda: h.messages)
        self.assertEqual(_users(h.messages), ["First.", "Second.", "Later."],
                         "The user messages should be 'First.', 'Second.', 'Later.'; they are "
                         f"{_users(h.messages)}.")
        self.assertEqual(_shape(h.messages), "U A U A U A",
                         f"Expected U A U A U A, got {_shape(h.messages)}.")

    def test_model_sent_the_whole_transcript(self):
        """Every model call, in a second run too, is sent the Harness's own system prompt, the whole transcript as it stands, earlier runs included, and the tool specs."""
        system = "You are a terse test assistant."
        model = lab.ScriptedModel([lab.say("A."), lab.reply(lab.call("edit", {}, id="e1")),
                                   lab.say("B.")])
        h = harness.Harness(model, system, [_tool("edit")])
        specs = [{"name": "edit", "description": "The edit tool.",
                  "parameters": {"type": "object", "properties": {}}}]
        self._drive(lambda: h.prompt("First."), sofar=lambda: h.messages)
        self._drive(lambda: h.prompt("Second."), sofar=lambda: h.messages)
        want = ["U", "U A U", "U A U A[e1] R(e1)"]
        self.assertEqual(len(model.calls), 3,
                         f"Two runs, the second with one tool call, should make 3 model calls; "
                         f"they made {len(model.calls)}.")
        for n, request in enumerate(model.calls, 1):
            self.assertEqual(request.system, system,
                             f"Model call {n} was sent the system prompt {request.system[:40]!r}; "
                             f"expected the one the Harness was made with, {system!r}.")
            self.assertEqual(_shape(request.messages), want[n - 1],
                             f"Model call {n} was sent {_shape(request.messages)}; expected "
                             f"{want[n - 1]}: pass the loop the whole transcript, h.messages, "
                             "and send the model that list as it stands, earlier runs included.")
            self.assertEqual(request.tools, specs,
                             f"Model call {n} was sent the tool specs "
                             f"{[t.get('name') if isinstance(t, dict) else t for t in request.tools]}"
                             "; expected tool_specs(tools): the edit tool's name, description "
                             "and parameters.")

    def test_failure_asks_nobody(self):
        """A reply that fails ends the run without asking for steering or follow-ups: both stay queued, and the next prompt's run takes them, steering with the prompt, the follow-up at its end."""
        model = lab.ScriptedModel([lab.provider_error("503"), lab.say("Back."), lab.say("Ok.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        typed = []

        def on_event(event):             # the user types once, while the first call is made
            if event["type"] == "turn_start" and not typed:
                typed.append(True)
                h.steer("Keep it short.")
                h.follow_up("Are you there?")
        self._drive(lambda: h.prompt("Hi"), on_event, sofar=lambda: h.messages)
        self.assertEqual(_shape(h.messages), "U A!",
                         "After a failed reply the run should end as it is, U A!; it went on to "
                         f"{_shape(h.messages)}: something was asked for after the failure.")
        self._drive(lambda: h.prompt("Hello again."), sofar=lambda: h.messages)
        expected = ["Hi", "Hello again.", "Keep it short.", "Are you there?"]
        self.assertEqual(_users(h.messages), expected,
                         f"The next run should take both: the user messages should be {expected}; "
                         f"they are {_users(h.messages)}.")
        self.assertEqual(_shape(h.messages), "U A! U U A U A",
                         f"Expected U A! U U A U A, got {_shape(h.messages)}.")

    def test_two_queues(self):
        """Steering and follow-ups wait in two queues: queued while idle, the follow-up first, the steering still goes in with the next prompt and the follow-up only at that run's end."""
        model = lab.ScriptedModel([lab.say("Spaces."), lab.say("Tests pass.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        h.follow_up("Then run the tests.")
        h.steer("Use spaces.")
        self._drive(lambda: h.prompt("Indent a.py."), sofar=lambda: h.messages)
        expected = ["Indent a.py.", "Use spaces.", "Then run the tests."]
        self.assertEqual(_users(h.messages), expected,
                         f"The user messages should be {expected}; they are {_users(h.messages)}. "
                         "Keep two queues, each drained by its own function: steering is asked "
                         "for with the prompt, follow-ups only when the run would end.")
        self.assertEqual(_shape(h.messages), "U U A U A",
                         f"Expected U U A U A, got {_shape(h.messages)}.")

    def test_brake_across_follow_ups(self):
        """Lesson 5's brake counts every turn of the run, follow-ups included: with max_turns=2, a follow-up's turn that asks for a tool ends the run at turn 3, after two model calls, and a follow-up still queued waits for the next run."""
        ping = lab.call("ping", {}, id="p1")
        model = lab.ScriptedModel([lab.say("One."), lab.reply(ping), lab.say("Two."),
                                   lab.say("Three.")])
        h = harness.Harness(model, harness.SYSTEM, [_tool("ping")], max_turns=2)
        h.follow_up("Go on.")
        h.follow_up("And then?")
        self._drive(lambda: h.prompt("Start."), sofar=lambda: h.messages)
        self.assertEqual((len(model.calls), _shape(h.messages)), (2, "U A U A[p1] R(p1) A!"),
                         f"With max_turns=2 the run made {len(model.calls)} model call(s) and "
                         f"left {_shape(h.messages)}; expected 2 and U A U A[p1] R(p1) A!. Count "
                         "turns across the whole run, follow-ups included, never per follow-up, "
                         "and pass max_turns on to run_agent.")
        last = h.messages[-1]
        self.assertEqual(last.get("error_message"), "Agent stopped after max_turns=2",
                         f"The run should end on the turn limit's message; it ended on "
                         f"{lab.show([last])}.")
        self._drive(lambda: h.prompt("Again."), sofar=lambda: h.messages)
        expected = ["Start.", "Go on.", "Again.", "And then?"]
        self.assertEqual(_users(h.messages), expected,
                         f"The user messages should be {expected}; they are {_users(h.messages)}: "
                         "the turn limit's stop is a failed reply, after which nobody is asked, "
                         "and the follow-up left in the queue goes at the end of the next run.")

    def test_tool_failures_still_results(self):
        """Lessons 4 and 5 hold in the rewritten loop: a tool that raises becomes a result marked is_error, with the error's words, and the run goes on; a failed reply that holds a call runs no tool; an exception from model.complete reaches the caller."""
        def broken(arguments):
            raise ValueError("disk on fire")
        tool = {"name": "edit", "description": "Breaks.",
                "parameters": {"type": "object", "properties": {}}, "execute": broken}
        model = lab.ScriptedModel([lab.reply(lab.call("edit", {}, id="e1")), lab.say("It broke.")])
        h = harness.Harness(model, harness.SYSTEM, [tool])
        self._drive(lambda: h.prompt("Edit."), sofar=lambda: h.messages)
        result = h.messages[2] if len(h.messages) > 2 else {}
        self.assertEqual((result.get("is_error"), result.get("content"), _shape(h.messages)),
                         (True, "disk on fire", "U A[e1] R(e1) A"),
                         "A tool that raises should become a toolResult with is_error True and "
                         f"the words 'disk on fire', and the run go on; got {lab.show(h.messages)}. "
                         "Run every call through run_tool.")
        runs = []
        failed = dict(lab.reply(lab.call("edit", {}, id="e1")), stop_reason="error",
                      error_message="cut off")
        h = harness.Harness(lab.ScriptedModel([failed]), harness.SYSTEM,
                            [_tool("edit", lambda: runs.append(1))])
        self._drive(lambda: h.prompt("Edit."), sofar=lambda: h.messages,
                    exhausted="A failed reply that holds a call had its call run, and the model "
                              "was asked again: none of a failed reply is acted on.")
        self.assertEqual((runs, _shape(h.messages)), ([], "U A![e1]"),
                         f"A failed reply that holds a call ran the tool {len(runs)} time(s) and "
                         f"left {_shape(h.messages)}; expected no tool run and U A![e1]: none of "
                         "a failed reply is acted on.")
        messages = []
        model = lab.ScriptedModel([lab.raises(ConnectionError("connection reset"))])
        try:
            lab.drive(harness.run_agent(model, harness.SYSTEM, messages, [], "Go."))
        except ConnectionError:
            pass
        except Exception as error:
            self.fail(f"When model.complete raised ConnectionError, the run raised "
                      f"{type(error).__name__}: {error} instead.")
        else:
            self.fail("When model.complete raised ConnectionError, the run ended quietly with "
                      f"{_shape(messages)}; expected the exception to reach the caller, as in "
                      "lesson 5.")

    def test_loop_asks_callables(self):
        """run_agent itself takes get_steering and get_follow_ups, functions that return lists of user messages, and works with either or both left out."""
        def once(text):
            given = []

            def get():
                given.append(text)
                return [harness.user_message(text)] if len(given) == 1 else []
            return get
        cases = [("only get_follow_ups", {"get_follow_ups": once("And then?")}, "U A U A"),
                 ("only get_steering", {"get_steering": once("Use spaces.")}, "U U A"),
                 ("neither", {}, "U A")]
        for label, given, expected in cases:
            messages = []
            model = lab.ScriptedModel([lab.say("One."), lab.say("Two.")])
            self._drive(lambda: harness.run_agent(model, harness.SYSTEM, messages, [], "Go.",
                                                  **given), sofar=lambda: messages)
            self.assertEqual(_shape(messages), expected,
                             f"run_agent with {label}: expected {expected}, got {_shape(messages)}.")

    def test_ask_order(self):
        """With one follow-up and no steering, the loop asks: steering with the prompt; steering, then follow-ups, after the first turn's turn_end has been yielded; steering, then follow-ups, after the second turn's turn_end; and the run ends."""
        asked = []                       # the asks and the turn_end events, in the order they happen

        def get_steering():
            asked.append("steering")
            return []

        def get_follow_ups():
            asked.append("follow_ups")
            return [harness.user_message("And then?")] if asked.count("follow_ups") == 1 else []

        def on_event(event):
            if event["type"] == "turn_end":
                asked.append("turn_end")
        messages = []
        model = lab.ScriptedModel([lab.say("One."), lab.say("Two.")])
        self._drive(lambda: harness.run_agent(model, harness.SYSTEM, messages, [], "Go.",
                                              get_steering=get_steering,
                                              get_follow_ups=get_follow_ups),
                    on_event, sofar=lambda: messages)
        expected = ["steering", "turn_end", "steering", "follow_ups",
                    "turn_end", "steering", "follow_ups"]
        asks = [a for a in asked if a != "turn_end"]
        self.assertEqual(asks, [a for a in expected if a != "turn_end"],
                         f"The loop should ask {[a for a in expected if a != 'turn_end']}; it "
                         f"asked {asks}.")
        self.assertEqual(asked, expected,
                         f"With the turn_end events, the loop should go {expected}; it went "
                         f"{asked}. Ask for steering only after the turn's turn_end has been "
                         "yielded: a frontend that steers when it sees turn_end must have its "
                         "message taken in the same run.")
        self.assertEqual(_shape(messages), "U A U A", f"Expected U A U A, got {_shape(messages)}.")

    def test_keeps_the_loop_rules(self):
        """The rewritten run_agent keeps the earlier lessons' rules: agent_start, turn_start, turn_end and agent_end (with the run's messages) frame the run and each turn, each tool call's start and end are announced; a missing tool gets an is_error result; max_turns stops before the extra call; after a failed reply no tool runs and nobody is asked for more; the model's exception reaches the caller."""
        lab.keeps_loop_rules(self, harness)

    def test_keeps_the_harness_rules(self):
        """The rewritten Harness keeps lesson 8's rules: prompt() during a run raises RuntimeError("already running; use steer() or follow_up()") and queues nothing; is_running is True from prompt() until the run ends; steer() and follow_up() queue the user's words for the loop."""
        lab.keeps_harness_rules(self, harness, listeners=False)


if __name__ == "__main__":
    unittest.main()
