"""Lesson 08's lab tests: one writer (point 8.1).

Lab1 checks Harness: it owns the transcript, shows it as a snapshot, and lets one run at a time
write to it, refusing a second prompt on the caller's own line. Each test's docstring is its
checklist line on the page, word for word; the tests run in the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 8 tests.py
"""
import unittest

import harness
import lab

LESSON = 8


def _harness(steps, messages=(), **options):
    model = lab.ScriptedModel(steps)
    return harness.Harness(model, harness.SYSTEM, [], messages=messages, **options), model


class Lab1(unittest.TestCase):

    def test_prompt_runs(self):
        """h.prompt("Hi") returns the run; pulled to its end it yields agent_start ... agent_end, and h.messages then holds the prompt and the reply."""
        h, _ = _harness([lab.say("Hello.")])
        events = lab.drive(h.prompt("Hi"))
        self.assertEqual((events[0]["type"], events[-1]["type"]), ("agent_start", "agent_end"))
        self.assertEqual(lab.show(h.messages), 'user -> "Hi"\nassistant -> "Hello."')

    def test_messages_is_a_snapshot(self):
        """h.messages is a tuple: nobody can append to it, and a snapshot you hold does not change when a later run adds to the transcript."""
        h, _ = _harness([lab.say("Hello."), lab.say("Again.")])
        lab.drive(h.prompt("Hi"))
        snapshot = h.messages
        self.assertIsInstance(snapshot, tuple)
        lab.drive(h.prompt("Once more"))
        self.assertEqual((len(snapshot), len(h.messages)), (2, 4))

    def test_messages_copied_in(self):
        """The list given as messages= is copied: appending to it later changes nothing in the harness, and the harness's runs do not grow it."""
        given = [lab.user("My name is Ada."), lab.say("Nice to meet you, Ada.")]
        h, model = _harness([lab.forgetful()], messages=given)
        given.append(lab.user("My name is Bob."))
        lab.drive(h.prompt("What is my name?"))
        self.assertEqual(len(given), 3, "the caller's list grew: the harness should keep its own")
        self.assertEqual(lab.show(h.messages[-1:]), 'assistant -> "Your name is Ada."')
        self.assertEqual(len(model.calls[0].messages), 3)

    def test_one_transcript_across_runs(self):
        """Two prompts in a row continue one transcript: the second run's model call is sent the first exchange too."""
        h, model = _harness([lab.forgetful(), lab.forgetful()])
        lab.drive(h.prompt("My name is Ada."))
        lab.drive(h.prompt("What is my name?"))
        self.assertEqual(lab.shape(model.calls[1].messages), "U A U")
        self.assertEqual(lab.show(h.messages[-1:]), 'assistant -> "Your name is Ada."')

    def test_is_running(self):
        """is_running is False before a prompt, True from the call of prompt() before anything is pulled, and False again once the run is exhausted."""
        h, _ = _harness([lab.say("Hello.")])
        self.assertFalse(h.is_running)
        run = h.prompt("Hi")
        self.assertTrue(h.is_running, "the run exists from the call of prompt(): is_running "
                                      "should be True before the first event is pulled")
        lab.drive(run)
        self.assertFalse(h.is_running)

    def test_second_prompt_refused_at_once(self):
        """While a run is going on, a second prompt() raises RuntimeError("already running...") on the line that calls it, before anything is pulled, and the first run goes on unharmed."""
        h, _ = _harness([lab.say("Hello.")])
        first = h.prompt("Hi")
        with self.assertRaises(RuntimeError, msg="prompt() should raise on its own line; a "
                                                 "generator would raise only at next()") as caught:
            h.prompt("Me too")
        self.assertTrue(str(caught.exception).startswith("already running"),
                        str(caught.exception))
        lab.drive(first)
        self.assertEqual(lab.shape(h.messages), "U A")

    def test_max_turns_passed_on(self):
        """Harness(..., max_turns=1) hands max_turns to the loop: a model that never stops asking is stopped after one call."""
        call = lab.call("ping", {}, id="p1")
        tool = {"name": "ping", "description": "pong", "parameters": {"type": "object"},
                "execute": lambda arguments: "pong"}
        model = lab.ScriptedModel([lab.reply(call)] * 3)
        h = harness.Harness(model, harness.SYSTEM, [tool], max_turns=1)
        lab.drive(h.prompt("Go."))
        self.assertEqual((lab.shape(h.messages), len(model.calls)), ("U A[p1] R(p1) A!", 1))


if __name__ == "__main__":
    unittest.main()
