"""Lesson 04's lab tests: failures become results (point 4.1).

Lab1 checks str_arg and int_arg, and run_tool turning every failure into the one result a call
is owed. Each test's docstring is its checklist line on the page, word for word; the tests run in
the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 4 tests.py
"""
import unittest

import harness
import lab

LESSON = 4


def _tool(name, execute):
    return {"name": name, "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": {}}, "execute": execute}


def _raising(error):
    def execute(arguments):
        raise error
    return execute


class Lab1(unittest.TestCase):

    def test_str_arg(self):
        """str_arg gives back a string argument, and raises ValueError("path must be a string") when path is missing, None or 42."""
        self.assertEqual(harness.str_arg({"path": "a.py"}, "path"), "a.py")
        self.assertEqual(harness.str_arg({"path": ""}, "path"), "")
        for arguments in ({}, {"path": None}, {"path": 42}):
            with self.assertRaises(ValueError, msg=f"str_arg({arguments}, 'path')") as caught:
                harness.str_arg(arguments, "path")
            self.assertEqual(str(caught.exception), "path must be a string")

    def test_int_arg(self):
        """int_arg gives back an int argument, the default when it is missing or None, and raises ValueError("limit must be an integer") for "10" or 2.5."""
        self.assertEqual(harness.int_arg({"limit": 10}, "limit", 5), 10)
        self.assertEqual(harness.int_arg({}, "limit", 5), 5)
        self.assertEqual(harness.int_arg({"limit": None}, "limit", None), None)
        for value in ("10", 2.5):
            with self.assertRaises(ValueError, msg=f"int_arg({{'limit': {value!r}}})") as caught:
                harness.int_arg({"limit": value}, "limit", 5)
            self.assertEqual(str(caught.exception), "limit must be an integer")

    def test_a_tool_that_raises(self):
        """A tool that raises ValueError("disk full") gets one result, content "disk full" and is_error True, and run_tool itself raises nothing."""
        call = lab.call("save", {}, id="c1")
        result = harness.run_tool([_tool("save", _raising(ValueError("disk full")))], call)
        self.assertEqual(result, {"role": "toolResult", "tool_call_id": "c1", "tool_name": "save",
                                  "content": "disk full", "is_error": True})

    def test_any_exception(self):
        """Whatever Exception a tool raises (KeyError, ZeroDivisionError, FileNotFoundError), the call still gets exactly one result marked is_error."""
        for error in (KeyError("content"), ZeroDivisionError("division by zero"),
                      FileNotFoundError("no such file: a.py")):
            result = harness.run_tool([_tool("t", _raising(error))], lab.call("t", {}, id="c9"))
            self.assertEqual((result["tool_call_id"], result["content"], result["is_error"]),
                             ("c9", str(error), True), type(error).__name__)

    def test_unknown_tool(self):
        """A call to a tool nobody has, "nope", is answered "Tool nope not found" with is_error True."""
        result = harness.run_tool([_tool("save", lambda arguments: "ok")],
                                  lab.call("nope", {}, id="c2"))
        self.assertEqual((result["tool_call_id"], result["tool_name"], result["content"],
                          result["is_error"]), ("c2", "nope", "Tool nope not found", True))

    def test_working_tool_unchanged(self):
        """A tool that works still gets its own output with is_error False."""
        result = harness.run_tool([_tool("echo", lambda arguments: "hi")],
                                  lab.call("echo", {}, id="c3"))
        self.assertEqual((result["content"], result["is_error"]), ("hi", False))

    def test_ctrl_c_is_not_the_tools_news(self):
        """A KeyboardInterrupt raised inside a tool is not caught: Ctrl-C is the user's, not a tool failure."""
        with self.assertRaises(KeyboardInterrupt):
            harness.run_tool([_tool("slow", _raising(KeyboardInterrupt()))],
                             lab.call("slow", {}, id="c4"))

    def test_run_carries_on(self):
        """In a run, a tool that breaks is reported to the model, which is sent the error as the last message, and the run carries on to the model's answer."""
        call = lab.call("save", {}, id="c1")
        model = lab.ScriptedModel([lab.reply(call), lab.say("Saving failed: the disk is full.")])
        messages = []
        lab.drive(harness.run_agent(model, harness.SYSTEM, messages,
                                    [_tool("save", _raising(OSError("disk full")))], "Save it."))
        self.assertEqual(lab.shape(messages), "U A[c1] R(c1) A")
        sent = model.calls[1].messages[-1]
        self.assertEqual((sent["content"], sent["is_error"]), ("disk full", True))


if __name__ == "__main__":
    unittest.main()
