"""Lesson 10's lab tests: the record is not the view (point 10.1).

Lab1 checks repair_tool_history and context_for_model, which build for every request a transcript
a provider accepts without changing the record, and Harness._run's try/finally, which leaves the
harness idle however a run ends. Each test's docstring is its checklist line on the page, word for
word; the tests run in the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 10 tests.py
"""
import copy
import unittest

import harness
import lab

LESSON = 10


def _tool(name, answer="done"):
    return {"name": name, "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": {}},
            "execute": lambda arguments: answer}


class Lab1(unittest.TestCase):

    def test_valid_comes_back_equal(self):
        """repair_tool_history of a valid transcript is equal to it: a new list, holding the very same message objects."""
        read = lab.call("read", {"path": "config.py"}, id="c1")
        messages = [lab.user("Which port?"), lab.reply(read), lab.tool_result(read, "PORT = 9090\n"),
                    lab.say("9090.")]
        view = harness.repair_tool_history(messages)
        self.assertEqual(view, messages)
        self.assertIsNot(view, messages, "return a new list: the caller's is the record")
        self.assertTrue(all(a is b for a, b in zip(view, messages)), "the same dicts, not copies")

    def test_missing_result_interrupted(self):
        """A call with no result gets one right after it, a toolResult with its id and name, content INTERRUPTED and is_error True, and the record is not changed."""
        pytest_call = lab.call("bash", {"command": "pytest"}, id="c1")
        record = [lab.user("Run the tests."), lab.reply(lab.text("Running them."), pytest_call),
                  lab.user("Are you still there?")]
        before = copy.deepcopy(record)
        view = harness.repair_tool_history(record)
        self.assertEqual(lab.shape(view), "U A[c1] R(c1) U")
        self.assertEqual(view[2], {"role": "toolResult", "tool_call_id": "c1", "tool_name": "bash",
                                   "content": harness.INTERRUPTED, "is_error": True})
        self.assertEqual(record, before)
        self.assertTrue(harness.INTERRUPTED.startswith("Tool call interrupted: no result"))

    def test_results_put_in_place(self):
        """A result recorded out of place is moved to just after its call, in call order; of two results for one call the first wins; a result whose call is nowhere is dropped."""
        a, b = lab.call("t", {"n": 1}, id="a"), lab.call("t", {"n": 2}, id="b")
        first_b, second_b = lab.tool_result(b, "b first"), lab.tool_result(b, "b again")
        stray = lab.tool_result(lab.call("t", {}, id="zz"), "orphan")
        ra = lab.tool_result(a, "a")
        record = [lab.user("Go."), stray, lab.reply(a, b), first_b, lab.user("Hurry."), ra,
                  second_b, lab.say("Done.")]
        view = harness.repair_tool_history(record)
        self.assertEqual(lab.shape(view), "U A[a,b] R(a) R(b) U A")
        self.assertTrue(view[2] is ra and view[3] is first_b)

    def test_idempotent(self):
        """Repairing twice gives what repairing once gave."""
        c = lab.call("t", {}, id="c1")
        record = [lab.user("Go."), lab.reply(c, lab.call("t", {"n": 2}), ), lab.user("Stop.")]
        once = harness.repair_tool_history(record)
        self.assertEqual(harness.repair_tool_history(once), once)

    def test_context_for_model(self):
        """context_for_model leaves out a failed, empty assistant message, keeps a failed one that got words out, pairs calls with results, and never changes the record."""
        partial = {**lab.say("Half an ans"), "stop_reason": "error", "error_message": "cut off"}
        record = [lab.user("Hi"), lab.provider_error("503"), lab.user("Hi?"), partial,
                  lab.user("Again?"), lab.reply(lab.call("t", {}, id="c1"))]
        before = copy.deepcopy(record)
        view = harness.context_for_model(record)
        self.assertEqual(lab.shape(view), "U U A! U A[c1] R(c1)")
        self.assertIs(view[2], partial)
        self.assertEqual(record, before)

    def test_sent_the_view(self):
        """After a run closed mid-call, the next prompt's model call is sent INTERRUPTED for the dangling call, the model's answer follows, and the record still holds no made-up result."""
        call = lab.call("bash", {"command": "pytest"}, id="c1")
        model = lab.ScriptedModel([lab.reply(call), lab.say("I can't tell whether it ran.")],
                                  check=True)
        h = harness.Harness(model, harness.SYSTEM, [_tool("bash")])
        run = h.prompt("Run the tests.")
        for event in run:
            if event["type"] == "tool_execution_start":
                run.close()              # Ctrl-C: the consumer walks away mid-call
                break
        self.assertEqual(lab.shape(h.messages), "U A[c1]")
        lab.drive(h.prompt("Are you still there?"))
        sent = model.calls[1].messages
        self.assertEqual(lab.shape(sent), "U A[c1] R(c1) U")
        self.assertEqual(sent[2]["content"], harness.INTERRUPTED)
        self.assertEqual(lab.shape(h.messages), "U A[c1] U A")

    def test_closed_at_any_event(self):
        """A consumer that closes the run after any number of events leaves the harness idle: is_running is False, and the next prompt is answered from a valid transcript."""
        call = lab.call("t", {}, id="c1")

        def step(request):
            last = request.messages[-1]
            if last["role"] == "user":
                return lab.say("Still here.") if last["content"] == "Hello?" else lab.reply(call)
            return lab.say("Done.")
        total = len(lab.drive(harness.Harness(lab.ScriptedModel([lab.forever(step)]),
                                              harness.SYSTEM, [_tool("t")]).prompt("Go.")))
        for k in range(1, total + 1):
            h = harness.Harness(lab.ScriptedModel([lab.forever(step)], check=True),
                                harness.SYSTEM, [_tool("t")])
            run = h.prompt("Go.")
            for _ in range(k):
                next(run)
            run.close()
            self.assertFalse(h.is_running, f"closed after {k} events, the harness still says "
                                           "it is running")
            lab.drive(h.prompt("Hello?"))
            self.assertEqual(lab.show(h.messages[-1:]), 'assistant -> "Still here."',
                             f"closed after {k} events, then prompted: the model was sent an "
                             "invalid transcript, or nothing")

    def test_a_run_that_dies(self):
        """A run that dies of an exception (the model's connection drops) passes it to the consumer and leaves the harness idle, ready for the next prompt."""
        model = lab.ScriptedModel([lab.raises(ConnectionError("connection reset")),
                                   lab.say("Back.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        with self.assertRaises(ConnectionError):
            lab.drive(h.prompt("Hi"))
        self.assertFalse(h.is_running)
        lab.drive(h.prompt("Hi again"))
        self.assertEqual(lab.show(h.messages[-1:]), 'assistant -> "Back."')


if __name__ == "__main__":
    unittest.main()
