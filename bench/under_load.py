#!/usr/bin/env python3
"""Run a command while CPU-bound processes keep the machine busy, then stop them.

    python bench/under_load.py [--burners 2] -- make test

The book's tests must hold on a loaded machine (a reader's laptop that is compiling something, a
CI runner shared with other jobs). This starts `--burners` processes that each spin one core
(plain Python loops, lowest priority is *not* asked for: they compete as equals), runs the
command, stops the burners whatever happens (Ctrl+C included), and prints the command's wall
time and exit code. Its own exit code is the command's.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

SPIN = "while True:\n    pass\n"


def start_burners(count: int) -> list[subprocess.Popen]:
    """`count` processes that each keep one core busy until stopped."""
    return [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(count)]


def stop_burners(burners: list[subprocess.Popen]) -> None:
    for burner in burners:
        burner.terminate()
    for burner in burners:
        try:
            burner.wait(timeout=5)
        except subprocess.TimeoutExpired:
            burner.kill()
            burner.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--burners", type=int, default=2, help="CPU-bound processes to run beside it (2)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given: python bench/under_load.py -- make test")
    burners = start_burners(args.burners)
    pids = " ".join(str(b.pid) for b in burners)
    print(f"under_load: {len(burners)} CPU-bound processes running (pids {pids}), "
          f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}", flush=True)
    started = time.monotonic()
    code = 1
    try:
        # SIGTERM to us stops the burners too (the finally below), not only Ctrl+C.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        code = subprocess.call(command)
    finally:
        stop_burners(burners)
        took = time.monotonic() - started
        print(f"under_load: {' '.join(command)}: exit {code} in {took / 60:.1f} min ({took:.0f} s), "
              f"load average at the end {os.getloadavg()[0]:.1f}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
