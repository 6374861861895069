"""Lesson 03's lab tests: the loop (point 3.1).

Lab1 checks run_agent: the prompt, then model calls and tool results turn by turn, until a reply
asks for nothing, all of it on the caller's list and all of it sent on every call. Each test's
docstring is its checklist line on the page, word for word; the tests run in the order they are
written.

    python lab/lab_check.py --harness harness.py --lesson 3 tests.py

The run is consumed with lab.drive, which takes it to its end whatever run_agent returns, so
later lessons (where run_agent becomes a generator of events) pass these tests too.
"""
import unittest

import harness
import lab

LESSON = 3
FILES = {"a.py": "A = 1\n", "b.py": "B = 2\n", "c.py": "C = 3\n"}
JOB = "Write a.py, b.py and c.py."


def _writer(request):
    """The three-file job's model: one write per turn, going only by the transcript it is sent.
    A file is done if the transcript holds a write call for it."""
    done = [block["arguments"]["path"]
            for m in request.messages if m["role"] == "assistant"
            for block in m["content"] if block["type"] == "toolCall"]
    todo = [path for path in FILES if path not in done]
    if not todo:
        return lab.say("All three files are written.")
    return lab.reply(lab.call("write", {"path": todo[0], "content": FILES[todo[0]]},
                              id=f"w{len(done) + 1}"))


def _tool(name, runs):
    """A tool that answers f"{name} {arguments}" and notes each of its calls' ids in `runs`."""
    def execute(arguments):
        runs.append(name)
        return f"{name} {sorted(arguments.items())}"
    return {"name": name, "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": {}}, "execute": execute}


def _run(model, messages, tools, prompt):
    lab.drive(harness.run_agent(model, harness.SYSTEM, messages, tools, prompt))


def _shape(messages):
    return lab.shape(list(messages)) or "(nothing)"


class Lab1(unittest.TestCase):

    def test_answer_ends_the_run(self):
        """A first reply that asks for nothing ends the run: your list holds the prompt and that reply, and the model was called once."""
        model = lab.ScriptedModel([lab.say("Hello.")])
        messages = []
        _run(model, messages, [], "Hi")
        self.assertEqual(_shape(messages), "U A")
        self.assertEqual(messages[0], harness.user_message("Hi"))
        self.assertEqual(len(model.calls), 1)

    def test_three_rounds_then_an_answer(self):
        """The three-file job runs to the end in one call of run_agent: a.py, b.py and c.py are on the disk, and the transcript is U A[w1] R(w1) A[w2] R(w2) A[w3] R(w3) A."""
        ws = lab.Workspace()
        model = lab.ScriptedModel([_writer] * 6)   # a loop that never ends fails, not hangs
        messages = []
        _run(model, messages, [harness.make_write_tool(ws)], JOB)
        self.assertEqual(_shape(messages), "U A[w1] R(w1) A[w2] R(w2) A[w3] R(w3) A",
                         "the loop should go on until a reply asks for no tools; a loop that "
                         "stops after one round of tools leaves the job unfinished")
        self.assertEqual(sorted(path for path in FILES if ws.exists(path)), sorted(FILES))
        self.assertEqual(len(model.calls), 4)

    def test_every_call_sent_everything(self):
        """Every model call is sent the whole transcript so far, from the prompt on, with the tools' specs: call 3 of the job is sent all five messages before it."""
        ws = lab.Workspace()
        model = lab.ScriptedModel([_writer] * 6)   # a loop that never ends fails, not hangs
        messages = []
        tools = [harness.make_write_tool(ws)]
        _run(model, messages, tools, JOB)
        for number, request in enumerate(model.calls, 1):
            self.assertEqual(request.messages, messages[:2 * number - 1],
                             f"call {number} should be sent {_shape(messages[:2 * number - 1])}; "
                             f"it was sent {_shape(request.messages)}. The model keeps nothing: "
                             "send the whole list, not only what is new")
            self.assertEqual(request.system, harness.SYSTEM)
            self.assertEqual(request.tools, harness.tool_specs(tools))

    def test_results_before_the_next_call(self):
        """Two calls in one reply get two results, in the order asked, both before the model is asked again."""
        runs = []
        first, second = lab.call("clock", {}, id="c1"), lab.call("echo", {"n": 1}, id="c2")
        model = lab.ScriptedModel([lab.reply(first, second), lab.say("Done.")])
        messages = []
        _run(model, messages, [_tool("clock", runs), _tool("echo", runs)], "Go.")
        self.assertEqual(_shape(messages), "U A[c1,c2] R(c1) R(c2) A")
        self.assertEqual(runs, ["clock", "echo"])
        self.assertEqual(_shape(model.calls[1].messages), "U A[c1,c2] R(c1) R(c2)")

    def test_the_callers_list(self):
        """The messages go on the list you passed: what it held before the run stays first, untouched, is sent to the model, and run_agent keeps no list of its own."""
        earlier = [lab.user("My name is Ada."), lab.say("Nice to meet you, Ada.")]
        messages = list(earlier)
        model = lab.ScriptedModel([lab.forgetful(), lab.forgetful()])
        _run(model, messages, [], "What is my name?")
        self.assertEqual(messages[:2], earlier)
        self.assertTrue(messages[0] is earlier[0] and messages[1] is earlier[1])
        self.assertEqual(lab.show(messages[-1:]), 'assistant -> "Your name is Ada."')
        fresh = []
        _run(model, fresh, [], "What is my name?")
        self.assertEqual(lab.show(fresh), 'user -> "What is my name?"\n'
                                          'assistant -> "I don\'t know your name."',
                         "a new list is a new conversation: nothing of the last run may leak in")

    def test_valid_transcript(self):
        """At the end of a run with calls, lab.validate finds nothing wrong with your list: every call is answered by its result, right after it."""
        runs = []
        calls = [lab.call("echo", {"n": n}, id=f"c{n}") for n in range(1, 4)]
        model = lab.ScriptedModel([lab.reply(calls[0]), lab.reply(lab.text("Two more."),
                                   calls[1], calls[2]), lab.say("Done.")])
        messages = []
        _run(model, messages, [_tool("echo", runs)], "Count to three.")
        self.assertEqual(lab.validate(messages), [])
        self.assertEqual(_shape(messages), "U A[c1] R(c1) A[c2,c3] R(c2) R(c3) A")


if __name__ == "__main__":
    unittest.main()
