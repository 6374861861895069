"""The lab test runner as the reader meets it: `python lab/lab_check.py ...` in a lab folder.

Most tests here build a small lab of their own (a harness.py and a tests.py written for the test),
so each behaviour of the runner is pinned by a file whose every line is known: its order, its
messages, its exit codes. The last tests run lesson 11's real lab folder: the course harness's
stages against harness_py/course/tests/lesson11.py.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAB_PACKAGE = ROOT / "harness_py" / "lab"
TESTS_11 = ROOT / "lessons" / "11-power-cut" / "tests.py"
# How many tests lesson 11's labs have: counted, so that a test added to the lab needs no edit here.
N_TESTS_11 = TESTS_11.read_text(encoding="utf-8").count("\n    def test_")
N_LAB1_11 = TESTS_11.read_text(encoding="utf-8").split("\nclass Lab2")[0].count("\n    def test_")

HARNESS = textwrap.dedent('''\
    def add(a, b):
        return a + b

    def lookup(key):
        return {}[key]

    def hang():
        while True:
            pass
    ''')

TESTS = textwrap.dedent('''\
    import unittest

    import harness

    LESSON = 3


    class Lab1(unittest.TestCase):
        longMessage = False

        def test_zebra(self):
            """add(2, 2) gives 4."""
            self.assertEqual(harness.add(2, 2), 4, f"add(2, 2) gave {harness.add(2, 2)}")

        def test_apple(self):
            """lookup("x") finds
            something."""
            harness.lookup("x")


    class Lab2(unittest.TestCase):

        def test_bare(self):
            """A check with no message."""
            print("looking at add(1, 1)")
            self.assertTrue(harness.add(1, 1) == 3)

        def test_after(self):
            """add(1, 2) gives 3."""
            self.assertEqual(harness.add(1, 2), 3)
    ''')


def _lab_folder(tmp_path: Path, harness: str = HARNESS, tests: str = TESTS) -> Path:
    folder = tmp_path / "lab-folder"
    shutil.copytree(LAB_PACKAGE, folder / "lab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "harness.py").write_text(harness, encoding="utf-8")
    (folder / "tests.py").write_text(tests, encoding="utf-8")
    return folder


def _check(folder: Path, *args: str, lesson: str = "3") -> subprocess.CompletedProcess:
    command = [sys.executable, "lab/lab_check.py", "--harness", "harness.py",
               "--lesson", lesson, *args]
    if not any(arg.endswith(".py") for arg in args):
        command.append("tests.py")
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=120)


def _lines(done: subprocess.CompletedProcess) -> list[str]:
    return done.stdout.splitlines()


def _load_lab_check():
    from lab import lab_check
    return lab_check


# ------------------------------------------------------------------------------- the command line

def test_each_test_is_announced_by_its_sentence_in_written_order(tmp_path):
    done = _check(_lab_folder(tmp_path))
    marks = [line for line in _lines(done) if line.startswith(("PASS  ", "FAIL  "))]
    assert marks == ["PASS  add(2, 2) gives 4.",
                     "FAIL  lookup(\"x\") finds something.",
                     "FAIL  A check with no message.",
                     "PASS  add(1, 2) gives 3."]
    assert _lines(done)[-1] == "2 passed, 2 failed"
    assert done.returncode == 1


def test_an_exception_in_the_readers_code_names_its_line_of_harness_py(tmp_path):
    lines = _lines(_check(_lab_folder(tmp_path), "--lab", "1"))
    at = lines.index('FAIL  lookup("x") finds something.')
    message = lines[at + 1:at + 4]
    assert message[0] == "      your code raised KeyError: 'x'"
    assert message[1] == "      at harness.py, line 5:"
    assert message[2].strip() == "return {}[key]"


def test_a_check_without_a_message_points_at_its_line_and_shows_what_was_printed(tmp_path):
    lines = _lines(_check(_lab_folder(tmp_path), "--lab", "2"))
    at = lines.index("FAIL  A check with no message.")
    message = "\n".join(lines[at + 1:lines.index("PASS  add(1, 2) gives 3.")])
    assert message == ("      a check failed (False is not true) at tests.py, line 26:\n"
                       "          self.assertTrue(harness.add(1, 1) == 3)\n"
                       "      it printed:\n"
                       "        looking at add(1, 1)\n"
                       "      (your add is at harness.py, line 1)")


def test_exit_status_is_0_only_when_every_selected_test_passed(tmp_path):
    tests = TESTS.replace('harness.lookup("x")', 'harness.add(0, 0)')
    folder = _lab_folder(tmp_path, tests=tests)
    only_lab_1 = _check(folder, "--lab", "1")
    assert only_lab_1.returncode == 0
    assert _lines(only_lab_1)[-1] == "2 passed, 0 failed"
    assert _check(folder).returncode == 1


def test_lab_selects_one_class(tmp_path):
    done = _check(_lab_folder(tmp_path), "--lab", "2")
    marks = [line for line in _lines(done) if line.startswith(("PASS", "FAIL"))]
    assert marks == ["FAIL  A check with no message.", "PASS  add(1, 2) gives 3."]
    assert _lines(done)[-1] == "1 passed, 1 failed"


def test_a_syntax_error_is_reported_with_its_line_and_fails_every_test(tmp_path):
    broken = HARNESS.replace("def lookup(key):", "def lookup(key:")
    done = _check(_lab_folder(tmp_path, harness=broken))
    assert done.returncode == 1
    not_run = "      not run: harness.py does not import (see above)"
    # the reason is printed once, above the tests, and every test says it was not run
    assert _lines(done) == [
        "Lesson 3, all labs: harness.py against tests.py",
        "harness.py does not import: harness.py, line 4: SyntaxError: '(' was never closed",
        "    def lookup(key:",
        "              ^",
        "FAIL  add(2, 2) gives 4.", not_run,
        'FAIL  lookup("x") finds something.', not_run,
        "FAIL  A check with no message.", not_run,
        "FAIL  add(1, 2) gives 3.", not_run,
        "0 passed, 4 failed"]


def test_an_exception_at_import_names_the_line(tmp_path):
    broken = HARNESS + "\nLIMIT = 1 // 0\n"
    done = _check(_lab_folder(tmp_path, harness=broken), "--lab", "1")
    assert done.returncode == 1
    not_run = "      not run: harness.py does not import (see above)"
    assert _lines(done) == [
        "Lesson 3, lab 1: harness.py against tests.py",
        "harness.py does not import: harness.py, line 11:",
        "    LIMIT = 1 // 0",
        "ZeroDivisionError: integer division or modulo by zero",
        "FAIL  add(2, 2) gives 4.", not_run,
        'FAIL  lookup("x") finds something.', not_run,
        "0 passed, 2 failed"]


def test_a_test_that_hangs_is_stopped_by_timeout_and_the_rest_still_run(tmp_path):
    tests = TESTS.replace('harness.lookup("x")', "harness.hang()")
    done = _check(_lab_folder(tmp_path, tests=tests), "--lab", "1", "--timeout", "0.5")
    assert _lines(done) == [
        "Lesson 3, lab 1: harness.py against tests.py",
        "PASS  add(2, 2) gives 4.",
        'FAIL  lookup("x") finds something.',
        "      did not finish within 0.5 seconds: is something waiting forever, or looping without end?",
        "      (your hang is at harness.py, line 7)",
        "1 passed, 1 failed"]


@pytest.mark.parametrize("args, says", [
    (("--lab", "3"), "lab_check: tests.py has no tests for lab 3; it has lab 1, lab 2\n"),
    (("--harness", "missing.py"), "lab_check: missing.py: no such harness file\n"),
    (("nothere.py",), "lab_check: nothere.py: no such tests file\n"),
    (("--lesson", "11"), "lab_check: tests.py holds the tests of lesson 3, not lesson 11\n"),
    (("--lesson", "three"), "lab_check.py: error: argument --lesson: 'three' is neither a lesson number (11) "
                            "nor a side quest (S2)\n"),
    (("--lesson", "S2"), "lab_check: tests.py holds the tests of lesson 3, not side quest S2\n"),
    (("empty.py",), "lab_check: empty.py has no lab tests: no class Lab1, Lab2, ... with test methods\n"),
])
def test_bad_usage_exits_2_and_says_why(tmp_path, args, says):
    folder = _lab_folder(tmp_path)
    (folder / "empty.py").write_text("import unittest\n\nclass Helpers(unittest.TestCase):\n"
                                     "    def test_x(self):\n        pass\n", encoding="utf-8")
    command = [sys.executable, "lab/lab_check.py", "--harness", "harness.py", "--lesson", "3"]
    command += list(args)
    if not any(arg.endswith(".py") and arg != "missing.py" for arg in args):
        command.append("tests.py")
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    if "error: argument" in says:        # argparse's own refusal: its usage, then the sentence
        assert done.stderr.startswith("usage: lab_check.py ") and done.stderr.endswith("\n" + says), done.stderr
    else:
        assert done.stderr == says


# ------------------------------------------------------------------------- the page's interface

def test_run_returns_one_dict_per_test_with_pass_fail_and_error(tmp_path):
    folder = _lab_folder(tmp_path)
    lab_check = _load_lab_check()
    results = lab_check.run(folder / "harness.py", folder / "tests.py")
    assert [(r["id"], r["lab"], r["status"]) for r in results] == [
        ("Lab1.test_zebra", 1, "pass"), ("Lab1.test_apple", 1, "error"),
        ("Lab2.test_bare", 2, "fail"), ("Lab2.test_after", 2, "pass")]
    assert all(set(r) - {"goto"} == {"id", "lab", "sentence", "status", "message"} for r in results)
    # test_bare's check has no line of harness.py; the one function of the reader's it reaches does
    assert results[2]["goto"] == {"name": "add", "line": 1}
    assert results[1]["sentence"] == 'lookup("x") finds something.'
    assert [(i, n, s) for i, n, s in lab_check.sentences(folder / "tests.py")] == [
        (r["id"], r["lab"], r["sentence"]) for r in results]


def test_run_calls_the_readers_file_harness_py_wherever_it_is_stored(tmp_path):
    folder = _lab_folder(tmp_path)
    stored = folder / "lab1.py"             # the page keeps the reader's file under its own name
    stored.write_text(HARNESS, encoding="utf-8")
    results = _load_lab_check().run(stored, folder / "tests.py", lab=1)
    assert results[1]["message"].splitlines()[1] == "at harness.py, line 5:"


def test_run_loads_the_readers_file_afresh_every_time(tmp_path):
    folder = _lab_folder(tmp_path)
    lab_check = _load_lab_check()
    first = lab_check.run(folder / "harness.py", folder / "tests.py", lab=1)
    # the same size, so only a fresh read (of the module and of the lines shown) can tell
    (folder / "harness.py").write_text(HARNESS.replace("return a + b", "return a - b")
                                       .replace("return {}[key]", "return {}[kex]"))
    second = lab_check.run(folder / "harness.py", folder / "tests.py", lab=1)
    assert first[0]["status"] == "pass" and second[0]["status"] == "fail"
    assert second[0]["message"] == "add(2, 2) gave 0"
    assert "return {}[kex]" in second[1]["message"] and "NameError" in second[1]["message"]


# ------------------------------------------------- a failure worded by a test: the function it is about

GOTO_HARNESS = textwrap.dedent('''\
    def prompt(text):
        return text


    def run_agent(messages):
        messages.append("A")
        return messages


    class SessionLog:
        def __init__(self):
            self.lines = []

        def append(self, line):
            self.lines.append(line)

        def replay(self):
            return []
    ''')

GOTO_TESTS = textwrap.dedent('''\
    import unittest

    import harness

    LESSON = 3


    def _replayed(lines):
        log = harness.SessionLog()
        for line in lines:
            log.append(line)
        return log.replay()


    class Lab1(unittest.TestCase):
        longMessage = False

        def run_agent(self, messages):
            return harness.run_agent(messages)

        def test_method_named(self):
            """The message names SessionLog.replay."""
            self.assertEqual(_replayed(["a"]), ["a"], "SessionLog.replay gave back nothing")

        def test_bare_name_among_several(self):
            """The message names replay, the test reaches append and replay."""
            self.assertEqual(_replayed(["a"]), ["a"], "replay should give back the lines appended")

        def test_helper(self):
            """The test reaches run_agent through a helper; the message names it."""
            self.assertEqual(self.run_agent([]), ["U", "A"], "run_agent should put the prompt first")

        def test_only_one(self):
            """The message names nothing; the test reaches one function."""
            self.assertEqual(harness.prompt("x"), "y", "gave x")

        def test_a_word_not_reached(self):
            """The message says 'prompt', but the test never reaches prompt."""
            self.assertEqual(_replayed([]), ["x"], "the prompt is lost: nothing was kept")

        def test_a_line_already(self):
            """A traceback in the reader's file has its line: no second way there."""
            harness.run_agent(None)


    class _Shared(unittest.TestCase):
        longMessage = False

        def appended(self, line):
            log = harness.SessionLog()
            log.append(line)
            return log.lines


    class Lab2(_Shared):

        def test_base_helper_and_a_local_name(self):
            """A helper of the base class reaches SessionLog.append; a local is named replay."""
            replay = ["a"]
            self.assertEqual(self.appended("a"), replay + ["b"], "the line is not there")
    ''')


@pytest.fixture
def gotos(tmp_path):
    folder = _lab_folder(tmp_path, harness=GOTO_HARNESS, tests=GOTO_TESTS)
    results = _load_lab_check().run(folder / "harness.py", folder / "tests.py")
    return folder, {r["id"].split(".")[1]: r for r in results}


def test_a_failure_naming_a_method_points_at_its_def_line(gotos):
    _, results = gotos
    assert results["test_method_named"]["goto"] == {"name": "SessionLog.replay", "line": 17}
    assert results["test_bare_name_among_several"]["goto"] == {"name": "SessionLog.replay", "line": 17}


def test_a_helper_of_the_test_is_followed_to_the_readers_function(gotos):
    assert gotos[1]["test_helper"]["goto"] == {"name": "run_agent", "line": 5}


def test_a_helper_on_a_base_class_counts_and_a_local_variable_is_no_method(gotos):
    # A variable of the test's own called `replay` is not SessionLog.replay; the helper that the
    # base class holds is followed to SessionLog.append, the one function the test reaches.
    assert gotos[1]["test_base_helper_and_a_local_name"]["goto"] == {"name": "SessionLog.append",
                                                                      "line": 14}


def test_the_only_function_a_test_reaches_is_where_its_failure_points(gotos):
    assert gotos[1]["test_only_one"]["goto"] == {"name": "prompt", "line": 1}


def test_a_word_of_the_message_the_test_never_reaches_is_not_a_place(gotos):
    result = gotos[1]["test_a_word_not_reached"]
    assert result["status"] == "fail" and "goto" not in result   # append and replay: which one?


def test_a_failure_with_a_line_of_the_readers_file_gets_no_second_place(gotos):
    result = gotos[1]["test_a_line_already"]
    assert "harness.py, line 6" in result["message"] and "goto" not in result


def test_the_command_line_says_where_the_named_function_is(gotos):
    lines = _lines(_check(gotos[0]))
    at = lines.index("FAIL  The message names SessionLog.replay.")
    assert lines[at + 1:at + 3] == ["      SessionLog.replay gave back nothing",
                                    "      (your SessionLog.replay is at harness.py, line 17)"]


def test_sentences_runs_nothing(tmp_path):
    tests = TESTS.replace("LESSON = 3", "raise SystemExit('tests.py was run')")
    folder = _lab_folder(tmp_path, tests=tests)
    listed = _load_lab_check().sentences(folder / "tests.py")
    assert [test_id for test_id, _, _ in listed] == [
        "Lab1.test_zebra", "Lab1.test_apple", "Lab2.test_bare", "Lab2.test_after"]


# ------------------------------------------------------------------- a name the harness lacks

# A harness with one class and none of the names the tests below reach for, except what they need
# to show an AttributeError raised in the reader's own code and a value that is None.
LACKING = textwrap.dedent('''\
    class Log:
        def __init__(self):
            self.entries = []

        def last(self):
            return self.entires[-1]

    def find(key):
        return None
    ''')

LACKING_TESTS = textwrap.dedent('''\
    import unittest

    import harness

    LESSON = 3


    def new_log():
        return harness.SessionLog()


    class Lab1(unittest.TestCase):
        longMessage = False

        def test_helper(self):
            """A helper of the tests builds a SessionLog."""
            print("building the log")
            new_log().append("x")

        def test_body(self):
            """The test itself builds a SessionLog."""
            harness.SessionLog().replay()

        def test_caught(self):
            """The test catches what the harness raised and fails with a sentence."""
            try:
                harness.SessionLog()
            except Exception as error:
                self.fail(f"SessionLog() raised {type(error).__name__}: {error}")

        def test_method(self):
            """A Log replays."""
            harness.Log().replay()

        def test_class_attribute(self):
            """Log has a class-level LIMIT."""
            self.assertEqual(harness.Log.LIMIT, 10)

        def test_inside(self):
            """A Log gives its last entry."""
            log = harness.Log()
            log.entries.append("x")
            self.assertEqual(log.last(), "x")

        def test_none(self):
            """find("x") gives a dict."""
            harness.find("x").get("x")

        def test_import(self):
            """The test imports Session from harness."""
            from harness import Session
            Session()
    ''')

PLAIN_KEYS = {"id", "lab", "sentence", "status", "message"}


@pytest.fixture
def lacking(tmp_path):
    folder = _lab_folder(tmp_path, harness=LACKING, tests=LACKING_TESTS)
    results = _load_lab_check().run(folder / "harness.py", folder / "tests.py")
    return {result["id"].split(".")[1]: result for result in results}


def test_a_name_the_harness_module_lacks_is_the_cause_wherever_the_test_met_it(lacking):
    for test in ("test_helper", "test_body", "test_caught"):
        result = lacking[test]
        assert result["status"] != "pass"
        assert result["cause"] == "harness.py has no SessionLog", (test, result)
        assert set(result) == PLAIN_KEYS | {"cause", "printed"}
    # the messages still differ: where the tests file stopped, or the test's own sentence
    messages = {lacking[test]["message"] for test in ("test_helper", "test_body", "test_caught")}
    assert len(messages) == 3
    assert lacking["test_caught"]["message"] == (
        "SessionLog() raised AttributeError: module 'harness' has no attribute 'SessionLog'")


def test_what_a_test_printed_is_its_own_field_and_still_ends_its_message(lacking):
    helper, body = lacking["test_helper"], lacking["test_body"]
    assert helper["printed"] == "it printed:\n  building the log"
    assert helper["message"].endswith("\n" + helper["printed"])
    assert body["printed"] == ""


def test_a_method_or_attribute_a_harness_class_lacks_is_the_cause(lacking):
    assert lacking["test_method"]["cause"] == "Log has no attribute replay"
    assert lacking["test_class_attribute"]["cause"] == "Log has no attribute LIMIT"


def test_a_name_from_harness_import_does_not_find_is_the_cause(lacking):
    result = lacking["test_import"]
    assert result["cause"] == "harness.py has no Session"
    assert result["message"].startswith("the test uses something harness.py does not have (yet): "
                                        "cannot import name 'Session' from 'harness'\n")


def test_an_attribute_error_raised_in_the_readers_code_has_no_cause(lacking):
    result = lacking["test_inside"]
    assert set(result) == PLAIN_KEYS, result
    assert result["message"].startswith("your code raised AttributeError: 'Log' object has no "
                                        "attribute 'entires'")
    assert "harness.py, line 6" in result["message"]


def test_a_value_that_is_none_has_no_cause(lacking):
    result = lacking["test_none"]
    assert set(result) == PLAIN_KEYS | {"goto"}, result
    assert "'NoneType' object has no attribute 'get'" in result["message"]
    assert result["goto"]["name"] == "find"      # what gave the None: the one function it reached


def test_a_top_level_import_the_harness_cannot_satisfy_fails_every_test_with_its_cause(tmp_path):
    tests = LACKING_TESTS.replace("import harness\n",
                                  "import harness\nfrom harness import Session\n")
    folder = _lab_folder(tmp_path, harness=LACKING, tests=tests)
    results = _load_lab_check().run(folder / "harness.py", folder / "tests.py")
    assert len(results) == 8 and {r["status"] for r in results} == {"error"}
    assert {r["cause"] for r in results} == {"harness.py has no Session"}
    assert results[0]["message"] == ("the tests use something harness.py does not have (yet): "
                                     "cannot import name 'Session' from 'harness'\n"
                                     "at tests.py, line 4:\n    from harness import Session")
    done = _check(folder)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.count("cannot import name") == 1, done.stdout


def test_the_command_line_says_a_shared_cause_once_and_points_at_it(tmp_path):
    done = _check(_lab_folder(tmp_path, harness=LACKING, tests=LACKING_TESTS))
    lines = _lines(done)
    assert done.returncode == 1
    # said in full under the first test it fails; each later one points up, with what it printed
    assert done.stdout.count("has no attribute 'SessionLog'") == 1, done.stdout
    body = lines.index("FAIL  The test itself builds a SessionLog.")
    assert lines[body + 1] == "      the same failure as above: harness.py has no SessionLog"
    caught = lines.index(
        "FAIL  The test catches what the harness raised and fails with a sentence.")
    assert lines[caught + 1:caught + 2] == [
        "      the same failure as above: harness.py has no SessionLog"]
    helper = lines.index("FAIL  A helper of the tests builds a SessionLog.")
    assert lines[helper + 1].startswith("      the test uses something harness.py does not have "
                                        "(yet): module 'harness' has no attribute 'SessionLog'")
    assert "      it printed:" in lines[helper:body]
    # a cause no other test shares, and failures without a cause, are printed as they always were
    method = lines.index("FAIL  A Log replays.")
    assert lines[method + 1] == ("      the test uses something harness.py does not have (yet): "
                                 "'Log' object has no attribute 'replay'")
    assert "same failure" not in "\n".join(lines[method:])


def test_a_shared_cause_keeps_each_later_tests_printed_lines(tmp_path):
    tests = LACKING_TESTS.replace('harness.SessionLog().replay()',
                                  'print("about to build")\n        harness.SessionLog().replay()')
    lines = _lines(_check(_lab_folder(tmp_path, harness=LACKING, tests=tests)))
    body = lines.index("FAIL  The test itself builds a SessionLog.")
    assert lines[body + 1:body + 4] == [
        "      the same failure as above: harness.py has no SessionLog",
        "      it printed:",
        "        about to build"]


# ------------------------------------------------------------------------- lesson 11, for real

@pytest.fixture(scope="module")
def course():
    import stages
    return stages.load()


def test_lesson_11_solution_passes_all(tmp_path, course):
    folder = _lab_folder(tmp_path, harness=course.solution("11.2"),
                         tests=TESTS_11.read_text(encoding="utf-8"))
    done = _check(folder, lesson="11")
    assert _lines(done)[-1] == f"{N_TESTS_11} passed, 0 failed", done.stdout
    assert done.returncode == 0


def test_lesson_11_starting_files_fail_their_labs(tmp_path, course):
    tests = TESTS_11.read_text(encoding="utf-8")
    first = _check(_lab_folder(tmp_path / "one", harness=course.starting("11.1"), tests=tests),
                   "--lab", "1", lesson="11")
    assert (first.returncode, _lines(first)[-1]) == (1, f"0 passed, {N_LAB1_11} failed")
    second = _check(_lab_folder(tmp_path / "two", harness=course.starting("11.2"), tests=tests),
                    "--lab", "2", lesson="11")
    assert (second.returncode, _lines(second)[-1]) == (1, f"0 passed, {N_TESTS_11 - N_LAB1_11} failed")
    missing = "the test uses something harness.py does not have (yet): "
    assert missing + "module 'harness' has no attribute 'SessionLog'" in first.stdout
    assert missing + "'Harness' object has no attribute 'subscribe'" in second.stdout


# ------------------------------------------------------------------------------- under Pyodide

PYODIDE = ROOT / "node_modules" / "pyodide"

NODE_SCRIPT = """
import { loadPyodide } from %(module)s;
import fs from "node:fs";
const [labDir, testsPath, ...harnesses] = process.argv.slice(2);
const py = await loadPyodide({ indexURL: %(index)s });
py.FS.mkdirTree("/book/lab");
py.FS.mkdirTree("/book/tests");
py.FS.mkdirTree("/reader");
for (const name of fs.readdirSync(labDir).filter((name) => name.endsWith(".py"))) {
  py.FS.writeFile(`/book/lab/${name}`, fs.readFileSync(`${labDir}/${name}`, "utf8"));
}
py.FS.writeFile("/book/tests/tests.py", fs.readFileSync(testsPath, "utf8"));
harnesses.forEach((file, n) => {
  py.FS.writeFile(`/reader/lab${n}.py`, fs.readFileSync(file, "utf8"));
});
console.log(py.runPython(`
import importlib.util, json
spec = importlib.util.spec_from_file_location("lab_check", "/book/lab/lab_check.py")
lab_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lab_check)
json.dumps([lab_check.run("/reader/lab%%d.py" %% n, "/book/tests/tests.py")
            for n in range(${harnesses.length})])
`));
"""


def test_the_page_runs_the_same_runner_under_pyodide(tmp_path, course):
    """The worker's way in: files in Pyodide's file system, the reader's file under another name."""
    node = shutil.which("node")
    assert node and (PYODIDE / "pyodide.mjs").is_file(), "needs node and node_modules/pyodide"
    script = tmp_path / "run.mjs"
    script.write_text(NODE_SCRIPT % {"module": repr(str(PYODIDE / "pyodide.mjs")),
                                     "index": repr(str(PYODIDE) + "/")}, encoding="utf-8")
    solution = course.solution("11.2")
    from builder import course as course_stage, wrong
    from builder.project import Project
    project = Project.book()
    eleven = course_stage.load(project).page("11")
    variant = next(d for d in wrong.load(project, eleven) if d.name == "live listener list")
    files = {"solution.py": solution, "variant.py": variant.apply(solution),
             "broken.py": solution.replace("class SessionLog:", "class SessionLog(:", 1)}
    for file, text in files.items():
        (tmp_path / file).write_text(text, encoding="utf-8")
    done = subprocess.run([node, str(script), str(LAB_PACKAGE), str(TESTS_11),
                           *(str(tmp_path / file) for file in files)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    solved, wrong, broken = json.loads(done.stdout.strip().splitlines()[-1])
    assert [r["status"] for r in solved] == ["pass"] * N_TESTS_11
    assert {r["id"] for r in wrong if r["status"] != "pass"} == {"Lab2.test_unsubscribe_mid_event",
                                                                  "Lab2.test_unsubscribe_another"}
    line = solution.splitlines().index("class SessionLog:") + 1
    assert all(r["status"] == "error" for r in broken) and len(broken) == N_TESTS_11
    assert broken[0]["message"].startswith(
        f"harness.py does not import: harness.py, line {line}: SyntaxError")


# ------------------------------------------------------------- async tests (lesson 15 on)

ASYNC_TESTS = textwrap.dedent('''\
    import asyncio
    import unittest

    import harness
    import lab

    LESSON = 3


    class Lab1(unittest.TestCase):
        longMessage = False

        async def test_waits(self):
            """add, after two simulated seconds, gives 4."""
            await asyncio.sleep(2)
            self.assertEqual((harness.add(2, 2), lab.now()), (4, 2.0))

        async def test_wrong(self):
            """add(1, 1) gives 3, after a wait."""
            await asyncio.sleep(1)
            self.assertEqual(harness.add(1, 1), 3, f"add(1, 1) gave {harness.add(1, 1)}")

        def test_plain(self):
            """A plain test still runs beside them."""
            self.assertEqual(harness.add(0, 0), 0)
    ''')


def test_an_async_test_runs_on_the_simulated_clock_and_can_fail(tmp_path):
    done = _check(_lab_folder(tmp_path, tests=ASYNC_TESTS))
    lines = _lines(done)
    assert "PASS  add, after two simulated seconds, gives 4." in lines
    at = lines.index("FAIL  add(1, 1) gives 3, after a wait.")
    assert lines[at + 1].strip() == "add(1, 1) gave 2"
    assert "PASS  A plain test still runs beside them." in lines
    assert lines[-1] == "2 passed, 1 failed" and done.returncode == 1
    assert "DeprecationWarning" not in done.stdout + done.stderr
