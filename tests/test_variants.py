"""Wrong designs must fail the lab tests.

A lab test that passes a broken harness teaches nothing. Each file in tests/variants/lessonNN/ is
a small snippet that, appended to a lab's solution, redefines one function or method the way a
reader plausibly might get it wrong. Every variant must fail the test named for it below, while
the plain solution passes everything. The runner is the one the reader uses: lab_check.run.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = ROOT / "tests" / "variants"
TESTS_11 = ROOT / "harness_py" / "course" / "tests" / "lesson11.py"
TIMEOUT = 20.0      # seconds per lab test: a variant that hangs fails instead of hanging pytest

sys.path.insert(0, str(ROOT / "harness_py"))
import stages  # noqa: E402  (harness_py/stages.py)


def _load_lab_check():
    spec = importlib.util.spec_from_file_location(
        "lab_check", ROOT / "harness_py" / "lab" / "lab_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lab_check = _load_lab_check()

# variant file (lesson 11) -> the lab tests that must catch it (each must fail; others may too)
CAUGHT_BY_11 = {
    "skips_unreadable_lines": {"Lab1.test_torn_tail", "Lab2.test_torn_log_stops_run"},
    "counter_not_reread": {"Lab1.test_two_logs"},
    "entries_generator": {"Lab1.test_no_file"},
    "rewrite_whole_file": {"Lab1.test_appends_only"},
    "parser_line_number": {"Lab1.test_torn_tail"},
    "notify_after_yield": {"Lab2.test_close_after_k", "Lab2.test_close_after_k_saved"},
    "live_listener_list": {"Lab2.test_unsubscribe_mid_event"},
    "undo_raises_twice": {"Lab2.test_undo_twice"},
    "listener_error_swallowed": {"Lab2.test_listener_raises", "Lab2.test_torn_log_stops_run"},
    "running_after_listener_error": {"Lab2.test_listener_raises"},
    "persist_to_catches": {"Lab2.test_torn_log_stops_run"},
    "persist_every_event": {"Lab2.test_saver_only"},
}


@pytest.fixture(scope="module")
def course():
    return stages.load()


def _check(tmp_path: Path, text: str, lab: int | None = None) -> dict[str, dict]:
    harness = tmp_path / "harness.py"
    harness.write_text(text, encoding="utf-8")
    results = lab_check.run(harness, TESTS_11, lab, timeout=TIMEOUT)
    return {result["id"]: result for result in results}


def _failed(results: dict[str, dict]) -> set[str]:
    return {test_id for test_id, result in results.items() if result["status"] != "pass"}


def test_every_variant_file_is_listed():
    files = {path.stem for path in (VARIANTS / "lesson11").glob("*.py")}
    assert files == set(CAUGHT_BY_11), "tests/variants/lesson11/ and CAUGHT_BY_11 disagree"


def test_named_tests_exist():
    ids = {test_id for test_id, _, _ in lab_check.sentences(TESTS_11)}
    for name, caught_by in CAUGHT_BY_11.items():
        assert caught_by <= ids, f"{name}: no such test {sorted(caught_by - ids)}"


def test_solution_passes_every_lab_test(tmp_path, course):
    results = _check(tmp_path, course.solution("11.2"))
    assert len(results) == 17
    failed = {test_id: results[test_id]["message"] for test_id in _failed(results)}
    assert failed == {}, "the 11.2 solution fails lesson 11's lab tests"


def test_first_lab_solution_passes_lab_1(tmp_path, course):
    results = _check(tmp_path, course.solution("11.1"), lab=1)
    assert len(results) == 8 and _failed(results) == set()


def test_starting_file_of_lab_1_fails_every_lab_1_test(tmp_path, course):
    results = _check(tmp_path, course.starting("11.1"), lab=1)
    assert len(results) == 8
    assert _failed(results) == set(results), "a lab 1 test passes before SessionLog is written"


def test_starting_file_of_lab_2_fails_every_lab_2_test(tmp_path, course):
    results = _check(tmp_path, course.starting("11.2"), lab=2)
    assert len(results) == 9
    assert _failed(results) == set(results), "a lab 2 test passes before subscribe is written"


@pytest.mark.parametrize("name", sorted(CAUGHT_BY_11))
def test_wrong_design_is_caught(tmp_path, course, name):
    snippet = (VARIANTS / "lesson11" / f"{name}.py").read_text(encoding="utf-8")
    results = _check(tmp_path, course.solution("11.2").rstrip("\n") + "\n\n\n" + snippet)
    missed = CAUGHT_BY_11[name] - _failed(results)
    assert not missed, f"the wrong design {name!r} passes {sorted(missed)}"
    for test_id in CAUGHT_BY_11[name]:
        # "fail", not "error": the check saw the wrong behaviour; the variant did not just crash
        assert results[test_id]["status"] == "fail", results[test_id]["message"]
        message = results[test_id]["message"]
        assert message.strip(), f"{name}: {test_id} failed without saying why"
        assert "is not true" not in message and "AssertionError" not in message, message
