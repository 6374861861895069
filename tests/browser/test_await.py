"""Async Python in the page (lesson 15 on): a cell that awaits at its top level runs on the book's
simulated-clock loop in Pyodide and prints what it prints under CPython; a lab test written
`async def` runs there too; and Stop ends a cell stuck in an async loop."""
from __future__ import annotations

import time
from pathlib import Path

import cellrun
from fixture_site import ROOT, rewrite_cell, run_cell, wait_ready

AWAITS = '''\
import asyncio, lab

async def ticker(name, every, n):
    for i in range(n):
        await asyncio.sleep(every)
        print(name, i, lab.now())

other = asyncio.create_task(ticker("b", 0.7, 2))
await ticker("a", 0.5, 3)
await other
stop = asyncio.Event()
asyncio.get_running_loop().call_later(2, stop.set)
await stop.wait()
print("set at", lab.now())
await asyncio.Event().wait()
'''

# A lab's async tests, run by lab_check inside the page (the files written by the cell itself).
LAB_CHECK = '''\
import os, textwrap
os.makedirs("/tmp/async-lab", exist_ok=True)
open("/tmp/async-lab/harness.py", "w").write("def add(a, b):\\n    return a + b\\n")
open("/tmp/async-lab/tests.py", "w").write(textwrap.dedent(\'\'\'\\
    import asyncio, unittest
    import harness, lab
    LESSON = 99
    class Lab1(unittest.TestCase):
        longMessage = False
        async def test_waits(self):
            """add, two simulated seconds later, gives 4."""
            await asyncio.sleep(2)
            self.assertEqual((harness.add(2, 2), lab.now()), (4, 2.0))
        async def test_wrong(self):
            """add(1, 1) gives 3."""
            await asyncio.sleep(1)
            self.assertEqual(harness.add(1, 1), 3, "add(1, 1) gave %d" % harness.add(1, 1))
\'\'\'))
from lab import lab_check
for result in lab_check.run("/tmp/async-lab/harness.py", "/tmp/async-lab/tests.py"):
    print(result["status"], result["sentence"], result["message"].strip())
'''


def cpython(source: str) -> str:
    """What the cell prints under CPython, through the same cellrun and the same lab."""
    harness = ROOT / "harness_py" / "lab" / "__init__.py"   # never imported by these cells
    return cellrun.run_cell(source, harness_path=str(harness), lab_dir=str(ROOT / "harness_py")).output


def test_a_cell_that_awaits_prints_in_the_page_what_it_prints_in_cpython(page, fixture_url):
    expected = cpython(AWAITS)
    assert "set at 3.5\n" in expected and "lab.timers.Deadlock" in expected
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    rewrite_cell(page, "99-9", AWAITS)
    assert run_cell(page, "99-9") == expected
    assert page.locator("#cell-99-9").get_attribute("data-state") == "error"


def test_async_lab_tests_run_in_the_page(page, fixture_url):
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    rewrite_cell(page, "99-9", LAB_CHECK)
    output = run_cell(page, "99-9")
    assert [line.strip() for line in output.splitlines()] == ["pass add, two simulated seconds later, gives 4.",
                                   "fail add(1, 1) gives 3. add(1, 1) gave 2"], output


def test_stop_ends_a_cell_stuck_in_an_async_loop(page, fixture_url):
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    rewrite_cell(page, "99-9", "import asyncio\nwhile True:\n    await asyncio.sleep(1)\n")
    page.locator("#cell-99-9 .cell-run").click()
    page.wait_for_function("document.getElementById('cell-99-9').dataset.state === 'running'")
    time.sleep(0.5)
    started = time.monotonic()
    page.locator("#cell-99-9 .cell-stop").click()
    page.wait_for_function("document.getElementById('cell-99-9').dataset.state === 'stopped'",
                           timeout=5000)
    assert time.monotonic() - started < 2.0
    rewrite_cell(page, "99-9", "import asyncio\nawait asyncio.sleep(3)\nprint('after')\n")
    assert run_cell(page, "99-9", timeout=90_000) == "after\n"
