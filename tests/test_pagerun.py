"""The page's glue (harness_py/pagerun.py) under CPython: after warm(), imports keep their
bytecode, and the reader's file, written again and again at one path, is never run from stale
bytecode, however fast and however alike the edits."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest

import pagerun

TESTS = textwrap.dedent('''\
    import unittest

    import harness

    LESSON = 3


    class Lab1(unittest.TestCase):
        longMessage = False

        def test_answer(self):
            """answer() is 1."""
            self.assertEqual(harness.answer(), 1, f"answer() gave {harness.answer()}")
    ''')


@pytest.fixture
def reader(tmp_path, monkeypatch):
    """pagerun with the reader's files under tmp_path, bytecode on as warm() leaves it."""
    monkeypatch.setattr(pagerun, "READER", str(tmp_path / "reader"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    tests = tmp_path / "tests.py"
    tests.write_text(TESTS)
    return tests


def statuses(harness_text: str, tests) -> list[str]:
    return [r["status"] for r in json.loads(pagerun.run_tests(harness_text, 3, 1, str(tests)))]


def test_an_edit_of_the_same_size_within_the_second_is_run_as_written(reader):
    # Same length, same second: bytecode checked by size and whole-second mtime would pass as
    # valid and run the first text again.
    assert statuses("def answer():\n    return 2\n", reader) == ["fail"]
    assert statuses("def answer():\n    return 1\n", reader) == ["pass"]
    assert statuses("def answer():\n    return 3\n", reader) == ["fail"]


def test_a_cell_runs_the_harness_text_it_is_given(reader, tmp_path):
    outputs = []
    for value in (1, 2, 1):
        output, error, dropped = pagerun.run_cell("import harness\nprint(harness.answer())\n", 3, "cell",
                                                  f"def answer():\n    return {value}\n", outputs.append)
        assert error is None and dropped == 0
        assert output == f"{value}\n"


def test_warm_lets_imports_keep_their_bytecode(monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pagerun.warm()
    assert sys.dont_write_bytecode is False


def test_warm_with_the_page_lesson_compiles_that_lessons_harness(tmp_path, monkeypatch):
    """The worker passes the page's lesson: the throwaway cell imports its harness, so the code
    the reader's first cell runs is already compiled."""
    import cellrun
    from pathlib import Path

    root = tmp_path / "book"
    (root / "reference").mkdir(parents=True)
    (root / "lab").symlink_to(Path(pagerun.__file__).parent / "lab")
    source = "WARMED = 'lesson A'\n"
    (root / "reference" / "lessonA.py").write_text(source)
    monkeypatch.setattr(pagerun, "ROOT", str(root))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    cellrun._compiled.cache_clear()
    pagerun.warm("A")
    assert cellrun._compiled.cache_info().currsize == 1
    output, error, dropped = pagerun.run_cell("import harness\nprint(harness.WARMED)\n", "A", "cell", None, lambda text: None)
    assert (output, error, dropped) == ("lesson A\n", None, 0)
    assert cellrun._compiled.cache_info().hits >= 1, "the first cell found the harness compiled"
