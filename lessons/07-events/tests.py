"""Lesson 07's lab tests: events and renderers (point 7.1).

Lab1 checks run_agent as a generator of events (balanced pairs, mutate then announce) and
FinalTextRenderer, a frontend that is a fold over those events. Each test's docstring is its
checklist line on the page, word for word; the tests run in the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 7 tests.py
"""
import contextlib
import inspect
import io
import unittest

import harness
import lab

LESSON = 7


def _echo(runs):
    def execute(arguments):
        runs.append(arguments)
        return "pong"
    return {"name": "ping", "description": "Answers pong.",
            "parameters": {"type": "object", "properties": {}}, "execute": execute}


def _types(events):
    return [event["type"] for event in events]


def _one_call_run(messages=None):
    """A run of one tool call and an answer, and what it needs: (run, messages, model, call)."""
    call = lab.call("ping", {}, id="p1")
    model = lab.ScriptedModel([lab.reply(call), lab.say("It said pong.")])
    messages = [] if messages is None else messages
    run = harness.run_agent(model, harness.SYSTEM, messages, [_echo([])], "Ping it.")
    return run, messages, model, call


def _printed(function, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        value = function(*args)
    return value, out.getvalue()


class Lab1(unittest.TestCase):

    def test_a_generator(self):
        """run_agent returns a generator, and calling it does nothing yet: no model call, nothing appended, until the first event is pulled."""
        run, messages, model, _ = _one_call_run()
        self.assertTrue(inspect.isgenerator(run), "run_agent should be a generator function: "
                                                  "it yields its events")
        self.assertEqual((len(model.calls), messages), (0, []))
        self.assertEqual(next(run), {"type": "agent_start"})

    def test_event_order(self):
        """A run with one call yields agent_start, turn_start, message_end (prompt), message_end (reply), tool_execution_start, message_end (result), tool_execution_end, turn_end, turn_start, message_end, turn_end, agent_end."""
        run, messages, _, _ = _one_call_run()
        self.assertEqual(_types(lab.drive(run)), [
            "agent_start", "turn_start", "message_end", "message_end", "tool_execution_start",
            "message_end", "tool_execution_end", "turn_end", "turn_start", "message_end",
            "turn_end", "agent_end"])

    def test_event_contents(self):
        """Each event carries what it announces: message_end its message, the tool events the call (and the end its result), turn_end the turn's reply, agent_end this run's messages."""
        earlier = [lab.user("Hi"), lab.say("Hello.")]
        run, messages, _, call = _one_call_run(list(earlier))
        events = lab.drive(run)
        ends = [e["message"] for e in events if e["type"] == "message_end"]
        self.assertEqual(ends, messages[2:])
        self.assertTrue(all(a is b for a, b in zip(ends, messages[2:])))
        start, end = events[4], events[6]
        self.assertEqual((start["call"], end["call"], end["result"]), (call, call, messages[4]))
        self.assertIs(events[7]["message"], messages[3])
        self.assertIs(events[10]["message"], messages[5])
        self.assertEqual(events[-1]["messages"], messages[2:],
                         "agent_end's messages are this run's, not the earlier history")

    def test_mutate_then_announce(self):
        """At every message_end the message is already the last of your list: the record changes first, then the event says so."""
        run, messages, _, _ = _one_call_run()
        for event in run:
            if event["type"] == "message_end":
                self.assertTrue(messages and messages[-1] is event["message"],
                                f"message_end for {lab.show([event['message']])} came before "
                                "the message was on the list")

    def test_every_exit_balanced(self):
        """A max_turns stop and a provider error still end turn_end, agent_end, with one turn_end for every turn_start."""
        runaway = lab.reply(lab.call("ping", {}, id="p1"))
        for model, options in ((lab.ScriptedModel([runaway] * 3), {"max_turns": 1}),
                               (lab.ScriptedModel([lab.provider_error("503")]), {})):
            events = lab.drive(harness.run_agent(model, harness.SYSTEM, [], [_echo([])], "Go.",
                                                 **options))
            types = _types(events)
            self.assertEqual(types[-2:], ["turn_end", "agent_end"], types)
            self.assertEqual(types.count("turn_start"), types.count("turn_end"), types)
            self.assertEqual(events[-1]["messages"][-1]["stop_reason"], "error")

    def test_final_text_renderer(self):
        """FinalTextRenderer prints nothing while rendering a run, then finish() prints "It said pong." and returns True."""
        run, _, _, _ = _one_call_run()
        frontend = harness.FinalTextRenderer()
        _, during = _printed(lambda: [frontend.render(event) for event in run])
        self.assertEqual(during, "", "nothing should be printed while the run goes on")
        ok, printed = _printed(frontend.finish)
        self.assertEqual((printed, ok), ("It said pong.\n", True))

    def test_final_text_renderer_on_failure(self):
        """After a run that failed, finish() prints "Error: 503 overloaded" and returns False; with no assistant message at all it prints nothing and returns False."""
        model = lab.ScriptedModel([lab.provider_error("503 overloaded")])
        frontend = harness.FinalTextRenderer()
        for event in harness.run_agent(model, harness.SYSTEM, [], [], "Hi"):
            frontend.render(event)
        ok, printed = _printed(frontend.finish)
        self.assertEqual((printed, ok), ("Error: 503 overloaded\n", False))
        ok, printed = _printed(harness.FinalTextRenderer().finish)
        self.assertEqual((printed, ok), ("", False))

    def test_json_renderer_beside_it(self):
        """The same kind of run through JsonRenderer prints one JSON line per event, 12 lines, and finish() returns True."""
        run, _, _, _ = _one_call_run()
        frontend = harness.JsonRenderer()
        _, printed = _printed(lambda: [frontend.render(event) for event in run])
        self.assertEqual(len(printed.splitlines()), 12)
        self.assertTrue(frontend.finish())


if __name__ == "__main__":
    unittest.main()
