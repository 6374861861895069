"""`make test` on a machine without Chromium stops within seconds, before it sets anything up or
builds, with one sentence naming what to install (README, "Requirements")."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builder import browser

ROOT = Path(__file__).resolve().parents[1]
NONE_FOUND = ("The browser tests need Chromium and none was found: install it (Debian or Ubuntu: "
              "sudo apt-get install chromium) or set BOOK_BROWSER=/path/to/chrome (make test-fast "
              "runs the tests that need no browser).")


def test_no_chromium_anywhere_is_one_sentence(monkeypatch, capsys):
    monkeypatch.delenv("BOOK_BROWSER", raising=False)
    monkeypatch.setattr(browser, "CANDIDATES", ("/nowhere/chromium", "no-such-chromium"))
    monkeypatch.setenv("PATH", "/nowhere")
    assert browser.main() == 1
    assert capsys.readouterr() == ("", NONE_FOUND + "\n")


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_test_checks_the_browser_before_it_builds_anything(tmp_path):
    missing = tmp_path / "no-chrome"
    env = {name: value for name, value in os.environ.items()       # as if typed, not under make
           if name not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    env["BOOK_BROWSER"] = str(missing)
    started = time.monotonic()
    done = subprocess.run(["make", "--no-print-directory", "test", f"PYTHON={sys.executable}"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    assert time.monotonic() - started < 10
    assert done.returncode == 2
    assert done.stdout == f"{sys.executable} -m builder.browser\n", "nothing else ran: no setup, no build"
    assert done.stderr.splitlines()[0] == (
        f"BOOK_BROWSER={missing} does not exist: point it at a Chrome or Chromium program, or unset it "
        "to use Chromium from PATH (make test-fast runs the tests that need no browser).")
    assert done.stderr.splitlines()[1].startswith("make: *** [Makefile:")
