"""The stages of the course's harness, cut from harness_py/course/harness.py.

Every point is checked the way a reader meets it: the solution of a lab passes that lab's tests
and every earlier lab's, and the starting file of a lab fails its own tests (otherwise the lab
asks for nothing). Lesson 11's two starting files are compared with the seed lesson, and the
marker parser is checked for each mistake it must name.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import stages
from builder import course as course_stage
from builder.project import Project
from lab import lab_check

ROOT = Path(__file__).resolve().parent.parent
PROJECT = Project.book()
COURSE = course_stage.load(PROJECT)
STAGES = stages.load()
POINTS = STAGES.points


def _labs_up_to(point: str) -> list[tuple[int, int | None]]:
    """(lesson, lab) pairs a solution of `point` must pass: every lab of earlier lessons (lab
    None: all of them) and this lesson's labs up to this one."""
    lesson, k = stages.point_key(point)
    earlier = sorted({stages.lesson_of(p) for p in POINTS if stages.lesson_of(p) < lesson})
    return [(n, None) for n in earlier] + [(lesson, j) for j in range(1, k + 1)]


def _run(tmp_path: Path, source: str, lesson: int, lab: int | None) -> list[dict]:
    harness_file = tmp_path / "harness.py"
    harness_file.write_text(source, encoding="utf-8")
    tests = PROJECT.tests_file(COURSE.page(f"{lesson:02d}"))
    if not tests.exists():
        pytest.fail(f"{tests.relative_to(ROOT)} is missing")
    return lab_check.run(harness_file, tests, lab=lab, timeout=60)


def _failures(results: list[dict]) -> str:
    return "\n".join(f"{r['status'].upper()}  {r['sentence']}\n      {r['message']}"
                     for r in results if r["status"] != "pass")


@pytest.mark.parametrize("point", POINTS)
def test_solution_passes_its_lab_and_every_earlier_one(tmp_path, point):
    solution = STAGES.solution(point)
    for lesson, lab in _labs_up_to(point):
        results = _run(tmp_path, solution, lesson, lab)
        assert results, f"lesson {lesson} lab {lab} has no tests"
        failed = _failures(results)
        assert not failed, (f"the solution of {point} fails lesson {lesson}"
                            f"{'' if lab is None else f' lab {lab}'}:\n{failed}")


@pytest.mark.parametrize("point", POINTS)
def test_starting_file_fails_its_own_lab(tmp_path, point):
    lesson, k = stages.point_key(point)
    results = _run(tmp_path, STAGES.starting(point), lesson, k)
    assert results, f"lesson {lesson} has no tests for lab {k}"
    assert any(r["status"] != "pass" for r in results), (
        f"the starting file of {point} already passes every test of its lab: the lab asks for "
        "nothing")


@pytest.mark.parametrize("point", POINTS)
def test_every_stage_compiles_within_100_columns(point):
    for what in ("solution", "starting"):
        text = getattr(STAGES, what)(point)
        compile(text, f"{what} {point}", "exec")
        long = [n for n, line in enumerate(text.splitlines(), 1) if len(line) > 100]
        assert not long, f"the {what} of {point} has lines over 100 columns: {long}"


def test_points_follow_the_course():
    at = POINTS.index("11.1")
    assert POINTS[0] == "1.1" and POINTS[at:at + 4] == ["11.1", "11.2", "12.1", "12.2"]
    assert POINTS == sorted(POINTS, key=stages.point_key)
    assert STAGES.previous("1.1") is None and STAGES.previous("11.2") == "11.1"
    assert STAGES.previous("12.1") == "11.2"   # lesson 12 carries on from lesson 11's harness
    assert STAGES.reference(11) == STAGES.solution("11.2")


# ----------------------------------------------------------------------- lesson 11, as the seed

# The seed's two starting files, whitespace collapsed, as the seed prints them (its lines 497 and
# 554), kept in the repository so the comparison never depends on a file outside it.
SEED_STARTING = ROOT / "tests" / "fixtures" / "seed"
REGIONS = [
    "# == 1 messages ==\n# A conversation is a list of messages. Each message is a dict tagged "
    "with the role that spoke.\n",
    "# == 2 tools ==\n# A tool is a dict. \"name\", \"description\" and \"parameters\" are "
    "advertised to the model.\n",
    "# == 3 loop ==\n# The code that talks to the model. The model keeps nothing between calls.\n",
    "# == 4 harness ==\n# One transcript, one writer. The loop keeps the mechanics and stays "
    "stateless; this holds the list.\n",
    "# == 5 frontends ==\n# A frontend is a fold over the events of one run: render(event) for "
    "each event, then finish(),\n",
    "# == 6 environment ==\n# What a session needs around the harness, starting with a disk. "
    "Regions 3 and 4 know none of it.\n",
]
NAMES = ["SYSTEM", "user_message", "text_of", "tool_calls", "error_message", "str_arg", "int_arg",
         "tool_specs", "run_tool", "MAX_LINES", "MAX_BYTES", "truncate_head", "truncate_tail",
         "make_read_tool", "make_write_tool", "make_bash_tool", "run_agent", "context_for_model",
         "INTERRUPTED", "repair_tool_history", "Harness", "JsonRenderer", "FinalTextRenderer"]


@pytest.mark.parametrize("point", ["11.1", "11.2"])
def test_lesson_11_starting_files_are_the_seeds(point):
    starting = STAGES.starting(point)
    for region in REGIONS:
        assert region in starting, f"the starting file of {point} lacks {region.splitlines()[0]}"
    for name in NAMES:
        assert re.search(rf"^(def|class) {name}\b|^{name} = ", starting, re.M), name
    gaps = starting.count("# --- your code ---")
    assert gaps == starting.count("# --- end ---") == (1 if point == "11.1" else 2)
    seed = (SEED_STARTING / f"starting-{point}.txt").read_text(encoding="utf-8").strip()
    assert " ".join(starting.split()) == seed, f"the starting file of {point} differs from the seed's"


def test_lesson_11_marks_and_gaps():
    first, second = STAGES.starting("11.1"), STAGES.starting("11.2")
    assert "# given in lesson 11\n# == 6 environment ==" in first
    assert "# Spec only. The tests import one name: SessionLog." in first
    assert "class SessionLog" not in first and "class SessionLog" in second
    assert "# given in lesson 11: the docstring's words on subscribe\nclass Harness:" in second
    assert "    # --- your code ---\n    # Below is lesson 9's Harness." in second
    assert "# Spec only. The tests import one name: persist_to." in second
    assert "def subscribe" not in second and "self._notify" not in second
    final = STAGES.solution("11.2")
    assert "        self._listeners = []\n" in final
    assert "                self._notify(event)" in final and "def persist_to(log):" in final


def test_diff_of_11_1_adds_region_6():
    diff = STAGES.diff("11.1")
    assert diff[2] == "@@ -398,2 +398,32 @@"
    assert diff[3:9] == ["         print(text_of(self.last))", "         return True", "+", "+",
                         "+# given in lesson 11", "+# == 6 environment =="]
    assert diff[-1] == "+# --- end ---" and all(line.startswith("+") for line in diff[5:])


def test_diff_of_the_first_lab_is_from_nothing():
    diff = STAGES.diff("1.1")
    assert diff[2].startswith("@@ -0,0 +1,")
    assert all(line.startswith("+") for line in diff[3:])


# ------------------------------------------------------------------------------- marker errors

POINTS_11 = ["1.1", "2.1", "11.1", "11.2"]


def _parse(text: str):
    return stages.parse(text, POINTS_11, "harness_py/course/harness.py")


def _error(text: str) -> str:
    with pytest.raises(stages.MarkerError) as caught:
        _parse(text)
    return str(caught.value)


def test_a_small_source_cuts_into_its_stages():
    source = ("x = 1\n"
              "#@ block 1.1..11.1\n"
              "def f():\n    return 1\n"
              "#@ end\n"
              "#@ block 11.1 gap\n#@ spec\n# Rewrite f to return 2.\n#@ code\n"
              "def f():\n    return 2\n"
              "#@ end\n"
              "#@ block 11.2 given: why\n"
              "g = 3\n"
              "#@ end\n")
    s = _parse(source)
    assert s.solution("2.1") == "x = 1\ndef f():\n    return 1\n"
    assert s.starting("11.1") == ("x = 1\n# --- your code ---\n# Rewrite f to return 2.\n"
                                  "def f():\n    return 1\n# --- end ---\n")
    assert s.solution("11.1") == "x = 1\ndef f():\n    return 2\n"
    assert s.starting("11.2") == "x = 1\ndef f():\n    return 2\n# given in lesson 11: why\ng = 3\n"
    assert s.diff("11.2")[-2:] == ["+# given in lesson 11: why", "+g = 3"]


@pytest.mark.parametrize("source,message", [
    ("#@ blok 1.1\nx = 1\n#@ end\n", ":1: unknown marker '#@ blok 1.1'"),
    ("x = 1\n#@ block 1.1\ny = 2\n", ":2: this block is never closed"),
    ("#@ block 12.1\nx = 1\n#@ end\n", ":1: point 12.1 is not a lab in lessons/course.yaml"),
    ("#@ block 1.1..12.1\nx = 1\n#@ end\n", ":1: point 12.1 is not a lab"),
    ("#@ block 11.1..2.1\nx = 1\n#@ end\n", ":1: the range 11.1..2.1 is empty"),
    ("#@ block 1.1..11.1\nx = 1\n#@ end\n#@ block 2.1\nx = 2\n#@ end\n",
     ":4: overlapping ranges of the same block: 2.1.. here and 1.1..11.1 at line 1"),
    ("#@ block 2.1 gap\n#@ code\nx = 1\n#@ end\n", ":2: '#@ code' comes after the gap's"),
    ("#@ block 2.1 gap\n#@ spec\n#@ code\nx = 1\n#@ end\n", ":1: a gap with no spec"),
    ("#@ block 2.1 gap\nx = 1\n#@ end\n", ":2: a gap block starts with '#@ spec'"),
    ("#@ block 2.1\n#@ spec\n#@ end\n", ":2: '#@ spec' belongs inside a gap block"),
    ("#@ block 2.1 gap\n#@ spec\nnot a comment\n", ":3: a spec line must be a comment"),
    ("#@ block 1.1\n#@ block 2.1\n", ":2: a block cannot open inside the block opened at line 1"),
    ("x = 1\n#@ end\n", ":2: '#@ end' with no open block"),
    ("#@ block 1.1\n#@ end\n", ":1: an empty block"),
    ("#@ block 1.1 given why\nx = 1\n#@ end\n", ":1: text after 'given' must start with ':'"),
    ("def f():\n    #@ end\n", ":2: a marker must start at the beginning of its line"),
])
def test_marker_errors_name_the_line(source, message):
    error = _error(source)
    assert error.startswith("harness_py/course/harness.py:"), error
    assert message in error, error


def test_blocks_without_a_range_side_by_side_are_separate_things():
    s = _parse("#@ block 1.1\na = 1\n#@ end\n#@ block 2.1\nb = 2\n#@ end\n")
    assert s.solution("11.2") == "a = 1\nb = 2\n"


def test_load_reads_the_points_from_course_yaml():
    pytest.importorskip("yaml")
    assert stages.load().points == stages.course_points()
    assert stages.load(points=POINTS).points == POINTS
