"""The stage props: `import lab`.

Every lesson's Python runs against a small simulated world instead of a real model and a real
disk, so that it runs the same in the page (Pyodide) as on your machine, with no key, no network,
and no randomness. This package is that world. It is not part of the harness you build: it is
the stage the harness performs on, and the tests look at the stage to see what the harness did.

Messages (lab/messages.py), plain dicts in the course harness's shapes:
    user(text)                          {"role": "user", "content": text}
    text(t)                             {"type": "text", "text": t}
    call(name, arguments, id=None)      a toolCall block; without id, "call_" + a hash of both
    reply(*blocks)                      an assistant message; a str is a text block
    say(t)                              reply(text(t))
    tool_result(call, content, is_error=False)
    provider_error(t)                   a failed reply: content [], stop_reason "error"
    show(messages, clip=80) -> str      one line per message: user -> "Hi"
    shape(messages) -> str              "U A[c1] R(c1) A", A! for a failed reply
    validate(messages) -> list[str]     what a provider would refuse; [] when nothing
    timeline(record, calls, width=36) -> str   call by call (calls: model.calls), the record as it
                                        stood beside the view that call was sent, one message a
                                        row: = as recorded, + only in the view, - not sent,
                                        ~ moved; then the reply. A page draws it
                                        as a stepper.

The disk (lab/workspace.py):
    Workspace(files=None, *, faults=None)
        .exists(p) .read_text(p) .write_text(p, t) .append_text(p, t) .listdir(p=".")
        .rename(src, dst) .remove(p) .fsync(p) .files .writes .cut_point
        .reboot(power_loss=False) -> Workspace
    read_tool(files)                    lesson 2's plain `read` tool over a dict of path -> text,
                                        or over a Workspace
    cut(at_write, after_bytes=None, *, fraction=None, path=None, before=False)   a fault plan
    PowerCut                            BaseException: no `except Exception` catches it

The model (lab/model.py):
    ScriptedModel(steps, *, check=False)  .complete(system, messages, tools) .calls .remaining
    steps: a message, a str, a function of the Request, forever(step), power_cut(), raises(exc),
    provider_error(t), forgetful()
    Request(system, messages, tools, number, reply)    ScriptExhausted    tokens(value)    usage(r, reply)

A full window (lab/window.py, lesson 12):
    WindowedModel(steps, *, window, check=False)   a request over `window` tokens comes back
                                        failed: "400 prompt is too long: N tokens > W maximum"
    request_tokens(request) -> int      the provider's count of a request (usage["input"])
    summariser()                        a step that summarises what it is sent, if offered no tools
    SUMMARY_PREFIX                      "Previous conversation summary:\n"
    renamer(request)                    lesson 12's worker, as its first cell prints it, for the
    RENAME_NAMES  RENAME_FILES  RENAME_TASK   job it works on: eight files, one setting renamed
    rename_session(harness, prompts)    its second cell's long_session: (the record, the tools)

Today's instructions (lesson 13):
    Clock(start="2026-03-02")           .today() -> datetime.date  .advance(days=1): the stage's
                                        date, so a prompt that carries it can be proven
    skill(name, description, body)      {"skills/<name>/SKILL.md": text}, front matter first

Word by word (lab/stream.py, lesson 14):
    StreamingModel(steps, *, check=False, pace=0.0)   a ScriptedModel that also has
                                        .stream(system, messages, tools) -> iterator of stream
                                        events: text, call, arguments, end, error
    pieces(reply)                       the events a reply is sent as, cut by a rule, not chance
    drop(step, after)  no_end(step, after=None)  error_event(step, after, message=OVERLOADED)
                                        the faults a stream has and a whole reply does not
    sse(events, newline="\\n") -> bytes  chunks(data, at) -> list[bytes]   the bytes of a stream

A provider on a wire that is not there (lab/wire.py, the closing page):
    Transport(answers, size=7)          a transport: (method, url, headers, body) ->
                                        (status, headers, chunks); .requests: what was Sent
    answer(status, body, headers=None, *, drop_after=None)   refused()   timed_out()
    sse_events(text) -> list            {"event", "data"} of a whole SSE text
    ANTHROPIC_* and OPENAI_*            recorded exchanges, from each provider's documented format

Async, on a simulated clock (lab/timers.py, lesson 15):
    run(main) -> result                 asyncio.run for the book: the coroutine `main` to its end
                                        on a loop whose clock moves only when every task waits
    now() -> float                      the running loop's simulated clock, in seconds
    SimulatedLoop    Deadlock           the loop; raised when all wait and no timer is set
    steps(run)                          a run's events one by one to plain code, sync or async
    resolve(value)                      value, or what it gives once awaited

Lab tests (lab/case.py): class Lab1(lab.LabCase) — failures in the test's own words, whole,
and self.call(what, function, *args) turns the reader's exception into a plain FAIL;
capped(model, cap=12) raises TooManyCalls past `cap` calls; drain(run) -> (events, error).
A lab that has the reader rewrite run_agent or Harness re-tests the earlier rules on the new code:
keeps_loop_rules(test, harness, stream=False, retry=False), keeps_harness_rules(test, harness);
run_events(test, start, what) consumes a run, a runaway or an exception failing in a sentence.

Checkpoint B's records (lab/broken.py): broken_record(n, harness, then=()) -> Broken, with
.record .harness .model .ws: record n (1 to 7) built as its first cell on that page builds it.

Also: Shell(ws).run(command) -> (output, exit_code) (lab/shell.py); drive(run) -> list;
explore_crashes(program, check, *, files=None, offsets="every byte", power_loss=False,
stop_at_first=False) -> CrashReport (lab/crashes.py).

Standard library only; CPython 3.10+ and Pyodide. Nothing here keeps state at module level:
importing it twice, or in a fresh process, gives the same world.
"""

from __future__ import annotations

from typing import AsyncIterable, Awaitable, Iterable

from .case import (Capped, CappedStream, LabCase, TooManyCalls, capped, drain, keeps_harness_rules,
                   keeps_loop_rules, run_events)
from .broken import Broken, broken_record
from .crashes import CrashPoint, CrashReport, explore_crashes
from .messages import (CLIP, call, provider_error, reply, say, shape, show, text, timeline,
                       tool_result, user, validate)
from .model import (Request, ScriptedModel, ScriptExhausted, forever, forgetful, power_cut,
                    raises, tokens, usage)
from .shell import Shell
from .timers import Deadlock, SimulatedLoop, in_simulated_loop, now, resolve, run, steps
from .stream import (ARGUMENT_PIECE, OVERLOADED, StreamingModel, chunks, drop, error_event, no_end,
                     pieces, sse)
from .window import (RENAME_FILES, RENAME_NAMES, RENAME_TASK, SUMMARY_PREFIX, WindowedModel,
                     rename_session, renamer, request_tokens, summariser)
from .clock import Clock
from .skills import skill
from .wire import (ANTHROPIC_BAD_REQUEST, ANTHROPIC_OVERLOADED, ANTHROPIC_STREAM_OVERLOADED,
                   ANTHROPIC_STREAM_TEXT, ANTHROPIC_STREAM_TOOL, ANTHROPIC_TEXT, ANTHROPIC_TOOL,
                   OPENAI_RATE_LIMITED, OPENAI_STREAM_TEXT, OPENAI_STREAM_TOOLS, OPENAI_TEXT,
                   OPENAI_TOOL, OPENAI_UNAUTHORIZED, NoAnswer, Sent, Transport, answer, refused,
                   sse_events, timed_out)
from .workspace import Cut, PowerCut, Workspace, cut, read_tool

__all__ = [
    "user", "text", "call", "reply", "say", "tool_result", "provider_error",
    "show", "shape", "validate", "timeline", "CLIP",
    "Workspace", "cut", "Cut", "PowerCut", "read_tool",
    "ScriptedModel", "Request", "ScriptExhausted", "forever", "power_cut", "raises", "forgetful",
    "tokens", "usage",
    "Shell", "drive", "LabCase", "capped", "Capped", "CappedStream", "TooManyCalls", "drain",
    "keeps_loop_rules", "keeps_harness_rules", "run_events",
    "explore_crashes", "CrashReport", "CrashPoint", "broken_record", "Broken",
    "WindowedModel", "request_tokens", "summariser", "SUMMARY_PREFIX",
    "renamer", "RENAME_NAMES", "RENAME_FILES", "RENAME_TASK", "rename_session",
    "Clock", "skill",
    "run", "now", "SimulatedLoop", "Deadlock", "steps", "resolve",
    "StreamingModel", "pieces", "drop", "no_end", "error_event", "OVERLOADED", "ARGUMENT_PIECE",
    "sse", "chunks",
    "Transport", "Sent", "answer", "refused", "timed_out", "sse_events", "NoAnswer",
    "ANTHROPIC_TEXT", "ANTHROPIC_TOOL", "ANTHROPIC_STREAM_TEXT", "ANTHROPIC_STREAM_TOOL",
    "ANTHROPIC_STREAM_OVERLOADED", "ANTHROPIC_OVERLOADED", "ANTHROPIC_BAD_REQUEST",
    "OPENAI_TEXT", "OPENAI_TOOL", "OPENAI_STREAM_TEXT", "OPENAI_STREAM_TOOLS",
    "OPENAI_RATE_LIMITED", "OPENAI_UNAUTHORIZED",
]


def drive(run: Iterable | AsyncIterable) -> list | Awaitable[list]:
    """Consume a run to its end and return its events as a list: for a cell or a test that wants
    the run to happen and does not care to print anything on the way.

    A run that is an async iterable (the harness of lesson 15 on) gives back a coroutine when
    drive is called from code running on the book's loop (a cell that awaits, an async test), so
    the same words work there as `await lab.drive(run)`; called from plain code, drive steps the
    run to its end itself (steps) and returns the list, as for a plain run."""
    if hasattr(run, "__aiter__") and in_simulated_loop():
        async def collect() -> list:
            return [event async for event in run]
        return collect()
    return list(steps(run))
