"""Lesson 15's lab tests: stopping a run from outside.

Lab1 checks CancelToken, the async run_tool and the safe points of the async run_agent (point
15.1). Lab2 checks Harness.cancel and what a stopped run leaves: a record with every call
answered, listeners that heard it, and a harness ready for the next prompt (point 15.2). Each
test's docstring is its checklist line on the page, word for word. The async tests run on the
book's simulated clock (lab.run): "two seconds" there cost nothing, and every run is the same.

    python lab/lab_check.py --harness harness.py --lesson 15 tests.py [--lab 1|2]

Plain `python -m unittest` runs them too, on the same clock (_Case._callTestMethod).
"""
import asyncio
import inspect
import unittest

import harness
import lab

LESSON = 15
LOG = "session.jsonl"
EMPTY = {"type": "object", "properties": {}}


# ------------------------------------------------------------------------------------- helpers

def _tool(name, runs, answer="ok"):
    """A plain tool that notes each run in `runs`."""
    def execute(arguments):
        runs.append(name)
        return answer
    return {"name": name, "description": name, "parameters": EMPTY, "execute": execute}


def _noting_model(notes, label):
    """A streaming model with one scripted reply whose stream appends `label` to `notes` when it
    is let go: run to its end, closed, or collected."""
    scripted = lab.StreamingModel([lab.say("Reading the config first, then the port.")])

    class Model:
        def stream(self, system, context, tools):
            try:
                yield from scripted.stream(system, context, tools)
            finally:
                notes.append(label)
    return Model()


def _slow(name, runs, steps=10, every=0.5):
    """An async tool of `steps` steps of `every` simulated seconds. It looks at the token before
    each step (Tau's bash looks every 50 ms) and stops early when asked. `runs` gets (name,
    steps done, the token it was handed)."""
    async def execute(arguments, signal):
        for done in range(steps):
            if signal is not None and signal.cancelled:
                runs.append((name, done, signal))
                return f"stopped after {done} of {steps} steps"
            await asyncio.sleep(every)
        runs.append((name, steps, signal))
        return f"all {steps} steps done"
    return {"name": name, "description": name, "parameters": EMPTY, "execute": execute}


def _blocking(name, started):
    """An async tool that sets `started` and then waits for ever: only a cancel ends it."""
    async def execute(arguments, signal):
        started.set()
        await asyncio.Event().wait()
    return {"name": name, "description": name, "parameters": EMPTY, "execute": execute}


def _two_calls(first="a", second="b"):
    return lab.reply(lab.call(first, {}, id="c1"), lab.call(second, {}, id="c2"))


def _types(events):
    return [e["type"] for e in events]


def _view_problems(messages):
    return lab.validate(harness.context_for_model(list(messages)))


def _log_against_memory(kept, memory):
    """Why the log replayed after a reboot is not the record in memory, told by which side holds
    more and where they part: the listeners missed a message, or heard one never appended."""
    kept, memory = list(kept), list(memory)
    if len(kept) < len(memory) and memory[:len(kept)] == kept:
        return (f"the log holds {lab.shape(kept)} and memory {lab.shape(memory)}: the listeners "
                f"never heard {lab.shape(memory[len(kept):])}, appended at the end. Tell the "
                "listeners each INTERRUPTED result _run's finally appends, as a message_end: "
                "nobody is left to consume it.")
    if len(kept) < len(memory):
        return (f"the log holds {lab.shape(kept)} and memory {lab.shape(memory)}: the listeners "
                "missed a message from the middle of the run, one the consumer was handed and "
                "never came back from. Tell the listeners each event before you yield it to the "
                "consumer.")
    if len(kept) > len(memory):
        return (f"the log holds {lab.shape(kept)} and memory {lab.shape(memory)}: the listeners "
                "were told of a message that h.messages does not hold. Append each closing "
                "result to the record, then tell the listeners.")
    return (f"the log holds {lab.shape(kept)} and memory {lab.shape(memory)}: as many "
            "messages, not the same ones. The listeners must hear exactly what is appended, in "
            "the order it is appended.")


def _token(test):
    try:
        return harness.CancelToken()
    except Exception as error:          # the reader's code: say what happened
        test.fail(f"CancelToken() raised {type(error).__name__}: {error}")


class _Case(unittest.TestCase):
    longMessage = False

    def _callTestMethod(self, method):
        """An async test runs to its end on the simulated clock (lab.run) under plain
        `python -m unittest` too, as lab_check runs it: never left as an un-awaited coroutine
        that unittest would count as a pass."""
        result = method()
        if inspect.iscoroutine(result):
            lab.run(result)

    async def run_all(self, run, when, on_event=None):
        """Every event of an async run, handing each to on_event; a plain FAIL on an error."""
        if not hasattr(run, "__aiter__"):
            self.fail(f"{when}, the run is a {type(run).__name__}, not an async generator: from "
                      "lesson 15 it is written async def, with yield inside, and consumed with "
                      "async for.")
        events = []
        try:
            async for event in run:
                events.append(event)
                if on_event is not None:
                    await on_event(event)
        except AssertionError:
            raise
        except asyncio.CancelledError:
            self.fail(f"{when}, CancelledError came out of the run, though nobody cancelled a "
                      "task: a cancel ends the run at a safe point, with its calls answered and "
                      "its events balanced; it does not raise out of it.")
        except lab.ScriptExhausted as error:
            self.fail(f"{when}, the model was called once too often ({error}): the run did not "
                      "stop where it was asked to.")
        except Exception as error:
            self.fail(f"{when}, the run raised {type(error).__name__}: {error}")
        return events

    def agent(self, model, messages, tools, token, **options):
        return harness.run_agent(model, harness.SYSTEM, messages, tools, "Go.", signal=token,
                                 **options)


# ---------------------------------------------------------------------------------------- lab 1

class Lab1(_Case):

    def test_token(self):
        """CancelToken() starts not cancelled; cancel() sets it, a second cancel() changes nothing and raises nothing, and cancelled is a read-only property that is never reset; a token made after another was cancelled starts clear."""
        token = _token(self)
        self.assertIs(getattr(token, "cancelled", None), False,
                      f"a new token's cancelled is {getattr(token, 'cancelled', None)!r}; "
                      "expected False")
        for n in (1, 2):
            try:
                token.cancel()
            except Exception as error:
                self.fail(f"cancel() number {n} raised {type(error).__name__}: {error}; "
                          "cancelling twice is cancelling once")
            self.assertIs(token.cancelled, True,
                          f"after {n} cancel(), cancelled is {token.cancelled!r}; expected True")
        try:
            token.cancelled = False
        except AttributeError:
            pass
        else:
            self.fail("token.cancelled = False was taken: anyone could un-cancel a run. Make "
                      "cancelled a read-only @property over self._cancelled.")
        self.assertIs(token.cancelled, True, "the token was reset; a token is never reset")
        other = _token(self)
        self.assertIs(other.cancelled, False, "a new token made after another was cancelled "
                      "starts cancelled: keep the flag on the token (self._cancelled), not on "
                      "the class, so one run's Esc never reaches another run")

    async def test_run_tool_async(self):
        """run_tool is async def: a plain tool runs as in lesson 4, an async tool is awaited and handed the run's token as its second argument, and a tool that raises still gives a result marked is_error."""
        self.assertTrue(inspect.iscoroutinefunction(harness.run_tool),
                        "run_tool should be async def: an async tool must be awaited inside it")
        runs, token = [], _token(self)
        plain = await harness.run_tool([_tool("a", runs, "A!")], lab.call("a", {}, id="c1"), token)
        self.assertEqual((plain["content"], plain["is_error"], runs), ("A!", False, ["a"]),
                         f"a plain tool gave {plain!r}, runs {runs}; expected content 'A!', "
                         "is_error False, one run")
        slow = await harness.run_tool([_slow("s", runs, steps=2)], lab.call("s", {}, id="c2"),
                                      token)
        self.assertEqual((slow["tool_call_id"], slow["content"], slow["is_error"]),
                         ("c2", "all 2 steps done", False),
                         f"an async tool gave {slow!r}; expected its returned text, awaited")
        self.assertIs(runs[-1][2], token, "the async tool was not handed the token run_tool "
                      "got: call it as execute(arguments, signal)")
        self.assertEqual(lab.now(), 1.0, f"two steps of 0.5 s took {lab.now()} s of the clock")

        async def broken(arguments, signal):
            await asyncio.sleep(0)
            raise ValueError("disk full")
        tools = [{"name": "w", "description": "w", "parameters": EMPTY, "execute": broken}]
        try:
            failed = await harness.run_tool(tools, lab.call("w", {}, id="c3"), token)
        except Exception as error:
            self.fail(f"an async tool that raised ValueError made run_tool raise "
                      f"{type(error).__name__}; expected a result marked is_error")
        self.assertEqual((failed["content"], failed["is_error"]), ("disk full", True),
                         f"an async tool that raised gave {failed!r}")

    async def test_cancelled_error_goes_up(self):
        """CancelledError is not a tool failure: cancelling the task while an async tool runs makes run_tool end cancelled, with no result, whether the token it was handed is clear or cancelled too, and the tool itself is stopped with it."""
        for cancel_token in (False, True):
            started, token, stopped = asyncio.Event(), _token(self), []
            waits = _blocking("wait", started)
            inner = waits["execute"]

            async def execute(arguments, signal):
                try:
                    await inner(arguments, signal)
                finally:
                    stopped.append(True)
            waits["execute"] = execute
            task = asyncio.create_task(harness.run_tool([waits],
                                                        lab.call("wait", {}, id="c1"), token))
            await started.wait()
            if cancel_token:
                token.cancel()
            task.cancel()
            try:
                result = await task
            except asyncio.CancelledError:
                await asyncio.sleep(0)
                self.assertTrue(stopped, "the task was cancelled, yet the tool it ran is still "
                                "running: await execute(...) directly, so the cancel reaches "
                                "the tool; never shield it.")
                continue
            told = "the token cancelled and " if cancel_token else ""
            self.fail(f"with {told}the task cancelled while the tool ran, run_tool returned "
                      f"{result!r}: it caught the CancelledError, so whoever cancelled the task is "
                      "never answered. Catch Exception only; CancelledError is a BaseException "
                      "and must go up, untouched, whatever the token says.")

    async def test_cancelled_before_the_model(self):
        """A token cancelled before the run: the prompt is recorded, the model is never called, the reply is a failed one, error_message(CANCELLED_REPLY), and the events are balanced: agent_start, turn_start, message_end, message_end, turn_end, agent_end."""
        model, messages, token = lab.ScriptedModel([lab.say("Hi.")]), [], _token(self)
        token.cancel()
        events = await self.run_all(self.agent(model, messages, [], token), "With a cancelled token")
        self.assertEqual(len(model.calls), 0, f"the model was called {len(model.calls)} time(s) "
                         "after the run was cancelled; the check comes before each model call")
        want = ["agent_start", "turn_start", "message_end", "message_end", "turn_end", "agent_end"]
        self.assertEqual(_types(events), want, f"the events were {_types(events)}; expected {want}")
        self.assertEqual(lab.shape(messages), "U A!",
                         f"the record is {lab.shape(messages)}; expected U A!: the user's message, "
                         "then the reply cut by the cancel, failed with CANCELLED_REPLY")
        self.assertEqual(messages[-1], harness.error_message(harness.CANCELLED_REPLY),
                         f"the reply is {messages[-1]!r}; expected "
                         "error_message(CANCELLED_REPLY)")

    async def test_cancel_comes_before_the_brake(self):
        """Before a model call the cancel is looked at first, lesson 05's brake second: a run cancelled at a tool's end when it is also out of turns (max_turns=1) ends with error_message(CANCELLED_REPLY), not the brake's reply."""
        model, messages, token = lab.ScriptedModel([lab.reply(lab.call("a", {}, id="c1")),
                                                    lab.say("Done.")]), [], _token(self)

        async def on_event(event):
            if event["type"] == "tool_execution_end":
                token.cancel()
        await self.run_all(self.agent(model, messages, [_tool("a", [])], token, max_turns=1),
                           "Cancelled at the end of the only turn max_turns=1 allows", on_event)
        last = messages[-1] if messages else {}
        self.assertEqual((lab.shape(messages), last.get("error_message")),
                         ("U A[c1] R(c1) A!", harness.CANCELLED_REPLY),
                         f"the record is {lab.shape(messages)} and its last error is "
                         f"{last.get('error_message')!r}; expected U A[c1] R(c1) A! with "
                         "CANCELLED_REPLY: the user pressed Esc and waits to see that stop "
                         "answered, so look at the token before the max_turns brake")

    async def test_cancel_between_pieces(self):
        """A cancel between two pieces of a streamed reply (set by another task that wakes at each piece): no piece more is shown, the reply keeps the words that arrived, failed with CANCELLED_REPLY, and no tool of it runs."""
        runs, messages, token, seen = [], [], _token(self), []
        reply = lab.reply("Reading the config first, then the port.", lab.call("a", {}, id="c1"))
        model = lab.StreamingModel([reply, lab.say("Done.")])
        updates = asyncio.Event()

        async def on_event(event):
            if event["type"] == "message_update":
                seen.append(event["piece"])
                updates.set()

        async def watcher():                 # another part of the program: Esc on piece three
            while len(seen) < 3:
                updates.clear()
                await updates.wait()
            token.cancel()
        watching = asyncio.create_task(watcher())
        await self.run_all(self.agent(model, messages, [_tool("a", runs)], token), "Cancelled "
                           "mid-stream", on_event)
        watching.cancel()
        words = "".join(piece.get("text", "") for piece in seen[:3])
        self.assertEqual(len(seen), 3, f"{len(seen)} pieces were shown; expected 3: between two "
                         "pieces, await (so other tasks run) and then look at the token")
        self.assertEqual(runs, [], f"tools run: {runs}; a cancelled reply's calls never run")
        first = next((m for m in messages if m["role"] == "assistant"), None)
        kept = first and harness.text_of(first) or ""
        self.assertFalse(kept != words and kept.startswith(words), f"the reply recorded holds "
                         f"{kept!r}, but only {words!r} was shown: a piece was kept that no "
                         "listener saw. Look at the token after a piece is passed on and before "
                         "the next one is added to the reply.")
        self.assertEqual(
            (first and harness.text_of(first), first and first.get("stop_reason"),
             first and first.get("error_message")),
            (words, "error", harness.CANCELLED_REPLY),
            f"the reply recorded is {first!r}; expected the words shown, {words!r}, in a "
            "failed reply with error_message CANCELLED_REPLY")
        self.assertEqual(len(model.calls), 1, f"the model was asked {len(model.calls)} times")

    async def test_cancel_between_pieces_of_a_call(self):
        """A reply that is all call and arguments gives other tasks their turn between its pieces too: a cancel set at the third piece ends the reply there, failed with CANCELLED_REPLY, and its call never runs."""
        runs, messages, token, seen = [], [], _token(self), []
        reply = lab.reply(lab.call("a", {"path": "config.toml", "why": "to find the port"},
                                   id="c1"))
        model = lab.StreamingModel([reply, lab.say("Done.")])
        updates = asyncio.Event()

        async def on_event(event):
            if event["type"] == "message_update":
                seen.append(event["piece"])
                updates.set()

        async def watcher():                 # another part of the program: Esc on piece three
            while len(seen) < 3:
                updates.clear()
                await updates.wait()
            token.cancel()
        watching = asyncio.create_task(watcher())
        await self.run_all(self.agent(model, messages, [_tool("a", runs)], token), "Cancelled "
                           "in a call's arguments", on_event)
        watching.cancel()
        last = messages[-1] if messages else {}
        self.assertEqual((len(seen), runs, last.get("error_message")),
                         (3, [], harness.CANCELLED_REPLY),
                         f"{len(seen)} pieces were shown, the tools run were {runs} and the last "
                         f"message's error is {last.get('error_message')!r}; expected 3 pieces, "
                         "no tool, and CANCELLED_REPLY: await after every piece, a call's and its "
                         "arguments' too, or no other task runs until the reply is over")

    async def test_cancel_as_the_reply_starts(self):
        """A cancel set when a streamed reply's message_start is handed out (the frontend opens the reply's box, the user presses Esc) ends the reply before any piece is shown: no message_update, and a failed reply with CANCELLED_REPLY and no words."""
        messages, token, events = [], _token(self), []
        model = lab.StreamingModel([lab.say("Reading the config first, then the port."),
                                    lab.say("Done.")])

        async def on_event(event):
            events.append(event["type"])
            if event["type"] == "message_start":
                token.cancel()
        await self.run_all(self.agent(model, messages, [], token), "Cancelled at message_start",
                           on_event)
        shown = events.count("message_update")
        last = messages[-1] if messages else {}
        self.assertEqual((shown, lab.shape(messages), last.get("content"),
                          last.get("error_message")),
                         (0, "U A!", [], harness.CANCELLED_REPLY),
                         f"after a cancel at message_start, {shown} piece(s) were shown and the "
                         f"record is {lab.shape(messages)}, its last message {last!r}; expected 0 "
                         "pieces and U A! with no words and CANCELLED_REPLY: message_start is an "
                         "event like a piece, so await after it and look at the token then too")

    async def test_cancel_closes_the_stream(self):
        """A cancel between two pieces closes the stream there and then: not one more piece is pulled from the model's stream after the token is seen, and the stream is let go before the failed reply is recorded, not left open until the run ends."""
        notes, messages, token, pulled = [], [], _token(self), []
        scripted = lab.StreamingModel([lab.reply("Reading the config first, then the port.")])

        class Model:                          # a stream that notes each piece pulled, and its end
            def stream(self, system, context, tools):
                try:
                    for piece in scripted.stream(system, context, tools):
                        pulled.append(piece)
                        yield piece
                finally:
                    notes.append("closed")

        seen_at = []                          # how many pieces were pulled when the token was set

        async def on_event(event):
            if event["type"] == "message_update" and not token.cancelled:
                token.cancel()
                seen_at.append(len(pulled))
            if event["type"] == "message_end" and event["message"]["role"] == "assistant":
                notes.append("recorded")
        await self.run_all(self.agent(Model(), messages, [], token), "Cancelled mid-stream",
                           on_event)
        self.assertEqual(len(pulled), seen_at[0] if seen_at else len(pulled),
                         f"{len(pulled)} pieces were pulled from the model's stream, "
                         f"{len(pulled) - (seen_at or [0])[0]} of them after the token was set: "
                         "once the run sees the cancel it reads the stream no further (a real "
                         "reply goes on for a minute, and costs all of it). Close the stream; do "
                         "not read it to its end.")
        self.assertEqual(lab.shape(messages), "U A!",
                         f"the record is {lab.shape(messages)}; expected U A!: the user's message, "
                         "then the reply cut by the cancel, failed with CANCELLED_REPLY")
        when = "only after" if notes == ["recorded", "closed"] else "not before"
        self.assertEqual(notes, ["closed", "recorded"],
                         f"the stream was closed {when} the failed reply was recorded ({notes}): "
                         "once the token is seen between two "
                         "pieces, close the stream (pieces.close()) before you record the reply, "
                         "so the model's connection is let go at once")

    async def test_cancel_between_tools(self):
        """A cancel that lands after the first of two calls: the second never runs and gets cancelled_result, is_error; the model is not called again; the record is U A[c1,c2] R(c1) R(c2) A!, and the view of it is valid."""
        runs, messages, token = [], [], _token(self)
        model = lab.ScriptedModel([_two_calls(), lab.say("Both done.")])
        tools = [_tool("a", runs), _tool("b", runs)]

        async def on_event(event):
            if event["type"] == "tool_execution_end":
                token.cancel()
        await self.run_all(self.agent(model, messages, tools, token), "Cancelled after c1",
                           on_event)
        self.assertEqual(runs, ["a"], f"the tools that ran: {runs}; expected only a: the check "
                         "comes before each tool, not only between turns")
        self.assertEqual(len(model.calls), 1, f"the model was called {len(model.calls)} times; "
                         "expected once: a cancelled run asks it nothing more")
        self.assertEqual(lab.shape(messages), "U A[c1,c2] R(c1) R(c2) A!",
                         f"the record is {lab.shape(messages)}; expected U A[c1,c2] R(c1) R(c2) A!")
        self.assertEqual(messages[3], harness.cancelled_result(_two_calls()["content"][1]),
                         f"c2's result is {messages[3]!r}; expected cancelled_result(call)")
        self.assertEqual(_view_problems(messages), [], "the view of the record is refused: "
                         f"{_view_problems(messages)}")

    async def test_cancel_as_the_prompt_is_shown(self):
        """The look before the model comes after the turn's user messages are recorded and announced: a cancel set when the prompt's message_end is handed out stops the run before the model is asked."""
        model, messages, token = lab.ScriptedModel([lab.say("Hi.")]), [], _token(self)

        async def on_event(event):
            if event["type"] == "message_end" and event["message"]["role"] == "user":
                token.cancel()
        await self.run_all(self.agent(model, messages, [], token), "Cancelled as the prompt "
                           "was shown", on_event)
        self.assertEqual((len(model.calls), lab.shape(messages)), (0, "U A!"),
                         f"the model was asked {len(model.calls)} time(s) and the record is "
                         f"{lab.shape(messages)}; expected 0 and U A!: the Esc came before the "
                         "model was asked, so look at the token after the turn's user messages "
                         "are announced, right before the call")

    async def test_cancel_as_a_tool_is_shown(self):
        """The look before a tool comes after its tool_execution_start is handed out: a cancel set when the frontend is handed a call's start (it draws the call, the user presses Esc) stops that very call, which gets cancelled_result and never runs."""
        runs, messages, token = [], [], _token(self)
        model = lab.ScriptedModel([_two_calls(), lab.say("Both done.")])

        async def on_event(event):
            if event["type"] == "tool_execution_start" and event["call"]["id"] == "c1":
                token.cancel()
        await self.run_all(self.agent(model, messages, [_tool("a", runs), _tool("b", runs)],
                                      token), "Cancelled as c1 was shown", on_event)
        first = next((m for m in messages if m.get("tool_call_id") == "c1"), None)
        self.assertEqual((runs, first), ([], harness.cancelled_result(_two_calls()["content"][0])),
                         f"the tools run were {runs} and c1's result is {first!r}; expected no "
                         "tool run and cancelled_result for c1: the Esc came before c1 ran, so "
                         "look at the token after tool_execution_start, right before the tool")

    async def test_cancelled_call_announced(self):
        """A call the cancel keeps from running is announced like one that ran: tool_execution_start, the message_end of its result, then tool_execution_end."""
        runs, messages, token, events = [], [], _token(self), []
        model = lab.ScriptedModel([_two_calls(), lab.say("Both done.")])

        async def on_event(event):
            events.append(event)
            if event["type"] == "tool_execution_end":
                token.cancel()
        await self.run_all(self.agent(model, messages, [_tool("a", runs), _tool("b", runs)],
                                      token), "Cancelled after c1", on_event)
        about_c2 = [e["type"] for e in events
                    if (e.get("call") or {}).get("id") == "c2"
                    or (e.get("message") or {}).get("tool_call_id") == "c2"]
        self.assertEqual(about_c2, ["tool_execution_start", "message_end",
                                    "tool_execution_end"],
                         f"the events about c2, which was cancelled before it ran, are {about_c2}; "
                         "expected tool_execution_start, message_end, tool_execution_end: a "
                         "frontend that drew the call's start is waiting for its end")

    async def test_cancel_inside_a_long_tool(self):
        """A cancel from another task at 2.2 s, while an async tool of ten 0.5 s steps runs: the tool sees it at its next look (2.5 s) and stops, the next call is cancelled without running, and the run ends at 2.5 s."""
        runs, messages, token = [], [], _token(self)
        model = lab.ScriptedModel([_two_calls("s", "t"), lab.say("Done.")])
        asyncio.get_running_loop().call_later(2.2, token.cancel)
        await self.run_all(self.agent(model, messages, [_slow("s", runs), _slow("t", runs)],
                                      token), "Cancelled at 2.2 s")
        steps = [(name, done) for name, done, _ in runs]
        self.assertEqual(steps, [("s", 5)], f"the tools ran as {steps} (name, steps done); "
                         "expected s stopped after 5 steps, and t never started: hand the "
                         "token to the async tool, and check it before each tool")
        self.assertEqual(lab.now(), 2.5, f"the run ended at {lab.now()} s; expected 2.5 s")
        self.assertEqual(lab.shape(messages), "U A[c1,c2] R(c1) R(c2) A!",
                         f"the record is {lab.shape(messages)}")

    async def test_queues_stay_queued(self):
        """Once the run is cancelled, nobody is asked for steering or follow-ups: a cancel at the first turn_end, after a turn of calls or after a text-only answer, leaves both functions uncalled after it, and a run cancelled before its first step calls neither, so words queued while idle stay queued."""
        for first in (lab.reply(lab.call("a", {}, id="c1")), lab.say("Done.")):
            await self._queues_stay_queued(first)
        asked, token, messages = [], _token(self), []
        token.cancel()

        def queued(name):
            def get():
                asked.append(name)
                return [lab.user(f"Queued while idle ({name}).")]
            return get
        await self.run_all(self.agent(lab.ScriptedModel([lab.say("Done.")]), messages, [], token,
                                      get_steering=queued("steering"),
                                      get_follow_ups=queued("follow-ups")),
                           "With a token cancelled before the run", None)
        self.assertEqual((asked, lab.shape(messages)), ([], "U A!"),
                         f"a run cancelled before its first step asked for {asked} and recorded "
                         f"{lab.shape(messages)}; expected nobody asked and U A!: the words the "
                         "user queued while idle would go into a run that answers none of them. "
                         "The first turn's steering goes through ask() too.")

    async def _queues_stay_queued(self, first):
        asked, token = [], _token(self)
        model = lab.ScriptedModel([first, lab.say("Done.")])

        def steering():
            asked.append("steering")
            return []

        def follow_ups():
            asked.append("follow-ups")
            return [lab.user("And then?")]

        async def on_event(event):
            if event["type"] == "turn_end" and "cancel" not in asked:
                token.cancel()
                asked.append("cancel")
        messages = []
        await self.run_all(self.agent(model, messages, [_tool("a", [])], token,
                                      get_steering=steering, get_follow_ups=follow_ups),
                           "Cancelled at turn_end", on_event)
        after = asked[asked.index("cancel") + 1:] if "cancel" in asked else asked
        self.assertEqual(after, [], f"after a cancel at the turn_end of "
                         f"{lab.show([first], clip=40)}, the run asked for {after}: what the "
                         "user queued is lost to a run that will not answer it. Ask nobody once "
                         "cancelled.")
        self.assertNotIn("And then?", [m.get("content") for m in messages],
                         "a follow-up was taken into a cancelled run")

    async def test_old_rules_still_hold(self):
        """Nobody cancels, and the async loop keeps the rules of lessons 05 and 09: max_turns=1 stops a model that keeps calling, with lesson 05's failed reply, after one model call; steering queued during a batch goes in after the batch, and a follow-up where the run would end."""
        model = lab.ScriptedModel([lab.reply(lab.call("a", {}, id="c1")),
                                   lab.reply(lab.call("a", {}, id="c2")), lab.say("Done.")])
        messages, token = [], _token(self)
        await self.run_all(self.agent(model, messages, [_tool("a", [])], token, max_turns=1),
                           "With max_turns=1 and a model that keeps calling")
        brake = harness.error_message("Agent stopped after max_turns=1")
        self.assertEqual((lab.shape(messages), len(model.calls)), ("U A[c1] R(c1) A!", 1),
                         f"with max_turns=1 the record is {lab.shape(messages)} after "
                         f"{len(model.calls)} model call(s); expected U A[c1] R(c1) A! after 1: "
                         "lesson 05's brake sits before each model call in the async loop too")
        self.assertEqual(messages[-1], brake, f"the brake's reply is {messages[-1]!r}; expected "
                         f"{brake!r}")

        steering, follow_ups = [], [lab.user("And the docs?")]
        model, messages = lab.ScriptedModel([_two_calls(), lab.say("Tabs, then."),
                                             lab.say("Docs too.")]), []

        async def on_event(event):
            if event["type"] == "tool_execution_start" and event["call"]["id"] == "c1":
                steering.append(lab.user("Use tabs."))
        await self.run_all(
            self.agent(model, messages, [_tool("a", []), _tool("b", [])], _token(self),
                       get_steering=lambda: [steering.pop(0)] if steering else [],
                       get_follow_ups=lambda: [follow_ups.pop(0)] if follow_ups else []),
            "With steering sent during a batch and a follow-up queued", on_event)
        said = [m["content"] for m in messages if m["role"] == "user"]
        self.assertEqual((lab.shape(messages), said),
                         ("U A[c1,c2] R(c1) R(c2) U A U A", ["Go.", "Use tabs.", "And the docs?"]),
                         f"the record is {lab.shape(messages)}, the user said {said}; expected "
                         "U A[c1,c2] R(c1) R(c2) U A U A with the steering after the batch and "
                         "the follow-up last: an uncancelled run asks the queues as lesson 09's "
                         "did")

    async def test_a_tool_that_ignores_the_cancel(self):
        """A cancel from another task at 1 s, while an async tool that never looks at its token waits 3 s: the tool runs to its end and its result is recorded as it returned (not an error), the next call is cancelled without running, the model is not called again, and the run ends at 3 s."""
        runs, messages, token = [], [], _token(self)

        async def deaf(arguments, signal):   # one long wait: it never looks at the token
            await asyncio.sleep(3)
            runs.append("deaf")
            return "deployed"
        tools = [{"name": "a", "description": "a", "parameters": EMPTY, "execute": deaf},
                 _tool("b", runs)]
        model = lab.ScriptedModel([_two_calls(), lab.say("Done.")])
        asyncio.get_running_loop().call_later(1, token.cancel)
        await self.run_all(self.agent(model, messages, tools, token), "Cancelled at 1 s while "
                           "a tool that never looks ran")
        first = next((m for m in messages if m.get("tool_call_id") == "c1"), {})
        self.assertEqual((first.get("content"), first.get("is_error")), ("deployed", False),
                         f"c1's tool ran to its end and returned 'deployed', and its result is "
                         f"{first!r}: record what the tool returned, as it returned it. The "
                         "cancel decides whether a tool starts, not what a finished one did: "
                         "'cancelled before it ran' would be false, and the model would run it "
                         "again")
        self.assertEqual((runs, len(model.calls), lab.shape(messages), lab.now()),
                         (["deaf"], 1, "U A[c1,c2] R(c1) R(c2) A!", 3),
                         f"tools run {runs}, model calls {len(model.calls)}, record "
                         f"{lab.shape(messages)}, end at {lab.now()} s; expected ['deaf'], 1, "
                         "U A[c1,c2] R(c1) R(c2) A! and 3 s: the cancel waits for the tool that "
                         "ignores it, then stops the run at the next safe point")

    async def test_task_cancel_goes_through_the_run(self):
        """Cancelling the task that consumes a run while a tool runs ends it with CancelledError, the model is not called again, and the call is left for the harness to answer."""
        started, messages = asyncio.Event(), []
        model = lab.ScriptedModel([lab.reply(lab.call("wait", {}, id="c1")), lab.say("Done.")])

        async def consume():
            async for _ in self.agent(model, messages, [_blocking("wait", started)], None):
                pass
        task = asyncio.create_task(consume())
        await started.wait()
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        else:
            self.fail("the task was cancelled mid-tool and still ended normally: something "
                      "caught the CancelledError")
        self.assertEqual(len(model.calls), 1, f"the model was called {len(model.calls)} times")
        self.assertEqual(lab.shape(messages), "U A[c1]", f"the record is "
                         f"{lab.shape(messages)}; expected U A[c1]: run_agent records no "
                         "result for a call whose task was cancelled")


    def test_keeps_the_loop_rules(self):
        """The async run_agent keeps the earlier lessons' rules, with a model that streams and one that does not: agent_start, turn_start, turn_end and agent_end (with the run's messages) frame the run and each turn; a missing tool gets an is_error result; max_turns stops before the extra call; after a failed reply no tool runs and nobody is asked for more; steering and follow-ups are asked where lesson 9 put them; the model's exception reaches the caller; prompt None is one retry."""
        lab.keeps_loop_rules(self, harness, retry=True)
        lab.keeps_loop_rules(self, harness, stream=True, retry=True)

    async def test_pieces_cost_no_time(self):
        """Between two pieces the loop lets the rest of the program run without waiting: a reply streamed in several pieces, none of them slow, is recorded whole and the clock has not moved."""
        messages = []
        model = lab.StreamingModel([lab.say("Reading the config first, then the port.")])
        await self.run_all(harness.run_agent(model, harness.SYSTEM, messages, [], "Go."),
                           "Streaming a reply")
        self.assertEqual(harness.text_of(messages[-1]) if messages else None,
                         "Reading the config first, then the port.",
                         f"the reply recorded is {messages[-1] if messages else None!r}; expected "
                         "the whole reply, as the stream returned it")
        self.assertEqual(lab.now(), 0, f"streaming the reply took {lab.now()} s of the clock; "
                         "expected none: between pieces, await asyncio.sleep(0), which lets other "
                         "tasks run and waits for nothing")


# ---------------------------------------------------------------------------------------- lab 2

class Lab2(_Case):

    def harness_for(self, steps, tools, messages=()):
        try:
            return harness.Harness(lab.ScriptedModel(steps, check=True), harness.SYSTEM, tools,
                                   messages=messages)
        except Exception as error:
            self.fail(f"Harness(...) raised {type(error).__name__}: {error}")

    def cancel(self, h, when):
        if not hasattr(h, "cancel"):
            self.fail("Harness has no attribute cancel: add cancel(self)")
        try:
            h.cancel()
        except Exception as error:
            self.fail(f"{when}, h.cancel() raised {type(error).__name__}: {error}")

    async def test_cancel_when_idle(self):
        """cancel() on an idle harness does nothing: twice before any run, on a record resumed with an open call (U A[c0]), and after a run, it raises nothing and adds nothing to the record, and the next prompt runs to its answer."""
        before = [lab.user("Deploy it."), lab.reply(lab.call("a", {}, id="c0"))]
        h = self.harness_for([lab.say("One."), lab.say("Two.")], [_tool("a", [])],
                             messages=before)
        self.cancel(h, "Before any run")
        self.cancel(h, "A second time, before any run")
        self.assertEqual(lab.shape(h.messages), "U A[c0]",
                         f"two cancels while idle made h.messages {lab.shape(h.messages)}; "
                         "expected U A[c0], untouched: an idle cancel has no run to stop and "
                         "changes nothing (no listener would hear what it added, so the log "
                         "would part from memory)")
        await self.run_all(h.prompt("Hi"), "After a cancel while idle")
        self.cancel(h, "After a run")
        await self.run_all(h.prompt("Again"), "After a second cancel while idle")
        self.assertEqual(lab.shape(h.messages), "U A[c0] U A U A",
                         f"h.messages is {lab.shape(h.messages)}; expected U A[c0] U A U A: a "
                         "cancel while idle stops nothing, not even the next run, and closes "
                         "no call")

    async def test_cancel_stops_this_run_only(self):
        """h.cancel() during a run (twice, at the first tool_execution_end) stops it at its next safe point; until the run has ended it is still running (is_running True, prompt() refused), after it is_running is False, and the next prompt runs in full: each run has a token of its own."""
        runs, meanwhile = [], []
        h = self.harness_for([_two_calls(), lab.say("Fresh start.")],
                             [_tool("a", runs), _tool("b", runs)])

        async def on_event(event):
            if event["type"] == "tool_execution_end" and not meanwhile:
                self.cancel(h, "During the run")
                self.cancel(h, "A second time, during the run")
                try:
                    h.prompt("Meanwhile.")
                    refused = False
                except RuntimeError:
                    refused = True
                meanwhile.append((h.is_running, refused))
        await self.run_all(h.prompt("Go."), "A cancelled run", on_event)
        self.assertEqual(meanwhile, [(True, True)],
                         f"right after h.cancel(), (is_running, a new prompt() refused) was "
                         f"{meanwhile}; expected [(True, True)]: a cancel asks the run to stop at "
                         "its next safe point, and until it has, it is still running and the "
                         "harness still has one writer")
        self.assertEqual(runs, ["a"], f"tools run: {runs}; expected only a")
        self.assertIs(h.is_running, False, "after the cancelled run, is_running is still True")
        await self.run_all(h.prompt("Try again."), "The run after a cancelled one")
        self.assertEqual(lab.shape(h.messages), "U A[c1,c2] R(c1) R(c2) A! U A",
                         f"h.messages is {lab.shape(h.messages)}; expected U A[c1,c2] R(c1) "
                         "R(c2) A! U A. If the next run stopped at once, the old token is "
                         "still set: make a new CancelToken in every prompt().")

    async def test_cancel_before_the_first_step(self):
        """h.cancel() right after prompt(), twice, before the run has taken a step, stops that run before the model is asked: prompt() makes the run's token, not the run's first step; the next prompt runs in full."""
        h = self.harness_for([lab.say("One.")], [])
        run = h.prompt("Go.")
        self.cancel(h, "Between prompt() and the run's first step")
        self.cancel(h, "A second time, between prompt() and the run's first step")
        await self.run_all(run, "A run cancelled before its first step")
        self.assertEqual(lab.shape(h.messages), "U A!",
                         f"h.messages is {lab.shape(h.messages)}; expected U A!: the cancel came "
                         "after prompt() returned, so it must reach this run. Make the token in "
                         "prompt(), before it returns the run, not inside _run.")
        self.assertEqual(h.messages[-1], harness.error_message(harness.CANCELLED_REPLY),
                         f"the reply is {h.messages[-1]!r}; expected "
                         "error_message(CANCELLED_REPLY)")
        await self.run_all(h.prompt("Again."), "The run after it")
        self.assertEqual(lab.shape(h.messages), "U A! U A",
                         f"h.messages is {lab.shape(h.messages)}; expected U A! U A")

    async def _escape(self, h, started, cancel_harness=True):
        """Tau's Esc: h.cancel() and the consuming task cancelled, while a tool blocks."""
        async def consume():
            async for _ in h.prompt("Go."):
                pass
        task = asyncio.create_task(consume())
        await started.wait()
        if cancel_harness:
            self.cancel(h, "While the tool ran")
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        except Exception as error:
            self.fail(f"the cancelled task ended in {type(error).__name__}: {error}; expected "
                      "CancelledError, which no one catches on its way up")
        else:
            self.fail("the cancelled task ended normally: something swallowed CancelledError")

    async def test_escape_mid_tool(self):
        """Esc mid-tool, as Tau's terminal does it (h.cancel(), then the consuming task cancelled): the task ends in CancelledError, the cut call gets INTERRUPTED (is_error) at the end of the record, the listeners hear it as a message_end, and is_running is False."""
        started, heard = asyncio.Event(), []
        h = self.harness_for([lab.reply(lab.call("wait", {}, id="c1"))],
                             [_blocking("wait", started)])
        h.subscribe(heard.append)
        await self._escape(h, started)
        self.assertEqual(lab.shape(h.messages), "U A[c1] R(c1)",
                         f"h.messages is {lab.shape(h.messages)}; expected U A[c1] R(c1)")
        last = h.messages[-1]
        self.assertEqual((last["content"], last["is_error"]), (harness.INTERRUPTED, True),
                         f"the cut call's result is {last!r}; expected INTERRUPTED, is_error")
        ends = [e["message"] for e in heard if e["type"] == "message_end"]
        self.assertTrue(ends and ends[-1] is last, "the listeners never heard the INTERRUPTED "
                        "result: nobody is left to consume it, so _run's finally must tell them")
        self.assertIs(h.is_running, False, "after the cancelled task, is_running is True")

    async def test_task_cancel_alone(self):
        """The task cancelled without h.cancel() is a stop from outside too: the call still gets INTERRUPTED and the harness is idle."""
        started = asyncio.Event()
        h = self.harness_for([lab.reply(lab.call("wait", {}, id="c1"))],
                             [_blocking("wait", started)])
        await self._escape(h, started, cancel_harness=False)
        self.assertEqual(lab.shape(h.messages), "U A[c1] R(c1)",
                         f"h.messages is {lab.shape(h.messages)}; expected U A[c1] R(c1): a "
                         "CancelledError coming through _run cancels the run's token too")
        self.assertIs(h.is_running, False, "after the cancelled task, is_running is True")

    async def test_regression(self):
        """Tau's regression: after Esc mid-tool, the log a persist_to listener wrote replays to exactly h.messages, a valid transcript, and after a reboot a harness resumed from it answers the next prompt."""
        ws, started = lab.Workspace(), asyncio.Event()
        log = harness.SessionLog(ws, LOG)
        h = self.harness_for([lab.reply(lab.call("wait", {}, id="c1"))],
                             [_blocking("wait", started)])
        h.subscribe(harness.persist_to(log))
        await self._escape(h, started)
        kept = harness.SessionLog(ws.reboot(), LOG).replay()
        self.assertEqual(lab.shape(kept), lab.shape(h.messages), _log_against_memory(kept,
                                                                             h.messages))
        self.assertEqual(lab.validate(kept), [], f"the log replays to a transcript a provider "
                         f"refuses: {lab.validate(kept)}")
        again = self.harness_for([lab.say("The wait was cut short; shall I retry?")],
                                 [_blocking("wait", asyncio.Event())], messages=kept)
        await self.run_all(again.prompt("What happened?"), "Resumed after the reboot")
        self.assertEqual(lab.shape(again.messages), "U A[c1] R(c1) U A",
                         f"the resumed harness holds {lab.shape(again.messages)}")

    async def test_escape_while_the_consumer_works(self):
        """Esc while the consumer is busy with an event (a renderer taking 1 s an event, Esc at 3.5 s, on the reply's message_end): once the loop has closed the abandoned run, the log replays to exactly h.messages, U A[c1] R(c1), and the harness is idle."""
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)
        h = self.harness_for([lab.reply(lab.call("a", {}, id="c1")), lab.say("Done.")],
                             [_tool("a", [])])
        h.subscribe(harness.persist_to(log))

        async def consume():
            async for _ in h.prompt("Go."):
                await asyncio.sleep(1)       # a slow renderer: the consumer is busy, not the run
        task = asyncio.create_task(consume())
        await asyncio.sleep(3.5)
        self.cancel(h, "While the consumer drew the reply")
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        for _ in range(3):                   # the loop closes the abandoned run (aclose)
            await asyncio.sleep(0)
        kept = log.replay()
        self.assertEqual(lab.shape(kept), lab.shape(h.messages), _log_against_memory(kept,
                                                                             h.messages))
        self.assertEqual(lab.shape(h.messages), "U A[c1] R(c1)",
                         f"the log and memory both hold {lab.shape(h.messages)}; expected "
                         "U A[c1] R(c1): the consumer's task was cancelled after h.cancel(), so "
                         "the run was stopped from outside and its finally answers c1 with "
                         "INTERRUPTED")
        self.assertIs(h.is_running, False, "after the abandoned run was closed, is_running is "
                      "True")

    async def test_every_open_call_closed(self):
        """A cancel closes every open call in the record, one from before this run included: resumed from U A[c0] (a power cut mid-tool) and cancelled mid-tool, the record gets INTERRUPTED for c0 then c1 at its end, the listeners hear both, and the view is valid."""
        started, heard = asyncio.Event(), []
        before = [lab.user("Deploy it."), lab.reply(lab.call("wait", {}, id="c0"))]
        h = self.harness_for([lab.reply(lab.call("wait", {}, id="c1"))],
                             [_blocking("wait", started)], messages=before)
        h.subscribe(heard.append)
        await self._escape(h, started)
        added = list(h.messages[len(before) + 2:])
        closed = [m.get("tool_call_id") for m in added
                  if (m.get("role"), m.get("content")) == ("toolResult", harness.INTERRUPTED)]
        self.assertEqual((lab.shape(h.messages[:len(before) + 2]), closed, len(added)),
                         ("U A[c0] U A[c1]", ["c0", "c1"], 2),
                         f"h.messages is {lab.shape(h.messages)}, INTERRUPTED for {closed}; "
                         "expected U A[c0] U A[c1] then INTERRUPTED for c0 and c1, in that order: "
                         "_close_calls answers every recorded call without a result, not only the "
                         "last reply's, in record order, and appends at the end of the record")
        ends = [e["message"] for e in heard if e["type"] == "message_end"]
        self.assertEqual([m.get("tool_call_id") for m in ends[-2:]],
                         [m.get("tool_call_id") for m in added],
                         "the listeners did not hear every INTERRUPTED result as a message_end")
        problems = _view_problems(h.messages)
        self.assertEqual(problems, [], f"the view of the record is refused: {problems}")

    async def test_answered_calls_stay_answered(self):
        """A call answered in an earlier run keeps its one result: prompt 1 runs c0 to its result, prompt 2 is cancelled mid-tool; the record and the log both end U A[c0] R(c0) A U A[c1] R(c1), with exactly one result for c0 and INTERRUPTED only for c1."""
        ws, started, runs = lab.Workspace(), asyncio.Event(), []

        async def deploy(arguments, signal):  # the first deploy returns; the second waits for ever
            runs.append("deploy")
            if len(runs) == 1:
                return "deployed"
            started.set()
            await asyncio.Event().wait()
        tools = [{"name": "deploy", "description": "deploy", "parameters": EMPTY,
                  "execute": deploy}]
        log = harness.SessionLog(ws, LOG)
        h = self.harness_for([lab.reply(lab.call("deploy", {}, id="c0")), lab.say("Deployed."),
                              lab.reply(lab.call("deploy", {}, id="c1"))], tools)
        h.subscribe(harness.persist_to(log))
        await self.run_all(h.prompt("Deploy."), "The first run, which ends by itself")
        await self._escape(h, started)
        for where, messages in (("h.messages", h.messages),
                                ("the log after a reboot",
                                 harness.SessionLog(ws.reboot(), LOG).replay())):
            for_c0 = [m.get("content") for m in messages if m.get("tool_call_id") == "c0"]
            self.assertEqual((lab.shape(messages), for_c0),
                             ("U A[c0] R(c0) A U A[c1] R(c1)", ["deployed"]),
                             f"{where} is {lab.shape(messages)}, with results for c0 {for_c0}; "
                             "expected U A[c0] R(c0) A U A[c1] R(c1): every call answered once, "
                             "c0 by 'deployed'. A call is open only if no toolResult anywhere in "
                             "the record answers it: look at every result, not only those since "
                             "the last prompt, match them by call id, and tell the listeners "
                             "each closing result once")
        self.assertEqual(h.messages[-1].get("content"), harness.INTERRUPTED,
                         f"c1's result is {h.messages[-1]!r}; expected INTERRUPTED")

    async def test_a_batch_cut_in_its_middle(self):
        """Esc during the second call of a batch, on a record resumed from U A[c0] (a power cut mid-tool): c1 keeps the result its tool returned, c0 and c2 get INTERRUPTED in record order, and every call has exactly one result."""
        started, runs = asyncio.Event(), []
        before = [lab.user("Deploy it."), lab.reply(lab.call("a", {}, id="c0"))]
        h = self.harness_for([lab.reply(lab.call("a", {}, id="c1"), lab.call("wait", {}, id="c2"))],
                             [_tool("a", runs), _blocking("wait", started)], messages=before)
        await self._escape(h, started)
        results = [(m.get("tool_call_id"), "INTERRUPTED" if m.get("content") == harness.INTERRUPTED
                    else m.get("content")) for m in h.messages if m["role"] == "toolResult"]
        self.assertEqual((lab.shape(h.messages), results),
                         ("U A[c0] U A[c1,c2] R(c1) R(c0) R(c2)",
                          [("c1", "ok"), ("c0", "INTERRUPTED"), ("c2", "INTERRUPTED")]),
                         f"h.messages is {lab.shape(h.messages)}, with results {results}; "
                         "expected U A[c0] U A[c1,c2] R(c1) R(c0) R(c2), c1 answered by its "
                         "tool's 'ok' and c0 then c2 by INTERRUPTED: the record may end on a "
                         "result, not a reply, and which calls are open is a question of ids, "
                         "not of counting calls and results")

    def _closing(self, messages, ids):
        """For each id, what answers it in `messages`: CANCELLED, INTERRUPTED, another text, or
        None if nothing does."""
        names = {harness.CANCELLED: "CANCELLED", harness.INTERRUPTED: "INTERRUPTED"}
        found = {}
        for m in messages:
            if m.get("role") == "toolResult" and m.get("tool_call_id") in ids:
                found.setdefault(m["tool_call_id"], names.get(m.get("content"), m.get("content")))
        return [(i, found.get(i)) for i in ids]

    async def test_a_half_call_is_cancelled(self):
        """Esc while a call's arguments stream (h.cancel() at the fourth piece: the call's name is out, half its arguments are not): the failed reply keeps the half call, and the finally answers it with cancelled_result(call), CANCELLED, not INTERRUPTED, since its tool never started; the listeners hear it, and the view is valid."""
        heard, shown = [], []
        reply = lab.reply("Reading.", lab.call("read", {"path": "config.toml",
                                                        "why": "to find the port"}, id="r1"))
        h = harness.Harness(lab.StreamingModel([reply]), harness.SYSTEM, [_tool("read", [])])
        h.subscribe(heard.append)

        async def on_event(event):
            if event["type"] == "message_update":
                shown.append(event["piece"])
                if len(shown) == 4:
                    self.cancel(h, "While the call's arguments streamed")
        await self.run_all(h.prompt("Which port?"), "Cancelled in a call's arguments", on_event)
        kinds = [piece.get("type") for piece in shown]
        self.assertEqual(kinds[:4], ["text", "call", "arguments", "arguments"],
                         f"the pieces shown were {kinds}; the test expected text, the call, then "
                         "arguments: this is the test's own set-up, and the stage's stream no "
                         "longer gives it")
        closing = self._closing(h.messages, ["r1"])
        self.assertEqual((lab.shape(h.messages), closing),
                         ("U A![r1] R(r1)", [("r1", "CANCELLED")]),
                         f"h.messages is {lab.shape(h.messages)}, r1 answered by {closing}; "
                         "expected U A![r1] R(r1), r1 answered by CANCELLED: the Esc came while "
                         "r1 was still arriving, so its tool never started. Note the calls of each "
                         "reply this run records as not started, and answer those with "
                         "cancelled_result(call); INTERRUPTED says the call may have run")
        self.assertEqual(h.messages[-1], harness.cancelled_result(h.messages[-2]["content"][-1]),
                         f"r1's result is {h.messages[-1]!r}; expected cancelled_result(call) for "
                         "the half call, with its id and name")
        ends = [e["message"] for e in heard if e["type"] == "message_end"]
        self.assertTrue(ends and ends[-1] is h.messages[-1], "the listeners never heard r1's "
                        "result as a message_end")
        problems = _view_problems(h.messages)
        self.assertEqual(problems, [], f"the view of the record is refused: {problems}")

    async def test_a_batch_left_behind_is_cancelled(self):
        """Esc during the first call of a batch, on a record resumed from U A[c0] (a power cut mid-tool): c1, whose tool was cut short, gets INTERRUPTED; c2, queued behind it, never started and gets CANCELLED; c0, from before this run, may have run and gets INTERRUPTED."""
        started, runs = asyncio.Event(), []
        before = [lab.user("Deploy it."), lab.reply(lab.call("a", {}, id="c0"))]
        h = self.harness_for([lab.reply(lab.call("wait", {}, id="c1"), lab.call("a", {}, id="c2"))],
                             [_tool("a", runs), _blocking("wait", started)], messages=before)
        await self._escape(h, started)
        closing = self._closing(h.messages, ["c0", "c1", "c2"])
        self.assertEqual((runs, closing),
                         ([], [("c0", "INTERRUPTED"), ("c1", "INTERRUPTED"), ("c2", "CANCELLED")]),
                         f"the tool a ran {len(runs)} time(s) and the calls are answered as "
                         f"{closing}; expected a never run, c0 and c1 INTERRUPTED and c2 "
                         "CANCELLED: c1's tool had started when the stop came, c2's had not, and "
                         "c0 is from before this run, so nobody knows whether it ran. Take a call "
                         "off the not-started list only once its tool starts")

    async def test_esc_as_a_tool_is_drawn(self):
        """Esc while the consumer is busy drawing a tool's start (h.cancel() and the task cancelled while the consumer awaits on c1's tool_execution_start): the tool never runs, and once the loop has closed the abandoned run c1 gets CANCELLED: a tool starts only when the run is asked for the event after its tool_execution_start."""
        runs, drawing = [], asyncio.Event()
        h = self.harness_for([lab.reply(lab.call("a", {}, id="c1")), lab.say("Done.")],
                             [_tool("a", runs)])

        async def consume():
            async for event in h.prompt("Go."):
                if event["type"] == "tool_execution_start":
                    drawing.set()
                await asyncio.sleep(1)       # a slow renderer: the consumer is busy, not the run
        task = asyncio.create_task(consume())
        await drawing.wait()
        self.cancel(h, "While the consumer drew c1's start")
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        for _ in range(3):                   # the loop closes the abandoned run (aclose)
            await asyncio.sleep(0)
        closing = self._closing(h.messages, ["c1"])
        self.assertEqual((runs, lab.shape(h.messages), closing),
                         ([], "U A[c1] R(c1)", [("c1", "CANCELLED")]),
                         f"the tool ran {len(runs)} time(s), h.messages is "
                         f"{lab.shape(h.messages)} and c1 is answered by {closing}; expected no "
                         "run, U A[c1] R(c1) and CANCELLED: the consumer never asked for the event "
                         "after c1's tool_execution_start, so the tool never started. Count a tool "
                         "as started once that yield returns, not when its start is handed out")
        self.assertIs(h.is_running, False, "after the abandoned run was closed, is_running is "
                      "True")

    async def test_queued_words_outlive_a_cancel(self):
        """Steering and a follow-up queued during a run that is then cancelled stay queued: the next prompt takes the steering in with its own words and the follow-up where it would end, U A[c1] R(c1) U U A U A."""
        started = asyncio.Event()
        h = self.harness_for([lab.reply(lab.call("wait", {}, id="c1")), lab.say("Tabs, then."),
                              lab.say("Docs too.")], [_blocking("wait", started)])

        async def consume():
            async for _ in h.prompt("Go."):
                pass
        task = asyncio.create_task(consume())
        await started.wait()
        h.steer("Use tabs.")
        h.follow_up("And the docs?")
        self.cancel(h, "While the tool ran, with words queued")
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await self.run_all(h.prompt("Go on."), "The run after the cancel")
        said = [m["content"] for m in h.messages if m["role"] == "user"]
        self.assertEqual((lab.shape(h.messages), said),
                         ("U A[c1] R(c1) U U A U A", ["Go.", "Go on.", "Use tabs.", "And the docs?"]),
                         f"after the cancel, the next run left {lab.shape(h.messages)}, the user "
                         f"said {said}; expected U A[c1] R(c1) U U A U A with the steering after "
                         "'Go on.' and the follow-up last: a cancel stops a run, not the words "
                         "the user queued for the next one. Leave the queues alone.")

    async def test_repair_heard_after_it_is_recorded(self):
        """While the listeners hear the repair, the harness is still running, and each INTERRUPTED result they hear is already the last message of the record."""
        started, seen = asyncio.Event(), []
        h = self.harness_for([lab.reply(lab.call("wait", {}, id="c1"))],
                             [_blocking("wait", started)])

        def listener(event):
            message = event.get("message") or {}
            if event["type"] == "message_end" and message.get("content") == harness.INTERRUPTED:
                seen.append((h.is_running, bool(h.messages) and h.messages[-1] is message))
        h.subscribe(listener)
        await self._escape(h, started)
        self.assertEqual(seen, [(True, True)],
                         f"while hearing the repair, the listener saw (is_running, the message "
                         f"last in the record) = {seen}; expected [(True, True)]: append each "
                         "INTERRUPTED result, then announce it (mutate, then announce), and clear "
                         "the running flag last, after the listeners")

    async def test_repair_heard_as_message_ends_only(self):
        """The listeners hear the repair as message_end events and nothing else: stopped by the token alone on a record resumed from U A[c0], they hear one agent_start, one agent_end, then only the message_end of c0's INTERRUPTED; after Esc mid-tool, no agent_end at all, and the run's last events are the message_ends of what the repair appended."""
        runs, heard = [], []
        before = [lab.user("Deploy it."), lab.reply(lab.call("wait", {}, id="c0"))]
        h = self.harness_for([lab.reply(lab.call("slow", {}, id="c1"))], [_slow("slow", runs)],
                             messages=before)
        h.subscribe(heard.append)

        async def cancel_soon(event):
            if event["type"] == "tool_execution_start":
                self.cancel(h, "While the tool ran")
        await self.run_all(h.prompt("Go."), "Stopped by the token alone", cancel_soon)
        kinds = _types(heard)
        after = kinds[kinds.index("agent_end") + 1:] if "agent_end" in kinds else None
        self.assertEqual((kinds.count("agent_start"), kinds.count("agent_end"), after),
                         (1, 1, ["message_end"]),
                         f"stopped by the token alone, the listeners heard {kinds}; expected one "
                         "agent_start, one agent_end, and after it only the message_end of c0's "
                         "INTERRUPTED: the repair is told as message_ends, never as a made-up "
                         "agent_end or turn_end")
        started, heard = asyncio.Event(), []
        h = self.harness_for([lab.reply(lab.call("wait", {}, id="c1"))],
                             [_blocking("wait", started)])
        h.subscribe(heard.append)
        await self._escape(h, started)
        kinds = _types(heard)
        self.assertEqual((kinds.count("agent_end"), kinds[-1:]), (0, ["message_end"]),
                         f"after Esc mid-tool, the listeners heard {kinds}; expected no "
                         "agent_end (the run never reached its end) and the repair's message_end "
                         "last: the repair is told as message_ends, never as a made-up agent_end")

    async def test_ordinary_ends_add_nothing(self):
        """A run that ends by itself, or is closed by its consumer, gets no INTERRUPTED from the finally: closed at tool_execution_start, the record stays U A[c1] for lesson 10's view to repair, and a run that ends by itself on a record resumed with an older open call adds nothing to it either."""
        runs = []
        h = self.harness_for([lab.reply(lab.call("a", {}, id="c1")), lab.say("Done.")],
                             [_tool("a", runs)])
        run = h.prompt("Go.")
        async for event in run:
            if event["type"] == "tool_execution_start":
                break
        await run.aclose()
        self.assertEqual(lab.shape(h.messages), "U A[c1]",
                         f"after a close by the consumer h.messages is {lab.shape(h.messages)}; "
                         "expected U A[c1]: only a stop from outside (cancel, a cancelled task) "
                         "closes the calls in the record")
        self.assertIs(h.is_running, False, "after the close, is_running is True")
        # resumed after a power cut, a call of an earlier run has no result; this run ends by itself
        old = lab.reply(lab.call("a", {}, id="c0"))
        h = self.harness_for([lab.say("Done.")], [_tool("a", runs)],
                             messages=[lab.user("Go."), old])
        try:
            async for _ in h.prompt("Go on."):
                pass
        except Exception as error:
            self.fail(f"a run that ends by itself raised {type(error).__name__}: {error}")
        self.assertEqual(lab.shape(h.messages), "U A[c0] U A",
                         f"a record resumed as U A[c0] became {lab.shape(h.messages)} after a run "
                         "that ended by itself; expected U A[c0] U A: the run's end is no stop "
                         "from outside, so the finally adds nothing (lesson 10's view repairs "
                         "the old call in what is sent)")

    async def test_a_crash_adds_nothing(self):
        """An exception from the model is no stop from outside: it goes up to the consumer as it is, and on a record resumed with an open call (U A[c0]) the finally adds no INTERRUPTED; the harness is idle after it."""
        h = self.harness_for([lab.raises(ConnectionError("connection reset by the provider"))],
                             [_tool("a", [])], messages=[lab.user("Go."),
                                                          lab.reply(lab.call("a", {}, id="c0"))])
        try:
            async for _ in h.prompt("Go on."):
                pass
        except ConnectionError:
            pass
        except BaseException as error:
            self.fail(f"the model raised ConnectionError and the consumer got "
                      f"{type(error).__name__}: {error}; expected the model's own exception")
        else:
            self.fail("the model raised ConnectionError and the run ended normally: a model's "
                      "exception reaches the caller")
        self.assertEqual(lab.shape(h.messages), "U A[c0] U",
                         f"after the model raised, h.messages is {lab.shape(h.messages)}; "
                         "expected U A[c0] U: a crash is no stop from outside, so the token stays "
                         "clear and the finally adds nothing (catch CancelledError only)")
        self.assertIs(h.is_running, False, "after the model raised, is_running is True")

    async def test_listener_that_raises_in_the_finally(self):
        """A listener that raises OSError on the INTERRUPTED result is not silenced: its OSError reaches the consumer in place of the CancelledError (a saver that cannot save must not be silent), and the harness is still left idle: is_running is False and the next prompt is accepted and runs."""
        started = asyncio.Event()
        h = self.harness_for([lab.reply(lab.call("wait", {}, id="c1")), lab.say("Back.")],
                             [_blocking("wait", started)])

        def fussy(event):
            if event["type"] == "message_end" and event["message"]["role"] == "toolResult":
                raise OSError("disk full")
        h.subscribe(fussy)

        async def consume():
            async for _ in h.prompt("Go."):
                pass
        task = asyncio.create_task(consume())
        await started.wait()
        self.cancel(h, "While the tool ran")
        task.cancel()
        try:
            await task
        except OSError:
            pass
        except asyncio.CancelledError:
            self.fail("a listener raised OSError on the INTERRUPTED result and the consumer saw "
                      "only the CancelledError: the listener's error was swallowed. Call the "
                      "listeners with no try around them, so a saver that cannot save is heard")
        except BaseException as error:
            self.fail(f"a listener raised OSError on the INTERRUPTED result and the consumer got "
                      f"{type(error).__name__}: {error}; expected the listener's OSError")
        else:
            self.fail("a listener raised OSError on the INTERRUPTED result and the consumer's "
                      "task ended normally; expected the listener's OSError")
        self.assertIs(h.is_running, False, "a listener raised in _run's finally and the harness "
                      "stayed running: clear the flag in a finally of its own")
        try:
            async for _ in h.prompt("Go on."):
                pass
        except Exception as error:
            self.fail(f"after a listener raised in _run's finally, the next prompt raised "
                      f"{type(error).__name__}: {error}")
        self.assertEqual(lab.shape(h.messages), "U A[c1] R(c1) U A",
                         f"after a listener raised in _run's finally, the next prompt left the "
                         f"record {lab.shape(h.messages)}; expected U A[c1] R(c1) U A, the "
                         "prompt and the model's answer after the repaired call")

    def test_keeps_the_harness_rules(self):
        """The async Harness keeps lessons 8 and 9's rules: prompt() during a run raises RuntimeError("already running; use steer() or follow_up()") and queues nothing; is_running is True from prompt() until the run ends; steer() and follow_up() queue the user's words for the loop; unsubscribe() stops a listener's events and may be called twice."""
        lab.keeps_harness_rules(self, harness)

    async def test_close_lets_the_stream_go(self):
        """A run closed by its consumer mid-stream (aclose at the first piece) lets the model's stream go before aclose() returns: _run's finally closes the loop's run itself, it does not leave it to the garbage collector."""
        notes = []
        h = harness.Harness(_noting_model(notes, "closed"), harness.SYSTEM, [])
        run = h.prompt("Go.")
        async for event in run:
            if event["type"] == "message_update":
                break
        await run.aclose()
        self.assertEqual(notes, ["closed"], "when the consumer's aclose() returned, the model's "
                         "stream was still open: in _run's finally, await run.aclose() on "
                         "run_agent's run before anything else")
        self.assertIs(h.is_running, False, "after the close, is_running is True")

    async def test_run_let_go_before_the_repair(self):
        """_run's finally lets the loop's run go (await run.aclose()) before it repairs: cancelled, then closed by its consumer mid-stream on a record resumed with an open call (U A[c0]), the model's stream is let go before the listeners hear c0's INTERRUPTED result."""
        notes = []
        h = harness.Harness(_noting_model(notes, "stream let go"), harness.SYSTEM,
                            [_tool("a", [])],
                            messages=[lab.user("Go."), lab.reply(lab.call("a", {}, id="c0"))])

        def listener(event):
            if event["type"] == "message_end" and event["message"]["role"] == "toolResult":
                notes.append(f"repair {event['message']['tool_call_id']}")
        h.subscribe(listener)
        run = h.prompt("Go on.")
        async for event in run:
            if event["type"] == "message_update":
                self.cancel(h, "While the reply streamed")
                break
        try:
            await run.aclose()
        except Exception as error:
            self.fail(f"closing the cancelled run raised {type(error).__name__}: {error}")
        self.assertEqual(notes, ["stream let go", "repair c0"],
                         f"cancelled and closed mid-stream, the order was {notes}; expected "
                         "['stream let go', 'repair c0']: in _run's finally, await run.aclose() "
                         "first, so the loop can add nothing more, and only then close the calls")
        self.assertIs(h.is_running, False, "after the close, is_running is True")

    def test_close_calls_once_per_id(self):
        """_close_calls() answers each open call id once: a record where the same id is open twice (a failed reply's call, asked again) gets one result for it, {"role": "toolResult", "tool_call_id": "c1", "tool_name": "wait", "content": INTERRUPTED, "is_error": True}, appended and returned; called again, it appends nothing and returns []."""
        failed = dict(lab.reply(lab.call("wait", {}, id="c1")), stop_reason="error",
                      error_message="cut off")
        before = [lab.user("Wait."), failed, lab.user("Again."), lab.reply(lab.call("wait", {}, id="c1"))]
        h = harness.Harness(lab.ScriptedModel([]), harness.SYSTEM, [], messages=before)
        try:
            added = h._close_calls()
        except Exception as error:
            self.fail(f"h._close_calls() raised {type(error).__name__}: {error}")
        closed = [m.get("tool_call_id") for m in h.messages[len(before):]]
        self.assertEqual(closed, ["c1"], f"_close_calls() appended results for {closed}; "
                         "expected one, for c1: note each id as you answer it, so a second "
                         "call with that id is not answered again")
        want = {"role": "toolResult", "tool_call_id": "c1", "tool_name": "wait",
                "content": harness.INTERRUPTED, "is_error": True}
        self.assertEqual(list(h.messages[len(before):]), [want],
                         f"_close_calls() appended {list(h.messages[len(before):])!r}; expected "
                         f"[{want!r}]")
        self.assertEqual(list(added or []), [want], f"_close_calls() returned {added!r}; expected "
                         "the one message it appended")
        try:
            again = h._close_calls()
        except Exception as error:
            self.fail(f"h._close_calls() a second time raised {type(error).__name__}: {error}")
        self.assertEqual((again, len(h.messages)), ([], len(before) + 1),
                         f"_close_calls() a second time returned {again!r} and left "
                         f"{len(h.messages)} messages; expected [] and {len(before) + 1}: every "
                         "call has its result now, so there is nothing to add")
