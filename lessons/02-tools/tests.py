"""Lesson 02's lab tests: hands.

Lab1 checks text_of and tool_calls, which read an assistant message's content blocks (point 2.1).
Lab2 checks tool_specs and run_tool: what the model is told about the tools, and one call in,
exactly one result out (point 2.2). Each test's docstring is its checklist line on the page, word
for word; the tests run in the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 2 tests.py [--lab 1|2]
"""
import copy
import unittest

import harness
import lab

LESSON = 2


def _mixed():
    """A reply that talks, asks for two tools, and talks again: blocks in the order it sent them."""
    read = lab.call("read", {"path": "a.py"}, id="c1")
    grep = lab.call("grep", {"pattern": "PORT"}, id="c2")
    return lab.reply(lab.text("Let me look. "), read, grep, lab.text("Then I will say.")), read, grep


def _counting_tool(name, answer, runs):
    """A tool named `name` that returns `answer` and notes each call's arguments in `runs`."""
    def execute(arguments):
        runs.append((name, arguments))
        return answer
    return {"name": name, "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": {}}, "execute": execute}


class Lab1(unittest.TestCase):

    def test_text_of_one_block(self):
        """text_of a reply with one text block, "Hello.", is "Hello.", and text_of a reply that only asks for a tool is ""."""
        self.assertEqual(harness.text_of(lab.say("Hello.")), "Hello.")
        only_call = lab.reply(lab.call("read", {"path": "a.py"}, id="c1"))
        self.assertEqual(harness.text_of(only_call), "",
                         "a reply with no text blocks has no words: text_of should give \"\"")

    def test_text_of_every_block(self):
        """text_of a reply holding "Let me look. ", two calls and "Then I will say." is "Let me look. Then I will say.": every text block, in order, joined with nothing between."""
        message, _, _ = _mixed()
        self.assertEqual(harness.text_of(message), "Let me look. Then I will say.",
                         "the words are in every block of type \"text\", not only the first "
                         "block, and a call block has no words")

    def test_tool_calls_in_order(self):
        """tool_calls of that reply is its two call blocks, c1 then c2, the very dicts from content; of a reply that only talks, it is []."""
        message, read, grep = _mixed()
        calls = harness.tool_calls(message)
        self.assertEqual(calls, [read, grep], "tool_calls should give the toolCall blocks, in "
                                              f"the order asked; it gave {calls!r}")
        self.assertTrue(calls[0] is message["content"][1] and calls[1] is message["content"][2],
                        "give the blocks themselves, not copies or rebuilt dicts")
        self.assertEqual(harness.tool_calls(lab.say("Done.")), [])

    def test_plain_dict_message(self):
        """A reply typed by hand as a plain dict, with only role, content and stop_reason, works with both: nothing reads a key that the message does not have."""
        message = {"role": "assistant", "stop_reason": "toolUse", "content": [
            {"type": "toolCall", "id": "x1", "name": "write", "arguments": {"path": "b.py"}},
            {"type": "text", "text": "Writing b.py."}]}
        self.assertEqual(harness.text_of(message), "Writing b.py.")
        self.assertEqual([call["id"] for call in harness.tool_calls(message)], ["x1"],
                         "the calls are in content; a message has no other place that holds "
                         "them")

    def test_worked_out_every_time(self):
        """After a third call block is added to a reply's content, tool_calls reports three calls, and after its text is edited, text_of gives the new words: nothing is remembered between calls."""
        message, _, _ = _mixed()
        self.assertEqual(len(harness.tool_calls(message)), 2)
        harness.text_of(message)
        message["content"].append(lab.call("bash", {"command": "ls"}, id="c3"))
        message["content"][0]["text"] = "Looking again. "
        self.assertEqual([call["id"] for call in harness.tool_calls(message)],
                         ["c1", "c2", "c3"], "tool_calls should read content afresh on every "
                                             "call, not an answer kept from the last one")
        self.assertEqual(harness.text_of(message), "Looking again. Then I will say.")

    def test_message_left_as_it_was(self):
        """text_of and tool_calls leave the message exactly as it was: no key added to it, no block taken out of its content."""
        message, _, _ = _mixed()
        before = copy.deepcopy(message)
        harness.text_of(message)
        harness.tool_calls(message)
        self.assertEqual(message, before, "the message changed: storing the calls or the text "
                                          "in it makes a second copy that can go stale")


class Lab2(unittest.TestCase):

    def test_tool_specs(self):
        """tool_specs of two tools is, for each in order, its name, description and parameters, and never its execute function."""
        runs = []
        tools = [_counting_tool("clock", "12:00", runs), _counting_tool("echo", "hi", runs)]
        specs = harness.tool_specs(tools)
        self.assertEqual(specs, [{k: tool[k] for k in ("name", "description", "parameters")}
                                 for tool in tools])
        self.assertEqual(runs, [], "telling the model about a tool must not run it")

    def test_runs_the_named_tool(self):
        """run_tool runs the tool the call names, with the call's arguments, and returns its toolResult: the call's id and name, what execute returned, and is_error False."""
        runs = []
        tools = [_counting_tool("clock", "12:00", runs), _counting_tool("echo", "hi", runs)]
        call = lab.call("echo", {"text": "hi"}, id="c7")
        result = harness.run_tool(tools, call)
        self.assertEqual(result, {"role": "toolResult", "tool_call_id": "c7", "tool_name": "echo",
                                  "content": "hi", "is_error": False})
        self.assertEqual(runs, [("echo", {"text": "hi"})],
                         f"only the echo tool should have run, once; what ran: {runs}")

    def test_exactly_one_result(self):
        """One call in, exactly one result out: run_tool returns one message, a dict and not a list, and a tool that returns "" still gets its result, with content ""."""
        runs = []
        tools = [_counting_tool("quiet", "", runs)]
        call = lab.call("quiet", {}, id="c1")
        result = harness.run_tool(tools, call)
        self.assertIsInstance(result, dict, "run_tool should return the one toolResult message, "
                                            f"not {type(result).__name__}")
        self.assertEqual(lab.shape([lab.reply(call), result]), "A[c1] R(c1)")
        self.assertEqual(result["content"], "", "an empty answer is still an answer")
        self.assertEqual(len(runs), 1, "the tool should run exactly once")

    def test_ids_not_mixed(self):
        """Two calls to one tool, c1 and c2, with different arguments get two results: each carries its own call's id, and the tool ran once for each."""
        runs = []
        tools = [_counting_tool("echo", "ok", runs)]
        first = harness.run_tool(tools, lab.call("echo", {"n": 1}, id="c1"))
        second = harness.run_tool(tools, lab.call("echo", {"n": 2}, id="c2"))
        self.assertEqual([first["tool_call_id"], second["tool_call_id"]], ["c1", "c2"])
        self.assertEqual(runs, [("echo", {"n": 1}), ("echo", {"n": 2})])

    def test_leaves_its_inputs(self):
        """run_tool changes neither the call nor the list of tools, and adds nothing to either: putting the result in the transcript is the caller's job."""
        runs = []
        tools = [_counting_tool("echo", "ok", runs)]
        call = lab.call("echo", {"n": 1}, id="c1")
        before = (copy.deepcopy(call), len(tools), list(tools[0]))
        harness.run_tool(tools, call)
        self.assertEqual((call, len(tools), list(tools[0])), before)

    def test_write_tool(self):
        """A write call for a.py, run with make_write_tool over a workspace, is answered "Successfully wrote to a.py." and puts the file on the disk."""
        ws = lab.Workspace()
        call = lab.call("write", {"path": "a.py", "content": "A = 1\n"}, id="w1")
        result = harness.run_tool([harness.make_write_tool(ws)], call)
        self.assertEqual(ws.read_text("a.py") if ws.exists("a.py") else None, "A = 1\n")
        self.assertEqual(result["content"], "Successfully wrote to a.py.")
        self.assertEqual(result["tool_call_id"], "w1")


if __name__ == "__main__":
    unittest.main()
