"""Lesson 04's lab tests: failures become results (point 4.1).

Lab1 checks str_arg and int_arg, and run_tool turning every failure into the one result a call
is owed. Each test's docstring is its checklist line on the page, word for word; the tests run in
the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 4 tests.py

Every message a check fails with is written for the reader: what was expected, what happened.
A test never lets an Exception from the reader's code escape: it says, in a sentence, what was
raised and what should have happened instead.
"""
import unittest

import harness
import lab

LESSON = 4


# ------------------------------------------------------------------------------------- helpers

def _tool(name, execute):
    return {"name": name, "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": {}}, "execute": execute}


def _raising(error):
    def execute(arguments):
        raise error
    return execute


def _what(value):
    """A short description of a value, for a failure message."""
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict) and value.get("role") == "toolResult":
        mark = "marked is_error" if value.get("is_error") else "not marked is_error"
        return f"a toolResult {mark}, content {_what(value.get('content'))}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _error(exc):
    """An exception as a reader would write it: ValueError('disk full')."""
    return repr(exc)


class _LabCase(unittest.TestCase):
    """Shared checks. Messages are the whole story, so unittest's own prefix is switched off."""
    longMessage = False

    def function(self, name):
        """harness.<name>, or a FAIL that says it is not there yet."""
        found = getattr(harness, name, None)
        if not callable(found):
            self.fail(f"harness.py has no function {name} yet: write it in region 2, tools.")
        return found

    def outcome(self, call):
        """("returned", value) or ("raised", exception) for call(), Exceptions only."""
        try:
            return "returned", call()
        except Exception as exc:            # noqa: BLE001 - the test reports it
            return "raised", exc

    def run_tool(self, tools, call, when):
        """run_tool's result for `call`; a FAIL if it raises or gives back anything but one
        toolResult dict."""
        run_tool = self.function("run_tool")
        how, value = self.outcome(lambda: lab.resolve(run_tool(tools, call)))
        if how == "raised":
            self.fail(f"{when}, run_tool raised {_error(value)}. It must return a toolResult "
                      "with is_error True instead: run_tool never raises an Exception.")
        if not isinstance(value, dict):
            self.fail(f"{when}, run_tool returned {_what(value)}. One call in, exactly one "
                      "result out: a single toolResult dict.")
        return value

    def assert_result(self, result, when, whose="the result's", **expected):
        """The result's fields, compared one by one: the first difference is named."""
        for key, want in expected.items():
            if key not in result:
                self.fail(f"{when}, {whose} {key!r} key is missing; expected {want!r}.")
            got = result[key]
            if got != want or type(got) is not type(want):
                self.fail(f"{when}, {whose} {key} is {_what(got)}; expected {want!r}.")


# ------------------------------------------------------------------------------------- the lab

class Lab1(_LabCase):

    def test_str_arg(self):
        """str_arg gives back a string argument exactly as it was sent, "", " a.py " (spaces kept) and "./a.py" included, and raises ValueError("path must be a string") when path is missing, None or 42; the message names the argument asked for ("command must be a string")."""
        str_arg = self.function("str_arg")
        for arguments, want in (({"path": "a.py"}, "a.py"), ({"path": ""}, ""),
                                ({"path": " a.py "}, " a.py "), ({"path": "./a.py"}, "./a.py")):
            how, got = self.outcome(lambda: str_arg(arguments, "path"))
            if how == "raised":
                self.fail(f"str_arg({arguments}, 'path') raised {_error(got)}; expected "
                          f"{want!r}: a string is a string, even an empty one.")
            if got != want:
                self.fail(f"str_arg({arguments}, 'path') returned {_what(got)}; "
                          f"expected {want!r}: str_arg checks the type and changes nothing, "
                          "or the tool acts on something the model did not send.")
        for arguments in ({}, {"path": None}, {"path": 42}):
            how, got = self.outcome(lambda: str_arg(arguments, "path"))
            if how == "returned":
                self.fail(f"str_arg({arguments}, 'path') returned {_what(got)}; expected it to "
                          "raise ValueError('path must be a string'). The schema asked for a "
                          "string; this is not one.")
            if not isinstance(got, ValueError) or str(got) != "path must be a string":
                self.fail(f"str_arg({arguments}, 'path') raised {_error(got)}; expected "
                          "ValueError('path must be a string'), the sentence the model will "
                          "read.")
        how, got = self.outcome(lambda: str_arg({"cmd": "ls"}, "command"))
        if not (how == "raised" and isinstance(got, ValueError)
                and str(got) == "command must be a string"):
            said = _error(got) if how == "raised" else f"returned {_what(got)}"
            self.fail(f"str_arg({{'cmd': 'ls'}}, 'command') {said}; expected ValueError('command "
                      "must be a string'): the message names the argument that was asked for.")

    def test_int_arg(self):
        """int_arg gives back an int argument, 0 and -3 included, the default when it is missing or None (a default of None too), and raises ValueError("limit must be an integer") for "10", 2.5, "" or 10.0, naming the argument asked for ("offset must be an integer"); True, an int to Python, either comes back as True or gets that same ValueError."""
        int_arg = self.function("int_arg")
        for arguments, want in (({"limit": 10}, 10), ({"limit": 0}, 0), ({"limit": -3}, -3),
                                ({}, 5), ({"limit": None}, 5)):
            how, got = self.outcome(lambda: int_arg(arguments, "limit", 5))
            if how == "raised":
                self.fail(f"int_arg({arguments}, 'limit', 5) raised {_error(got)}; expected "
                          f"{want!r}. A missing or None argument gives the default, and any int "
                          "comes back as it is: whether -3 makes sense is the tool's to say.")
            if got != want or type(got) is not int:
                self.fail(f"int_arg({arguments}, 'limit', 5) returned {_what(got)}; "
                          f"expected {want!r}.")
        for value in ("10", 2.5, "", 10.0):
            arguments = {"limit": value}
            how, got = self.outcome(lambda: int_arg(arguments, "limit", 5))
            if how == "returned":
                self.fail(f"int_arg({arguments}, 'limit', 5) returned {_what(got)}; expected it "
                          "to raise ValueError('limit must be an integer'). Do not guess what "
                          "the model meant: tell it.")
            if not isinstance(got, ValueError) or str(got) != "limit must be an integer":
                self.fail(f"int_arg({arguments}, 'limit', 5) raised {_error(got)}; expected "
                          "ValueError('limit must be an integer').")
        how, got = self.outcome(lambda: int_arg({"limit": True}, "limit", 5))
        if not (got is True or (how == "raised" and isinstance(got, ValueError)
                                and str(got) == "limit must be an integer")):
            said = _error(got) if how == "raised" else f"returned {_what(got)}"
            self.fail(f"int_arg({{'limit': True}}, 'limit', 5) {said}; expected True as it came "
                      "(bool is a subclass of int) or ValueError('limit must be an integer'), "
                      "nothing in between.")
        how, got = self.outcome(lambda: int_arg({}, "limit", None))
        if how == "raised" or got is not None:
            said = _error(got) if how == "raised" else f"returned {_what(got)}"
            self.fail(f"int_arg({{}}, 'limit', None) {said}; expected None, the default it was "
                      "given: lesson 6's read asks for a limit that way.")
        how, got = self.outcome(lambda: int_arg({"offset": "2"}, "offset", 1))
        if not (how == "raised" and isinstance(got, ValueError)
                and str(got) == "offset must be an integer"):
            said = _error(got) if how == "raised" else f"returned {_what(got)}"
            self.fail(f"int_arg({{'offset': '2'}}, 'offset', 1) {said}; expected "
                      "ValueError('offset must be an integer'): the message names the argument.")

    def test_a_tool_that_raises(self):
        """A tool that raises ValueError("disk full") gets one result, content "disk full" and is_error True, and run_tool itself raises nothing."""
        call = lab.call("save", {}, id="c1")
        when = "When the save tool raises ValueError('disk full')"
        result = self.run_tool([_tool("save", _raising(ValueError("disk full")))], call, when)
        self.assert_result(result, when, role="toolResult", tool_call_id="c1", tool_name="save",
                           content="disk full", is_error=True)

    def test_any_exception(self):
        """Whatever Exception a tool raises (KeyError, ZeroDivisionError, FileNotFoundError, and a TypeError from a bug in the tool), the call still gets exactly one result, its content str() of the exception, marked is_error; for ValueError(), whose str() is "", the content is "" or the type's name, "ValueError"."""
        for error in (KeyError("content"), ZeroDivisionError("division by zero"),
                      FileNotFoundError("no such file: a.py"),
                      TypeError("'NoneType' object is not subscriptable")):
            when = f"When the tool raises {_error(error)}"
            result = self.run_tool([_tool("t", _raising(error))], lab.call("t", {}, id="c9"),
                                   when)
            self.assert_result(result, when, tool_call_id="c9", content=str(error),
                               is_error=True)
        when = "When the tool raises ValueError(), an exception with no message"
        result = self.run_tool([_tool("t", _raising(ValueError()))], lab.call("t", {}, id="c9"),
                               when)
        self.assert_result(result, when, tool_call_id="c9", is_error=True)
        if result.get("content") not in ("", "ValueError"):
            self.fail(f"{when}, the result's content is {_what(result.get('content'))}; expected "
                      "str() of it, \"\", or its type's name, \"ValueError\".")

    def test_unknown_tool(self):
        """A call to a tool nobody has, "nope", is answered "Tool nope not found" with is_error True, with other tools or with none; a name matches only as spelt, so "Save" is not the tool "save"."""
        for name, tools in (("nope", [_tool("save", lambda arguments: "ok")]), ("nope", []),
                            ("Save", [_tool("save", lambda arguments: "ok")])):
            when = (f"For a call to {name!r} with tools {[t['name'] for t in tools]}")
            result = self.run_tool(tools, lab.call(name, {}, id="c2"), when)
            if name == "Save" and result.get("is_error") is False:
                self.fail(f"{when}, the tool 'save' ran: run_tool matched the name loosely. "
                          "Look the name up exactly as the call spells it; a model that wrote "
                          "'Save' is told 'Tool Save not found' and can spell it right.")
            self.assert_result(result, when, role="toolResult", tool_call_id="c2",
                               tool_name=name, content=f"Tool {name} not found", is_error=True)

    def test_working_tool_unchanged(self):
        """A tool that returns gets its own output with is_error False, in a toolResult that names its call and its tool ("c3", "echo"), even when that output is empty (""), reports a failure ("Command exited with code 1") or starts "Error:"."""
        for output in ("hi", "", "FAILED test_a.py\nCommand exited with code 1",
                       "Error: file not found"):
            when = f"When the tool returns {output!r}"
            result = self.run_tool([_tool("echo", lambda arguments: output)],
                                   lab.call("echo", {}, id="c3"), when)
            if result.get("is_error") is True and result.get("content") == output:
                self.fail(f"{when}, the result is marked is_error. The flag says the tool "
                          "raised, and this one returned: set is_error from the path the call "
                          "took, never from what the text says.")
            self.assert_result(result, when, role="toolResult", tool_call_id="c3",
                               tool_name="echo", content=output, is_error=False)

    def test_each_call_runs_its_tool_once(self):
        """Each call runs its tool exactly once, whether the tool returns or raises: a write or a bash command run twice does its work twice."""
        for how, execute in (("returns", lambda arguments: "ok"),
                             ("raises", _raising(OSError("disk full")))):
            runs = []

            def counted(arguments, execute=execute, runs=runs):
                runs.append(arguments)
                return execute(arguments)
            when = f"When the tool {how}"
            self.run_tool([_tool("save", counted)], lab.call("save", {}, id="c5"), when)
            if len(runs) != 1:
                self.fail(f"{when}, run_tool ran it {len(runs)} times for one call; expected "
                          "exactly once. Call execute once, inside the try, and keep what that "
                          "one call returned or raised: a tool's work (a file written, a command "
                          "run) happens each time it runs.")

    def test_output_kept_as_it_came(self):
        """A working tool's output goes into the result as the very object execute returned, not converted: a tool that returns 42, a list or None gets 42, that list or None as its content, not str() of it and not "" in place of None."""
        for output in (42, [{"type": "text", "text": "hi"}], None):
            when = f"When the tool returns {output!r}"
            result = self.run_tool([_tool("echo", lambda arguments: output)],
                                   lab.call("echo", {}, id="c6"), when)
            if result.get("content") is not output:
                self.fail(f"{when}, the result's content is {_what(result.get('content'))}; "
                          f"expected {output!r} itself, the object execute returned. run_tool "
                          "keeps what a working tool returns and changes nothing: a tool that "
                          "returns a non-string is the tool's to fix, and str() or a \"\" in "
                          "its place would hide it.")

    def test_ctrl_c_is_not_the_tools_news(self):
        """A KeyboardInterrupt, a SystemExit or a lab.PowerCut raised inside a tool goes straight through run_tool: Ctrl-C, sys.exit() and a power cut are not tool failures."""
        run_tool = self.function("run_tool")
        for error in (KeyboardInterrupt(), SystemExit(3), lab.PowerCut("the power went out")):
            name = type(error).__name__
            try:
                got = lab.resolve(run_tool([_tool("slow", _raising(error))],
                                           lab.call("slow", {}, id="c4")))
            except type(error):
                continue
            except Exception as exc:        # noqa: BLE001 - the test reports it
                self.fail(f"When the tool raises {name}, run_tool raised {_error(exc)} instead. "
                          f"Let the {name} itself through.")
            self.fail(f"When the tool raises {name}, run_tool returned {_what(got)}. A "
                      f"{name} is not the tool's news: catch Exception, not BaseException, so "
                      "it goes straight through.")

    def test_ctrl_c_ends_the_run(self):
        """A KeyboardInterrupt or a lab.PowerCut raised inside a tool during a run goes straight up through run_agent too: the run does not end quietly, and the record stops at the call, U A[c1]."""
        for error in (KeyboardInterrupt(), lab.PowerCut("the power went out")):
            name = type(error).__name__
            model = lab.ScriptedModel([lab.reply(lab.call("slow", {}, id="c1")),
                                       lab.say("Done.")])
            messages = []
            try:
                lab.drive(harness.run_agent(model, harness.SYSTEM, messages,
                                            [_tool("slow", _raising(error))], "Go."))
            except type(error):
                pass
            except Exception as exc:        # noqa: BLE001 - the test reports it
                self.fail(f"When a tool raised {name} during a run, run_agent raised "
                          f"{_error(exc)} instead. Let the {name} itself through.")
            else:
                self.fail(f"When a tool raised {name} during a run, run_agent returned "
                          f"quietly, leaving {lab.shape(messages)}. Nothing in the loop may "
                          f"catch a {name}: it asks for the program to stop, and a run that "
                          "returns looks finished instead.")
            if lab.shape(messages) != "U A[c1]":
                self.fail(f"After a tool raised {name}, the record is {lab.shape(messages)}; "
                          "expected U A[c1]: nothing written after the call that was cut off.")

    def test_every_call_of_a_turn_answered(self):
        """When one reply asks for three calls and the second raises, the transcript holds three results in call order, only the second marked is_error, and the model is asked again."""
        calls = [lab.call("ok", {}, id="c1"), lab.call("bad", {}, id="c2"),
                 lab.call("ok", {}, id="c3")]
        model = lab.ScriptedModel([lab.reply(*calls), lab.say("Two of three worked.")])
        tools = [_tool("ok", lambda arguments: "fine"),
                 _tool("bad", _raising(FileNotFoundError("File not found: b.txt")))]
        messages = []
        how, got = self.outcome(lambda: lab.drive(harness.run_agent(
            model, harness.SYSTEM, messages, tools, "Do three things.")))
        if how == "raised":
            self.fail(f"run_agent raised {_error(got)} when the second of three calls failed; "
                      f"the transcript stopped at {lab.shape(messages)}.")
        want = "U A[c1,c2,c3] R(c1) R(c2) R(c3) A"
        if lab.shape(messages) != want:
            self.fail(f"The transcript is {lab.shape(messages)}; expected {want}: a failure in "
                      "one call is reported in that call's result, and every other call still "
                      "runs and gets its own.")
        flags = [m["is_error"] for m in messages[2:5]]
        if flags != [False, True, False]:
            self.fail(f"The three results are marked is_error {flags}; expected "
                      "[False, True, False]: only the call that failed is marked.")

    def test_run_carries_on(self):
        """In a run, a tool that breaks is reported to the model, which is sent the error as the last message, and the run carries on to the model's answer."""
        call = lab.call("save", {}, id="c1")
        model = lab.ScriptedModel([lab.reply(call), lab.say("Saving failed: the disk is full.")])
        messages = []
        tools = [_tool("save", _raising(OSError("disk full")))]
        how, got = self.outcome(lambda: lab.drive(harness.run_agent(
            model, harness.SYSTEM, messages, tools, "Save it.")))
        if how == "raised":
            self.fail(f"run_agent raised {_error(got)} when the save tool raised "
                      f"OSError('disk full'); the transcript stopped at {lab.shape(messages)}. "
                      "run_tool should have turned the error into a result.")
        if lab.shape(messages) != "U A[c1] R(c1) A":
            self.fail(f"The transcript is {lab.shape(messages)}; expected U A[c1] R(c1) A: "
                      "the call, its result, and the model's answer.")
        if len(model.calls) != 2:
            self.fail(f"The model was called {len(model.calls)} times; expected 2.")
        sent = model.calls[1].messages[-1]
        self.assert_result(sent, "In the model's second request", "the last message's",
                           content="disk full", is_error=True)


if __name__ == "__main__":
    unittest.main()
