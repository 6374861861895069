"""Lesson 05's lab tests: the brakes (point 5.1).

Lab1 checks error_message, max_turns and a provider failure: each way a run can stop is written
into the record as the last message, and never raised. Each test's docstring is its checklist line
on the page, word for word; the tests run in the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 5 tests.py
"""
import unittest

import harness
import lab

LESSON = 5


def _counter(runs):
    def execute(arguments):
        runs.append(arguments)
        return f"ran {len(runs)}"
    return {"name": "step", "description": "Take one more step.",
            "parameters": {"type": "object", "properties": {}}, "execute": execute}


def _runaway(request):
    """A model that never stops asking: one more step, every time."""
    n = sum(1 for m in request.messages if m["role"] == "assistant"
            for block in m["content"] if block["type"] == "toolCall")
    return lab.reply(lab.call("step", {}, id=f"s{n + 1}"))


def _run(model, tools, prompt="Go.", messages=None, **options):
    messages = [] if messages is None else messages
    lab.drive(harness.run_agent(model, harness.SYSTEM, messages, tools, prompt, **options))
    return messages


class Lab1(unittest.TestCase):

    def test_error_message(self):
        """error_message("Agent stopped") is {"role": "assistant", "content": [], "stop_reason": "error", "error_message": "Agent stopped"}."""
        self.assertEqual(harness.error_message("Agent stopped"),
                         {"role": "assistant", "content": [], "stop_reason": "error",
                          "error_message": "Agent stopped"})

    def test_max_turns_stops_a_runaway(self):
        """With max_turns=3 and a model that never stops asking, the model is called exactly 3 times, every call gets its result, and the last message is error_message("Agent stopped after max_turns=3")."""
        runs = []
        model = lab.ScriptedModel([_runaway] * 5)
        messages = _run(model, [_counter(runs)], max_turns=3)
        self.assertEqual(len(model.calls), 3, f"the model was called {len(model.calls)} times")
        self.assertEqual(lab.shape(messages), "U A[s1] R(s1) A[s2] R(s2) A[s3] R(s3) A!")
        self.assertEqual(messages[-1], harness.error_message("Agent stopped after max_turns=3"))
        self.assertEqual(len(runs), 3)

    def test_checked_before_the_call(self):
        """max_turns=1 makes one model call and runs its tool, and then the stop is written instead of a second call: the brake is checked before the call, never after."""
        runs = []
        model = lab.ScriptedModel([_runaway] * 5)
        messages = _run(model, [_counter(runs)], max_turns=1)
        self.assertEqual(lab.shape(messages), "U A[s1] R(s1) A!")
        self.assertEqual(len(model.calls), 1)

    def test_no_limit_by_default(self):
        """Without max_turns a run goes on as long as the model asks: 30 rounds of tools, then the answer, and nothing is marked failed."""
        runs = []
        model = lab.ScriptedModel([_runaway] * 30 + [lab.say("Done.")])
        messages = _run(model, [_counter(runs)])
        self.assertEqual(len(runs), 30)
        self.assertEqual(lab.show(messages[-1:]), 'assistant -> "Done."')
        self.assertNotEqual(messages[-1].get("stop_reason"), "error")

    def test_provider_failure_is_recorded(self):
        """A provider that falls over (lab.provider_error("503 overloaded")) ends the run with no exception, and its failed reply is the last message of the record."""
        model = lab.ScriptedModel([lab.provider_error("503 overloaded"), lab.say("Unreached.")])
        messages = _run(model, [])
        self.assertEqual(lab.shape(messages), "U A!")
        self.assertEqual(messages[-1]["error_message"], "503 overloaded")
        self.assertEqual(len(model.calls), 1, "after a failed reply nobody calls the model again")

    def test_failed_reply_not_acted_on(self):
        """A failed reply that still holds a tool call has none of it acted on: the tool never runs, and the run ends on that reply."""
        runs = []
        broken = {**lab.reply(lab.call("step", {}, id="s1")), "stop_reason": "error",
                  "error_message": "stream cut off"}
        model = lab.ScriptedModel([broken, lab.say("Unreached.")])
        messages = _run(model, [_counter(runs)])
        self.assertEqual(runs, [], "the tool ran for a reply that failed")
        self.assertEqual(lab.shape(messages), "U A![s1]")

    def test_stops_after_what_came_before(self):
        """A run that is stopped keeps everything said before it, and the next run carries on from the stop on the same list."""
        runs = []
        messages = [lab.user("Hi"), lab.say("Hello.")]
        _run(lab.ScriptedModel([_runaway] * 3), [_counter(runs)], messages=messages, max_turns=1)
        self.assertEqual(lab.shape(messages), "U A U A[s1] R(s1) A!")
        model = lab.ScriptedModel([lab.say("Carrying on.")])
        _run(model, [_counter(runs)], "Carry on.", messages=messages)
        self.assertEqual(lab.shape(messages), "U A U A[s1] R(s1) A! U A")


if __name__ == "__main__":
    unittest.main()
