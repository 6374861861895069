"""Lesson 02's lab tests: hands.

Lab1 checks text_of and tool_calls, which read an assistant message's content blocks (point 2.1).
Lab2 checks tool_specs and run_tool: what the model is told about the tools, and one call in,
exactly one result out (point 2.2). Each test's docstring is its checklist line on the page, word
for word; the tests run in the order they are written. A test that calls your code catches what
it raises and fails with a sentence, so a mistake reads as FAIL, not as a traceback.

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


def _ids(calls):
    """The ids of what tool_calls gave, readable even when it gave something odd. A tuple is read
    like a list here: test_returns_a_list is the one test that asks for the list the spec names."""
    if isinstance(calls, tuple):
        calls = list(calls)
    if not isinstance(calls, list):
        return f"a {type(calls).__name__}, not a list"
    return [call.get("id") if isinstance(call, dict) else call for call in calls]


def _gave(ids):
    """What _ids found, for a sentence: "ids ['c1', 'c2']", or what it gave instead of a list."""
    return f"ids {ids}" if isinstance(ids, list) else ids


class _Reader(unittest.TestCase):
    longMessage = False

    def call(self, function, *args):
        """function(*args), with anything it raises turned into a failure that says what."""
        try:
            # lab.resolve: from lesson 15 run_tool is async def, and its result is awaited
            return lab.resolve(getattr(harness, function)(*args))
        except Exception as error:  # the reader's code: report it, do not crash the runner
            extra = ""
            if isinstance(error, TypeError) and "execute()" in str(error):
                extra = (" (a tool's execute takes one argument, the call's arguments dict: "
                         "tool[\"execute\"](call[\"arguments\"]))")
            self.fail(f"{function} raised {type(error).__name__}: {error}{extra}")

    def text_of(self, message):
        return self.call("text_of", message)

    def tool_calls(self, message):
        """What tool_calls gave, a tuple read as a list (test_returns_a_list judges the type)."""
        calls = self.call("tool_calls", message)
        return list(calls) if isinstance(calls, tuple) else calls

    def same_text(self, got, expected, why):
        if got != expected:
            self.fail(f"text_of should give {expected!r}, but gave {got!r}: {why}")


class Lab1(_Reader):

    def test_text_of_one_block(self):
        """text_of a reply with one text block, "Hello.", is "Hello.", and text_of a reply that only asks for a tool is ""."""
        self.same_text(self.text_of(lab.say("Hello.")), "Hello.",
                       "the words are the \"text\" of the text block")
        only_call = lab.reply(lab.call("read", {"path": "a.py"}, id="c1"))
        self.same_text(self.text_of(only_call), "",
                       "a reply with no text blocks has no words, and no words is \"\"")

    def test_no_blocks(self):
        """A reply whose content is an empty list has no words and no calls: text_of gives "" and tool_calls gives []."""
        empty = {"role": "assistant", "content": [], "stop_reason": "stop"}
        self.same_text(self.text_of(empty), "", "an empty content list holds no words")
        calls = self.tool_calls(empty)
        if calls != []:
            self.fail(f"tool_calls of an empty reply should be [], but was {calls!r}")

    def test_text_of_every_block(self):
        """text_of a reply holding "Let me look. ", two calls and "Then I will say." is "Let me look. Then I will say.": every text block, in order, joined with nothing between."""
        message, _, _ = _mixed()
        self.same_text(self.text_of(message), "Let me look. Then I will say.",
                       "the words are in every block of type \"text\", in order, joined with "
                       "nothing added between them, and a call block has no words")

    def test_tool_calls_in_order(self):
        """tool_calls of that reply is its two call blocks, c1 then c2, the very dicts from content; of a reply that only talks, it is []."""
        message, read, grep = _mixed()
        calls = self.tool_calls(message)
        if _ids(calls) != ["c1", "c2"]:
            self.fail(f"tool_calls should give the call blocks c1 and c2, in the order asked; "
                      f"it gave {_gave(_ids(calls))}")
        if not (calls[0] is message["content"][1] and calls[1] is message["content"][2]):
            self.fail("tool_calls gave dicts with the ids c1 and c2 that are not the blocks in "
                      "content themselves: give the blocks, not copies or rebuilt dicts")
        talk = self.tool_calls(lab.say("Done."))
        if talk != []:
            self.fail(f"a reply that only talks asks for nothing: tool_calls should be [], "
                      f"not {talk!r}")

    def test_returns_a_list(self):
        """tool_calls returns a list, the type the spec names: a tuple holds the same calls, but it is not what the spec asks for."""
        message, _, _ = _mixed()
        calls = self.call("tool_calls", message)
        if not isinstance(calls, list):
            self.fail(f"tool_calls gave a {type(calls).__name__}; the spec says it returns a "
                      "list: build it with [...] or list(...)")

    def test_plain_dict_message(self):
        """A reply typed by hand as a plain dict, with only role, content and stop_reason, works with both: nothing reads a key that the message does not have."""
        message = {"role": "assistant", "stop_reason": "toolUse", "content": [
            {"type": "toolCall", "id": "x1", "name": "write", "arguments": {"path": "b.py"}},
            {"type": "text", "text": "Writing b.py."}]}
        self.same_text(self.text_of(message), "Writing b.py.",
                       "the one text block is the second block here, after the call")
        got = _ids(self.tool_calls(message))
        if got != ["x1"]:
            self.fail(f"tool_calls should give the call x1, but gave {_gave(got)}: the calls are in "
                      f"content; a message has no other place that holds them")

    def test_content_decides_not_stop_reason(self):
        """tool_calls reads the blocks, not the stop_reason: a reply marked "stop" that holds a call block gives that call, and one marked "toolUse" with only text gives []."""
        marked_stop = {"role": "assistant", "stop_reason": "stop", "content": [
            {"type": "toolCall", "id": "s1", "name": "read", "arguments": {"path": "a.py"}}]}
        got = _ids(self.tool_calls(marked_stop))
        if got != ["s1"]:
            self.fail(f"a reply whose content holds the call s1 asks for it, whatever its "
                      f"stop_reason says; tool_calls gave {_gave(got)}")
        marked_ask = {"role": "assistant", "stop_reason": "toolUse", "content": [
            {"type": "text", "text": "Nothing to run."}]}
        got = self.tool_calls(marked_ask)
        if got != []:
            self.fail(f"a reply with no call blocks asks for nothing, even when its stop_reason "
                      f"is \"toolUse\"; tool_calls gave {got!r}")

    def test_worked_out_every_time(self):
        """After a third call block is added to a reply's content, tool_calls reports three calls, and after its text is edited, text_of gives the new words: nothing is remembered between calls."""
        message, _, _ = _mixed()
        first = _ids(self.tool_calls(message))
        if first != ["c1", "c2"]:
            self.fail(f"tool_calls should give c1 and c2 to start with, but gave {_gave(first)}")
        self.text_of(message)
        message["content"].append(lab.call("bash", {"command": "ls"}, id="c3"))
        message["content"][0]["text"] = "Looking again. "
        now = _ids(self.tool_calls(message))
        if now != ["c1", "c2", "c3"]:
            self.fail(f"after c3 was added to content, tool_calls gave {_gave(now)}" + (
                ", the answer from before: read content afresh on every call, and keep no "
                "answer from the last one" if now == first else
                ", not c1, c2 and c3: give every toolCall block in content, in order"))
        self.same_text(self.text_of(message), "Looking again. Then I will say.",
                       "the first text block was edited; read content afresh on every call")

    def test_text_of_takes_nothing_away(self):
        """text_of gives the words exactly as the model wrote them: blocks "  Indented.\\n", "\\n" and "Done.\\n" give "  Indented.\\n\\nDone.\\n", spaces, line breaks and a block of only a line break kept."""
        message = lab.reply(lab.text("  Indented.\n"), lab.text("\n"), lab.text("Done.\n"))
        self.same_text(self.text_of(message), "  Indented.\n\nDone.\n",
                       "join the blocks' text as it is; stripping it cuts spaces and line "
                       "breaks that are part of what the model said")

    def test_block_replaced(self):
        """After a reply's second call block is swapped for another, c9 in place of c2, tool_calls gives c1 and c9: the same message with the same number of blocks is read again, not looked up."""
        message, read, _ = _mixed()
        first = _ids(self.tool_calls(message))
        if first != ["c1", "c2"]:
            self.fail(f"tool_calls should give c1 and c2 to start with, but gave {_gave(first)}")
        message["content"][2] = lab.call("bash", {"command": "ls"}, id="c9")
        now = _ids(self.tool_calls(message))
        if now != ["c1", "c9"]:
            self.fail(f"after c2 was replaced by c9, tool_calls gave {_gave(now)}" + (
                ", the answer from before: the message and its number of blocks are the same, "
                "but its content is not. Read content on every call; keep no answer, under any "
                "key" if now == first else ", not c1 and c9: give every toolCall block in "
                "content, in order"))

    def test_order_is_the_models(self):
        """tool_calls keeps the order the model wrote its calls in, whatever their ids: calls z9 then a1 come back z9 then a1."""
        message = lab.reply(lab.call("read", {"path": "b.py"}, id="z9"),
                            lab.call("read", {"path": "a.py"}, id="a1"))
        got = _ids(self.tool_calls(message))
        if got != ["z9", "a1"]:
            self.fail(f"the model asked for z9, then a1; tool_calls gave {_gave(got)}. " + (
                "Keep the blocks in the order they sit in content: do not sort them"
                if got == ["a1", "z9"] else
                "Give every toolCall block in content, in the order they sit there"))

    def test_call_without_arguments(self):
        """A call whose arguments are empty, clock({}), is still a call: tool_calls gives it."""
        message = lab.reply(lab.text("Checking the time."), lab.call("clock", {}, id="t1"))
        got = _ids(self.tool_calls(message))
        if got != ["t1"]:
            self.fail(f"the reply asks for clock with no arguments, and tool_calls gave "
                      f"{_gave(got)}. A call is a block of type \"toolCall\", whatever its "
                      "arguments hold")

    def test_message_left_as_it_was(self):
        """text_of and tool_calls leave the message exactly as it was: no key added to it, no block taken out of its content."""
        message, _, _ = _mixed()
        before = copy.deepcopy(message)
        self.text_of(message)
        self.tool_calls(message)
        added = sorted(set(message) - set(before))
        if added:
            self.fail(f"the message gained {added}: storing the calls or the text in it makes a "
                      f"second copy that can go stale")
        if message != before:
            had, has = len(before["content"]), len(message.get("content", []))
            what = (f"it had {had} blocks and now has {has}" if had != has else
                    f"its blocks are the same in number, {has}, but not the same dicts"
                    if message.get("content") != before["content"] else
                    "a key of it has a new value")
            self.fail(f"the message changed: {what}; read it, do not change it")


    def test_other_block_types(self):
        """A reply that also holds a "thinking" block gives text_of only its "text" block and tool_calls only its "toolCall" block: each keeps the blocks of its own type, and no other."""
        thought = {"type": "thinking", "thinking": "The port is probably in config.py."}
        message = lab.reply(lab.text("Reading it."), lab.call("read", {"path": "config.py"},
                                                              id="c1"))
        message["content"].insert(0, thought)
        self.same_text(self.text_of(message), "Reading it.",
                       "a \"thinking\" block is not words for the reader: keep only the blocks "
                       "whose type is \"text\"")
        got = _ids(self.tool_calls(message))
        if got != ["c1"]:
            self.fail(f"the reply holds one call, c1, and a \"thinking\" block; tool_calls gave "
                      f"{_gave(got)}. Keep the blocks whose type is \"toolCall\", not every "
                      "block that is not text")

    def test_type_decides(self):
        """A block of a type this harness does not know, carrying an "id", a "name", "arguments", "input" and a "text" of its own, is neither words nor a call: text_of and tool_calls go by each block's "type", not by the keys it holds."""
        odd = {"type": "serverToolUse", "id": "s1", "name": "web_search",
               "arguments": {"query": "PORT"}, "input": {"query": "PORT"},
               "text": "searched three pages"}
        message = lab.reply(lab.text("Found it."), lab.call("read", {"path": "a.py"}, id="c1"))
        message["content"].insert(1, odd)
        self.same_text(self.text_of(message), "Found it.",
                       "the block of type \"serverToolUse\" has a \"text\" key, but it is not a "
                       "text block: keep only the blocks whose type is \"text\"")
        got = _ids(self.tool_calls(message))
        if got != ["c1"]:
            self.fail(f"the reply holds one call, c1, and a block of type \"serverToolUse\" "
                      f"that has a \"name\", \"arguments\" and \"input\"; tool_calls gave "
                      f"{_gave(got)}. A call is a block whose type is \"toolCall\", whatever "
                      "keys another block holds")

    def test_stale_copy_ignored(self):
        """A reply that carries an old copy of its calls under a "tool_calls" key, c1 alone, while its content holds c1 and c2: tool_calls gives c1 and c2, read from content, the one record."""
        message, read, _ = _mixed()
        message["tool_calls"] = [read]      # a copy made once, somewhere, before c2 was there
        got = _ids(self.tool_calls(message))
        if got != ["c1", "c2"]:
            self.fail(f"the content holds c1 and c2, and a stored copy says only c1; tool_calls "
                      f"gave {_gave(got)}. " + (
                          "Read the calls from content every time: a copy kept beside it is a "
                          "second record, and this one is stale" if got == ["c1"] else
                          "Give every toolCall block in content, in order"))

    def test_same_id_twice(self):
        """Two call blocks that share the id d1 are still two blocks: tool_calls gives both, in order; it reports what the model wrote and tidies nothing."""
        message = lab.reply(lab.call("read", {"path": "a.py"}, id="d1"),
                            lab.call("read", {"path": "b.py"}, id="d1"))
        calls = self.tool_calls(message)
        if not isinstance(calls, list):
            self.fail(f"the reply holds two call blocks, both with the id d1; tool_calls gave "
                      f"{_gave(_ids(calls))}")
        if len(calls) != 2:
            self.fail(f"the reply holds two call blocks, both with the id d1; tool_calls gave "
                      f"{_gave(_ids(calls))}. Give every toolCall block: a reply with a "
                      "repeated id is mended later (lesson 10), not hidden here")
        paths = [call.get("arguments", {}).get("path") for call in calls]
        if paths != ["a.py", "b.py"]:
            self.fail(f"the two calls should come back a.py then b.py; they came {paths}")

    def test_odd_calls_kept(self):
        """A toolCall block with an empty id, and one with no name, are still calls: tool_calls gives both, in order, as the model wrote them."""
        blank_id = {"type": "toolCall", "id": "", "name": "read", "arguments": {"path": "a.py"}}
        no_name = {"type": "toolCall", "id": "n1", "arguments": {"path": "b.py"}}
        message = {"role": "assistant", "stop_reason": "toolUse",
                   "content": [blank_id, lab.text("And "), no_name]}
        calls = self.tool_calls(message)
        if not isinstance(calls, list):
            self.fail(f"tool_calls gave {_gave(_ids(calls))}")
        missing = [name for name, block in (("the one with the empty id", blank_id),
                                            ("the one with no name", no_name))
                   if not any(call is block for call in calls)]
        if missing:
            self.fail(f"the reply holds two toolCall blocks, one with the id \"\" and one with "
                      f"no \"name\"; tool_calls left out {' and '.join(missing)}. Every block "
                      "of type \"toolCall\" is a call, however odd: give it as the model wrote it")
        if len(calls) != 2 or calls[0] is not blank_id or calls[1] is not no_name:
            self.fail(f"tool_calls should give those two blocks, in order, and nothing else; it "
                      f"gave {_gave(_ids(calls))}")


class Lab2(_Reader):

    def run_tool(self, tools, call):
        return self.call("run_tool", tools, call)

    def test_tool_specs(self):
        """tool_specs of two tools, echo then clock (which carries an extra "label" key and a description with line breaks and indents), is, for each in that order, its name, description and parameters as they are and nothing else, never its execute function or its label; the tools are left exactly as they were, and neither runs."""
        runs = []
        tools = [_counting_tool("echo", "hi", runs), _counting_tool("clock", "12:00", runs)]
        tools[1]["label"] = "Clock"     # a key for the program's own use, not for the model
        tools[1]["description"] = "The clock tool.\n  Takes no arguments.\n"
        before = copy.deepcopy(tools)
        specs = self.call("tool_specs", tools)
        if not isinstance(specs, list) or len(specs) != 2:
            self.fail(f"tool_specs of two tools should be a list of two dicts, not {specs!r}")
        odd = [spec for spec in specs if not isinstance(spec, dict)]
        if odd:
            self.fail(f"each spec should be a dict of name, description and parameters; "
                      f"tool_specs gave {odd[0]!r}")
        if [spec.get("name") for spec in specs] != ["echo", "clock"]:
            self.fail("the specs should come in the order of the tools, echo then clock; they "
                      f"come {[spec.get('name') for spec in specs]}")
        for spec, tool in zip(specs, tools):
            keys = sorted(spec)
            if keys != ["description", "name", "parameters"]:
                extra = [key for key in keys if key not in ("description", "name", "parameters")]
                self.fail(f"the spec for {tool['name']} should have exactly the keys "
                          f"description, name and parameters; it has {keys}" + (
                              ". Pick those three out by name: copying the rest of the tool "
                              "also sends keys the model was never meant to see" if extra
                              else ""))
            for key in ("name", "description", "parameters"):
                if spec[key] != tool[key]:
                    self.fail(f"the spec's {key} should be the tool's {tool[key]!r}, "
                              f"not {spec[key]!r}")
        lost = [tool["name"] for tool in tools if "execute" not in tool]
        if lost:
            self.fail(f"tool_specs took execute out of the tool itself ({lost}): build new "
                      f"dicts, and leave the tools as they were")
        changed = [tool["name"] for tool, old in zip(tools, before) if tool != old]
        if changed or len(tools) != len(before):
            self.fail(f"tool_specs changed the tools it was given ({changed or 'the list'}): "
                      "read them, build new dicts, and leave the tools exactly as they were")
        if runs:
            self.fail(f"telling the model about a tool must not run it, but these ran: {runs}")

    def test_one_spec_for_each_tool(self):
        """tool_specs gives one spec for each tool on the list, in order, even for two tools that share a name: it merges and drops none."""
        runs = []
        tools = [_counting_tool("echo", "hi", runs), _counting_tool("clock", "12:00", runs),
                 _counting_tool("echo", "hello", runs)]
        tools[2]["description"] = "A second echo tool."
        specs = self.call("tool_specs", tools)
        got = [(spec.get("name"), spec.get("description")) if isinstance(spec, dict) else spec
               for spec in specs] if isinstance(specs, list) else specs
        want = [(tool["name"], tool["description"]) for tool in tools]
        if got != want:
            self.fail(f"tool_specs of three tools, two of them named echo, should give three "
                      f"specs, one for each tool in the list's order, {want}; it gave {got}. "
                      "Make a spec for every tool, and merge or drop none")

    def test_runs_the_named_tool(self):
        """run_tool runs the tool the call names, with the call's arguments, and returns its toolResult: the call's id and name, what execute returned, and is_error False."""
        runs = []
        tools = [_counting_tool("clock", "12:00", runs), _counting_tool("echo", "hi", runs)]
        call = lab.call("echo", {"text": "hi"}, id="c7")
        result = self.run_tool(tools, call)
        if runs != [("echo", {"text": "hi"})]:
            self.fail(f"only the echo tool should have run, once, with the call's arguments "
                      f"{{'text': 'hi'}}; what ran: {runs}")
        expected = {"role": "toolResult", "tool_call_id": "c7", "tool_name": "echo",
                    "content": "hi", "is_error": False}
        if not isinstance(result, dict):
            self.fail(f"run_tool should return the toolResult message, a dict, "
                      f"not {type(result).__name__}")
        for key, value in expected.items():
            if result.get(key, "(missing)") != value:
                self.fail(f"the result's {key} should be {value!r}, "
                          f"not {result.get(key, '(missing)')!r}")
        extra = sorted(set(result) - set(expected))
        if extra:
            self.fail(f"the result has keys it should not: {extra}")

    def test_exactly_one_result(self):
        """One call in, exactly one result out: run_tool returns one message, a dict and not a list, and a tool that returns "" still gets its result, with content ""."""
        runs = []
        tools = [_counting_tool("quiet", "", runs)]
        call = lab.call("quiet", {}, id="c1")
        result = self.run_tool(tools, call)
        if not isinstance(result, dict):
            self.fail(f"run_tool should return the one toolResult message, not "
                      f"{type(result).__name__}: an empty answer is still an answer")
        shape = lab.shape([lab.reply(call), result])
        if shape != "A[c1] R(c1)":
            self.fail(f"the call and its result should read A[c1] R(c1), not {shape}")
        if result.get("content") != "":
            self.fail(f"the tool returned \"\", so the content should be \"\", not "
                      f"{result.get('content')!r}")
        if len(runs) != 1:
            self.fail(f"the tool should run exactly once; it ran {len(runs)} times")

    def test_output_as_returned(self):
        """The result's content is exactly what the tool returned: "PORT = 9090\\n" stays "PORT = 9090\\n", line break included."""
        runs = []
        tools = [_counting_tool("read", "PORT = 9090\n", runs)]
        result = self.run_tool(tools, lab.call("read", {"path": "config.py"}, id="c1"))
        content = result.get("content") if isinstance(result, dict) else result
        if content != "PORT = 9090\n":
            self.fail(f"the tool returned 'PORT = 9090\\n', and the result's content should be "
                      f"exactly that; it is {content!r}. Put what execute returned in the "
                      "result as it is: the model should see what the tool saw")

    def run_tool_raw(self, tools, call):
        """run_tool(tools, call) as it comes: (the result, None), or (None, what it raised)."""
        try:
            return lab.resolve(harness.run_tool(tools, call)), None
        except Exception as error:   # the reader's run_tool raised: a test judges whether it may
            return None, error

    def test_raising_tool_not_a_success(self):
        """A tool that raises is never answered as a success: run_tool lets the tool's own error go up, unchanged (today), or returns a result marked is_error (lesson 4), never one with is_error False."""
        def broken(arguments):
            raise OSError("disk on fire")
        tool = {"name": "broken", "description": "Breaks.",
                "parameters": {"type": "object", "properties": {}}, "execute": broken}
        result, error = self.run_tool_raw([tool], lab.call("broken", {}, id="c1"))
        if error is not None:
            if not (isinstance(error, OSError) and str(error) == "disk on fire"):
                self.fail(f"the tool raised OSError('disk on fire'), and run_tool raised "
                          f"{type(error).__name__}: {error}. Today the tool's own error goes "
                          "straight up: do not catch it to raise another")
            return
        if not isinstance(result, dict) or result.get("is_error") is not True:
            got = (f"content {result.get('content')!r} and is_error {result.get('is_error')!r}"
                   if isinstance(result, dict) else repr(result))
            self.fail(f"the tool raised OSError, and run_tool answered it with {got}: the model "
                      "would be told the call worked. Catch nothing today and let the error go "
                      "up; lesson 4 turns it into a result marked is_error")

    def test_name_matched_whole(self):
        """run_tool finds the tool by its whole name: with read_many listed before read, a call for read runs read, and a call for "Read" runs neither."""
        runs = []
        tools = [_counting_tool("read_many", "two files", runs),
                 _counting_tool("read", "one file", runs)]
        result = self.run_tool(tools, lab.call("read", {"path": "a.py"}, id="c1"))
        if [name for name, _ in runs] != ["read"]:
            self.fail(f"the call asked for read, and what ran was {[n for n, _ in runs]}: look "
                      "the name up whole, not by what it starts with or contains")
        if not isinstance(result, dict) or result.get("content") != "one file":
            self.fail(f"the result should hold read's answer, 'one file'; it is {result!r}")
        runs.clear()
        result, error = self.run_tool_raw(tools, lab.call("Read", {"path": "a.py"}, id="c2"))
        if runs:
            self.fail(f"no tool is named \"Read\" (names are matched exactly, case included), "
                      f"and {runs[0][0]} ran")

    def test_unknown_tool_runs_nothing(self):
        """A call that names no tool in the list runs no tool and is never answered as a success: run_tool raises (today) or returns a result marked is_error (lesson 4)."""
        runs = []
        tools = [_counting_tool("read", "a.py says A = 1", runs),
                 _counting_tool("write", "Successfully wrote.", runs)]
        result, error = self.run_tool_raw(tools, lab.call("delete", {"path": "a.py"}, id="c1"))
        if runs:
            self.fail(f"the call asked for delete, which is not in the list, and {runs[0][0]} "
                      "ran instead. Find the tool by its name, and run none when no tool has it "
                      "(a name left over from a for loop is the last tool's)")
        if error is None and (not isinstance(result, dict) or result.get("is_error") is not True):
            got = (f"content {result.get('content')!r} and is_error {result.get('is_error')!r}"
                   if isinstance(result, dict) else repr(result))
            self.fail(f"no tool is named delete, and run_tool answered the call with {got}: the "
                      "model would be told it worked. Let the lookup fail today; lesson 4 "
                      "answers it with a result marked is_error")

    def test_reads_the_tools_every_time(self):
        """tool_specs and run_tool read the list they are given on every call: a tool appended to the list after a first call is told to the model and run by the next, and so is a tool put in place of another under the same name, the list's length unchanged, and a description edited in place in a tool already on the list."""
        runs = []
        tools = [_counting_tool("ping", "pong", runs)]
        self.call("tool_specs", tools)
        self.run_tool(tools, lab.call("ping", {}, id="c1"))
        tools.append(_counting_tool("stamp", "12:00", runs))
        specs = self.call("tool_specs", tools)
        if not isinstance(specs, list) or not all(isinstance(spec, dict) for spec in specs):
            self.fail(f"tool_specs gave {specs!r}, not a list of dicts, one for each tool")
        names = [spec.get("name") for spec in specs]
        if names != ["ping", "stamp"]:
            self.fail(f"after stamp was appended to the list, tool_specs gave {names}; work the "
                      "specs out from the list each time, and keep no answer from the last call")
        result, error = self.run_tool_raw(tools, lab.call("stamp", {}, id="c2"))
        if runs[-1:] != [("stamp", {})] or not isinstance(result, dict):
            raised = f" run_tool raised {type(error).__name__}: {error}." if error else ""
            self.fail(f"after stamp was appended to the list, a call for it should run it; what "
                      f"ran: {runs}.{raised} Look the name up in the list you are given, every "
                      "time")
        fresh = _counting_tool("ping", "PONG", runs)
        fresh["description"] = "The new ping tool."
        tools[0] = fresh            # same list, same length, same name: a different tool
        specs = self.call("tool_specs", tools)
        told = specs[0].get("description") if isinstance(specs, list) and specs else specs
        if told != "The new ping tool.":
            self.fail(f"after the ping tool was replaced in the list by a new one (same name, same "
                      f"length of list), tool_specs told the model {told!r}, not the new tool's "
                      "description: work the specs out from the list each time, and keep no "
                      "answer under any key")
        result = self.run_tool(tools, lab.call("ping", {}, id="c3"))
        got = result.get("content") if isinstance(result, dict) else result
        if got != "PONG":
            self.fail(f"after the ping tool was replaced in the list by a new one (same name, same "
                      f"length of list), a call for ping was answered {got!r}, not the new "
                      "tool's 'PONG': look the name up in the list you are given, every time, "
                      "and keep no table from the last call")
        tools[1]["description"] = "Stamp the time, edited."     # the same dict, changed
        specs = self.call("tool_specs", tools)
        told = specs[1].get("description") if isinstance(specs, list) and len(specs) > 1 \
            and isinstance(specs[1], dict) else specs
        if told != "Stamp the time, edited.":
            self.fail(f"after the stamp tool's description was edited in place (the same dict, "
                      f"still on the list), tool_specs told the model {told!r}, not "
                      "'Stamp the time, edited.': read each tool's keys on every call, and keep "
                      "no spec from an earlier call, not even one for the same tool")

    def test_ids_not_mixed(self):
        """Two calls to one tool, c1 and c2, with different arguments get two results: each carries its own call's id, and the tool ran once for each."""
        runs = []
        tools = [_counting_tool("echo", "ok", runs)]
        first = self.run_tool(tools, lab.call("echo", {"n": 1}, id="c1"))
        second = self.run_tool(tools, lab.call("echo", {"n": 2}, id="c2"))
        got = [r.get("tool_call_id") if isinstance(r, dict) else f"a {type(r).__name__}"
               for r in (first, second)]
        if got != ["c1", "c2"]:
            self.fail(f"the two results should carry c1 and c2, the ids of their calls; they "
                      f"carry {got}")
        if runs != [("echo", {"n": 1}), ("echo", {"n": 2})]:
            self.fail(f"echo should have run twice, with n=1 then n=2; what ran: {runs}")

    def test_leaves_its_inputs(self):
        """run_tool changes neither the call nor the list of tools, and adds nothing to either: putting the result in the transcript is the caller's job."""
        runs = []
        tools = [_counting_tool("echo", "ok", runs)]
        call = lab.call("echo", {"n": 1}, id="c1")
        before_call, before_tools = copy.deepcopy(call), copy.deepcopy(tools)
        self.run_tool(tools, call)
        if call != before_call:
            added = sorted(set(call) - set(before_call))
            self.fail(f"run_tool changed the call (keys added: {added}): the result goes in "
                      f"its own message, not on the call")
        if tools != before_tools:
            self.fail("run_tool changed the list of tools or the tool in it (its schema "
                      "included): it reads the tools and leaves them as they were")

    def test_write_tool(self):
        """A write call for a.py, run with make_write_tool over a workspace, is answered "Successfully wrote to a.py." and puts the file on the disk."""
        ws = lab.Workspace()
        call = lab.call("write", {"path": "a.py", "content": "A = 1\n"}, id="w1")
        result = self.run_tool([self.call("make_write_tool", ws)], call)
        on_disk = ws.read_text("a.py") if ws.exists("a.py") else None
        if on_disk != "A = 1\n":
            self.fail(f"a.py should hold 'A = 1\\n' after the call; it holds {on_disk!r}")
        if not isinstance(result, dict):
            self.fail(f"run_tool should return a dict, not {type(result).__name__}")
        if result.get("content") != "Successfully wrote to a.py.":
            self.fail(f"the result should say 'Successfully wrote to a.py.', "
                      f"not {result.get('content')!r}")
        if result.get("tool_call_id") != "w1":
            self.fail(f"the result answers w1, not {result.get('tool_call_id')!r}")


if __name__ == "__main__":
    unittest.main()
