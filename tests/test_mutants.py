"""The mutation pass (`python build.py mutants`): its mutants, its verdicts, its report.

Run on a copy of the fixture course whose one lab has a boundary to get right, with tests that
check it or not, so each verdict is one we know the answer to."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import stages as stages_module
from builder import course as course_stage, mutants
from builder.errors import BuildError
from builder.labs import Labs
from builder.project import Project

FIXTURE = Path(__file__).parent / "fixtures" / "book"
REPO = Path(__file__).resolve().parents[1]

SOURCE = '''"""A harness with one boundary."""

LIMIT = 3


#@ block 1.1 gap
#@ spec
# over(n) -> bool: True when n is LIMIT or more.
#@ code
def over(n):
    # the limit itself is over
    return n >= LIMIT
#@ end

#@ block 1.2 gap
#@ spec
# shout(text) -> str: the text in capitals, then "!".
#@ code
def shout(text):
    return text.upper() + "!"
#@ end
'''

STRICT = '''"""Lab tests that check the boundary."""
import unittest

import harness


class Lab1(unittest.TestCase):
    def test_at_the_limit(self):
        """over(3) is True."""
        self.assertIs(harness.over(3), True, "expected over(3) to be True")

    def test_below(self):
        """over(2) is False."""
        self.assertIs(harness.over(2), False, "expected over(2) to be False")


class Lab2(unittest.TestCase):
    def test_shouts(self):
        """shout("hi") returns "HI!"."""
        self.assertEqual(harness.shout("hi"), "HI!")
'''

LOOSE = STRICT.replace('''    def test_at_the_limit(self):
        """over(3) is True."""
        self.assertIs(harness.over(3), True, "expected over(3) to be True")
''', '''    def test_far_above(self):
        """over(9) is True."""
        self.assertIs(harness.over(9), True, "expected over(9) to be True")
''')


def _book(tmp_path: Path, tests: str, equivalents: str | None = None):
    root = tmp_path / "book"
    shutil.copytree(FIXTURE, root)
    (root / "harness_py" / "course" / "harness.py").write_text(SOURCE, encoding="utf-8")
    room = root / "lessons" / "01-hello"
    (room / "tests.py").write_text(tests, encoding="utf-8")
    (room / "wrong.yaml").unlink()
    if equivalents is not None:
        (room / "mutants.yaml").write_text(equivalents, encoding="utf-8")
    project = Project.at(root)
    course = course_stage.load(project)
    return project, course.page("01"), Labs(project, course).stages


def test_mutants_are_made_only_inside_the_labs_gap():
    stages = stages_module.parse(SOURCE, ["1.1", "1.2"])
    made = mutants.make(stages, "1.1")
    assert {m.change for m in made} == {
        "n >= LIMIT  ->  n > LIMIT", "return n >= LIMIT  ->  return None"}
    assert {m.where for m in made} == {"over"}
    assert all("LIMIT = 3" in m.text for m in made)        # LIMIT is outside the gap: untouched
    assert all("# the limit itself is over" in m.text for m in made)   # comments stay


def test_each_operator_makes_its_change():
    source = '''#@ block 1.1 gap
#@ spec
# f
#@ code
def f(a, b):
    if a and not b:
        g(a, b)
    try:
        return a + 1
    except ValueError:
        raise
#@ end
'''
    made = {(m.kind, m.change) for m in mutants.make(stages_module.parse(source, ["1.1"]), "1.1")}
    assert made == {
        ("branch", "a and not b  ->  True"), ("branch", "a and not b  ->  False"),
        ("boolean", "a and not b  ->  a or not b"), ("negation", "not b  ->  b"),
        ("statement", "g(a, b)  ->  pass"), ("arguments", "g(a, b)  ->  g(b, a)"),
        ("return", "return a + 1  ->  return None"), ("arithmetic", "a + 1  ->  a - 1"),
        ("constant", "1  ->  2"), ("constant", "1  ->  0"),
        ("except", "ValueError  ->  BaseException"), ("statement", "raise  ->  pass")}


def test_a_boundary_the_tests_check_is_killed(tmp_path):
    project, page, stages = _book(tmp_path, STRICT)
    outcomes = mutants.run(project, page, stages, jobs=1)
    assert {o.mutant.change: o.status for o in outcomes if o.mutant.lab == 1} == {
        "n >= LIMIT  ->  n > LIMIT": "killed", "return n >= LIMIT  ->  return None": "killed"}
    lines, unexplained = mutants.report(project, page, outcomes, [])
    assert unexplained == 0
    assert lines[0] == "lab 1.1: 2 mutants, 2 killed (100%), 0 equivalent, 0 unexplained"


def test_a_boundary_nobody_checks_survives_and_is_named(tmp_path):
    project, page, stages = _book(tmp_path, LOOSE)
    outcomes = mutants.run(project, page, stages, lab=1, jobs=1)
    lines, unexplained = mutants.report(project, page, outcomes, [], lab=1)
    assert unexplained == 1
    assert lines == [
        "lab 1.1: 2 mutants, 1 killed (50%), 0 equivalent, 1 unexplained",
        "  SURVIVED  1.1 harness_py/course/harness.py:12 in over [compare]: n >= LIMIT  ->  n > LIMIT"]


def test_an_equivalent_explains_its_survivor_and_a_stale_one_is_named(tmp_path):
    entries = ('- lab: 1\n  in: over\n  change: "n >= LIMIT  ->  n > LIMIT"\n'
               '  why: the fixture says so\n'
               '- lab: 1\n  in: over\n  change: "n  ->  m"\n  why: no longer made\n')
    project, page, stages = _book(tmp_path, LOOSE, entries)
    equivalents = mutants.load_equivalents(project, page)
    outcomes = mutants.run(project, page, stages, lab=1, jobs=1)
    lines, unexplained = mutants.report(project, page, outcomes, equivalents, lab=1)
    assert unexplained == 1
    assert lines == [
        "lab 1.1: 2 mutants, 1 killed (50%), 1 equivalent, 0 unexplained",
        "lessons/01-hello/mutants.yaml:5: the mutant 'n  ->  m' of lab 1 in over no longer "
        "survives (or is no longer made); remove the entry"]


@pytest.mark.parametrize("text,message", [
    ("- lab: 1\n  change: x\n", "lessons/01-hello/mutants.yaml:1: an equivalent mutant needs why:"),
    ("- lab: 7\n  change: x\n  why: y\n",
     "lessons/01-hello/mutants.yaml:1: lab: 7 is not a lab of 01 (1 to 2)"),
    ("- lab: 1\n  change: x\n  why: y\n  because: z\n",
     "lessons/01-hello/mutants.yaml:1: unknown key 'because' (lab, in, change, why)"),
    ("lab: 1\n", "lessons/01-hello/mutants.yaml:1: mutants.yaml is a list of equivalent mutants"),
])
def test_a_bad_mutants_yaml_is_named_by_line(tmp_path, text, message):
    project, page, _ = _book(tmp_path, STRICT, text)
    with pytest.raises(BuildError) as caught:
        mutants.load_equivalents(project, page)
    assert str(caught.value) == message


def test_the_command_names_a_page_that_does_not_exist():
    done = subprocess.run([sys.executable, "build.py", "mutants", "--lesson", "42"], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr == "lessons/course.yaml: there is no page 42 in the course\n"
    assert "Traceback" not in done.stderr


def test_the_build_stops_at_a_malformed_mutants_yaml(tmp_path):
    root = tmp_path / "book"
    shutil.copytree(FIXTURE, root)
    (root / "lessons" / "01-hello" / "mutants.yaml").write_text("- lab: 1\n  change: x\n",
                                                              encoding="utf-8")
    done = subprocess.run([sys.executable, str(REPO / "build.py"), "--root", str(root),
                           "--no-assets", "--out", str(tmp_path / "out")],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr == "lessons/01-hello/mutants.yaml:1: an equivalent mutant needs why:\n"
    assert "Traceback" not in done.stderr
