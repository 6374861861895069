"""Crash exploration: pull the plug at every point, and check what you get back.

A crash-safe design is a claim about every moment: whenever the power goes, what is on the disk
can be read back into something correct. Testing it with one crash at one moment proves little.
explore_crashes tries them all, mechanically:

1. run `program(ws)` once, on a fresh disk, with no fault, and count its writes and appends;
2. for every crash point, run it again on a fresh disk with a fault plan that cuts the power
   there: just before each write or append, at chosen bytes inside it, and just after it (plus
   the disk as it started and as the finished program left it);
3. after each cut, reboot and hand the disk to `check(disk)`, your recovery: it returns True, or
   False, or raises to say why.

The program must be deterministic (do the same writes every run) and build everything it needs
from the workspace it is given, because it is run once per crash point.
"""

from __future__ import annotations

import inspect
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .workspace import Cut, PowerCut, Workspace

__all__ = ["CrashPoint", "CrashReport", "explore_crashes"]


@dataclass
class CrashPoint:
    """One place the power went out, by the `op_number`-th write or append (counted from 1 over
    both; `op` is "write" or "append", to `path`): after `after_bytes` of its `total_bytes` bytes
    reached the disk, or, with after_bytes None, just before it began. after_bytes == total_bytes
    is "just after it". op_number 0 is the disk as it started, and op "end" the disk after the
    program finished. `reason` is None when check() accepted the rebooted disk, else why not."""
    op_number: int
    op: str
    path: str
    after_bytes: int | None
    total_bytes: int
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason is None

    @property
    def completed(self) -> int:
        """How many writes and appends had returned to the program before the power went: what
        it was entitled to believe was saved. A write whose every byte arrived but whose call
        never returned does not count; the finished program's do."""
        return max(self.op_number - 1, 0)   # the end point is numbered one past the last write

    def __str__(self) -> str:
        if self.op_number == 0:
            return "before the program started"
        if self.op == "end":
            return "after the program ended"
        where = f"{self.op} {self.op_number} ({self.path})"
        if self.after_bytes is None:
            return f"just before {where}"
        if self.after_bytes == self.total_bytes:
            return f"just after {where}"
        return f"{where} cut after {self.after_bytes} of {self.total_bytes} bytes"


@dataclass
class CrashReport:
    """What explore_crashes found: every point it tried, in order, and which ones failed.
    str(report) is a short summary naming the first failure."""
    writes: list[tuple[str, str, int]]            # (op, path, bytes) of the fault-free run
    points: list[CrashPoint] = field(default_factory=list)

    @property
    def tried(self) -> int:
        return len(self.points)

    @property
    def failures(self) -> list[CrashPoint]:
        return [p for p in self.points if not p.ok]

    @property
    def first_failure(self) -> CrashPoint | None:
        return next((p for p in self.points if not p.ok), None)

    @property
    def ok(self) -> bool:
        return self.first_failure is None

    def __str__(self) -> str:
        n = len(self.writes)
        head = (f"{self.tried} crash point{'s' if self.tried != 1 else ''} over "
                f"{n} write{'s' if n != 1 else ''}")
        first = self.first_failure
        if first is None:
            return f"{head}: every one recovered."
        return (f"{head}: {len(self.failures)} did not recover. First: {first}: {first.reason}")


def _offsets(size: int, offsets: str | Sequence[float]) -> list[int]:
    """The byte counts inside a write of `size` bytes at which to cut, ascending, without the
    end itself (that is the "just after" point, tried separately)."""
    if offsets == "every byte":
        return list(range(size))
    if offsets == "none":
        return []
    if isinstance(offsets, str):
        raise ValueError(f"explore_crashes(offsets={offsets!r}): give 'every byte', 'none' or a "
                         "list of fractions such as (0, 0.5)")
    picks = set()
    for f in offsets:
        if not 0 <= f < 1:
            raise ValueError(f"explore_crashes: offset fraction {f!r} must be at least 0 and below 1")
        picks.add(Cut(1, fraction=f).bytes_for(size))
    return sorted(k for k in picks if k < size)


def _takes_point(check: Callable) -> bool:
    """Whether `check` wants the crash point as a second argument."""
    try:
        parameters = list(inspect.signature(check).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in parameters)


def _verdict(check: Callable, disk: Workspace, point: CrashPoint) -> str | None:
    """None if check accepts `disk`; otherwise the reason in one line."""
    try:
        result = check(disk, point) if _takes_point(check) else check(disk)
    except Exception as error:
        frame = traceback.extract_tb(error.__traceback__)[-1]
        text = str(error)
        return f"{type(error).__name__}: {text}" if text else \
            f"{type(error).__name__} at line {frame.lineno}: {frame.line}"
    return "check() returned False" if result is False else None


def explore_crashes(program: Callable[[Workspace], Any], check: Callable[[Workspace], Any], *,
                    files: dict[str, str] | None = None,
                    offsets: str | Sequence[float] = "every byte",
                    power_loss: bool = False, stop_at_first: bool = False) -> CrashReport:
    """Run `program` once per crash point and `check` the disk it leaves; return a CrashReport.

    files: the disk every run starts from (a fresh copy each time). offsets: where to cut inside
    each write or append: "every byte" (the default: a write of 40 bytes gives 40 points inside it,
    after 0 to 39 bytes), a list of fractions such as (0, 0.5), or "none" (only between writes).
    Every write also gets a "just before" point (after whatever renames or fsyncs preceded it)
    and a "just after" point; the first point is the starting disk and the last the disk the
    finished program left.
    power_loss=True reboots with reboot(power_loss=True): only fsync'ed bytes survive.
    A check that raises, or returns False, marks the point as failed; anything else passes.
    check(disk) asks "can this be read back?"; check(disk, point) may also ask "was anything lost
    that the program had been told was saved?", with point.completed, the number of writes and
    appends that had returned before the cut.
    """
    dry = Workspace(files)
    program(dry)
    ops = [(op, path, len(text.encode("utf-8"))) for op, path, text in dry.writes
           if op in ("write", "append")]
    report = CrashReport(writes=ops)

    def trial(point: CrashPoint, plan: Cut | None) -> None:
        ws = Workspace(files, faults=plan)
        if plan is not None:
            try:
                program(ws)
            except PowerCut:
                pass
            except Exception as error:
                point.reason = (f"the program raised {type(error).__name__}: {error} before the "
                                "cut; it must make the same writes on every run")
                report.points.append(point)
                return
            else:
                point.reason = (f"the program finished without reaching write {point.op_number}: "
                                "it must make the same writes on every run")
                report.points.append(point)
                return
        point.reason = _verdict(check, ws.reboot(power_loss=power_loss), point)
        report.points.append(point)

    trial(CrashPoint(0, "", "", 0, 0), None)
    for number, (op, path, size) in enumerate(ops, 1):
        for keep in [None] + _offsets(size, offsets) + [size]:
            if stop_at_first and not report.ok:
                return report
            plan = Cut(number, before=True) if keep is None else Cut(number, after_bytes=keep)
            trial(CrashPoint(number, op, path, keep, size), plan)
    if not (stop_at_first and not report.ok):
        point = CrashPoint(len(ops) + 1, "end", "", 0, 0)
        point.reason = _verdict(check, dry.reboot(power_loss=power_loss), point)
        report.points.append(point)
    return report
