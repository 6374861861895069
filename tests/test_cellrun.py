"""harness_py/cellrun.py: one cell, run as the build and the page both run it.

Each test runs real cells against a small harness and a small `lab` package written into a
temporary folder, so what is asserted is cellrun's own behaviour: fresh namespaces and imports,
one interleaved output stream, the streaming callback, and the traceback layout."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

import cellrun  # noqa: E402


@pytest.fixture
def folder(tmp_path) -> Path:
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "__init__.py").write_text(
        "from lab.parts import boom\nCOUNT = []\n")
    (tmp_path / "lab" / "parts.py").write_text(
        "def boom():\n    raise ValueError('bad prop')\n")
    (tmp_path / "harness.py").write_text(
        "import lab\n\nNAME = 'reference'\n\ndef explode():\n    lab.boom()\n")
    return tmp_path


def run(folder: Path, source: str, **options) -> cellrun.CellResult:
    options.setdefault("harness_path", str(folder / "harness.py"))
    return cellrun.run_cell(source, lab_dir=str(folder), **options)


def test_stdout_and_stderr_are_one_stream_in_print_order(folder):
    result = run(folder, "import sys\nprint('one')\nprint('two', file=sys.stderr)\nprint('three')\n")
    assert result == cellrun.CellResult(output="one\ntwo\nthree\n", error=None)


def test_every_run_starts_from_a_fresh_namespace_as_main(folder):
    assert run(folder, "x = 41\nprint(__name__)\n").output == "__main__\n"
    result = run(folder, "print(x)\n")
    assert result.error == "NameError: name 'x' is not defined"


def test_lab_and_harness_are_imported_fresh_for_every_run(folder):
    assert run(folder, "import lab\nlab.COUNT.append(1)\nprint(len(lab.COUNT))\n").output == "1\n"
    assert run(folder, "import lab\nlab.COUNT.append(1)\nprint(len(lab.COUNT))\n").output == "1\n"
    (folder / "lab" / "__init__.py").write_text("COUNT = 'changed'\n")
    assert run(folder, "import lab\nprint(lab.COUNT)\n").output == "changed\n"


def test_harness_comes_from_harness_path(folder):
    assert run(folder, "import harness\nprint(harness.NAME)\n").output == "reference\n"
    mine = folder / "mine.py"
    mine.write_text("NAME = 'the reader'\n")
    assert run(folder, "import harness\nprint(harness.NAME)\n", harness_path=str(mine)).output == \
        "the reader\n"


def test_a_traceback_names_cell_harness_and_lab_frames_and_hides_cellrun(folder):
    result = run(folder, "import harness\n\nprint('before')\nharness.explode()\n")
    assert result.output == (
        "before\n"
        "Traceback (most recent call last):\n"
        '  File "cell", line 4, in <module>\n'
        "    harness.explode()\n"
        '  File "harness.py", line 6, in explode\n'
        "    lab.boom()\n"
        '  File "lab/parts.py", line 2, in boom\n'
        "    raise ValueError('bad prop')\n"
        "ValueError: bad prop\n")
    assert result.error == "ValueError: bad prop"
    assert "cellrun" not in result.output


def test_chained_exceptions_are_printed_like_cpython(folder):
    source = "try:\n    {}['k']\nexcept KeyError as e:\n    raise RuntimeError('no k') from e\n"
    output = run(folder, source).output
    assert output.index("KeyError: 'k'") < output.index("direct cause") < output.index("RuntimeError: no k")


def test_a_harness_that_does_not_import_fails_at_the_cells_import_line(folder):
    broken = folder / "broken.py"
    broken.write_text("def f(:\n    pass\n")
    result = run(folder, "print('first')\nimport harness\n", harness_path=str(broken))
    assert result.output.startswith("first\nTraceback (most recent call last):\n"
                                    '  File "cell", line 2, in <module>\n')
    assert '  File "harness.py", line 1' in result.output
    assert result.error.startswith("SyntaxError")
    # a cell that never imports harness is not hurt by it
    assert run(folder, "print('fine')\n", harness_path=str(broken)) == cellrun.CellResult("fine\n", None)


def test_a_cell_that_does_not_parse_reports_its_line(folder):
    result = run(folder, "print('a')\nprint('b'\n")
    assert result.error.startswith("SyntaxError")
    assert '  File "cell", line 2' in result.output


def test_write_callback_streams_every_piece_in_order(folder):
    pieces = []
    result = run(folder, "for i in range(3):\n    print(i)\n1/0\n", write=pieces.append)
    assert "".join(pieces) == result.output
    assert pieces[:2] == ["0", "\n"]
    assert result.error == "ZeroDivisionError: division by zero"


def test_a_flush_reaches_the_page_between_the_pieces_it_follows(folder):
    said = []
    source = ("import sys\nprint('a', end='', flush=True)\nprint('b', end='')\n"
              "sys.stdout.flush()\nprint('c')\n")
    result = run(folder, source, write=said.append, flush=lambda: said.append("<flush>"))
    assert result.output == "abc\n"
    assert said[:4] == ["a", "<flush>", "b", "<flush>"]
    assert said[4:6] == ["c", "\n"]            # and the runner's own flush at the end, after
    assert set(said[6:]) <= {"<flush>"}


def test_exit_zero_is_not_an_error_and_exit_one_is(folder):
    assert run(folder, "import sys\nprint('bye')\nsys.exit(0)\n") == cellrun.CellResult("bye\n", None)
    assert run(folder, "import sys\nsys.exit(3)\n").error == "SystemExit: 3"


def test_the_interpreter_is_left_as_it_was(folder):
    stdout, path, meta = sys.stdout, list(sys.path), list(sys.meta_path)
    run(folder, "import sys\nsys.path.append('/nowhere')\nimport harness\nraise KeyboardInterrupt\n")
    assert sys.stdout is stdout and sys.path == path and sys.meta_path == meta


def test_input_reads_nothing(folder):
    assert run(folder, "print(input('? '))\n").error == "EOFError: EOF when reading a line"


# -- the output cap: kept where the output is made ---------------------------------------------

def test_output_past_the_cap_is_counted_not_kept_and_the_last_line_says_so(folder):
    pieces = []
    result = run(folder, "for i in range(100_000):\n    print('line', i)\n", write=pieces.append)
    printed = "".join(f"line {i}\n" for i in range(100_000))
    head = printed[:cellrun.OUTPUT_CAP]
    assert result.dropped == len(printed) - cellrun.OUTPUT_CAP
    assert result.output == head + "\n" + cellrun.cap_note(result.dropped)
    assert result.output.endswith(f"{result.dropped:,} more were not kept.]\n")
    # the page is given only what is kept
    assert "".join(pieces) == head and result.error is None


def test_a_cell_under_the_cap_is_untouched(folder):
    text = "x" * (cellrun.OUTPUT_CAP - 1) + "\n"
    result = run(folder, f"print({'x' * (cellrun.OUTPUT_CAP - 1)!r})\n")
    assert result == cellrun.CellResult(output=text, error=None, dropped=0)


def test_the_traceback_of_a_flooding_cell_is_kept_after_the_note(folder):
    result = run(folder, "print('y' * 300_000)\nraise ValueError('after the flood')\n")
    assert result.output.startswith("y" * cellrun.OUTPUT_CAP + "\n[Output stopped at 200,000")
    assert result.output.endswith("ValueError: after the flood\n")
    assert result.error == "ValueError: after the flood"


def test_write_returns_what_it_was_given_even_past_the_cap(folder):
    result = run(folder, "import sys\nn = sys.stdout.write('z' * 300_000)\nassert n == 300_000, n\n")
    assert result.error is None and result.dropped == 100_000
    assert result.output == "z" * cellrun.OUTPUT_CAP + "\n" + cellrun.cap_note(100_000)


PEAK = """
import json, resource, sys
sys.path.insert(0, {harness_py!r})
import cellrun
result = cellrun.run_cell({source!r}, harness_path={harness!r}, lab_dir={lab_dir!r})
print(json.dumps({{"peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "kept": len(result.output), "dropped": result.dropped}}))
"""


def _peak(folder: Path, source: str) -> dict:
    import json
    import subprocess
    import sys

    script = PEAK.format(harness_py=str(ROOT / "harness_py"), source=source,
                         harness=str(folder / "harness.py"), lab_dir=str(folder))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_a_cell_printing_100_mb_runs_in_bounded_memory(folder):
    """1 million lines of 100 characters: 100 MB printed. The process's peak memory (ru_maxrss)
    stays within BOUND of a cell that prints one line; before the cap it was 100 MB more than
    that, and more again for the joined text."""
    bound_mb = 16
    quiet = _peak(folder, "print('one line')\n")
    flood = _peak(folder, "line = 'x' * 99\nfor _ in range(1_000_000):\n    print(line)\n")
    assert flood["dropped"] == 100_000_000 - cellrun.OUTPUT_CAP
    grown_mb = (flood["peak_kb"] - quiet["peak_kb"]) / 1024
    assert grown_mb < bound_mb, f"peak memory grew {grown_mb:.1f} MB for 100 MB printed"


# ------------------------------------------------------------------ a cell that awaits (lesson 15)

BOOK_LAB = ROOT / "harness_py"        # the real lab package: its simulated-clock loop runs awaits


def run_async(folder: Path, source: str) -> cellrun.CellResult:
    return cellrun.run_cell(source, harness_path=str(folder / "harness.py"), lab_dir=str(BOOK_LAB))


def test_a_cell_may_await_at_its_top_level_on_the_simulated_clock(folder):
    source = ("import asyncio, lab\n"
              "async def later(n):\n    await asyncio.sleep(n)\n    return n\n"
              "task = asyncio.create_task(later(30))\n"
              "print(await later(2), lab.now())\n"
              "print(await task, lab.now())\n")
    result = run_async(folder, source)
    assert result == cellrun.CellResult(output="2 2.0\n30 30.0\n", error=None)


def test_a_cell_that_awaits_raises_with_the_cells_frames_only(folder):
    source = ("import asyncio\n"
              "async def boom():\n    await asyncio.sleep(1)\n    raise ValueError('late')\n"
              "await boom()\n")
    result = run_async(folder, source)
    assert result.error == "ValueError: late"
    assert result.output == ('Traceback (most recent call last):\n'
                             '  File "cell", line 5, in <module>\n    await boom()\n'
                             '  File "cell", line 4, in boom\n    raise ValueError(\'late\')\n'
                             'ValueError: late\n')


def test_a_cell_waiting_for_nothing_ends_in_deadlock_at_its_await(folder):
    result = run_async(folder, "import asyncio\nawait asyncio.Event().wait()\n")
    assert result.error.startswith("lab.timers.Deadlock: every task is waiting")
    assert '  File "cell", line 2, in <module>\n    await asyncio.Event().wait()\n' in result.output


def test_tasks_left_running_at_the_end_of_a_cell_are_cancelled_and_closed(folder):
    source = ("import asyncio\n"
              "async def forever():\n    try:\n        await asyncio.sleep(1e9)\n"
              "    finally:\n        print('cleaned up')\n"
              "asyncio.create_task(forever())\nawait asyncio.sleep(0)\nprint('end of cell')\n")
    assert run_async(folder, source).output == "end of cell\ncleaned up\n"


def test_a_cell_without_await_is_not_run_on_a_loop(folder):
    # In a thread of its own: in the full suite Playwright's sync API keeps a loop running on the
    # main thread, which is not the cell's doing.
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        result = pool.submit(run_async, folder,
                             "import asyncio\ntry:\n    asyncio.get_running_loop()\n"
                             "except RuntimeError:\n    print('no loop')\n").result()
    assert result.output == "no loop\n"


def test_a_task_that_failed_unawaited_is_said_at_the_end_of_the_cell_not_at_collection(folder):
    source = ("import asyncio\nasync def bad():\n    raise ValueError('nobody awaited me')\n"
              "task = asyncio.create_task(bad())\nawait asyncio.sleep(1)\nprint('end of cell')\n")
    result = run_async(folder, source)
    assert result == cellrun.CellResult(
        output="end of cell\nasyncio: Task exception was never retrieved: ValueError: nobody "
               "awaited me\n", error=None)
