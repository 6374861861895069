"""Lesson 03's lab tests: the loop (point 3.1).

Lab1 checks run_agent: the prompt, then model calls and tool results turn by turn, until a reply
asks for nothing, all of it on the caller's list and all of it sent on every call. Each test's
docstring is its checklist line on the page, word for word; the tests run in the order they are
written. Every message a test fails with is written for the reader: what was expected, what came.

    python lab/lab_check.py --harness harness.py --lesson 3 tests.py

run_agent's return value is read as this run's messages. From lesson 7 on run_agent is a
generator of events: the tests then drive it to its end with lab.drive and read the messages its
agent_end event carries, so later harnesses pass these tests too.
"""
import copy
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
    """A tool that answers f"{name} {arguments}" and notes its name in `runs` each time it runs."""
    def execute(arguments):
        runs.append(name)
        return f"{name} {sorted(arguments.items())}"
    return {"name": name, "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": {}}, "execute": execute}


def _shape(messages):
    return lab.shape(list(messages)) or "(nothing)"


def _held(messages):
    """What a list held, short enough to read in one failure line: a long list by its size and
    its last few messages."""
    if len(messages) > 30:
        return f"{len(messages)} messages, ending {_shape(messages[-6:])}"
    return _shape(messages)


class Lab1(unittest.TestCase):
    longMessage = False

    def run_agent(self, model, messages, tools, prompt, system=None):
        """Run the reader's run_agent to its end and give back what it returned: this run's
        messages. An exception from it becomes a plain failure that says what was on the list
        when it came. From lesson 7 on run_agent is a generator of events: it is driven to its end
        and its messages are the ones agent_end carries."""
        system = harness.SYSTEM if system is None else system
        try:
            returned = harness.run_agent(model, system, messages, tools, prompt)
            if hasattr(returned, "__next__") or hasattr(returned, "__aiter__"):
                # a generator of events (lesson 7 on; async from lesson 15)
                events = lab.drive(returned)
                ends = [e for e in events if isinstance(e, dict) and e.get("type") == "agent_end"]
                returned = ends[-1].get("messages") if ends else None
        except lab.ScriptExhausted:
            self.fail(f"run_agent called the model {len(model.calls)} times and was still going; "
                      f"the script had no more replies. The list held {_held(messages)}. Stop "
                      "when a reply asks for no tools, and send the whole list every time: a "
                      "model sent only part of it asks again for work it has done.")
        except Exception as error:  # the reader's code raised: say so in a sentence
            self.fail(f"run_agent raised {type(error).__name__}: {error}. The list held "
                      f"{_held(messages)} at that moment.")
        return returned

    def assert_shape(self, messages, want, what="your list", hint=""):
        got = _shape(messages)
        if got != want:
            self.fail(f"{what} should be {want}; it is {got}. {hint}".rstrip())

    def test_answer_ends_the_run(self):
        """A first reply that asks for nothing ends the run: your list holds the prompt and that reply, and the model was called once."""
        model = lab.ScriptedModel([lab.say("Hello."), lab.say("Hello again.")])
        messages = []
        self.run_agent(model, messages, [], "Hi")
        self.assert_shape(messages, "U A")
        if messages[0] != harness.user_message("Hi"):
            self.fail(f"the first message should be user_message('Hi'); it is {messages[0]!r}")
        if len(model.calls) != 1:
            self.fail(f"the model should be called once; it was called {len(model.calls)} times. "
                      "A reply with no tool calls is the answer: stop there.")

    def test_three_rounds_then_an_answer(self):
        """The three-file job runs to the end in one call of run_agent: a.py, b.py and c.py are on the disk, and the transcript is U A[w1] R(w1) A[w2] R(w2) A[w3] R(w3) A, after four model calls."""
        ws = lab.Workspace()
        model = lab.ScriptedModel([_writer] * 6)   # a loop that never ends fails, not hangs
        messages = []
        self.run_agent(model, messages, [harness.make_write_tool(ws)], JOB)
        self.assert_shape(messages, "U A[w1] R(w1) A[w2] R(w2) A[w3] R(w3) A",
                          hint="Go round until a reply asks for no tools.")
        missing = [path for path in FILES if not ws.exists(path)]
        if missing:
            self.fail(f"{', '.join(missing)} should be on the disk and is not")
        if len(model.calls) != 4:
            self.fail(f"the job takes four model calls; run_agent made {len(model.calls)}")

    def test_many_rounds(self):
        """A model that calls a tool 1,001 times, one call per reply, gets all 1,001 results and then answers, its last call sent all 2,003 messages: no count of the loop's own stops it early, not even one as large as 1,000, and nothing is cut."""
        rounds = 1001
        runs = []
        # each reply brings its own usage, so the model does not count the tokens of 1,001
        # growing requests, which would take longer than the loop does
        steps = [dict(lab.reply(lab.call("echo", {"n": n}, id=f"c{n}")),
                      usage={"input": 2 * n, "output": 1}) for n in range(1, rounds + 1)]
        model = lab.ScriptedModel(steps + [dict(lab.say("Done counting."),
                                                usage={"input": 2 * rounds + 2, "output": 1})])
        messages = []
        self.run_agent(model, messages, [_tool("echo", runs)], "Count to 1,001.")
        if len(runs) != rounds or len(model.calls) != rounds + 1:
            self.fail(f"{rounds} tool calls should run over {rounds + 1} model calls; {len(runs)} "
                      f"ran over {len(model.calls)}, and the list ends {_shape(messages[-3:])}. "
                      "Go round until a reply asks for nothing, however many turns that takes: "
                      "a limit is a brake (lesson 5), not the way a run ends.")
        results = [m for m in messages if m.get("role") == "toolResult"]
        if len(results) != rounds:
            self.fail(f"the list should hold {rounds} results; it holds {len(results)}")
        if lab.show(messages[-1:]) != 'assistant -> "Done counting."':
            self.fail("the list should end on the answer 'Done counting.'; it ends "
                      f"{lab.show(messages[-1:]) or 'with nothing'}")
        last = model.calls[-1].messages
        if len(last) != 2 * rounds + 1 or list(last) != messages[:2 * rounds + 1]:
            self.fail(f"call {rounds + 1} should be sent all {2 * rounds + 1} messages before it, "
                      f"from the prompt on; it was sent {len(last)}, starting {_shape(last[:1])}. "
                      "Send the whole list on every call, however long it has grown")

    def test_same_call_again(self):
        """A model that asks to read a.txt three times in a row, while the file changes, gets three results and then answers: a repeated call is run again, not taken for the end."""
        versions = iter(["one", "two", "three"])
        reads = []

        def read(arguments):
            reads.append(arguments)
            return f"a.txt says {next(versions)}"
        read_tool = {"name": "read", "description": "Read a file.",
                     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                     "execute": read}
        steps = [lab.reply(lab.call("read", {"path": "a.txt"}, id=f"c{n}")) for n in range(1, 4)]
        model = lab.ScriptedModel(steps + [lab.say("It changed twice.")])
        messages = []
        self.run_agent(model, messages, [read_tool], "Watch a.txt.")
        if len(reads) != 3 or len(model.calls) != 4:
            self.fail(f"three reads should run over four model calls; {len(reads)} ran over "
                      f"{len(model.calls)}. The list is {_shape(messages)}. The same call twice "
                      "is not the end of a run: the file may have changed, and only a reply "
                      "with no calls ends it.")
        problems = lab.validate(messages)
        if problems:
            self.fail(f"lab.validate finds {len(problems)} problem(s) in {_shape(messages)}; "
                      f"the first: {problems[0]}")
        self.assert_shape(messages, "U A[c1] R(c1) A[c2] R(c2) A[c3] R(c3) A")

    def test_same_answer_again(self):
        """A status check answered "running", "running", then "done", one call per reply, runs three times and then the model answers: a result that repeats the one before is not the end of a run."""
        answers = iter(["running", "running", "done"])
        runs = []

        def status(arguments):
            runs.append("status")
            return next(answers)
        tool = {"name": "status", "description": "Is the build done?",
                "parameters": {"type": "object", "properties": {}}, "execute": status}
        steps = [lab.reply(lab.call("status", {}, id=f"s{n}")) for n in range(1, 4)]
        model = lab.ScriptedModel(steps + [lab.say("The build is done.")])
        messages = []
        self.run_agent(model, messages, [tool], "Wait for the build.")
        if len(runs) != 3 or len(model.calls) != 4:
            self.fail(f"three status checks should run over four model calls; {len(runs)} ran "
                      f"over {len(model.calls)}, and the list is {_shape(messages)}. The same "
                      "result twice is not the end: only a reply with no calls ends the run")
        self.assert_shape(messages, "U A[s1] R(s1) A[s2] R(s2) A[s3] R(s3) A")

    def test_identical_calls_in_one_reply(self):
        """Two identical calls in one reply, c1 and c2 both reading a.txt while it changes, run the tool twice: each call gets its own result, "one" for c1 and "two" for c2."""
        versions = iter(["one", "two"])
        reads = []

        def read(arguments):
            reads.append(arguments)
            return next(versions)
        read_tool = {"name": "read", "description": "Read a file.",
                     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                     "execute": read}
        model = lab.ScriptedModel([lab.reply(lab.call("read", {"path": "a.txt"}, id="c1"),
                                             lab.call("read", {"path": "a.txt"}, id="c2")),
                                   lab.say("It changed.")])
        messages = []
        self.run_agent(model, messages, [read_tool], "Read a.txt twice.")
        if len(reads) != 2:
            self.fail(f"the reply asked for two reads, and the tool ran {len(reads)} time(s): "
                      "every call is run, even one that looks like the call before it")
        results = [(m.get("tool_call_id"), m.get("content")) for m in messages
                   if isinstance(m, dict) and m.get("role") == "toolResult"]
        if results != [("c1", "one"), ("c2", "two")]:
            self.fail(f"the results should be c1 'one' then c2 'two', each call's own; they are "
                      f"{results}")

    def test_every_call_block_runs(self):
        """Every call block in a reply runs, even two that share the id d1 (a model's slip): the tool runs for a.py and then for b.py before the model is asked again."""
        paths = []

        def read(arguments):
            paths.append(arguments.get("path"))
            return "read"
        read_tool = {"name": "read", "description": "Read a file.",
                     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                     "execute": read}
        model = lab.ScriptedModel([lab.reply(lab.call("read", {"path": "a.py"}, id="d1"),
                                             lab.call("read", {"path": "b.py"}, id="d1")),
                                   lab.say("Both read.")])
        messages = []
        self.run_agent(model, messages, [read_tool], "Read both.")
        if paths != ["a.py", "b.py"]:
            self.fail(f"the reply holds two calls, a.py then b.py, both with the id d1; the tool "
                      f"ran for {paths}. Run every call block in the reply: do not skip one "
                      "because its id was seen already")
        if len(model.calls) != 2:
            self.fail(f"the model should be asked again once both calls have run; it was called "
                      f"{len(model.calls)} time(s)")

    def test_every_call_sent_everything(self):
        """Every model call is sent the whole transcript so far, from the prompt on, with SYSTEM and the tools' specs: call 3 of the job is sent all five messages before it."""
        ws = lab.Workspace()
        model = lab.ScriptedModel([_writer] * 6)   # a loop that never ends fails, not hangs
        messages = []
        tools = [harness.make_write_tool(ws)]
        self.run_agent(model, messages, tools, JOB)
        # what each call should be sent, known without reading your list: the job's transcript
        job = "U A[w1] R(w1) A[w2] R(w2) A[w3] R(w3) A".split()
        for number, request in enumerate(model.calls, 1):
            if number > 4:
                self.fail(f"the job takes four model calls; run_agent made {len(model.calls)}")
            want = " ".join(job[:2 * number - 1])
            if _shape(request.messages) != want:
                self.fail(f"call {number} should be sent {want}; it was sent "
                          f"{_shape(request.messages)}. The model keeps nothing: send the whole "
                          "list, not only what is new.")
            if request.messages[0] != harness.user_message(JOB):
                self.fail(f"call {number} should be sent the prompt first, as user_message made "
                          f"it; it was sent {request.messages[0]!r}")
            for earlier in range(1, number):
                if request.messages[2 * earlier - 1] != model.calls[earlier - 1].reply:
                    self.fail(f"call {number} should be sent the reply to call {earlier} as it "
                              "came back; it was sent "
                              f"{request.messages[2 * earlier - 1]!r}")
            if request.system != harness.SYSTEM:
                self.fail(f"call {number} was sent the system prompt {request.system!r}; "
                          "send the one run_agent was given (here SYSTEM)")
            if any(isinstance(t, dict) and "execute" in t for t in request.tools):
                self.fail(f"call {number} was sent the tool dicts themselves, execute functions "
                          "and all; send tool_specs(tools), the part the model is told about")
            if request.tools != harness.tool_specs(tools):
                self.fail(f"call {number} was sent the tools {request.tools!r}; send "
                          "tool_specs(tools) on every call, not only the first")

    def test_tools_as_the_list_stands(self):
        """Each model call is sent the specs of the tools as the list stands at that call: a tool that appends a clock tool to the list during the run has clock offered on the next call, and run."""
        runs = []
        tools = []

        def install(arguments):
            runs.append("install")
            tools.append(_tool("clock", runs))
            return "clock installed"
        tools.append({"name": "install", "description": "Add the clock tool.",
                      "parameters": {"type": "object", "properties": {}}, "execute": install})
        model = lab.ScriptedModel([lab.reply(lab.call("install", {}, id="c1")),
                                   lab.reply(lab.call("clock", {}, id="c2")),
                                   lab.say("Done.")])
        messages = []
        self.run_agent(model, messages, tools, "Tell me the time.")
        offered = [[spec.get("name") for spec in request.tools] for request in model.calls]
        if offered[1:2] != [["install", "clock"]]:
            self.fail(f"call 2 should be offered install and clock, the list as it stands after "
                      f"install ran; the calls were offered {offered}. Work tool_specs(tools) "
                      "out for each call, not once before the loop")
        if runs != ["install", "clock"]:
            self.fail(f"install, then clock, should have run; what ran: {runs}")

    def test_tool_replaced_in_place(self):
        """The specs are worked out again for every call, even when the number of tools stays the same: a tool that puts a clock tool in its own place on the list has clock, and not itself, offered on the next call."""
        runs = []
        tools = []

        def swap(arguments):
            runs.append("swap")
            tools[0] = _tool("clock", runs)
            return "swap is now clock"
        tools.append({"name": "swap", "description": "Put the clock tool in my place.",
                      "parameters": {"type": "object", "properties": {}}, "execute": swap})
        model = lab.ScriptedModel([lab.reply(lab.call("swap", {}, id="c1")),
                                   lab.reply(lab.call("clock", {}, id="c2")),
                                   lab.say("Done.")])
        messages = []
        self.run_agent(model, messages, tools, "Tell me the time.")
        offered = [[spec.get("name") for spec in request.tools] for request in model.calls]
        if offered[1:2] != [["clock"]]:
            self.fail(f"call 2 should be offered clock alone, the list as it stands after swap "
                      f"put clock in its place; the calls were offered {offered}. Work "
                      "tool_specs(tools) out for each call: a list that changes can keep its "
                      "length")

    def test_results_before_the_next_call(self):
        """Two calls in one reply get two results, in the order asked, both before the model is asked again."""
        runs = []
        first, second = lab.call("clock", {}, id="c1"), lab.call("echo", {"n": 1}, id="c2")
        model = lab.ScriptedModel([lab.reply(first, second), lab.say("Done.")])
        messages = []
        self.run_agent(model, messages, [_tool("clock", runs), _tool("echo", runs)], "Go.")
        if runs != ["clock", "echo"]:
            self.fail(f"the tools should run clock, then echo; they ran {runs or 'not at all'}")
        self.assert_shape(messages, "U A[c1,c2] R(c1) R(c2) A")
        if len(model.calls) < 2:
            self.fail("the model should be asked again once both results are on the list; it "
                      "was called once")
        self.assert_shape(model.calls[1].messages, "U A[c1,c2] R(c1) R(c2)",
                          "what the second model call was sent")

    def test_calls_decide_not_stop_reason(self):
        """The calls decide, not stop_reason: a reply that holds a call runs it even when its stop_reason says "stop", and a reply with no calls ends the run even when it says "toolUse"."""
        runs = []
        mislabelled = {**lab.reply(lab.call("echo", {"n": 1}, id="c1")), "stop_reason": "stop"}
        empty_ask = {**lab.say("Nothing to run."), "stop_reason": "toolUse"}
        model = lab.ScriptedModel([mislabelled, empty_ask, lab.say("Spare.")])
        messages = []
        self.run_agent(model, messages, [_tool("echo", runs)], "Go.")
        if runs != ["echo"]:
            self.fail("a reply that holds a tool call, whatever its stop_reason, is a request: "
                      f"run it. The list is {_shape(messages)}; the tool ran {len(runs)} times.")
        self.assert_shape(messages, "U A[c1] R(c1) A",
                          hint="Decide from tool_calls(reply), not from its stop_reason.")

    def test_cut_short_reply_with_a_call(self):
        """A reply cut short by its length limit (stop_reason "length") that holds a call is still a request: the call runs and the model is asked again."""
        runs = []
        cut = {**lab.reply(lab.text("Let me check"), lab.call("echo", {"n": 1}, id="c1")),
               "stop_reason": "length"}
        model = lab.ScriptedModel([cut, lab.say("Checked."), lab.say("Spare.")])
        messages = []
        self.run_agent(model, messages, [_tool("echo", runs)], "Go.")
        if runs != ["echo"]:
            self.fail("the reply holds a call and its stop_reason says \"length\" (the model hit "
                      f"its limit after writing the call); the tool ran {len(runs)} times and the "
                      f"list is {_shape(messages)}. The calls decide, not stop_reason: run it.")
        self.assert_shape(messages, "U A[c1] R(c1) A",
                          hint="Decide from tool_calls(reply), not from its stop_reason.")

    def test_failed_reply_with_a_call(self):
        """A reply marked "aborted" that still holds a call is still a request: the call runs and the model is asked again; so is one marked "error", until lesson 5 makes a failed reply end the run."""
        labels = ["aborted"] if hasattr(harness, "error_message") else ["aborted", "error"]
        for label in labels:   # from lesson 5 on, a reply marked "error" ends the run
            runs = []
            failed = {**lab.reply(lab.call("echo", {"n": 1}, id="c1")), "stop_reason": label}
            model = lab.ScriptedModel([failed, lab.say("Checked."), lab.say("Spare.")])
            messages = []
            self.run_agent(model, messages, [_tool("echo", runs)], "Go.")
            if runs != ["echo"]:
                self.fail(f"the reply holds a call and its stop_reason says \"{label}\"; the tool "
                          f"ran {len(runs)} times and the list is {_shape(messages)}. In this "
                          "lesson the calls decide, not stop_reason, even a failed one: run it.")
            mark = "A!" if label == "error" else "A"     # lab.shape marks a failed reply A!
            self.assert_shape(messages, f"U {mark}[c1] R(c1) A",
                              hint="Decide from tool_calls(reply), not from its stop_reason.")

    def test_text_with_calls_is_not_the_end(self):
        """A reply with words and a call is not the answer: its call runs and the model is asked again."""
        runs = []
        model = lab.ScriptedModel([lab.reply(lab.text("Here is the answer, once I check."),
                                             lab.call("echo", {"n": 1}, id="c1")),
                                   lab.say("Checked.")])
        messages = []
        self.run_agent(model, messages, [_tool("echo", runs)], "Go.")
        self.assert_shape(messages, "U A[c1] R(c1) A",
                          hint="Words are for the reader; the calls decide whether to go on.")

    def test_words_after_calls_are_not_the_end(self):
        """A reply that asks for two calls and then talks is not the answer either: c1 and c2 run, in that order, and the model is asked again."""
        runs = []
        model = lab.ScriptedModel([lab.reply(lab.call("clock", {}, id="c1"),
                                             lab.call("echo", {"n": 1}, id="c2"),
                                             lab.text("Checking both.")),
                                   lab.say("Both checked.")])
        messages = []
        self.run_agent(model, messages, [_tool("clock", runs), _tool("echo", runs)], "Go.")
        if runs != ["clock", "echo"]:
            self.fail(f"the reply asked for clock, then echo, and then talked; the tools ran "
                      f"{runs or 'not at all'}. A reply's last block is not what decides: any "
                      "call in it means the run goes on")
        self.assert_shape(messages, "U A[c1,c2] R(c1) R(c2) A",
                          hint="A reply's last block is not what decides: any call in it means "
                               "the run goes on. Ask tool_calls(reply).")

    def test_empty_reply_ends_the_run(self):
        """A reply with no calls ends the run even when it has no words either: an empty reply is the answer, and the model is called once."""
        empty = {"role": "assistant", "content": [], "stop_reason": "stop"}
        model = lab.ScriptedModel([empty, lab.say("Spare.")])
        messages = []
        self.run_agent(model, messages, [], "Hi")
        if len(model.calls) != 1:
            self.fail(f"the first reply asked for nothing, so the run should end there, after one "
                      f"model call; it made {len(model.calls)}. No calls is the end, words or none")
        self.assert_shape(messages, "U A")

    def test_empty_reply_still_sent(self):
        """An empty reply already on the list is sent with the rest: a run that starts after one sends the model the whole list, the empty reply included."""
        empty = {"role": "assistant", "content": [], "stop_reason": "stop"}
        messages = [lab.user("Hi"), empty]
        model = lab.ScriptedModel([lab.say("Yes, I am here."), lab.say("Spare.")])
        self.run_agent(model, messages, [], "Are you there?")
        sent = list(model.calls[0].messages) if model.calls else []
        if sent[:3] != [lab.user("Hi"), empty, harness.user_message("Are you there?")]:
            self.fail(f"call 1 should be sent U A U, the empty reply included; it was sent "
                      f"{_shape(sent)}. Send the whole of messages as it stands: leave out no "
                      "message, not even one with no words")

    def test_same_prompt_twice(self):
        """Two runs on one list with the same prompt, "Again.", put it on your list twice: the list is U A U A, and the second call is sent both prompts."""
        model = lab.ScriptedModel([lab.say("One."), lab.say("Two.")])
        messages = []
        self.run_agent(model, messages, [], "Again.")
        self.run_agent(model, messages, [], "Again.")
        self.assert_shape(messages, "U A U A",
                          hint="A prompt that repeats an earlier one is still a new message: "
                               "record it every time.")
        if len(model.calls) != 2 or len(model.calls[1].messages) != 3:
            sent = _shape(model.calls[-1].messages) if model.calls else "nothing"
            self.fail("the second run's model call should be sent U A U, the second prompt "
                      f"last; it was sent {sent}")

    def test_prompt_as_typed(self):
        """The prompt goes on your list exactly as typed: "  Go.\\n" keeps its spaces and line break, and an empty prompt "" is still a user message, sent to the model."""
        for prompt in ("  Go.\n", ""):
            model = lab.ScriptedModel([lab.say("Done.")])
            messages = []
            self.run_agent(model, messages, [], prompt)
            want = harness.user_message(prompt)
            if not messages or messages[0] != want:
                self.fail(f"for the prompt {prompt!r} the list should start with {want!r}; it is "
                          f"{_shape(messages)}, starting {messages[:1]!r}. Make the prompt a user "
                          "message as it came: nothing tidied, nothing left out")
            sent = model.calls[0].messages if model.calls else []
            if list(sent[:1]) != [want]:
                self.fail(f"the model call should be sent {want!r} first; it was sent "
                          f"{_shape(sent)}")

    def test_reply_is_the_models_dict(self):
        """Each reply goes on your list as the model returned it: the very dict complete() gave, not a copy."""
        returned = []

        class Keeping(lab.ScriptedModel):
            def complete(self, system, messages, tools=None):
                reply = super().complete(system, messages, tools)
                returned.append(reply)
                return reply
        runs = []
        model = Keeping([lab.reply(lab.call("echo", {"n": 1}, id="c1")), lab.say("Done.")])
        messages = []
        self.run_agent(model, messages, [_tool("echo", runs)], "Go.")
        replies = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
        if len(replies) != 2 or any(a is not b for a, b in zip(replies, returned)):
            self.fail(f"your list should hold the two replies complete() returned, the same "
                      f"dicts; it holds {_shape(messages)}" + (
                          ", with equal copies in their place" if replies == returned else "") +
                      ". Append the reply itself")

    def test_model_error_goes_up(self):
        """When a model call raises, run_agent raises that same error, and your list keeps what happened before it: U A[c1] R(c1)."""
        runs = []
        down = ConnectionError("the network is down")
        model = lab.ScriptedModel([lab.reply(lab.call("echo", {"n": 1}, id="c1")),
                                   lab.raises(down)])
        messages = []
        try:
            returned = harness.run_agent(model, harness.SYSTEM, messages, [_tool("echo", runs)],
                                         "Go.")
            if hasattr(returned, "__next__") or hasattr(returned, "__aiter__"):
                lab.drive(returned)
        except ConnectionError as error:
            if error is not down:
                self.fail("run_agent raised a new ConnectionError of its own; let the one the "
                          "model raised go up as it is")
        except Exception as error:  # the reader's code raised something else
            self.fail(f"the model raised ConnectionError, and run_agent raised "
                      f"{type(error).__name__}: {error}. Let the model's own error go up")
        else:
            self.fail("the second model call raised ConnectionError, and run_agent returned as "
                      f"if the run had ended; your list holds {_shape(messages)}. Catch nothing: "
                      "the caller has to hear that the model was never reached")
        self.assert_shape(messages, "U A[c1] R(c1)",
                          hint="Everything that happened before the error stays on the list.")

    def test_first_call_error_keeps_the_prompt(self):
        """When the very first model call raises, run_agent raises that same error, and your list holds the prompt, U: it went on the list before the model was asked."""
        down = ConnectionError("the network is down")
        model = lab.ScriptedModel([lab.raises(down)])
        messages = []
        try:
            returned = harness.run_agent(model, harness.SYSTEM, messages, [], "Go.")
            if hasattr(returned, "__next__") or hasattr(returned, "__aiter__"):
                lab.drive(returned)
        except ConnectionError as error:
            if error is not down:
                self.fail("run_agent raised a new ConnectionError of its own; let the one the "
                          "model raised go up as it is")
        except Exception as error:  # the reader's code raised something else
            self.fail(f"the model raised ConnectionError, and run_agent raised "
                      f"{type(error).__name__}: {error}. Let the model's own error go up")
        else:
            self.fail("the first model call raised ConnectionError, and run_agent returned as "
                      f"if the run had ended; your list holds {_shape(messages)}. Catch nothing")
        self.assert_shape(messages, "U", hint="Append the prompt first, then call the model: "
                          "the prompt happened even if no reply ever came.")

    def test_raising_tool_not_a_success(self):
        """A tool that raises is never answered as a success: its own error goes up through run_agent with your list at U A[c1] (today), or its result is marked is_error (lesson 4)."""
        fire = OSError("disk on fire")

        def broken(arguments):
            raise fire
        tool = {"name": "broken", "description": "Breaks.",
                "parameters": {"type": "object", "properties": {}}, "execute": broken}
        model = lab.ScriptedModel([lab.reply(lab.call("broken", {}, id="c1")),
                                   lab.say("Sorry."), lab.say("Spare.")])
        messages = []
        try:
            returned = harness.run_agent(model, harness.SYSTEM, messages, [tool], "Go.")
            if hasattr(returned, "__next__") or hasattr(returned, "__aiter__"):
                lab.drive(returned)
        except Exception as error:  # today the tool's error goes up: it must be that one
            if error is not fire:
                self.fail(f"the tool raised OSError('disk on fire'), and run_agent raised "
                          f"{type(error).__name__}: {error}. Catch nothing today: let the "
                          "tool's own error go up")
            self.assert_shape(messages, "U A[c1]",
                              hint="What happened before the error stays on the list, and no "
                                   "result is made up for the call that failed.")
            return
        results = [m for m in messages if isinstance(m, dict) and m.get("role") == "toolResult"]
        if not results:
            self.fail(f"the tool raised, and run_agent returned as if the run had ended, with "
                      f"{_shape(messages)}: the call has no result, and the caller never heard "
                      "of the error. Catch nothing today: let the tool's own error go up")
        if any(m.get("is_error") is not True for m in results):
            self.fail(f"the tool raised, and run_agent went on with {_shape(messages)}, the "
                      f"result marked is_error {[m.get('is_error') for m in results]}: the model "
                      "would be told the call worked. Catch nothing today; lesson 4 answers it "
                      "with a result marked is_error")

    def test_reply_on_the_list_while_tools_run(self):
        """While a tool runs, your list already holds the reply that asked for it and the results of the calls before it: c1 sees U A[c1,c2], c2 sees U A[c1,c2] R(c1)."""
        messages, seen = [], []

        def peek(arguments):
            seen.append(_shape(messages))
            return "looked"
        tool = {"name": "peek", "description": "Look.",
                "parameters": {"type": "object", "properties": {}}, "execute": peek}
        model = lab.ScriptedModel([lab.reply(lab.call("peek", {}, id="c1"),
                                             lab.call("peek", {}, id="c2")),
                                   lab.say("Done.")])
        self.run_agent(model, messages, [tool], "Look.")
        want = ["U A[c1,c2]", "U A[c1,c2] R(c1)"]
        for name, expected, got in zip(("c1", "c2"), want, seen + ["(it never ran)"] * 2):
            if got != expected:
                self.fail(f"while {name} ran, your list should have been {expected}; it was "
                          f"{got}. Append the reply before running its calls, and each result "
                          "as soon as it comes.")

    def test_the_callers_list(self):
        """The messages go on the list you passed: what it held before the run stays first, untouched, is sent to the model, and a new list is a new conversation."""
        earlier = [lab.user("My name is Ada."), lab.say("Nice to meet you, Ada.")]
        copies = copy.deepcopy(earlier)
        messages = list(earlier)
        model = lab.ScriptedModel([lab.forgetful(), lab.forgetful()])
        self.run_agent(model, messages, [], "What is my name?")
        if len(messages) < 2 or messages[0] is not earlier[0] or messages[1] is not earlier[1]:
            self.fail("the two messages the list held before the run should still be its first "
                      f"two, the same objects; the list is now {_shape(messages)}. Append to the "
                      "caller's list; do not copy or rebuild it.")
        if earlier != copies:
            self.fail("the two messages the list held before the run were changed; leave "
                      "earlier messages exactly as they were")
        sent = model.calls[0].messages if model.calls else []
        if list(sent[:2]) != copies:
            self.fail("the model call should be sent the two earlier messages first; it was "
                      f"sent {_shape(sent)}")
        self.assert_shape(messages, "U A U A")
        if lab.show(messages[-1:]) != 'assistant -> "Your name is Ada."':
            self.fail("the model should have been sent the earlier messages and answered 'Your "
                      f"name is Ada.'; it answered {lab.show(messages[-1:])}")
        fresh = []
        self.run_agent(model, fresh, [], "What is my name?")
        if lab.show(fresh[-1:]) != 'assistant -> "I don\'t know your name."':
            self.fail("a new list is a new conversation: nothing of the last run may leak in; "
                      f"on a fresh list the model was sent {_shape(model.calls[-1].messages)} "
                      f"and answered {lab.show(fresh[-1:]) or 'nothing'}")

    def test_second_prompt_carries_on(self):
        """A second run on the same list carries on: its first model call is sent the whole first run, tool calls and results included, then the new prompt."""
        runs = []
        model = lab.ScriptedModel([lab.reply(lab.call("echo", {"n": 1}, id="c1")),
                                   lab.say("One."), lab.say("Still one.")])
        messages = []
        self.run_agent(model, messages, [_tool("echo", runs)], "Count.")
        self.run_agent(model, messages, [_tool("echo", runs)], "And now?")
        if len(model.calls) != 3:
            self.fail(f"two runs should make three model calls; they made {len(model.calls)}")
        self.assert_shape(model.calls[2].messages, "U A[c1] R(c1) A U",
                          "what the second run's model call was sent")

    def test_returns_this_runs_messages(self):
        """run_agent returns this run's messages as a list, the very dicts it put on your list, from the prompt to the final answer: a second run on the same list returns only its own two."""
        runs = []
        model = lab.ScriptedModel([lab.reply(lab.call("echo", {"n": 1}, id="c1")),
                                   lab.say("One."), lab.say("Still one.")])
        messages = [lab.user("Hello."), lab.say("Hello.")]
        for number, prompt in ((1, "Count."), (2, "And now?")):
            start = len(messages)
            returned = self.run_agent(model, messages, [_tool("echo", runs)], prompt)
            if returned is None:
                self.fail(f"run {number} returned None. run_agent returns this run's messages, a "
                          "list from the prompt to the answer: the loop on the page ends with "
                          "`break`, and a function that falls off its end returns None")
            if not isinstance(returned, list):
                self.fail(f"run {number} returned a {type(returned).__name__}, "
                          f"{repr(returned)[:80]}; it should return a list of this run's messages")
            own = messages[start:]
            if not own:
                self.fail(f"run {number} put nothing on your list, so it has no messages of its "
                          "own to return: append to the list you were given")
            if len(returned) != len(own) or any(a is not b for a, b in zip(returned, own)):
                got = (_shape(returned) if all(isinstance(m, dict) for m in returned)
                       else repr(returned)[:80])
                if len(returned) > 12:  # a long return: its size and its end are enough
                    got = f"{len(returned)} messages, ending {_shape(returned[-3:])}"
                if returned == own:
                    got += ", equal dicts but copies, not the ones on your list"
                self.fail(f"run {number} should return {_shape(own)}, the messages it put on "
                          f"your list (the same dicts, not copies), and only those; it returned "
                          f"{got}")

    def test_the_system_it_is_given(self):
        """Every model call is sent the system prompt run_agent was given, as given: a run given "Be brief." sends "Be brief." on each of its calls, and a run given "" sends "", not SYSTEM."""
        for system in ("Be brief.", ""):
            runs = []
            model = lab.ScriptedModel([lab.reply(lab.call("echo", {"n": 1}, id="c1")),
                                       lab.say("Done.")])
            self.run_agent(model, [], [_tool("echo", runs)], "Go.", system=system)
            sent = [request.system for request in model.calls]
            if sent != [system, system]:
                self.fail(f"given the system prompt {system!r}, the two model calls should each "
                          f"be sent {system!r}; they were sent {sent}. Send the `system` argument "
                          "as it is: not the module's SYSTEM, and not SYSTEM in place of an empty "
                          "one (`system or SYSTEM` does that)")

    def test_valid_transcript(self):
        """At the end of a run with calls, lab.validate finds nothing wrong with your list: every call is answered by its result, right after it."""
        runs = []
        calls = [lab.call("echo", {"n": n}, id=f"c{n}") for n in range(1, 4)]
        model = lab.ScriptedModel([lab.reply(calls[0]), lab.reply(lab.text("Two more."),
                                   calls[1], calls[2]), lab.say("Done.")])
        messages = []
        self.run_agent(model, messages, [_tool("echo", runs)], "Count to three.")
        problems = lab.validate(messages)
        if problems:
            self.fail(f"lab.validate finds {len(problems)} problem(s) in {_shape(messages)}; "
                      f"the first: {problems[0]}")
        self.assert_shape(messages, "U A[c1] R(c1) A[c2,c3] R(c2) R(c3) A")


if __name__ == "__main__":
    unittest.main()
