"""Async Python on a simulated clock: the event loop the book runs `await` on (lesson 15).

From lesson 15 the harness is async, as Tau's is. Its runs are coroutines and async generators,
and something has to drive them. asyncio's own loops cannot be used as they are: in the page,
Pyodide's loop is the browser's, and its run_until_complete does not wait; and on your machine a
real loop sleeps in real time, so "cancel after two seconds" would take two seconds and come out a
little different every run. This loop is asyncio's own machinery (tasks, futures, call_later,
asyncio.sleep, asyncio.Event, cancellation: all of it real) with one thing changed: time. Its
clock starts at 0.0 and moves only when every task is waiting, straight to the next timer. Two
seconds of simulated waiting cost nothing, and every run of a program is the same run, in CPython
and in Pyodide.

    run(main) -> result         run the coroutine `main` to its end on a fresh SimulatedLoop and
                                return what it returned (asyncio.run, on the simulated clock).
                                Tasks still pending at the end are cancelled and awaited, and
                                unfinished async generators closed, as asyncio.run does.
    SimulatedLoop()             the loop itself; loop.time() is the simulated clock, in seconds
    now() -> float              the running loop's clock: asyncio.get_running_loop().time()
    Deadlock                    raised when every task waits and no timer is set: a real loop
                                would wait forever, this one says so
    steps(run) -> iterator      a run's events one by one to plain code (a lesson 1-14 test):
                                a sync run as it is; an async one stepped on a SimulatedLoop,
                                its close() closing the run (aclose) on the same loop
    resolve(value)              `value`, or what it gives once awaited, if it is awaitable: a
                                plain caller of a function that became async def in lesson 15

A cell may `await` at its top level: the book runs such a cell on this loop (cellrun), and a lab
test written `async def test_...` runs on it too (lab_check).
"""

from __future__ import annotations

import asyncio
import asyncio.base_events
import asyncio.events
import inspect
import sys
from typing import Any, Coroutine

__all__ = ["SimulatedLoop", "Deadlock", "run", "now", "steps", "resolve", "in_simulated_loop"]


class Deadlock(RuntimeError):
    """Every task is waiting for something, and nothing is scheduled that could wake one."""


class _Idle:
    """What the loop waits on instead of a selector: there is no I/O in the simulated world, so
    waiting `timeout` seconds is moving the clock on by `timeout`, at once."""

    def __init__(self, loop: "SimulatedLoop") -> None:
        self.loop = loop

    def select(self, timeout: float | None) -> list:
        if timeout is None:
            self.loop._deadlocked()
        else:
            self.loop._now += timeout
        return []

    def close(self) -> None:
        pass


class SimulatedLoop(asyncio.base_events.BaseEventLoop):
    """asyncio's event loop with a simulated clock: `time()` starts at 0.0 and jumps to the next
    timer when nothing is ready to run. No I/O, no threads, no real waiting."""

    def __init__(self) -> None:
        super().__init__()
        self._now = 0.0
        self._clock_resolution = 1e-9     # the same in every Python, so timers fire alike
        self._selector = _Idle(self)
        self._tasks: list[asyncio.Task] = []   # every task made on this loop, for _finish
        self.set_exception_handler(_report)
        self.set_task_factory(_recorded)

    def time(self) -> float:
        return self._now

    def _deadlocked(self) -> None:
        """Nothing can ever wake a task. Raise Deadlock where the main task waits (following it
        down through the tasks it awaits), so the traceback points at the reader's `await`."""
        error = Deadlock("every task is waiting and no timer is set: a real program would wait "
                         "here forever (is something awaited that nobody will ever set?)")
        waiter = getattr(self, "_main", None)
        while isinstance(waiter, asyncio.Task):
            waiter = getattr(waiter, "_fut_waiter", None)
        if waiter is None or waiter.done():
            raise error
        waiter.set_exception(error)

    def _process_events(self, event_list) -> None:
        pass                              # there are no I/O events to process

    def _write_to_self(self) -> None:
        pass                              # no other thread can wake this loop


def _recorded(loop: "SimulatedLoop", coro, **options) -> asyncio.Task:
    """A task, as asyncio would make it, kept on the loop's list."""
    task = asyncio.Task(coro, loop=loop, **options)
    loop._tasks.append(task)
    return task


def _unretrieved(loop: "SimulatedLoop") -> None:
    """Say, now and once, which tasks ended in an exception nobody awaited: said by asyncio at
    garbage collection, it would come at a moment no one can predict (after a test's verdict)."""
    for task in loop._tasks:
        if task.done() and not task.cancelled() and getattr(task, "_log_traceback", False):
            _report(loop, {"message": "Task exception was never retrieved",
                           "exception": task.exception()})
    loop._tasks.clear()


def _report(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """An error nobody awaited (a task's exception never retrieved, a callback that raised):
    one line on stderr, the same in every Python, instead of asyncio's log with its paths."""
    error = context.get("exception")
    detail = f": {type(error).__name__}: {error}" if error is not None else ""
    print(f"asyncio: {context.get('message', 'error')}{detail}", file=sys.stderr)


def run(main: Coroutine[Any, Any, Any]) -> Any:
    """Run the coroutine `main` to its end on a fresh SimulatedLoop and return its result (or
    raise its exception). Like asyncio.run, it leaves nothing behind: tasks still pending at the
    end are cancelled and awaited, and unfinished async generators closed (their `finally`
    blocks run). It may be called where another loop counts as running (Pyodide's, in the page):
    that loop is set aside for the call and put back after."""
    if not asyncio.iscoroutine(main):
        raise TypeError(f"lab.run() needs a coroutine (the result of calling an async def), "
                        f"not {type(main).__name__}")
    loop = SimulatedLoop()
    outer = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(None)
    try:
        loop._main = loop.create_task(main)
        return loop.run_until_complete(loop._main)
    finally:
        try:
            _finish(loop)
        finally:
            loop.close()
            asyncio.events._set_running_loop(outer)


def _finish(loop: SimulatedLoop) -> None:
    """What asyncio.run does after `main`: cancel what is left, let it end, close generators."""
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    _unretrieved(loop)


def now() -> float:
    """The simulated clock of the running loop, in seconds since it started."""
    return asyncio.get_running_loop().time()


def in_simulated_loop() -> bool:
    """True when called from code running on a SimulatedLoop (a cell that awaits, an async test)."""
    return isinstance(asyncio.events._get_running_loop(), SimulatedLoop)


def _step(loop: SimulatedLoop, awaitable) -> Any:
    """Run one awaitable to its end on `loop`, from plain code, setting aside a loop that counts
    as running (Pyodide's) for the call."""
    outer = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(None)
    try:
        loop._main = loop.create_task(awaitable) if asyncio.iscoroutine(awaitable) else None
        return loop.run_until_complete(loop._main or awaitable)
    finally:
        asyncio.events._set_running_loop(outer)


def steps(run):
    """The events of `run`, one by one, to plain code. A plain iterable is handed back as it is.
    An async iterable (the harness of lesson 15 on) is stepped on a SimulatedLoop of its own, one
    event per next(); close() on what this returns closes the run there too (aclose), so the
    run's `finally` blocks run as they would under `async for`. The earlier lessons' tests drive
    lesson 15's harness through this, so they test the same rules on it."""
    if not hasattr(run, "__aiter__"):
        return iter(run)
    return _async_steps(run)


def _async_steps(run):
    loop = SimulatedLoop()
    iterator = run.__aiter__()
    finished = False
    try:
        while True:
            try:
                event = _step(loop, _next(iterator))
            except StopAsyncIteration:
                finished = True
                return
            yield event
    finally:
        try:
            if not finished and hasattr(iterator, "aclose"):
                _step(loop, iterator.aclose())
            _step(loop, _finish_async(loop))
        finally:
            loop.close()


async def _next(iterator):
    return await iterator.__anext__()


async def _finish_async(loop: SimulatedLoop) -> None:
    current = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks(loop) if task is not current and not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    await loop.shutdown_asyncgens()
    _unretrieved(loop)


def resolve(value: Any) -> Any:
    """`value` itself, or, if it is awaitable (a coroutine: a function that became async def), what
    it gives once awaited on a fresh SimulatedLoop. For plain code calling the harness."""
    if not inspect.isawaitable(value):
        return value
    if asyncio.iscoroutine(value):
        return run(value)

    async def wait():
        return await value
    return run(wait())
