"""Lesson 09's lab tests: steering and follow-ups (point 9.1).

Lab1 checks that what the user says during a run waits in a queue and reaches the transcript only
where a user message keeps it valid: steering once a turn's tool batch is answered, follow-ups only
when the run would otherwise end. Each test's docstring is its checklist line on the page, word
for word; the tests run in the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 9 tests.py
"""
import unittest

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


def _last_user(request):
    users = [m for m in request.messages if m["role"] == "user"]
    return users[-1]["content"] if users else None


class Lab1(unittest.TestCase):

    def test_steer_while_idle(self):
        """A message steered while no run is going on goes in right after the next prompt, in the first turn, and the first model call is sent both."""
        model = lab.ScriptedModel([lab.say("Tabs it is... spaces, then.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        h.steer("Use spaces.")
        lab.drive(h.prompt("Indent the file."))
        self.assertEqual(lab.show(h.messages),
                         'user -> "Indent the file."\nuser -> "Use spaces."\n'
                         'assistant -> "Tabs it is... spaces, then."')
        self.assertEqual(lab.shape(model.calls[0].messages), "U U")

    def test_steering_waits_for_the_batch(self):
        """Steering sent while the first of two calls runs reaches the model only after both calls have their results, and opens the next turn."""
        calls = [lab.call("edit", {}, id="e1"), lab.call("edit", {}, id="e2")]
        model = lab.ScriptedModel([lab.reply(*calls), lab.say("Switched to spaces.")])
        harnesses = []

        def steer_once():               # the user types while the first edit runs
            if len(model.calls) == 1 and not h_steered:
                h_steered.append(True)
                harnesses[0].steer("Use spaces.")
        h_steered = []
        h = harness.Harness(model, harness.SYSTEM, [_tool("edit", steer_once)])
        harnesses.append(h)
        lab.drive(h.prompt("Indent both files."))
        self.assertEqual(lab.shape(h.messages), "U A[e1,e2] R(e1) R(e2) U A",
                         "a user message may not come between a call and its result")
        self.assertEqual(lab.shape(model.calls[1].messages), "U A[e1,e2] R(e1) R(e2) U")

    def test_one_message_per_ask(self):
        """Two messages steered at once are handed over one per ask: the first opens the next turn, the second the turn after that."""
        model = lab.ScriptedModel([lab.reply(lab.call("edit", {}, id="e1")), lab.say("One."),
                                   lab.say("Two.")])
        h = harness.Harness(model, harness.SYSTEM, [_tool("edit")])
        run = h.prompt("Start.")
        for event in run:
            if event["type"] == "tool_execution_start":
                h.steer("First.")
                h.steer("Second.")
        self.assertEqual([_last_user(request) for request in model.calls],
                         ["Start.", "First.", "Second."])
        self.assertEqual(lab.shape(h.messages), "U A[e1] R(e1) U A U A")

    def test_follow_up_when_it_would_end(self):
        """A follow-up queued during a run is taken only when the run would otherwise end: the model answers the prompt first, then the follow-up, in the same run."""
        model = lab.ScriptedModel([lab.reply(lab.call("edit", {}, id="e1")),
                                   lab.say("Edited."), lab.say("Tests pass.")])
        h = harness.Harness(model, harness.SYSTEM, [_tool("edit")])
        events = []
        for event in h.prompt("Edit the file."):
            events.append(event)
            if event["type"] == "agent_start":
                h.follow_up("Now run the tests.")
        self.assertEqual(lab.show(h.messages[-3:]), 'assistant -> "Edited."\n'
                         'user -> "Now run the tests."\nassistant -> "Tests pass."')
        self.assertEqual([e["type"] for e in events].count("agent_end"), 1)

    def test_busy_message(self):
        """While a run is going on, prompt() raises RuntimeError("already running; use steer() or follow_up()")."""
        h = harness.Harness(lab.ScriptedModel([lab.say("Hello.")]), harness.SYSTEM, [])
        run = h.prompt("Hi")
        with self.assertRaises(RuntimeError) as caught:
            h.prompt("Hello?")
        self.assertEqual(str(caught.exception), "already running; use steer() or follow_up()")
        lab.drive(run)

    def test_queues_outlive_runs(self):
        """A follow-up queued after a run has ended waits: it is asked for at the end of the next run, after that run's prompt is answered."""
        model = lab.ScriptedModel([lab.say("A."), lab.say("B."), lab.say("C.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        lab.drive(h.prompt("First."))
        h.follow_up("Later.")
        self.assertEqual(len(h.messages), 2, "a queued message is not history yet")
        lab.drive(h.prompt("Second."))
        self.assertEqual([m["content"] for m in h.messages if m["role"] == "user"],
                         ["First.", "Second.", "Later."])

    def test_failure_asks_nobody(self):
        """A reply that fails ends the run without asking for steering or follow-ups: they stay queued, and the next prompt's run takes them."""
        model = lab.ScriptedModel([lab.provider_error("503"), lab.say("Back."), lab.say("Ok.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        run = h.prompt("Hi")
        for event in run:
            if event["type"] == "turn_start":
                h.follow_up("Are you there?")
        self.assertEqual(lab.shape(h.messages), "U A!")
        lab.drive(h.prompt("Hello again."))
        self.assertEqual([m["content"] for m in h.messages if m["role"] == "user"],
                         ["Hi", "Hello again.", "Are you there?"])

    def test_loop_asks_callables(self):
        """run_agent itself takes get_steering and get_follow_ups, functions that return lists of user messages, and works with either or both left out."""
        asked = []

        def follow_ups():
            asked.append("follow_ups")
            return [harness.user_message("And then?")] if asked.count("follow_ups") == 1 else []
        messages = []
        model = lab.ScriptedModel([lab.say("One."), lab.say("Two.")])
        lab.drive(harness.run_agent(model, harness.SYSTEM, messages, [], "Go.",
                                    get_follow_ups=follow_ups))
        self.assertEqual(lab.shape(messages), "U A U A")
        self.assertEqual(asked, ["follow_ups", "follow_ups"])


if __name__ == "__main__":
    unittest.main()
