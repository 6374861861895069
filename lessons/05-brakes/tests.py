"""Lesson 05's lab tests: the brakes (point 5.1).

Lab1 checks error_message, max_turns and a provider failure: each way a run can stop is written
into the record as the last message, and never raised. Each test's docstring is its checklist line
on the page, word for word; the tests run in the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 5 tests.py

The run is consumed with lab.drive, which takes it to its end whatever run_agent returns, so
later lessons (where run_agent becomes a generator of events) pass these tests too. An exception
that escapes run_agent is caught here and reported as a plain failure with a sentence: a stop that
raises is the mistake this lab is about, not a crash of the test.
"""
import collections.abc
import inspect
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


def _times(n):
    return "once" if n == 1 else f"{n} times"


def _failed(messages):
    """The positions of the messages marked failed (stop_reason "error")."""
    return [n for n, m in enumerate(messages) if m.get("stop_reason") == "error"]


class Lab1(unittest.TestCase):
    longMessage = False

    def _run(self, model, tools, prompt="Go.", messages=None, *, what="a stop",
             system=harness.SYSTEM, returned=None, **options):
        """Run the agent to its end; an exception escaping run_agent is a plain FAIL. What
        run_agent returned goes into `returned` (a list), when it is a sequence of messages (a
        list, a tuple, ...); a generator or other iterator (a later lesson's run of events) is
        only driven to its end."""
        messages = [] if messages is None else messages
        if "max_turns" in options:
            self._takes_max_turns()
        try:
            run = harness.run_agent(model, system, messages, tools, prompt, **options)
            if run is None:
                self.fail(f"run_agent returned None after {what}; it must return this run's "
                          "messages, the list whose last message says how the run ended. Did "
                          "you forget a return, or write a bare `return`?")
            if (isinstance(run, collections.abc.Sequence) and not isinstance(run, (str, bytes))
                    and returned is not None):
                returned.append(run)
            lab.drive(run)
        except self.failureException:
            raise
        except lab.ScriptExhausted:
            self.fail(f"the model was called {_times(len(model.calls))} during {what}, more "
                      "than this run should ever make; the transcript so far: "
                      f"{lab.shape(messages)}")
        except Exception as exc:  # noqa: BLE001 - the reader's code: report, do not crash
            self.fail(f"run_agent raised {type(exc).__name__}: {exc}; {what} must end the run "
                      "and be written into the record, not raised")
        return messages

    def _takes_max_turns(self):
        """A FAIL with one sentence when run_agent has no max_turns parameter (lesson 4's)."""
        try:
            params = inspect.signature(harness.run_agent).parameters
        except (TypeError, ValueError):
            return
        if "max_turns" not in params and not any(p.kind is p.VAR_KEYWORD
                                                 for p in params.values()):
            self.fail("run_agent has no max_turns parameter yet: add max_turns=None to its "
                      "signature, in region 3, loop.")

    def _stop(self, text):
        """harness.error_message(text), or a FAIL that says it is not there yet."""
        if not callable(getattr(harness, "error_message", None)):
            self.fail("harness.py has no function error_message yet: write it in region 1, "
                      "messages.")
        return harness.error_message(text)

    def _shape(self, messages, expected, why=""):
        got = lab.shape(messages) or "(nothing)"
        if got != expected:
            self.fail(f"the transcript should be {expected}; it is {got}" + (f". {why}" if why
                                                                             else ""))

    def test_error_message(self):
        """error_message("Agent stopped") is {"role": "assistant", "content": [], "stop_reason": "error", "error_message": "Agent stopped"}, and each call makes a message of its own: one made earlier still says its own reason after error_message("Later") is made, and the two do not share one content list."""
        expected = {"role": "assistant", "content": [], "stop_reason": "error",
                    "error_message": "Agent stopped"}
        got = self._stop("Agent stopped")
        if got != expected:
            self.fail(f"error_message(\"Agent stopped\") should be {expected}; it is {got}")
        later = self._stop("Later")
        if got is later or got != expected or later.get("error_message") != "Later":
            self.fail("error_message(\"Agent stopped\") and then error_message(\"Later\") "
                      f"gave {got} and {later}: the first stop now shows the second one's reason. "
                      "Build a new dict on every call; two stops in one transcript are two "
                      "messages")
        if got.get("content") is later.get("content"):
            self.fail("error_message(\"Agent stopped\") and error_message(\"Later\") share one "
                      "content list, so adding a block to one stop would change the other. Write "
                      "a new [] inside error_message on every call, not a list made once outside it")

    def test_max_turns_stops_a_runaway(self):
        """With max_turns=3 and a model that never stops asking, the model is called exactly 3 times, every call gets its result, and the last message is error_message("Agent stopped after max_turns=3")."""
        runs = []
        model = lab.ScriptedModel([_runaway] * 5)
        messages = self._run(model, [_counter(runs)], max_turns=3, what="a runaway")
        self.assertEqual(len(model.calls), 3, "the model should be called 3 times; it was "
                                              f"called {_times(len(model.calls))}")
        self._shape(messages, "U A[s1] R(s1) A[s2] R(s2) A[s3] R(s3) A!",
                    "Every call is answered before the brake is checked")
        self.assertEqual(messages[-1], self._stop("Agent stopped after max_turns=3"),
                         f"the last message should be error_message(\"Agent stopped after "
                         f"max_turns=3\"); it is {messages[-1]}")
        self.assertEqual(len(runs), 3, f"the tool should run 3 times; it ran {_times(len(runs))}")

    def test_checked_before_the_call(self):
        """max_turns=1 makes one model call and runs its tool, and then the stop is written instead of a second call: the brake is checked before the call, never after."""
        runs = []
        model = lab.ScriptedModel([_runaway] * 5)
        messages = self._run(model, [_counter(runs)], max_turns=1, what="a runaway")
        self._shape(messages, "U A[s1] R(s1) A!",
                    "A stop between a call and its result leaves the call unanswered")
        self.assertEqual(len(model.calls), 1, "the model should be called once; it was called "
                                              f"{_times(len(model.calls))}")
        self.assertEqual(len(runs), 1, f"the tool should run once, for the one reply; it ran "
                                       f"{_times(len(runs))}")

    def test_answer_on_the_last_turn(self):
        """With max_turns=3, a model that asks twice and answers on call 3 ends on its answer: the limit was reached, not passed, and nothing is marked failed."""
        runs = []
        model = lab.ScriptedModel([_runaway, _runaway, lab.say("Done."), lab.say("Unreached.")])
        messages = self._run(model, [_counter(runs)], max_turns=3, what="a runaway")
        self._shape(messages, "U A[s1] R(s1) A[s2] R(s2) A",
                    "A run that answers within its turns has not been stopped")
        self.assertEqual(_failed(messages), [], "a message is marked failed in a run that "
                                                "finished with an answer")

    def test_zero_turns(self):
        """max_turns=0 makes no model call at all: the run is the prompt, then error_message("Agent stopped after max_turns=0"); so does max_turns=-1, since at most -1 calls is none, not no limit."""
        for limit in (0, -1):
            model = lab.ScriptedModel([_runaway] * 3)
            messages = self._run(model, [_counter([])], max_turns=limit,
                                 what=f"a runaway with max_turns={limit}")
            self.assertEqual(len(model.calls), 0, f"with max_turns={limit} the model should not "
                                                  "be called; it was called "
                                                  f"{_times(len(model.calls))}")
            self._shape(messages, "U A!")
            want = self._stop(f"Agent stopped after max_turns={limit}")
            self.assertEqual(messages[-1], want,
                             f"the last message should be error_message(\"Agent stopped after "
                             f"max_turns={limit}\"); it is {messages[-1]}")

    def test_no_limit_by_default(self):
        """max_turns defaults to None, no limit: without it a run goes on as long as the model asks, 200 rounds of tools, then the answer, and no message is marked failed."""
        try:
            default = inspect.signature(harness.run_agent).parameters["max_turns"].default
        except (KeyError, TypeError, ValueError):
            self.fail("run_agent has no max_turns parameter yet: add max_turns=None to its "
                      "signature, in region 3, loop.")
        self.assertIs(default, None,
                      f"run_agent's max_turns defaults to {default!r}; it should default to "
                      "None, no limit: only the caller knows how big its job is")
        runs = []
        model = lab.ScriptedModel([_runaway] * 200 + [lab.say("Done.")])
        messages = self._run(model, [_counter(runs)], what="a runaway")
        self.assertEqual(len(runs), 200, f"with max_turns left out, the tool should run 200 "
                                         f"times; it ran {_times(len(runs))}: a run with no "
                                         "limit must not stop on a limit of its own")
        self.assertEqual(lab.show(messages[-1:]), 'assistant -> "Done."',
                         f"the last message should be the answer; it is {lab.show(messages[-1:])}")
        self.assertEqual(_failed(messages), [], f"messages {_failed(messages)} are marked failed "
                                                "in a run with no limit that ended on an answer")

    def test_provider_failure_is_recorded(self):
        """A provider that falls over on call 2 (lab.provider_error("503 overloaded")) ends the run with no exception: the record is U A[s1] R(s1) A!, that failed reply is its last message, and the model is not called again."""
        runs = []
        model = lab.ScriptedModel([_runaway, lab.provider_error("503 overloaded"),
                                   lab.say("Unreached.")])
        messages = self._run(model, [_counter(runs)], what="a failed reply")
        self._shape(messages, "U A[s1] R(s1) A!")
        last = messages[-1]
        self.assertEqual((last.get("stop_reason"), last.get("error_message")),
                         ("error", "503 overloaded"),
                         f"the last message should be the failed reply, as it came; it is {last}")
        self.assertEqual(len(model.calls), 2, "after a failed reply nobody calls the model again")

    def test_failed_reply_not_acted_on(self):
        """A failed reply that still holds a tool call has none of it acted on: the tool never runs, and the run ends on that reply. stop_reason "error" is the mark, with or without an error_message."""
        for reason in ("connection reset", None):
            runs = []
            broken = {**lab.reply(lab.call("step", {}, id="s1")), "stop_reason": "error"}
            if reason is not None:
                broken["error_message"] = reason
            model = lab.ScriptedModel([broken, lab.say("Unreached.")])
            messages = self._run(model, [_counter(runs)], what="a failed reply")
            said = "with" if reason else "without"
            self.assertEqual(runs, [], f"the tool ran for a reply that failed (stop_reason "
                                       f"\"error\", {said} an error_message): stop_reason is "
                                       "what marks a failed reply")
            self._shape(messages, "U A![s1]")

    def test_returns_this_runs_messages(self):
        """run_agent returns this run's messages and no others, the very objects appended to the list it was given: after an earlier exchange, a stopped run returns [prompt, A[s1], R(s1), A!], an answered one ends on its answer, and a failed one on the failed reply."""
        endings = {
            "a stop": ([_runaway] * 3, {"max_turns": 1}, "U A[s1] R(s1) A!"),
            "an answer": ([_runaway, lab.say("Done.")], {}, "U A[s1] R(s1) A"),
            "a failed reply": ([_runaway, lab.provider_error("503 overloaded")], {},
                               "U A[s1] R(s1) A!"),
        }
        for what, (script, options, shape) in endings.items():
            messages = [lab.user("Hi"), lab.say("Hello.")]
            returned = []
            self._run(lab.ScriptedModel(script), [_counter([])], messages=messages, what=what,
                      returned=returned, **options)
            if not returned:
                continue            # a later lesson's run_agent gives events (an iterator), not messages
            run = returned[0]
            if lab.shape(run) != shape:
                self.fail(f"after {what}, run_agent returned {lab.shape(run) or 'an empty list'}; "
                          f"expected {shape}: this run's messages, from its prompt to the message "
                          "that says how it ended, and nothing from before the run")
            if any(a is not b for a, b in zip(run, messages[2:])):
                self.fail(f"after {what}, run_agent returned copies; it should return the very "
                          "message objects it appended to the transcript")

    def test_uses_the_system_it_is_given(self):
        """Every model call of a run is sent the system prompt run_agent was given ("Answer in French."), not the module's SYSTEM."""
        model = lab.ScriptedModel([_runaway, lab.say("Fini.")])
        self._run(model, [_counter([])], system="Answer in French.", what="an answer")
        sent = [request.system for request in model.calls]
        if sent != ["Answer in French."] * 2:
            self.fail(f"the model was sent the system prompts {sent}; expected "
                      "['Answer in French.', 'Answer in French.']: run_agent passes on the "
                      "`system` it was given")

    def test_every_call_sent_the_tools(self):
        """Every model call of a run is sent the tools' specs, tool_specs(tools), the second call as well as the first, and the last call max_turns allows as well as the ones before it (max_turns=2: both calls)."""
        tools = [_counter([])]
        want = harness.tool_specs(tools)
        for script, options, what in (([_runaway, lab.say("Done.")], {}, "an answer"),
                                      ([_runaway] * 3, {"max_turns": 2}, "a runaway")):
            model = lab.ScriptedModel(script)
            self._run(model, tools, what=what, **options)
            sent = [request.tools for request in model.calls]
            if sent != [want, want]:
                which = next((n for n, got in enumerate(sent, 1) if got != want), len(sent) + 1)
                limit = (f" (max_turns={options['max_turns']})" if options else "")
                self.fail(f"model call {which} of {len(sent)}{limit} was not sent "
                          "tool_specs(tools); every call is, the last one the limit allows too: "
                          "the brake acts before a call and never changes what a call is sent")

    def test_calls_run_whatever_the_stop_reason(self):
        """A reply that holds a call has it run whatever its stop_reason says, unless it is "error": a call in a reply marked "stop", or "length" (cut short), is run, and the model is asked again (lesson 3: the run ends only at a reply with no calls)."""
        for label in ("stop", "length"):
            odd = dict(lab.reply(lab.call("step", {}, id="s1")), stop_reason=label)
            runs = []
            model = lab.ScriptedModel([odd, lab.say("Done.")])
            messages = self._run(model, [_counter(runs)], what="an answer")
            self._shape(messages, "U A[s1] R(s1) A",
                        f"A reply marked \"{label}\" held a call. A reply's calls decide "
                        "whether the run goes on, not its stop_reason: only \"error\" stops a "
                        "reply that asked for a tool")

    def test_counts_model_calls_not_tool_calls(self):
        """max_turns counts model calls, not tool calls: with max_turns=2 and replies that ask for two calls each, the model is called twice and all four calls get their results before the stop."""
        def twice(request):
            n = sum(1 for m in request.messages if m["role"] == "assistant")
            return lab.reply(lab.call("step", {}, id=f"a{n + 1}"),
                             lab.call("step", {}, id=f"b{n + 1}"))
        runs = []
        model = lab.ScriptedModel([twice] * 4)
        messages = self._run(model, [_counter(runs)], max_turns=2, what="a runaway")
        self._shape(messages, "U A[a1,b1] R(a1) R(b1) A[a2,b2] R(a2) R(b2) A!",
                    "max_turns counts model calls, and every tool a reply asked for is run "
                    "before the next")
        self.assertEqual(len(model.calls), 2, "the model should be called twice; it was called "
                                              f"{_times(len(model.calls))}")
        self.assertEqual(len(runs), 4, f"the tool should run 4 times, twice for each reply; it "
                                       f"ran {_times(len(runs))}")

    def test_each_run_counts_from_zero(self):
        """The count starts again with every run: two runs on one list, each with max_turns=2, make two model calls each."""
        messages = []
        for n in (1, 2):
            model = lab.ScriptedModel([_runaway] * 4)
            self._run(model, [_counter([])], messages=messages, max_turns=2, what="a runaway")
            if len(model.calls) != 2:
                self.fail(f"run {n} of two on one list, with max_turns=2, called the model "
                          f"{_times(len(model.calls))}; expected twice. The transcript: "
                          f"{lab.shape(messages)}. Count the turns of this run, starting at 0 "
                          "every time run_agent is called, not in a variable that outlives it")

    def test_exception_from_complete_goes_up(self):
        """When model.complete raises (ConnectionError on call 2), run_agent does not catch it: the ConnectionError reaches the caller and the record stays U A[s1] R(s1), whole up to its last complete message."""
        model = lab.ScriptedModel([_runaway, lab.raises(ConnectionError("connection reset")),
                                   lab.say("Unreached.")])
        messages = []
        try:
            lab.drive(harness.run_agent(model, harness.SYSTEM, messages, [_counter([])], "Go."))
        except ConnectionError:
            self._shape(messages, "U A[s1] R(s1)", "Nothing is written for a call that raised")
            return
        except Exception as exc:  # noqa: BLE001 - the reader's code: report, do not crash
            self.fail(f"run_agent raised {type(exc).__name__}: {exc}; the ConnectionError from "
                      "model.complete should have gone up as it was")
        self.fail(f"model.complete raised ConnectionError, and run_agent did not let it go up: "
                  f"the transcript is {lab.shape(messages)}. An exception from the model is not "
                  "run_agent's to catch: turning it into a reply is the adapter's job, and an "
                  "`except` around complete would file your own bugs under \"provider\"")

    def test_failed_reply_sent_with_the_rest(self):
        """A failed reply that got something out stays on the list and is sent like any other message: after a run that ends on one holding the text "The port is", the next run's first request is U A! U, that reply included."""
        cut = {**lab.say("The port is"), "stop_reason": "error",
               "error_message": "connection reset"}
        messages = []
        self._run(lab.ScriptedModel([cut, lab.say("Unreached.")]), [_counter([])],
                  "Which port?", messages=messages, what="a failed reply")
        self._shape(messages, "U A!")
        model = lab.ScriptedModel([lab.say("Port 9090.")])
        self._run(model, [_counter([])], "Try again.", messages=messages, what="an answer")
        sent = model.calls[0].messages if model.calls else []
        if len(sent) != 3 or sent[1] is not messages[1]:
            self.fail(f"the second run's first request was {lab.shape(sent) or '(nothing)'}; "
                      "expected U A! U, the failed reply \"The port is\" sent as it was "
                      "recorded. Send the whole list: a reply that failed with something in it "
                      "is part of the conversation (what a request may leave out is lesson 10's)")

    def test_stops_after_what_came_before(self):
        """A run that is stopped keeps everything said before it, and the next run carries on from the stop on the same list: its first request begins with everything said before the stop, U A U A[s1] R(s1), and ends with the new prompt."""
        runs = []
        earlier = [lab.user("Hi"), lab.say("Hello.")]
        messages = list(earlier)
        self._run(lab.ScriptedModel([_runaway] * 3), [_counter(runs)], messages=messages,
                  max_turns=1, what="a runaway")
        self._shape(messages, "U A U A[s1] R(s1) A!")
        self.assertTrue(messages[0] is earlier[0] and messages[1] is earlier[1],
                        "the messages from before the run should stay first, untouched")
        model = lab.ScriptedModel([lab.say("Carrying on.")])
        self._run(model, [_counter(runs)], "Carry on.", messages=messages)
        self._shape(messages, "U A U A[s1] R(s1) A! U A")
        sent = model.calls[0].messages
        if sent[:5] != messages[:5] or sent[-1:] != messages[-2:-1]:
            self.fail(f"the second run's first request was {lab.shape(sent) or '(nothing)'}; "
                      "expected it to begin with U A U A[s1] R(s1), everything said before, and "
                      "end with the new question. Send the whole transcript, `messages`, not "
                      "only this run's messages: the model keeps nothing between calls.")


if __name__ == "__main__":
    unittest.main()
