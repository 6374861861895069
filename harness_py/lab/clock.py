"""A clock the stage owns (lesson 13).

A program that asks the machine for the date gets a different answer every day, so a cell that
prints it could never be proven and a test could never say which day it expects. The stage's
clock says what the cell tells it to: `Clock("2026-03-02").today()` is 2 March 2026 until the
cell calls `advance()`. The harness asks the clock it is handed, at the moment it needs the date,
exactly as a real harness asks `datetime.date.today()`.
"""

from __future__ import annotations

import datetime

__all__ = ["Clock"]


class Clock:
    """Today, as the stage says it is.

    Clock(start="2026-03-02"): `start` is a date or an ISO date string.
        .today() -> datetime.date   the date now, worked out from the start and the days advanced
        .advance(days=1)            a night passes (or `days` of them); returns the new date
    """

    def __init__(self, start: datetime.date | str = "2026-03-02"):
        if isinstance(start, str):
            start = datetime.date.fromisoformat(start)
        if not isinstance(start, datetime.date):
            raise TypeError(f"Clock(start): a date or an ISO date string, not "
                            f"{type(start).__name__}")
        self._start, self._days = start, 0

    def today(self) -> datetime.date:
        return self._start + datetime.timedelta(days=self._days)

    def advance(self, days: int = 1) -> datetime.date:
        if not isinstance(days, int) or days < 0:
            raise ValueError(f"advance(days={days!r}): time goes forward, by whole days")
        self._days += days
        return self.today()

    def __repr__(self) -> str:
        return f"Clock({self.today().isoformat()!r})"
