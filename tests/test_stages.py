"""The stages of the course's harness, cut from harness_py/course/harness.py.

Every point is checked the way a reader meets it: the solution of a lab passes that lab's tests
and those of every lab on its line (the labs it was built on), and the starting file of a lab fails
its own tests (otherwise the lab asks for nothing). Side quest S2's labs are a side branch off 11.2:
their code is never part of a main point. Lesson 11's two starting files are compared with the seed lesson, and the
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


def _labs_up_to(point: str) -> list[tuple[str, int | None]]:
    """(page, lab) pairs a solution of `point` must pass: every lab of the earlier pages on its
    line (lab None: all of them) and its own page's labs up to this one. A main point's line holds
    no side quest's labs, so 12.1 need not pass S2's tests; S2.2's line holds 1.1 to 11.2."""
    page, k = stages.page_of(point), stages.lab_of(point)
    earlier = []
    for p in STAGES.line(point):
        if stages.page_of(p) != page and stages.page_of(p) not in earlier:
            earlier.append(stages.page_of(p))
    return [(n, None) for n in earlier] + [(page, j) for j in range(1, k + 1)]


def _run(tmp_path: Path, source: str, lesson: str, lab: int | None) -> list[dict]:
    harness_file = tmp_path / "harness.py"
    harness_file.write_text(source, encoding="utf-8")
    tests = PROJECT.tests_file(COURSE.page(lesson.zfill(2) if lesson.isdigit() else lesson))
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
    lesson, k = stages.page_of(point), stages.lab_of(point)
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


MAIN = [point for point in POINTS if point[0].isdigit()]
SIDE = [point for point in POINTS if not point[0].isdigit()]


def test_points_follow_the_course():
    assert MAIN[0] == "1.1" and MAIN == sorted(MAIN, key=stages.point_key)
    at = MAIN.index("11.1")
    assert MAIN[at:at + 4] == ["11.1", "11.2", "12.1", "12.2"]
    assert STAGES.previous("1.1") is None and STAGES.previous("11.2") == "11.1"
    assert STAGES.previous("12.1") == "11.2"   # lesson 12 carries on from lesson 11's harness
    assert STAGES.reference(11) == STAGES.solution("11.2")
    for before, point in zip(MAIN, MAIN[1:]):       # the main chain skips every side branch
        assert STAGES.previous(point) == before, point
    assert STAGES.line("11.2") == MAIN[:MAIN.index("11.2") + 1]


# ------------------------------------------------------------------ side quest S2, a side branch

def test_s2_is_a_side_branch_off_11_2():
    assert SIDE == ["S2.1", "S2.2"]
    assert STAGES.previous("S2.1") == "11.2" and STAGES.previous("S2.2") == "S2.1"
    assert STAGES.line("S2.2") == MAIN[:MAIN.index("11.2") + 1] + ["S2.1", "S2.2"]
    assert not [p for p in POINTS if STAGES.previous(p) in SIDE and p not in SIDE], \
        "a main point follows a side quest's lab: lesson 12 must not need S2"
    assert STAGES.reference("S2") == STAGES.solution("S2.2")
    assert COURSE.parents == dict(zip(POINTS, [STAGES.previous(p) for p in POINTS]))


def test_s2_starts_from_11_2_and_never_reaches_the_main_chain():
    first, final = STAGES.starting("S2.1"), STAGES.solution("S2.2")
    eleven = STAGES.solution("11.2")
    assert "# given in side quest S2\n# -- the session tree (side quest S2) --" in first
    assert "# Spec only. The tests import one name: SessionTree." in first
    assert "class SessionTree" not in first and "class SessionTree(SessionLog):" in final
    # S2.1's starting file is 11.2's solution with S2's region added, nothing else changed
    diff = STAGES.diff("S2.1")
    assert diff[0] == "--- harness.py (lesson 11 lab 2)" and diff[1] == "+++ harness.py (lab S2.1)"
    assert all(not line.startswith("-") for line in diff[2:])
    assert STAGES.solution("S2.1").count("\n") > eleven.count("\n")
    second = STAGES.starting("S2.2")
    assert "    # --- your code ---\n    # Spec only. Two methods" in second
    assert "def branch" not in second and "def branch" in final
    for point in MAIN:
        assert "SessionTree" not in STAGES.solution(point), point
        assert "SessionTree" not in STAGES.starting(point), point


def test_the_course_page_of_s2_owns_its_points():
    page = COURSE.page("S2")
    assert page.kind == "side-quest" and page.points == ["S2.1", "S2.2"]
    assert COURSE.base(COURSE.page("12")) == "11.2", "lesson 12's cells start from 11.2, not S2"


def test_the_closing_page_is_on_the_main_chain():
    """The closing page's labs follow the last lesson lab before it (never a side quest's), and
    the builder and stages.course_parents agree on that."""
    page = COURSE.page("16")
    assert page.kind == "closing" and page.points == ["16.1", "16.2", "16.3", "16.4"]
    parent = COURSE.parents["16.1"]
    assert parent is not None and not parent.startswith("S")
    assert stages.course_parents()["16.1"] == parent
    assert page.label == "Take it home" and page.path == "closing.html"
    assert COURSE.capabilities(page)[-1] == page.capability


def test_the_closing_page_is_named_by_its_kind_not_its_number():
    """Nobody calls the closing page "lesson 16": its starting files and diffs say "the closing
    page", whether the stages come from course.yaml or from the builder's course model."""
    for cut in (STAGES, stages.load(parents=COURSE.parents, names=COURSE.page_names)):
        assert "# given in the closing page\n" in cut.starting("16.1")
        assert "lesson 16" not in cut.starting("16.1") + "\n".join(cut.diff("16.2"))
        assert cut.diff("16.2")[0] == "--- harness.py (the closing page lab 1)"
    assert "# given in lesson 15" in STAGES.starting("15.1")


def test_a_page_download_folder_joins_its_lab_folder():
    """lessons/<folder>/download/ (the closing page's agent.py) is copied into the page's lab
    folder and its zip, next to harness.py and tests.py."""
    from builder.labs import Labs
    made = Labs(PROJECT, COURSE).downloads(COURSE.page("16"))
    assert "downloads/lesson-16/agent.py" in made
    assert "downloads/lesson-16/harness.py" in made
    assert not any(name.startswith("downloads/lesson-12/agent") for name in
                   Labs(PROJECT, COURSE).downloads(COURSE.page("12")))


def test_only_the_last_lab_of_a_page_with_a_download_folder_takes_it_home():
    """The closing page's last lab names the files its "Take my harness home" zip adds to the
    reader's harness (agent.py); its other labs, and other pages' labs, name none."""
    from builder.labs import Labs
    labs = Labs(PROJECT, COURSE)
    views = labs.views(COURSE.page("16"), "lessons/16-take-it-home/page.md")
    assert views[len(views)].take_home == ["downloads/lesson-16/agent.py"]
    assert all(view.take_home == [] for number, view in views.items() if number < len(views))
    assert all(view.take_home == [] for view in
               labs.views(COURSE.page("12"), "lessons/12-context-wall/page.md").values())


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
    assert diff[2] == "@@ -411,2 +411,32 @@"   # the seed had 398: lesson 06 budgets "Files here" (as sent; the count alone when no name fits); lesson 07: finish() refuses a tool request
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
    ("#@ blok 1.1\nx = 1\n#@ end\n",
     ":1: unknown marker '#@ blok 1.1'; the markers are '#@ block', '#@ spec', '#@ code' and '#@ end'"),
    ("x = 1\n#@ block 1.1\ny = 2\n",
     ":2: this block is never closed: add '#@ end'"),
    ("#@ block 12.1\nx = 1\n#@ end\n",
     ":1: point 12.1 is not a lab in lessons/course.yaml (the points are 1.1, 2.1, 11.1, 11.2)"),
    ("#@ block 1.1..12.1\nx = 1\n#@ end\n",
     ":1: point 12.1 is not a lab in lessons/course.yaml (the points are 1.1, 2.1, 11.1, 11.2)"),
    ("#@ block 11.1..2.1\nx = 1\n#@ end\n",
     ":1: the range 11.1..2.1 is empty: it must end after it starts, on a line of labs that goes through both"),
    ("#@ block 1.1..11.1\nx = 1\n#@ end\n#@ block 2.1\nx = 2\n#@ end\n",
     ":4: overlapping ranges of the same block: 2.1.. here and 1.1..11.1 at line 1 (versions of one thing follow each other with no line between them)"),
    ("#@ block 2.1 gap\n#@ code\nx = 1\n#@ end\n",
     ":2: '#@ code' comes after the gap's '#@ spec' and its lines"),
    ("#@ block 2.1 gap\n#@ spec\n#@ code\nx = 1\n#@ end\n",
     ":1: a gap with no spec: write the comment lines that say what the reader writes between '#@ spec' and '#@ code'"),
    ("#@ block 2.1 gap\nx = 1\n#@ end\n",
     ":2: a gap block starts with '#@ spec'"),
    ("#@ block 2.1\n#@ spec\n#@ end\n",
     ":2: '#@ spec' belongs inside a gap block ('#@ block P gap')"),
    ("#@ block 2.1 gap\n#@ spec\nnot a comment\n",
     ":3: a spec line must be a comment; end the spec with '#@ code'"),
    ("#@ block 1.1\n#@ block 2.1\n",
     ":2: a block cannot open inside the block opened at line 1; blocks do not nest"),
    ("x = 1\n#@ end\n",
     ":2: '#@ end' with no open block"),
    ("#@ block 1.1\n#@ end\n",
     ":1: an empty block: it holds no code"),
    ("#@ block 1.1 given why\nx = 1\n#@ end\n",
     ":1: text after 'given' must start with ':', as in 'given: the docstring'"),
    ("def f():\n    #@ end\n",
     ":2: a marker must start at the beginning of its line"),
])
def test_marker_errors_name_the_line(source, message):
    assert _error(source) == "harness_py/course/harness.py" + message


BRANCHED = {"1.1": None, "2.1": "1.1", "S2.1": "2.1", "S2.2": "S2.1", "3.1": "2.1"}


def _branched(text: str):
    return stages.parse(text, list(BRANCHED), "harness_py/course/harness.py", BRANCHED)


def test_a_side_branch_cuts_its_own_stages():
    source = ("x = 1\n"
              "#@ block 1.1..S2.1\n"
              "def f():\n    return 1\n"
              "#@ end\n"
              "#@ block S2.1 gap\n#@ spec\n# Rewrite f for the tree.\n#@ code\n"
              "def f():\n    return 2\n"
              "#@ end\n"
              "#@ block S2.2 given: why\n"
              "g = 3\n"
              "#@ end\n"
              "#@ block 3.1\n"
              "h = 4\n"
              "#@ end\n")
    s = _branched(source)
    assert s.previous("S2.1") == "2.1" and s.previous("3.1") == "2.1"
    assert s.line("3.1") == ["1.1", "2.1", "3.1"]
    assert s.solution("3.1") == "x = 1\ndef f():\n    return 1\nh = 4\n"
    assert s.starting("S2.1") == ("x = 1\n# --- your code ---\n# Rewrite f for the tree.\n"
                                  "def f():\n    return 1\n# --- end ---\n")
    assert s.starting("S2.2") == "x = 1\ndef f():\n    return 2\n# given in side quest S2: why\ng = 3\n"
    assert s.solution("S2.2") == "x = 1\ndef f():\n    return 2\ng = 3\n"
    assert s.starting("3.1") == "x = 1\ndef f():\n    return 1\nh = 4\n"
    assert s.diff("S2.1")[:2] == ["--- harness.py (lesson 2 lab 1)", "+++ harness.py (lab S2.1)"]
    assert s.reference("S2") == s.solution("S2.2") and s.reference(3) == s.solution("3.1")


@pytest.mark.parametrize("source,message", [
    ("#@ block 3.1..S2.1\nx = 1\n#@ end\n",
     ":1: the range 3.1..S2.1 is empty: it must end after it starts, on a line of labs that goes through both"),
    ("#@ block S2.2..3.1\nx = 1\n#@ end\n",
     ":1: the range S2.2..3.1 is empty: it must end after it starts, on a line of labs that goes through both"),
    ("#@ block 1.1..S2.1\nx = 1\n#@ end\n#@ block 2.1\nx = 2\n#@ end\n",
     ":4: overlapping ranges of the same block: 2.1.. here and 1.1..S2.1 at line 1 (versions of one thing follow each other with no line between them)"),
    ("#@ block S3.1\nx = 1\n#@ end\n",
     ":1: point S3.1 is not a lab in lessons/course.yaml (the points are 1.1, 2.1, S2.1, S2.2, 3.1)"),
])
def test_branch_marker_errors_name_the_line(source, message):
    with pytest.raises(stages.MarkerError) as caught:
        _branched(source)
    assert str(caught.value) == "harness_py/course/harness.py" + message


def test_blocks_without_a_range_side_by_side_are_separate_things():
    s = _parse("#@ block 1.1\na = 1\n#@ end\n#@ block 2.1\nb = 2\n#@ end\n")
    assert s.solution("11.2") == "a = 1\nb = 2\n"


def test_load_reads_the_points_from_course_yaml():
    pytest.importorskip("yaml")
    assert stages.load().points == stages.course_points() == COURSE.points
    assert stages.load().parents == stages.course_parents() == COURSE.parents
    assert stages.load(points=POINTS).points == POINTS


# ------------------------------------------------------- the author's tools: chain and blocks

CHAINED = ("import json\n"
           "#@ block 1.1..2.1 gap\n#@ spec\n# say hello\n#@ code\ndef greet(name):\n    return 'hi'\n#@ end\n"
           "#@ block 2.1..11.2 gap\n#@ spec\n# greet by name\n#@ code\ndef greet(name):\n    return name\n#@ end\n"
           "#@ block 11.2\ndef greet(name):\n    return f'hi {name}'\n#@ end\n"
           "#@ block 11.2 given\nclass Log:\n    pass\n#@ end\n")
P = "harness_py/course/harness.py"


def test_chain_prints_every_version_with_its_range_and_the_diffs_between_neighbours():
    s = _parse(CHAINED)
    assert s.chain_report("greet") == [
        "greet: 3 versions",
        f"  {P}:2-8  1.1..2.1     gap   2 lines",
        f"  {P}:9-15  2.1..11.2    gap   2 lines",
        f"  {P}:16-19  11.2..       plain 2 lines",
        f"--- {P}:2 (1.1..2.1)", f"+++ {P}:9 (2.1..11.2)", "@@ -1,2 +1,2 @@",
        " def greet(name):", "-    return 'hi'", "+    return name",
        f"--- {P}:9 (2.1..11.2)", f"+++ {P}:16 (11.2..)", "@@ -1,2 +1,2 @@",
        " def greet(name):", "-    return name", "+    return f'hi {name}'"]
    assert s.chain_report("12") == s.chain_report("greet"), "a line inside a version finds its chain"
    assert s.chain_report("Log") == ["Log: 1 version", f"  {P}:20-23  11.2..       given 2 lines"]


def test_blocks_lists_what_a_point_adds_and_what_it_replaces():
    s = _parse(CHAINED)
    assert s.point_report("11.2") == [
        "11.2: 2 blocks begin here, 1 end here",
        f"  {P}:16-19  11.2..       plain greet  (replaces 2.1..11.2 at :9)",
        f"  {P}:20-23  11.2..       given Log  (new)"]
    assert s.point_report("11.1") == ["11.1: 0 blocks begin here, 0 end here"]


def test_chain_and_blocks_on_the_command_line(capsys):
    assert stages.main(["chain", "nothing_here"]) == 2
    assert capsys.readouterr() == ("", "stages.py: no block of harness_py/course/harness.py defines nothing_here\n")
    assert stages.main(["blocks", "99.1"]) == 2
    assert capsys.readouterr().err == f"stages.py: 99.1 is not a stage point; the points are {', '.join(POINTS)}\n"
    assert stages.main(["chain", "run_agent"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "chat -> run_agent: 9 versions"
    assert stages.main(["blocks", "15.1"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "15.1: 8 blocks begin here, 6 end here"


def test_no_version_of_a_chain_is_a_copy_of_the_one_before():
    for group in {block.group for block in STAGES.blocks()}:
        versions = [block for block in STAGES.blocks() if block.group == group]
        for old, new in zip(versions, versions[1:]):
            assert old.code != new.code, f"{P}:{new.line}: the same code as the version at line {old.line}"
