"""Lesson 08's lab tests: one writer (point 8.1).

Lab1 checks Harness: it owns the transcript, shows it as a snapshot, and lets one run at a time
write to it, refusing a second prompt on the caller's own line. Each test's docstring is its
checklist line on the page, word for word; the tests run in the order they are written.

    python lab/lab_check.py --harness harness.py --lesson 8 tests.py

Every message a check fails with is written for the reader: what was expected, what happened,
and where to look.
"""
import unittest

import harness
import lab

LESSON = 8


def _ping():
    return {"name": "ping", "description": "Answers pong.",
            "parameters": {"type": "object", "properties": {}},
            "execute": lambda arguments: "pong"}


def _shape(messages):
    return lab.shape(list(messages)) or "(nothing)"


def _record_events(produced):
    """Put a stand-in for harness.run_agent in place that appends every event the real one gives
    to `produced` as it passes it on; returns the function that puts the real one back."""
    real = harness.run_agent

    def recorded(*args, **kwargs):
        run = real(*args, **kwargs)
        if hasattr(run, "__aiter__"):              # lesson 15 on: run_agent is async
            async def passing():
                try:
                    async for event in run:
                        produced.append(event)
                        yield event
                finally:
                    await run.aclose()
            return passing()

        def passing():
            try:
                for event in run:
                    produced.append(event)
                    yield event
            finally:
                run.close()
        return passing()

    harness.run_agent = recorded
    return lambda: setattr(harness, "run_agent", real)


class _LabCase(unittest.TestCase):
    """Shared helpers. Messages are the whole story, so unittest's own prefix is switched off."""
    longMessage = False

    def build(self, model, tools=(), **options):
        """harness.Harness(model, SYSTEM, tools, **options), or a FAIL that says what it raised."""
        try:
            return harness.Harness(model, harness.SYSTEM, list(tools), **options)
        except Exception as error:
            given = ", ".join(["model", "system", "tools"] + [f"{k}=..." for k in options])
            self.fail(f"Harness({given}) raised {type(error).__name__}: {error}. __init__ takes "
                      "model, system, tools, and the keywords messages=() and max_turns=None.")

    def prompt(self, h, text, when):
        """h.prompt(text), or a FAIL that says what it raised instead."""
        try:
            run = h.prompt(text)
        except Exception as error:
            self.fail(f"{when}, h.prompt({text!r}) raised {type(error).__name__}: {error}. "
                      "Nothing else was running, so it should have returned the run.")
        # From lesson 15 the run is async: lab.steps hands its events to this plain code one by one.
        return lab.steps(run) if hasattr(run, "__aiter__") else run

    def drive(self, run, when):
        """Every event of `run`, or a FAIL that says what the run raised instead."""
        if not hasattr(run, "__next__"):
            self.fail(f"{when}, h.prompt() returned {type(run).__name__}, not the run: return "
                      "self._run(text), the generator of run_agent's events.")
        try:
            return lab.drive(run)
        except lab.ScriptExhausted as error:
            self.fail(f"{when}, the model was called more often than it should have been: "
                      f"{error}")
        except Exception as error:
            self.fail(f"{when}, pulling the run's events raised {type(error).__name__}: {error}")

    def assert_refused(self, h, when):
        """A second h.prompt() raises RuntimeError("already running...") at once."""
        try:
            second = h.prompt("Me too")
        except RuntimeError as error:
            if not str(error).startswith("already running"):
                self.fail(f"{when}, the second prompt() raised RuntimeError({str(error)!r}); "
                          "expected a message that starts \"already running\".")
            return
        except Exception as error:
            self.fail(f"{when}, the second prompt() raised {type(error).__name__}: {error}; "
                      "expected RuntimeError(\"already running\").")
        self.fail(f"{when}, a second h.prompt(\"Me too\") returned {type(second).__name__} "
                  "instead of raising RuntimeError(\"already running\"). prompt() must check "
                  "the flag, and set it, on the caller's line. Keep prompt a plain def: a "
                  "function that contains yield runs none of its body until the first event "
                  "is pulled.")


class Lab1(_LabCase):

    def test_prompt_runs(self):
        """h.prompt("Hi") returns the run; pulled to its end it yields run_agent's events unchanged, agent_start to agent_end, and h.messages then holds the prompt and the reply."""
        h = self.build(lab.ScriptedModel([lab.say("Hello.")]))
        produced = []                  # the events run_agent itself gave the harness
        put_back = _record_events(produced)
        try:
            events = self.drive(self.prompt(h, "Hi", "On a new harness"), "On a new harness")
        finally:
            put_back()
        kinds = [event.get("type") if isinstance(event, dict) else repr(event)
                 for event in events]
        want = ["agent_start", "turn_start", "message_end", "message_end", "turn_end",
                "agent_end"]
        if kinds != want:
            self.fail(f"the run's events were {', '.join(kinds) or '(none)'}; expected "
                      f"{', '.join(want)}: yield every event of run_agent, unchanged.")
        if callable(h.messages):
            self.fail("h.messages gives back a method, not the transcript: put @property on the "
                      "line above def messages(self), so that it is read without brackets.")
        if _shape(h.messages) != "U A" or h.messages[0]["content"] != "Hi":
            self.fail(f"after the run h.messages is {_shape(h.messages)}; expected U A, the "
                      "prompt \"Hi\" and the reply. Hand run_agent the harness's own list, "
                      "self._messages, so what it appends is the harness's transcript.")
        announced = [event.get("message") for event in events if event["type"] == "message_end"]
        if any(a is not b for a, b in zip(announced, h.messages)):
            self.fail("the message_end events and h.messages do not hold the same dicts: one "
                      "side holds copies. h.messages is tuple(self._messages), the very dicts "
                      "run_agent appended, and the events are yielded as they come, unchanged.")
        ended = events[-1].get("messages")
        if not isinstance(ended, list) or [id(m) for m in ended] != [id(m) for m in h.messages]:
            got = lab.shape(ended) or "an empty list" if isinstance(ended, list) else repr(ended)
            self.fail(f"agent_end's \"messages\" was {got}; "
                      "expected this run's messages, the very ones in h.messages (U A): yield "
                      "run_agent's events as they come, unchanged, not rebuilt or trimmed.")
        if len(produced) != len(events) or any(a is not b for a, b in zip(events, produced)):
            others = sum(not any(e is p for p in produced) for e in events)
            self.fail(f"{others} of the {len(events)} events the run yielded were not the very "
                      "dicts run_agent produced, but copies or new dicts in their place: yield "
                      "each event as it comes (yield event), not a copy of it.")

    def test_messages_is_a_snapshot(self):
        """h.messages is a tuple: nobody can append to it, and a snapshot you hold does not change when a later run adds to the transcript."""
        h = self.build(lab.ScriptedModel([lab.say("Hello."), lab.say("Again.")]))
        self.drive(self.prompt(h, "Hi", "On a new harness"), "On a new harness")
        snapshot = h.messages
        if not isinstance(snapshot, tuple):
            self.fail(f"h.messages is a {type(snapshot).__name__}; expected a tuple, "
                      "tuple(self._messages). A list can be appended to, and a list copy takes "
                      "the append without a word and keeps it from the harness.")
        self.drive(self.prompt(h, "Once more", "After one run"), "In the second run")
        if (len(snapshot), len(h.messages)) != (2, 4):
            self.fail(f"a snapshot taken after the first run had {len(snapshot)} messages once "
                      f"the second run was over, and h.messages had {len(h.messages)}; expected "
                      "2 and 4. Each read of h.messages should build a new tuple.")

    def test_messages_copied_in(self):
        """The list given as messages= is copied: appending to it later changes nothing in the harness, and the harness's runs do not grow it."""
        given = [lab.user("My name is Ada."), lab.say("Nice to meet you, Ada.")]
        model = lab.ScriptedModel([lab.forgetful()])
        h = self.build(model, messages=given)
        given.append(lab.user("My name is Bob."))
        self.drive(self.prompt(h, "What is my name?", "On a resumed harness"),
                   "On a resumed harness")
        sent = len(model.calls[0].messages) if model.calls else 0
        if sent != 3:
            self.fail(f"the model was sent {sent} messages; expected 3, the two given in "
                      "messages= and the question. An append to the caller's list after "
                      "Harness(...) reached the harness: copy it, list(messages).")
        if len(given) != 3:
            self.fail(f"the caller's list has {len(given)} messages after the run; expected "
                      "the 3 it held. The harness wrote into a list it was lent: keep your own.")
        if lab.show(h.messages[-1:]) != 'assistant -> "Your name is Ada."':
            self.fail(f"the run ended {lab.show(h.messages[-1:])}; expected "
                      'assistant -> "Your name is Ada."')

    def test_one_transcript_across_runs(self):
        """Two prompts in a row continue one transcript: the second run's model call is sent the first exchange too."""
        model = lab.ScriptedModel([lab.forgetful(), lab.forgetful()])
        h = self.build(model)
        self.drive(self.prompt(h, "My name is Ada.", "On a new harness"), "In the first run")
        self.drive(self.prompt(h, "What is my name?", "After one run was pulled to its end"),
                   "In the second run")
        sent = _shape(model.calls[1].messages) if len(model.calls) > 1 else "(no call)"
        if sent != "U A U":
            self.fail(f"the second run's model call was sent {sent}; expected U A U, the first "
                      "exchange and the new question. Keep one list for the harness's whole "
                      "life, and hand run_agent that list on every run.")
        if lab.show(h.messages[-1:]) != 'assistant -> "Your name is Ada."':
            self.fail(f"the second run ended {lab.show(h.messages[-1:])}; expected "
                      'assistant -> "Your name is Ada."')

    def test_is_running(self):
        """is_running is a read-only property: False before a prompt, True from the call of prompt() before anything is pulled and at every event of the run, and False again once the run is exhausted; setting it from outside raises AttributeError."""
        h = self.build(lab.ScriptedModel([lab.say("Hello.")]))
        if callable(h.is_running):
            self.fail("h.is_running gives back a method, not True or False: put @property on the "
                      "line above def is_running(self).")
        if h.is_running is not False:
            self.fail(f"a new harness says is_running {h.is_running!r}; expected False.")
        try:
            h.is_running = False
        except AttributeError:
            pass
        else:
            self.fail("h.is_running = False was taken without a word: is_running is a plain "
                      "attribute anyone can set. Make it a read-only property that returns "
                      "self._running, with @property on the line above def is_running(self).")
        run = self.prompt(h, "Hi", "On a new harness")
        if not hasattr(run, "__next__"):
            self.fail(f"h.prompt() returned {type(run).__name__}, not the run: return "
                      "self._run(text), the generator itself, without pulling its events.")
        if h.is_running is not True:
            self.fail(f"just after h.prompt(\"Hi\") returned, is_running is {h.is_running!r}; "
                      "expected True. The run exists from the call of prompt(): set the flag "
                      "there, before anything is pulled, not inside the generator.")
        try:
            for event in run:
                if h.is_running is not True:
                    self.fail(f"while the consumer held the {event['type']} event, is_running "
                              f"was {h.is_running!r}; expected True until the run is exhausted: "
                              "the run is over when run_agent has no more events, not when an "
                              "answer comes.")
        except AssertionError:
            raise
        except Exception as error:
            self.fail(f"pulling the run's events raised {type(error).__name__}: {error}")
        if h.is_running is not False:
            self.fail(f"after the run was pulled to its end, is_running is {h.is_running!r}; "
                      "expected False. Clear the flag in _run, after the last event.")

    def test_second_prompt_refused_at_once(self):
        """While a run is going on, a second prompt() raises RuntimeError("already running...") on the line that calls it, both before anything is pulled and halfway through, and the first run goes on unharmed."""
        h = self.build(lab.ScriptedModel([lab.say("Hello.")]))
        first = self.prompt(h, "Hi", "On a new harness")
        self.assert_refused(h, "Before the first run's first event was pulled")
        if not hasattr(first, "__next__"):
            self.fail(f"h.prompt() returned {type(first).__name__}, not the run.")
        try:
            while next(first)["type"] != "message_end":
                pass
        except StopIteration:
            self.fail("the first run ended without a message_end event.")
        self.assert_refused(h, "Halfway through the first run (it had just announced the prompt)")
        self.drive(first, "After the refused prompt")
        if _shape(h.messages) != "U A" or h.messages[0]["content"] != "Hi":
            self.fail(f"after the refused prompt and the first run, h.messages is "
                      f"{_shape(h.messages)}; expected U A: the prompt \"Hi\" and its reply, "
                      "and nothing of \"Me too\".")

    def test_one_flag_per_harness(self):
        """Each harness has a flag of its own: while one harness's run is going on, another harness is not running, and its prompt() is accepted."""
        busy = self.build(lab.ScriptedModel([lab.say("Hello.")]))
        other = self.build(lab.ScriptedModel([lab.say("Hi there.")]))
        first = self.prompt(busy, "Hi", "On a new harness")
        if other.is_running is not False:
            self.fail(f"while another harness's run was going on, a harness that was never "
                      f"prompted says is_running {other.is_running!r}; expected False. Keep the "
                      "flag on self, in __init__, not on the class.")
        try:
            second = other.prompt("Hello")
        except RuntimeError as error:
            self.fail(f"while another harness's run was going on, h.prompt(\"Hello\") on a "
                      f"harness that was never prompted raised RuntimeError({str(error)!r}). One "
                      "run at a time is a rule for each transcript: keep the flag on self.")
        self.drive(lab.steps(second) if hasattr(second, "__aiter__") else second,
                   "In the second harness's run")
        self.drive(first, "In the first harness's run")
        if (_shape(busy.messages), _shape(other.messages)) != ("U A", "U A"):
            self.fail(f"after one run on each harness, their transcripts are "
                      f"{_shape(busy.messages)} and {_shape(other.messages)}; expected U A and "
                      "U A.")

    def test_failed_run_frees_the_harness(self):
        """A run that ends in a failed reply (stop_reason "error") is over too: is_running is False after it, and the next prompt() is accepted and continues the transcript."""
        h = self.build(lab.ScriptedModel([lab.provider_error("503 overloaded"),
                                          lab.say("Hello again.")]))
        self.drive(self.prompt(h, "Hi", "On a new harness"), "In a run whose reply failed")
        if h.is_running is not False:
            self.fail(f"after a run that ended in a failed reply was pulled to its end, "
                      f"is_running is {h.is_running!r}; expected False. The run is over when "
                      "its events are, however it ended: clear the flag after the last event, "
                      "not when a good answer arrives.")
        try:
            run = lab.steps(h.prompt("Try again."))   # lab.steps: async from lesson 15
        except RuntimeError as error:
            self.fail(f"after a run that ended in a failed reply, h.prompt(\"Try again.\") "
                      f"raised RuntimeError({str(error)!r}); nothing was running, so it should "
                      "have been accepted.")
        self.drive(run, "In the run after the failed one")
        if _shape(h.messages) != "U A! U A":
            self.fail(f"after the failed run and the next one, h.messages is "
                      f"{_shape(h.messages)}; expected U A! U A.")

    def test_failed_run_busy_until_exhausted(self):
        """In a run that ends in a failed reply, is_running stays True at every event, the failed reply's message_end, turn_end and agent_end included, until the run is exhausted."""
        h = self.build(lab.ScriptedModel([lab.provider_error("503 overloaded")]))
        run = self.prompt(h, "Hi", "On a new harness")
        try:
            for event in run:
                if h.is_running is not True:
                    what = event.get("type") if isinstance(event, dict) else repr(event)
                    self.fail(f"at the {what} event of a run whose reply failed, is_running is "
                              f"{h.is_running!r}; expected True. The failed reply is not the end "
                              "of the run: turn_end and agent_end still follow. Clear the flag "
                              "after the loop, once every event has been yielded.")
        except AssertionError:
            raise
        except Exception as error:
            self.fail(f"pulling the run's events raised {type(error).__name__}: {error}")

    def test_model_error_goes_up(self):
        """A model call that raises is not the harness's to hide: pulling the run raises that very error, so whoever is pulling learns that the run died and why."""
        error = ConnectionError("connection reset by peer")
        h = self.build(lab.ScriptedModel([lab.raises(error)]))
        run = self.prompt(h, "Hi", "On a new harness")
        if not hasattr(run, "__next__"):
            self.fail(f"h.prompt() returned {type(run).__name__}, not the run.")
        try:
            events = lab.drive(run)
        except ConnectionError as raised:
            if raised is not error:
                self.fail(f"the model raised ConnectionError({str(error)!r}), and pulling the run "
                          f"raised another ConnectionError({str(raised)!r}); expected the model's "
                          "own error, passed on as it is.")
            return
        except Exception as other:
            self.fail(f"the model raised ConnectionError({str(error)!r}), and pulling the run "
                      f"raised {type(other).__name__}: {other}; expected the model's own error, "
                      "passed on as it is.")
        self.fail(f"the model raised ConnectionError({str(error)!r}), and the run ended quietly "
                  f"after {len(events)} events, as if all were well: the harness swallowed the "
                  "error. Put no try/except around the loop in _run; let the exception go up "
                  "to whoever pulls the run.")

    def test_prompt_as_typed(self):
        """The prompt goes into the transcript exactly as typed, spaces and line breaks included."""
        h = self.build(lab.ScriptedModel([lab.say("Hello.")]))
        typed = "  Hi,\n  indented.  "
        self.drive(self.prompt(h, typed, "On a new harness"), "On a new harness")
        got = h.messages[0].get("content") if h.messages else None
        if got != typed:
            self.fail(f"the prompt {typed!r} went into the transcript as {got!r}. The harness "
                      "owns the list; it does not edit what goes into it: pass the text on to "
                      "run_agent as it came.")

    def test_messages_during_a_run(self):
        """h.messages read during a run is the transcript as it stands: at every message_end of a run with a tool call, the message announced is already the last of h.messages."""
        model = lab.ScriptedModel([lab.reply(lab.call("ping", {}, id="p1")), lab.say("Pong.")])
        h = self.build(model, [_ping()])
        run = self.prompt(h, "Ping it.", "On a new harness")
        if not hasattr(run, "__next__"):
            self.fail(f"h.prompt() returned {type(run).__name__}, not the run.")
        seen = 0
        try:
            for event in run:
                if event.get("type") != "message_end":
                    continue
                seen += 1
                now = h.messages
                if now and now[-1] is not event["message"] and now[-1] == event["message"]:
                    self.fail(f"at the message_end of {lab.show([event['message']])}, h.messages "
                              "ended on an equal copy of that message, not the message itself. "
                              "A snapshot is a tuple of the same dicts: tuple(self._messages), "
                              "no copy of each message.")
                if not now or now[-1] is not event["message"]:
                    self.fail(f"at the message_end of {lab.show([event['message']])}, h.messages "
                              f"was {_shape(now)}; expected it to end on that message. Build the "
                              "tuple from self._messages at every read, and hand run_agent that "
                              "very list, so the harness's transcript grows as the run goes.")
        except AssertionError:
            raise
        except Exception as error:
            self.fail(f"pulling the run's events raised {type(error).__name__}: {error}")
        if seen != 4:
            self.fail(f"the run announced {seen} messages; expected 4, U A[p1] R(p1) A.")

    def test_settings_reach_the_loop(self):
        """The harness's own system prompt and tools reach the loop: built with system "Be brief." and a ping tool, it sends both on every model call and runs the tool; two harnesses built without messages= keep a transcript each."""
        ran = []
        ping = {"name": "ping", "description": "Answers pong.",
                "parameters": {"type": "object", "properties": {}},
                "execute": lambda arguments: ran.append(1) or "pong"}
        model = lab.ScriptedModel([lab.reply(lab.call("ping", {}, id="p1")), lab.say("Pong.")])
        try:
            h = harness.Harness(model, "Be brief.", [ping])
        except Exception as error:
            self.fail(f"Harness(model, \"Be brief.\", [ping]) raised {type(error).__name__}: "
                      f"{error}")
        self.drive(self.prompt(h, "Ping it.", "On a new harness"), "In a run with a tool")
        systems = [request.system for request in model.calls]
        if systems != ["Be brief.", "Be brief."]:
            self.fail(f"the model calls were sent the system prompts {systems}; expected "
                      "'Be brief.' on both: keep the system prompt you are given and pass it "
                      "to run_agent, not the module's SYSTEM.")
        names = [[spec.get("name") for spec in request.tools] for request in model.calls]
        if names != [["ping"], ["ping"]] or ran != [1]:
            self.fail(f"the model calls were offered the tools {names} and the tool ran "
                      f"{len(ran)} time(s); expected ['ping'] on both calls and one run: keep "
                      "the tools you are given and pass them to run_agent.")
        first = self.build(lab.ScriptedModel([lab.say("Hello.")]))
        second = self.build(lab.ScriptedModel([]))
        self.drive(self.prompt(first, "Hi", "On a new harness"), "On the first harness")
        if len(second.messages) != 0:
            self.fail(f"a run on one harness left {_shape(second.messages)} in another harness "
                      "that was never prompted; expected it empty. Each harness needs a list of "
                      "its own: list(messages) in __init__, never a shared default list.")

    def test_max_turns_passed_on(self):
        """Harness(..., max_turns=1) hands max_turns to the loop: a model that never stops asking is stopped after one call."""
        call = lab.call("ping", {}, id="p1")
        model = lab.ScriptedModel([lab.reply(call)] * 3)
        h = self.build(model, [_ping()], max_turns=1)
        run = self.prompt(h, "Go.", "On a new harness with max_turns=1")
        try:
            lab.drive(run)
        except lab.ScriptExhausted:
            self.fail("with max_turns=1 the model was called more than 3 times and the script "
                      "ran out: max_turns did not reach the loop. Keep it in __init__ and pass "
                      "it to run_agent on every run.")
        got = (_shape(h.messages), len(model.calls))
        if got != ("U A[p1] R(p1) A!", 1):
            self.fail(f"with max_turns=1 the run made {got[1]} model calls and left "
                      f"{got[0]}; expected 1 call and U A[p1] R(p1) A!. Keep max_turns in "
                      "__init__ and pass it to run_agent on every run.")

    def test_max_turns_passed_as_given(self):
        """max_turns reaches the loop as it was given: with max_turns=0 the model is never called (U A!, as in lesson 5), and with no max_turns a model that asks 300 times and then answers is called 301 times: no limit, not a large one."""
        model = lab.ScriptedModel([lab.say("Unreached.")])
        h = self.build(model, [_ping()], max_turns=0)
        run = self.prompt(h, "Go.", "On a new harness with max_turns=0")
        try:
            lab.drive(run)
        except Exception as error:
            self.fail(f"with max_turns=0, pulling the run raised {type(error).__name__}: "
                      f"{error}")
        got = (_shape(h.messages), len(model.calls))
        if got != ("U A!", 0):
            self.fail(f"with max_turns=0 the run made {got[1]} model call(s) and left {got[0]}; "
                      "expected no call and U A!: 0 is a limit of no calls (lesson 5), not a "
                      "missing value. Pass self._max_turns on exactly as it was given, with no "
                      "default of your own in its place (no `or`).")
        rounds = 300                   # more than any "safe" default a harness might put in None's place
        calls = [lab.reply(lab.call("ping", {}, id=f"p{n}")) for n in range(1, rounds + 1)]
        model = lab.ScriptedModel(calls + [lab.say("Done.")])
        h = self.build(model, [_ping()])
        run = self.prompt(h, "Go.", "On a new harness with no max_turns")
        try:
            lab.drive(run)
        except Exception as error:
            self.fail(f"with no max_turns, pulling the run raised {type(error).__name__}: "
                      f"{error}")
        last = lab.show(list(h.messages)[-1:])
        if len(model.calls) != rounds + 1 or last != 'assistant -> "Done."':
            self.fail(f"with no max_turns the model was called {len(model.calls)} time(s) and "
                      f"the run ended on {last}; expected {rounds + 1} calls, {rounds} rounds of "
                      "tools and then the answer \"Done.\". max_turns=None means no limit, not "
                      "a large one: pass None on as it is, with no default of your own in its "
                      "place.")

if __name__ == "__main__":
    unittest.main()
