"""Lesson 10's lab tests: the record is not the view (point 10.1).

Lab1 checks repair_tool_history and context_for_model, which build for every request a transcript
a provider accepts without changing the record, and Harness._run's try/finally, which leaves the
harness idle however a run ends. Each test's docstring is its checklist line on the page, word for
word; the tests run in the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 10 tests.py

Every message a check fails with is written for the reader: what was expected, what happened.
"""
import copy
import inspect
import unittest

import harness
import lab

LESSON = 10


def _tool(name, answer="done"):
    return {"name": name, "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": {}},
            "execute": lambda arguments: answer}


def _shape(messages):
    return lab.shape(list(messages)) or "(nothing)"


def _what(value):
    """A short description of a returned value, for a failure message."""
    if isinstance(value, list):
        return f"a list of {len(value)}: {_shape(value)}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _where(messages, target):
    """Where `target` (the very object) sits in `messages`, as words."""
    for k, m in enumerate(messages):
        if m is target:
            return f"at view[{k}]"
    return "nowhere in the view (an equal copy does not count)"


class _LabCase(unittest.TestCase):
    """Shared checks. Messages are the whole story, so unittest's own prefix is switched off."""
    longMessage = False

    def repair(self, messages, name="repair_tool_history"):
        """Call harness.<name>(messages); a raise or a non-list is a FAIL with a sentence."""
        function = getattr(harness, name, None)
        if function is None:
            self.fail(f"harness has no {name}: write it in the gap the spec marks.")
        try:
            view = function(messages)
        except Exception as error:
            self.fail(f"{name}({_shape(messages)}) raised {type(error).__name__}: {error}")
        if not isinstance(view, list):
            self.fail(f"{name} returned {_what(view)}; expected a new list.")
        return view

    def prompt(self, h, text, when):
        """Run h.prompt(text) to the end; an exception is a FAIL that says when it happened."""
        try:
            lab.drive(h.prompt(text))
        except Exception as error:
            self.fail(f"{when}, h.prompt({text!r}) raised {type(error).__name__}: {error}. "
                      "The run before it has left the harness unusable: clear the running flag "
                      "in a finally, so it is cleared however the run ends.")

    def close(self, run, when):
        """run.close(); a run that yields again while it is being closed is a FAIL that says so."""
        try:
            run.close()
        except RuntimeError as error:
            self.fail(f"{when}, closing the run raised RuntimeError: {error}. Your _run yielded "
                      "again after it was told to close: is there a yield inside its finally? A "
                      "finally that runs on a close may clean up, but never yield.")
        except Exception as error:
            self.fail(f"{when}, closing the run raised {type(error).__name__}: {error}. A "
                      "finally that runs on a close should clear the flag and close run_agent's "
                      "generator, nothing that can fail.")

    def assert_unchanged(self, record, before, name):
        if record != before:
            self.fail(f"{name} changed the list it was given: it was {_shape(before)} and is now "
                      f"{_shape(record)}. That list is the record; build a new one.")


class Lab1(_LabCase):

    def test_valid_comes_back_equal(self):
        """repair_tool_history of a valid transcript is equal to it: a new list, holding the very same message objects; an empty failed reply in it stays too (leaving that out is context_for_model's work)."""
        read = lab.call("read", {"path": "config.py"}, id="c1")
        messages = [lab.user("Which port?"), lab.reply(read), lab.tool_result(read, "PORT = 9090\n"),
                    lab.say("9090.")]
        view = self.repair(messages)
        if view != messages:
            self.fail(f"a valid transcript, {_shape(messages)}, came back as {_shape(view)}; "
                      "expected it back unchanged: there was nothing to repair.")
        if view is messages:
            self.fail("repair_tool_history returned the very list it was given. Return a new "
                      "list: the one you were given is the record, and the caller may change "
                      "the view.")
        for k, (a, b) in enumerate(zip(view, messages)):
            if a is not b:
                self.fail(f"view[{k}] is an equal copy of messages[{k}], not the same object. "
                          "Put the message objects themselves in the new list: nobody edits a "
                          "message, so copying them costs time and protects nothing.")
        failed = lab.provider_error("503")
        record = [lab.user("Hi"), failed, lab.user("Hi?")]
        view = self.repair(record)
        if len(view) != 3 or view[1] is not failed:
            self.fail(f"repair_tool_history({_shape(record)}) gave {_shape(view)}; expected "
                      f"{_shape(record)}, the failed reply still in it. repair_tool_history "
                      "leaves out results only; leaving out an empty failed reply is "
                      "context_for_model's work, done before it calls the repair.")

    def test_missing_result_interrupted(self):
        """A call with no result gets one right after it, a toolResult with its id and name, content INTERRUPTED and is_error True, and the record is not changed."""
        pytest_call = lab.call("bash", {"command": "pytest"}, id="c1")
        record = [lab.user("Run the tests."), lab.reply(lab.text("Running them."), pytest_call),
                  lab.user("Are you still there?")]
        before = copy.deepcopy(record)
        view = self.repair(record)
        self.assert_unchanged(record, before, "repair_tool_history")
        if _shape(view) != "U A[c1] R(c1) U":
            self.fail(f"the record {_shape(record)} was repaired as {_shape(view)}; expected "
                      "U A[c1] R(c1) U: a result for c1 right after its call, the rest as it was.")
        want = {"role": "toolResult", "tool_call_id": "c1", "tool_name": "bash",
                "content": harness.INTERRUPTED, "is_error": True}
        if view[2] != want:
            wrong = sorted(key for key in want.keys() | view[2].keys()
                           if view[2].get(key) != want.get(key))
            self.fail(f"the made-up result is {_what(view[2])}; it differs from {want!r} in "
                      f"{', '.join(wrong)}.")

    def test_two_missing_results(self):
        """Two calls with no result in one message get two made-up results, one for each call, in call order: two separate messages, never one shared dict."""
        w1 = lab.call("write", {"path": "a.txt"}, id="w1")
        w2 = lab.call("write", {"path": "b.txt"}, id="w2")
        record = [lab.user("Write both."), lab.reply(w1, w2)]
        before = copy.deepcopy(record)
        view = self.repair(record)
        self.assert_unchanged(record, before, "repair_tool_history")
        if _shape(view) != "U A[w1,w2] R(w1) R(w2)":
            self.fail(f"the record {_shape(record)} was repaired as {_shape(view)}; expected "
                      "U A[w1,w2] R(w1) R(w2): one made-up result per unanswered call, in call "
                      "order.")
        problems = lab.validate(view)
        if problems:
            self.fail(f"the repaired view is not a transcript a provider accepts: {problems[0]}")
        if view[2] is view[3]:
            self.fail("view[2] and view[3] are one and the same dict, so both carry the id of "
                      "whichever call was filled in last. Build a new result dict for every "
                      "call that has none; never keep one stand-in and update it.")

    def test_results_put_in_place(self):
        """A result recorded out of place is moved to just after its call, in call order; of two results for one call the first wins; a result whose call is nowhere is dropped."""
        a, b = lab.call("t", {"n": 1}, id="a"), lab.call("t", {"n": 2}, id="b")
        first_b, second_b = lab.tool_result(b, "b first"), lab.tool_result(b, "b again")
        stray = lab.tool_result(lab.call("t", {}, id="zz"), "orphan")
        ra = lab.tool_result(a, "a")
        record = [lab.user("Go."), stray, lab.reply(a, b), first_b, lab.user("Hurry."), ra,
                  second_b, lab.say("Done.")]
        before = copy.deepcopy(record)
        view = self.repair(record)
        self.assert_unchanged(record, before, "repair_tool_history")
        if _shape(view) != "U A[a,b] R(a) R(b) U A":
            self.fail(f"the record {_shape(record)} was repaired as {_shape(view)}; expected "
                      "U A[a,b] R(a) R(b) U A: a's result and one of b's moved up after the "
                      "call, in call order, the second result for b and the orphan zz dropped.")
        if view[2] is not ra:
            self.fail(f"the result recorded for a is {_where(view, ra)}; expected it at view[2], "
                      "right after the call. A recorded result is moved, never made up.")
        if view[3] is not first_b:
            said = "the second one" if view[3] is second_b else _what(view[3])
            self.fail(f"b has two recorded results, and view[3] is {said}; expected the first "
                      "one recorded: of two results for one call, the first wins.")

    def test_first_wins_over_a_later_success(self):
        """Of two results for one call, the first recorded wins even when it is marked is_error and the later one is not."""
        make = lab.call("bash", {"command": "make"}, id="m1")
        failed = {**lab.tool_result(make, "make: *** [all] Error 2"), "is_error": True}
        late = lab.tool_result(make, "built")
        record = [lab.user("Build it."), lab.reply(make), failed, lab.say("The build failed."),
                  lab.user("Try again?"), late]
        view = self.repair(record)
        if _shape(view) != "U A[m1] R(m1) A U" or view[2] is not failed:
            said = ("the later one (\"built\")" if len(view) > 2 and view[2] is late
                    else _what(view[2]) if len(view) > 2 else "nothing")
            self.fail(f"the record {_shape(record)} holds a failed result for m1 and, later, "
                      f"one that is not marked is_error; it was repaired as {_shape(view)}, with "
                      f"{said} after the call. Expected U A[m1] R(m1) A U with the failed one: "
                      "the model was told the build failed and answered that, so of two results "
                      "for one call the first wins, whichever is marked is_error.")

    def test_half_answered_batch(self):
        """A batch closed half way, U A[w1,w2] R(w1), gets a stand-in for w2 alone, right after the result recorded for w1."""
        w1 = lab.call("write", {"path": "a.txt"}, id="w1")
        w2 = lab.call("write", {"path": "b.txt"}, id="w2")
        r1 = lab.tool_result(w1, "Successfully wrote to a.txt.")
        record = [lab.user("Write both."), lab.reply(w1, w2), r1, lab.user("Still there?")]
        view = self.repair(record)
        if _shape(view) != "U A[w1,w2] R(w1) R(w2) U":
            self.fail(f"the record {_shape(record)} was repaired as {_shape(view)}; expected "
                      "U A[w1,w2] R(w1) R(w2) U. Every call needs its own result: one recorded "
                      "result in a batch answers only its own call, and w2 still needs a stand-in.")
        if view[2] is not r1 or view[3].get("content") != harness.INTERRUPTED:
            self.fail(f"after the call come {_what(view[2])} and {_what(view[3])}; expected the "
                      "result recorded for w1, then an INTERRUPTED stand-in for w2.")

    def test_older_dangling_call(self):
        """A call left dangling by an earlier interruption still gets its stand-in after later turns: U A[c1] U A[c2] R(c2) A U goes out with R(c1) after c1."""
        c1 = lab.call("bash", {"command": "pytest"}, id="c1")
        c2 = lab.call("read", {"path": "log.txt"}, id="c2")
        record = [lab.user("Run the tests."), lab.reply(c1), lab.user("Read the log instead."),
                  lab.reply(c2), lab.tool_result(c2, "all green"), lab.say("All green."),
                  lab.user("Thanks.")]
        view = self.repair(record)
        if _shape(view) != "U A[c1] R(c1) U A[c2] R(c2) A U":
            self.fail(f"the record {_shape(record)} was repaired as {_shape(view)}; expected "
                      "U A[c1] R(c1) U A[c2] R(c2) A U. The call c1, left without a result two "
                      "turns ago, is in every request from now on: look for unanswered calls in "
                      "every assistant message, not just the newest, or the session is refused "
                      "for good.")

    def test_failed_reply_with_a_call(self):
        """A failed reply that got words and a call out (lesson 5's delete) stays in the view, and its call goes out answered by INTERRUPTED: the model is told it may not have run."""
        delete = lab.call("delete", {"path": "src"}, id="d1")
        failed = {**lab.reply(lab.text("I'll clear out the old build first."), delete),
                  "stop_reason": "error", "error_message": "connection reset mid-stream"}
        record = [lab.user("Tidy up."), failed, lab.user("What happened?")]
        before = copy.deepcopy(record)
        view = self.repair(record, "context_for_model")
        self.assert_unchanged(record, before, "context_for_model")
        if _shape(view) != "U A![d1] R(d1) U":
            self.fail(f"the record {_shape(record)} became the view {_shape(view)}; expected "
                      "U A![d1] R(d1) U: the failed reply got words out, so it stays, and its "
                      "call, which nobody ran, is answered by a stand-in like any other.")
        if view[1] is not failed or view[2].get("content") != harness.INTERRUPTED:
            self.fail(f"the view holds {_what(view[1])} then {_what(view[2])}; expected the "
                      "failed reply itself, then an INTERRUPTED result for d1.")

    def test_call_order_not_id_order(self):
        """Results follow their calls in the order the reply asked, whatever the ids and whichever are made up: a reply that asks for z1 and then a1 is answered z1, then a1; one that asks for w1 and w2, with only w2 recorded, is answered w1's stand-in, then w2's result."""
        z1, a1 = lab.call("read", {"path": "z.py"}, id="z1"), lab.call("read", {"path": "a.py"}, id="a1")
        rz, ra = lab.tool_result(z1, "Z = 26\n"), lab.tool_result(a1, "A = 1\n")
        record = [lab.user("Read both."), lab.reply(z1, a1), ra, rz, lab.say("26 and 1.")]
        view = self.repair(record)
        if _shape(view) != "U A[z1,a1] R(z1) R(a1) A":
            self.fail(f"the record {_shape(record)} was repaired as {_shape(view)}; expected "
                      "U A[z1,a1] R(z1) R(a1) A: the results in the order of the calls in the "
                      "message, not sorted by id.")
        w1 = lab.call("write", {"path": "a.txt"}, id="w1")
        w2 = lab.call("write", {"path": "b.txt"}, id="w2")
        r2 = lab.tool_result(w2, "Successfully wrote to b.txt.")
        record = [lab.user("Write both."), lab.reply(w1, w2), r2, lab.user("Still there?")]
        view = self.repair(record)
        if _shape(view) != "U A[w1,w2] R(w1) R(w2) U" or view[3] is not r2:
            self.fail(f"the record {_shape(record)} was repaired as {_shape(view)}; expected "
                      "U A[w1,w2] R(w1) R(w2) U, the stand-in for w1 first and then the result "
                      "recorded for w2: walk the calls in order and put each one's result, "
                      "recorded or made up, right there.")

    def test_error_result_kept(self):
        """A recorded result marked is_error is kept where it belongs, the tool's own words, never replaced by a stand-in."""
        c1 = lab.call("read", {"path": "gone.py"}, id="c1")
        failed = {**lab.tool_result(c1, "File not found: gone.py"), "is_error": True}
        record = [lab.user("Read gone.py."), lab.reply(c1), failed, lab.say("It is not there.")]
        view = self.repair(record)
        if _shape(view) != "U A[c1] R(c1) A" or view[2] is not failed:
            said = _what(view[2]) if len(view) > 2 else "nothing"
            self.fail(f"the record {_shape(record)} was repaired as {_shape(view)}, with {said} "
                      "after the call; expected the recorded result itself, \"File not found: "
                      "gone.py\". A result marked is_error is still the tool's answer: keep it.")

    def test_result_before_its_call(self):
        """A result recorded before its call is moved to just after the call, the very object, not made up; and if a second one for that call is recorded after the call, the earlier one, before the call, still wins."""
        a = lab.call("t", {"n": 1}, id="a")
        early = lab.tool_result(a, "a, recorded early")
        record = [lab.user("Go."), early, lab.reply(a), lab.user("Next.")]
        before = copy.deepcopy(record)
        view = self.repair(record)
        self.assert_unchanged(record, before, "repair_tool_history")
        if _shape(view) != "U A[a] R(a) U":
            self.fail(f"the record {_shape(record)} was repaired as {_shape(view)}; expected "
                      "U A[a] R(a) U: the result for a moved down to just after its call.")
        if view[2] is not early:
            said = ("a made-up INTERRUPTED result" if view[2].get("content") == harness.INTERRUPTED
                    else _what(view[2]))
            self.fail(f"view[2] is {said}; expected the result recorded for a, which sits "
                      "before the call in the record. Look for a call's result in the whole "
                      "record, not only in the messages after the call.")
        late = lab.tool_result(a, "a, recorded again after the call")
        record = [lab.user("Go."), early, lab.reply(a), late, lab.user("Next.")]
        view = self.repair(record)
        if _shape(view) != "U A[a] R(a) U" or view[2] is not early:
            said = ("the later one" if len(view) > 2 and view[2] is late
                    else _what(view[2]) if len(view) > 2 else "nothing")
            self.fail(f"the record {_shape(record)} holds a result for a before the call and "
                      f"another after it; it was repaired as {_shape(view)}, with {said} after "
                      "the call. Expected U A[a] R(a) U with the one recorded before the call: "
                      "of two results for one call, the earlier in the list wins, wherever the "
                      "call stands.")

    def test_idempotent(self):
        """Repairing twice gives what repairing once gave."""
        c = lab.call("t", {}, id="c1")
        b = lab.call("t", {"n": 2}, id="c2")
        messy = [lab.user("Go."), lab.tool_result(lab.call("t", {}, id="zz"), "orphan"),
                 lab.reply(c, b), lab.tool_result(b, "b"), lab.user("Stop.")]
        for record in ([lab.user("Go."), lab.reply(c, lab.call("t", {"n": 2})), lab.user("Stop.")],
                       messy):
            once = self.repair(record)
            twice = self.repair(once)
            if twice != once:
                self.fail(f"{_shape(record)} repaired once is {_shape(once)}, and repaired again "
                          f"is {_shape(twice)}; expected the same: a repaired transcript is "
                          "valid, so a second repair has nothing to do.")

    def test_context_for_model(self):
        """context_for_model leaves out a failed, empty assistant message (stop_reason "error", with or without an error_message), keeps a failed one that got words out and an empty one that did not fail, pairs calls with results, and never changes the record: the view is a new list every time, even for a record that needs no mending."""
        partial = {**lab.say("Half an ans"), "stop_reason": "error", "error_message": "cut off"}
        record = [lab.user("Hi"), lab.provider_error("503"), lab.user("Hi?"), partial,
                  lab.user("Again?"), lab.reply(lab.call("t", {}, id="c1"))]
        before = copy.deepcopy(record)
        view = self.repair(record, "context_for_model")
        self.assert_unchanged(record, before, "context_for_model")
        if _shape(view) != "U U A! U A[c1] R(c1)":
            self.fail(f"the record {_shape(record)} became the view {_shape(view)}; expected "
                      "U U A! U A[c1] R(c1): the empty failed reply left out, the one with words "
                      "kept, and a result for c1 after its call.")
        if view[2] is not partial:
            self.fail("view[2] is an equal copy of the failed reply that got words out, not "
                      "that message itself: the view holds the record's own message objects.")
        quiet = {"role": "assistant", "content": [], "stop_reason": "stop"}
        record = [lab.user("Hi"), quiet, lab.user("Hello?")]
        view = self.repair(record, "context_for_model")
        if not any(m is quiet for m in view):
            self.fail("an empty assistant message whose stop_reason is \"stop\" was left out of "
                      "the view; expected it kept. Only a reply that failed (stop_reason "
                      "\"error\") and is empty is left out: the view mends what a failure broke, "
                      "nothing else.")
        if view is record:
            self.fail("for a record that needed no mending, context_for_model returned the record "
                      "itself; expected a new list, every time. When the view is the record, "
                      "whatever is done to the view (an append, a pop) changes what happened.")
        bare = {"role": "assistant", "content": [], "stop_reason": "error"}
        record = [lab.user("Hi"), bare, lab.user("Hello?")]
        view = self.repair(record, "context_for_model")
        if any(m is bare for m in view):
            self.fail("an empty assistant message whose stop_reason is \"error\" but which has no "
                      "error_message key was kept in the view; expected it left out. A failed reply "
                      "is known by its stop_reason; the error_message is not promised.")

    def test_sent_the_view(self):
        """After a run closed at tool_execution_start, the next prompt's model call is sent INTERRUPTED for the dangling call, the model's answer follows, and the record still holds no made-up result."""
        call = lab.call("bash", {"command": "pytest"}, id="c1")
        model = lab.ScriptedModel([lab.reply(call), lab.say("I can't tell whether it ran.")],
                                  check=True)
        h = harness.Harness(model, harness.SYSTEM, [_tool("bash")])
        run = lab.steps(h.prompt("Run the tests."))
        for event in run:
            if event["type"] == "tool_execution_start":
                break                    # a stop button: the consumer closes before the tool
        self.close(run, "At tool_execution_start")
        if _shape(h.messages) != "U A[c1]":
            self.fail(f"closed at tool_execution_start, the record is {_shape(h.messages)}; "
                      "expected U A[c1]: the call, and no result, since the tool never ran.")
        self.prompt(h, "Are you still there?", "After a run closed mid-call")
        if len(model.calls) < 2:
            self.fail("the next prompt made no model call.")
        sent = model.calls[1].messages
        if _shape(sent) != "U A[c1] R(c1) U":
            self.fail(f"the next prompt's model call was sent {_shape(sent)}; expected "
                      "U A[c1] R(c1) U. Send context_for_model(messages), not the record.")
        if sent[2].get("content") != harness.INTERRUPTED:
            self.fail(f"the result sent for c1 is {_what(sent[2])}; expected content INTERRUPTED.")
        if _shape(h.messages) != "U A[c1] U A":
            self.fail(f"afterwards the record is {_shape(h.messages)}; expected U A[c1] U A. The "
                      "made-up result belongs in what is sent, never in the record.")

    def test_every_request_sent_a_view(self):
        """Every model call of a run is sent a view, not just the first: a record holding an earlier run's empty failed reply goes out without it on the run's second call too."""
        call = lab.call("t", {}, id="c1")
        model = lab.ScriptedModel([lab.provider_error("503 overloaded"), lab.reply(call),
                                   lab.say("Done.")], check=True)
        h = harness.Harness(model, harness.SYSTEM, [_tool("t")])
        lab.drive(h.prompt("Hi"))                 # the provider fell over: U A!
        self.prompt(h, "Try again.", "After a failed reply")
        if len(model.calls) < 3:
            self.fail(f"the run after the failure made {len(model.calls) - 1} model call(s); "
                      "expected two: one that asks for a tool, one after its result.")
        for n in (1, 2):
            sent = model.calls[n].messages
            if any(m.get("stop_reason") == "error" and not m.get("content") for m in sent):
                which = "first" if n == 1 else "second"
                self.fail(f"the {which} model call of the run after the failure was sent "
                          f"{_shape(sent)}, the empty failed reply included; a provider refuses "
                          "that. Build the view for every model call: the record keeps its old "
                          "damage for good, so mending it once per run is not enough.")

    def test_inner_run_closed(self):
        """A run closed by its consumer after any event also closes run_agent's generator, at once, even while something else still holds that generator."""
        original = harness.run_agent
        made = []                                 # held here, so dropping one does not close it

        def spy(*args, **kwargs):
            def watched():
                yield from original(*args, **kwargs)
            if inspect.isasyncgenfunction(original):   # lesson 15 on: watched as it is
                generator = original(*args, **kwargs)
            else:
                generator = watched()
            made.append(generator)
            return generator

        call = lab.call("t", {}, id="c1")
        steps = [lab.reply(call), lab.say("Done.")]
        harness.run_agent = spy
        try:
            total = len(lab.drive(harness.Harness(lab.ScriptedModel(list(steps)), harness.SYSTEM,
                                                  [_tool("t")]).prompt("Go.")))
            for k in range(1, total + 1):
                made.clear()
                h = harness.Harness(lab.ScriptedModel(list(steps)), harness.SYSTEM, [_tool("t")])
                run = lab.steps(h.prompt("Go."))
                for _ in range(k):
                    next(run)
                self.close(run, f"After {k} of {total} events")
                if not made:
                    self.fail("Harness._run never called run_agent; it must loop over run_agent's "
                              "generator.")
                if getattr(made[-1], "gi_frame", getattr(made[-1], "ag_frame", None)) is not None:
                    self.fail(f"Harness._run: closed after {k} of {total} events, the run "
                              "is closed but run_agent's generator, which this test also holds "
                              "(as a traceback or a debugger can), is still paused at its yield. "
                              "In _run's finally, call run.close() on it: a for loop that "
                              "re-yields does not pass a close on, and without run.close() the "
                              "inner generator waits until its last reference goes.")
        finally:
            harness.run_agent = original

    def test_closed_before_idle(self):
        """A run closed by its consumer after any event closes run_agent's generator first and only then clears the running flag: whatever run_agent does on its way out, it does while is_running is still True."""
        original = harness.run_agent
        seen = []                                 # is_running, as each run_agent's finally saw it
        current = []                              # the harness under test, for the spy to ask

        def spy(*args, **kwargs):
            if inspect.isasyncgenfunction(original):   # lesson 15 on
                async def watched():
                    inner = original(*args, **kwargs)
                    try:
                        async for event in inner:
                            yield event
                    finally:
                        await inner.aclose()
                        seen.append(current[-1].is_running)
            else:
                def watched():
                    try:
                        yield from original(*args, **kwargs)
                    finally:
                        seen.append(current[-1].is_running)
            return watched()

        call = lab.call("t", {}, id="c1")
        steps = [lab.reply(call), lab.say("Done.")]
        harness.run_agent = spy
        try:
            current.append(harness.Harness(lab.ScriptedModel(list(steps)), harness.SYSTEM,
                                           [_tool("t")]))
            total = len(lab.drive(current[-1].prompt("Go.")))
            for k in range(1, total):             # the last event ends the run: no close then
                seen.clear()
                h = harness.Harness(lab.ScriptedModel(list(steps)), harness.SYSTEM, [_tool("t")])
                current.append(h)
                run = lab.steps(h.prompt("Go."))
                for _ in range(k):
                    next(run)
                self.close(run, f"After {k} of {total} events")
                if not seen:
                    self.fail(f"Harness._run: closed after {k} of {total} events, the run is "
                              "closed but run_agent's generator is not. In _run's finally, call "
                              "run.close() on it.")
                if seen[-1] is not True:
                    self.fail(f"Harness._run: closed after {k} of {total} events, run_agent's "
                              "generator was closed after the running flag was cleared (its "
                              "finally saw is_running False), so a new prompt could start while "
                              "it was still on its way out. In _run's finally, call run.close() "
                              "first, then clear the flag.")
        finally:
            harness.run_agent = original

    def test_failed_reply_with_only_a_call(self):
        """A failed reply that got a call out and no words is not empty: it stays in the view, and its call is answered by INTERRUPTED."""
        delete = lab.call("delete", {"path": "src"}, id="d1")
        failed = {**lab.reply(delete), "stop_reason": "error", "error_message": "connection reset"}
        record = [lab.user("Tidy up."), failed, lab.user("What happened?")]
        view = self.repair(record, "context_for_model")
        if _shape(view) != "U A![d1] R(d1) U":
            self.fail(f"the record {_shape(record)} became the view {_shape(view)}; expected "
                      "U A![d1] R(d1) U. A failed reply is left out only when its content is "
                      "empty; a call is content, and the model must learn it asked for it.")

    def test_flag_set_by_prompt(self):
        """prompt() still sets is_running before anything is pulled (lesson 8's rule): a second prompt() before the first run's first event raises RuntimeError."""
        h = harness.Harness(lab.ScriptedModel([lab.say("One."), lab.say("Two.")]),
                            harness.SYSTEM, [])
        run = h.prompt("First.")
        if not h.is_running:
            self.fail("straight after h.prompt(), before any event is pulled, h.is_running is "
                      "False. Set the flag in prompt(), which runs at once, not in _run, whose "
                      "body waits for the first next().")
        try:
            second = h.prompt("Second.")
        except RuntimeError:
            second = None
        if second is not None:
            self.fail("a second h.prompt() before the first run was pulled was accepted, so two "
                      "runs could write one record. prompt() checks and sets the flag itself.")
        lab.drive(run)

    def test_brakes_and_failures_still_hold(self):
        """The rewritten _run still passes on lesson 5's brake (max_turns=2 stops a model that never stops after two calls), lesson 4's failures as results (a tool that raises gives an is_error result), and lesson 9's queues (a follow-up is answered)."""
        def broken(arguments):
            raise ValueError("no such file")

        def never_stops(request):
            """Always asks for the tool again; gives up by itself only after six calls, so that a
            harness with no brake fails here instead of running for ever."""
            asked = sum(m["role"] == "assistant" for m in request.messages)
            if asked >= 6:
                return lab.say("I give up.")
            return lab.reply(lab.call("t", {}, id=f"c{asked + 1}"))

        tool = {**_tool("t"), "execute": broken}
        model = lab.ScriptedModel([lab.forever(never_stops)], check=True)
        h = harness.Harness(model, harness.SYSTEM, [tool], max_turns=2)
        try:
            lab.drive(h.prompt("Go."))
        except Exception as error:
            self.fail(f"the run raised {type(error).__name__}: {error}; expected a tool that "
                      "raises ValueError to give a result marked is_error, and the run to go on.")
        if len(model.calls) != 2:
            self.fail(f"with max_turns=2 and a model that always asks for a tool, the model was "
                      f"called {len(model.calls)} times; expected 2. Pass max_turns on to "
                      "run_agent from _run, as lesson 9's _run did.")
        results = [m for m in h.messages if m["role"] == "toolResult"]
        if not results or not all(m.get("is_error") for m in results):
            self.fail(f"the tool raised ValueError, and the record is {_shape(h.messages)}; "
                      "expected a result marked is_error for each call.")
        if h.is_running:
            self.fail("after a run stopped by max_turns, the harness still says it is running.")
        model = lab.ScriptedModel([lab.say("First."), lab.say("Second.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        run = lab.steps(h.prompt("One."))
        next(run)
        h.follow_up("Two.")
        try:
            list(run)
        except Exception as error:
            self.fail(f"a run with a follow-up queued raised {type(error).__name__}: {error}")
        said = [harness.text_of(m) for m in h.messages if m["role"] == "assistant"]
        if said != ["First.", "Second."]:
            self.fail(f"a follow-up queued during the run left the record {_shape(h.messages)}; "
                      "expected it answered in the same run, U A U A. Pass get_follow_ups (and "
                      "get_steering) on to run_agent from _run, as lesson 9's _run did.")

    def test_closed_at_any_event(self):
        """A consumer that closes the run after any number of events, from the first to the last, leaves the harness idle: is_running is False, and the next prompt is answered from a valid transcript."""
        call = lab.call("t", {}, id="c1")

        def step(request):
            last = request.messages[-1]
            if last["role"] == "user":
                return lab.say("Still here.") if last["content"] == "Hello?" else lab.reply(call)
            return lab.say("Done.")
        try:
            total = len(lab.drive(harness.Harness(lab.ScriptedModel([lab.forever(step)]),
                                                  harness.SYSTEM, [_tool("t")]).prompt("Go.")))
        except Exception as error:
            self.fail(f"a whole run, driven to its end, raised {type(error).__name__}: {error}")
        for k in range(1, total + 1):
            h = harness.Harness(lab.ScriptedModel([lab.forever(step)], check=True),
                                harness.SYSTEM, [_tool("t")])
            run = lab.steps(h.prompt("Go."))
            try:
                for _ in range(k):
                    next(run)
            except StopIteration:
                pass                     # fewer events this time: closing an ended run is fine
            except Exception as error:
                self.fail(f"pulling the first {k} events raised {type(error).__name__}: {error}")
            self.close(run, f"After {k} of {total} events")
            if h.is_running:
                self.fail(f"closed after {k} of {total} events, the harness still says it is "
                          "running, and would refuse every prompt from now on. Clear the flag "
                          "in a finally: closing a generator raises GeneratorExit at its yield, "
                          "which no line after the loop survives.")
            self.prompt(h, "Hello?", f"Closed after {k} of {total} events")
            last = lab.show(h.messages[-1:])
            if last != 'assistant -> "Still here."':
                self.fail(f"closed after {k} of {total} events, then prompted, the record ends "
                          f"{last}; expected the model's answer, \"Still here.\" The record was "
                          f"{_shape(h.messages)}, and the model must be sent a valid view of it.")

    def test_a_run_that_dies(self):
        """A run that dies of an exception (the model's connection drops) passes it to the consumer and leaves the harness idle, ready for the next prompt."""
        model = lab.ScriptedModel([lab.raises(ConnectionError("connection reset")),
                                   lab.say("Back.")])
        h = harness.Harness(model, harness.SYSTEM, [])
        try:
            lab.drive(h.prompt("Hi"))
        except ConnectionError:
            pass
        except Exception as error:
            self.fail(f"the run raised {type(error).__name__}: {error}; expected the model's "
                      "ConnectionError to reach the consumer as it was.")
        else:
            self.fail("the model raised ConnectionError, and the run ended quietly; expected "
                      "the error to reach the consumer: a finally cleans up, it does not catch.")
        if h.is_running:
            self.fail("after the run died of ConnectionError, the harness still says it is "
                      "running. Clear the flag in a finally, which runs on the way out of an "
                      "exception too.")
        self.prompt(h, "Hi again", "After a run that died")
        last = lab.show(h.messages[-1:])
        if last != 'assistant -> "Back."':
            self.fail(f"after the run that died, the next prompt's record ends {last}; expected "
                      'the model\'s answer, "Back."')

    def test_ctrl_c_in_a_tool(self):
        """Ctrl-C while a tool runs (a KeyboardInterrupt, which is not an Exception) reaches the consumer as it was and leaves the harness idle, ready for the next prompt."""
        def pressed(arguments):
            raise KeyboardInterrupt
        call = lab.call("bash", {"command": "pytest"}, id="c1")
        model = lab.ScriptedModel([lab.reply(call), lab.say("Still here.")])
        h = harness.Harness(model, harness.SYSTEM, [{**_tool("bash"), "execute": pressed}])
        try:
            lab.drive(h.prompt("Run the tests."))
        except KeyboardInterrupt:
            pass
        except BaseException as error:
            self.fail(f"the tool raised KeyboardInterrupt, and the run raised "
                      f"{type(error).__name__}: {error} instead; expected the KeyboardInterrupt "
                      "to reach the consumer as it was.")
        else:
            self.fail("the tool raised KeyboardInterrupt, and the run ended quietly; expected it "
                      "to reach the consumer: a finally cleans up, it does not catch.")
        if h.is_running:
            self.fail("after Ctrl-C in a tool, the harness still says it is running, and would "
                      "refuse every prompt from now on. KeyboardInterrupt is a BaseException, "
                      "not an Exception, so an except clause that names Exception (or "
                      "GeneratorExit and Exception) lets it by: clear the flag in a finally, "
                      "which runs however the run ends.")
        self.prompt(h, "Are you still there?", "After Ctrl-C in a tool")
        last = lab.show(h.messages[-1:])
        if last != 'assistant -> "Still here."':
            self.fail(f"after Ctrl-C in a tool, the next prompt's record ends {last}; expected "
                      'the model\'s answer, "Still here."')

    def test_keeps_the_loop_rules(self):
        """The rewritten run_agent keeps the earlier lessons' rules: agent_start, turn_start, turn_end and agent_end (with the run's messages) frame the run and each turn; a missing tool gets an is_error result; max_turns stops before the extra call; after a failed reply no tool runs and nobody is asked for more; steering and follow-ups are asked where lesson 9 put them, one message per ask, steering given after the last turn max_turns allows recorded before the limit's stop; the model's exception reaches the caller."""
        lab.keeps_loop_rules(self, harness)

    def test_keeps_the_harness_rules(self):
        """The rewritten Harness keeps lessons 8 and 9's rules: prompt() during a run raises RuntimeError("already running; use steer() or follow_up()") and queues nothing; is_running is True from prompt() until the run ends, and a second prompt() is refused, at every event the run gives; steer() and follow_up() queue the user's words for the loop."""
        lab.keeps_harness_rules(self, harness, listeners=False)


if __name__ == "__main__":
    unittest.main()
