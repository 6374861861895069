"""Find the Chromium the browser tests drive, or say how to get one.

BOOK_BROWSER wins (a path to your own Chrome or Chromium); then Debian's /usr/bin/chromium and
whatever `chromium`, `chromium-browser` or `google-chrome` is on PATH. Run as a script it prints the
path, or says in one sentence what to install and exits 1: `make test` runs it first, with the
system's Python and the standard library alone, so a machine without Chromium is told within
seconds, before anything is set up or built.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def find_browser() -> str | None:
    """The browser executable to use, or None."""
    chosen = os.environ.get("BOOK_BROWSER")
    if chosen:
        return chosen if Path(chosen).exists() else None
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def missing() -> str:
    """Why no browser was found, and what to do, in one sentence."""
    where = os.environ.get("BOOK_BROWSER")
    if where:
        return (f"BOOK_BROWSER={where} does not exist: point it at a Chrome or Chromium program, or "
                f"unset it to use Chromium from PATH (make test-fast runs the tests that need no browser).")
    return ("The browser tests need Chromium and none was found: install it (Debian or Ubuntu: "
            "sudo apt-get install chromium) or set BOOK_BROWSER=/path/to/chrome (make test-fast "
            "runs the tests that need no browser).")


def main() -> int:
    path = find_browser()
    if path is None:
        print(missing(), file=sys.stderr)
        return 1
    print(f"browser tests use {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
