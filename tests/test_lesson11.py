"""Lesson 11 ("Memory that outlives the process") against the seed lesson its author wrote.

Its code cells, their outputs and how they are marked are the seed's interface, to reproduce
exactly; its checks ask the seed's questions with the seed's right answer in the seed's place;
its sentences are the book's own (tests/test_overlap.py). The seed's cells are kept in
tests/fixtures/seed/ so nothing here depends on a file outside the repository. That every cell
prints its declared output is the build's own check (tests/test_pages.py builds the book)."""
from __future__ import annotations

import json
from pathlib import Path

from builder import course as course_stage, source as source_stage
from builder.project import Project

ROOT = Path(__file__).resolve().parents[1]
PROJECT = Project.book()
COURSE = course_stage.load(PROJECT)
ELEVEN = source_stage.parse(PROJECT, COURSE, COURSE.page("11"))
WHERE = ELEVEN.rel
SEED_CELLS = json.loads((ROOT / "tests" / "fixtures" / "seed" / "lesson11-cells.json")
                        .read_text(encoding="utf-8"))
SEED_MARKS = {3: "editable", 6: "lab"}       # seed cell index -> how the lesson must mark it
# The right option of each of the seed's six checks on this page. The seed had 2, 2, 2, 3, 2, 2;
# review-00-03-A-11 asked for them rebalanced, so a reader cannot guess "option 2".
SEED_RIGHT = [0, 1, 2, 2, 1, 2]
NEW_RIGHT = 0    # the one check the seed lacks (asked before the crash exploration): right first


def test_every_seed_cell_is_in_the_lesson_verbatim_in_order_with_its_output():
    cells = ELEVEN.cells
    sources = [cell.source for cell in cells]
    at = -1
    for index, seed in enumerate(SEED_CELLS):
        code = seed["code"]
        assert code in sources[at + 1:], (
            f"seed cell {index + 1} (starting {code.splitlines()[0]!r}) is not in the lesson "
            f"verbatim, after the cell at {WHERE}:{cells[at].line if at >= 0 else 0}")
        at = sources.index(code, at + 1)
        cell = cells[at]
        assert cell.expected == seed["output"], (
            f"{WHERE}:{cell.line}: seed cell {index + 1} declares another output")
        mark = SEED_MARKS.get(index)
        assert cell.editable == (mark == "editable"), f"{WHERE}:{cell.line}: editable or not"
        assert (cell.lab == 2) == (mark == "lab"), f"{WHERE}:{cell.line}: lab=2 or not"


def test_the_one_cell_the_seed_lacks_explores_crashes():
    seed = {cell["code"] for cell in SEED_CELLS}
    new = [cell for cell in ELEVEN.cells if cell.source not in seed]
    assert len(new) == 1, f"expected one cell the seed does not have, found {len(new)}"
    assert "lab.explore_crashes(" in new[0].source, (
        f"{WHERE}:{new[0].line}: the new cell does not call lab.explore_crashes")


def _the_new_check():
    """The check the seed lacks: the last one above the cell that explores crashes, which answers it."""
    explore = next(cell for cell in ELEVEN.cells if "lab.explore_crashes(" in cell.source)
    before = [check for check in ELEVEN.model.checks if check.line < explore.line]
    assert before, f"{WHERE}:{explore.line}: no check above the crash exploration"
    return before[-1]


def test_the_checks_are_the_seeds_with_the_right_answer_in_its_place():
    new = _the_new_check()
    checks = [check for check in ELEVEN.model.checks if check is not new]
    assert len(checks) == len(SEED_RIGHT), f"{WHERE} has {len(checks)} seed checks, the seed 6"
    assert [o.right for o in new.options] == [i == NEW_RIGHT for i in range(len(new.options))], (
        f"{WHERE}:{new.line}: the new check's right option moved")
    for check, right in zip(checks, SEED_RIGHT):
        assert len(check.options) == 3, f"{WHERE}:{check.line}: the seed's three options"
        assert [o.right for o in check.options] == [i == right for i in range(3)], (
            f"{WHERE}:{check.line}: the right option is the seed's option {right + 1}")
        assert check.explain, f"{WHERE}:{check.line}: no explain"


def test_three_prompts_and_two_labs_with_three_hints():
    assert len(ELEVEN.model.prompts) == 3
    for lab in ELEVEN.model.labs:
        assert len(lab.hints) == 3, f"{WHERE}:{lab.line}: three hints"


def test_our_side_of_the_comparison_is_the_course_harness():
    """Every line of "Yours" in the Tau comparison is a line of the course harness, except the
    one that stands for lesson 9's code."""
    assert len(ELEVEN.model.side_by_side) == 1, "one side-by-side"
    ours = ELEVEN.model.side_by_side[0][0]
    source = {line.strip() for line in PROJECT.harness_source.read_text(encoding="utf-8").splitlines()}
    for line in ours.splitlines():
        if line.strip() and not line.endswith("# as in lesson 9"):
            assert line.strip() in source or any(s.startswith(line.strip() + "  #") for s in source), (
                f"'Yours' shows {line.strip()!r}, which is not in the course harness")


def test_lesson_11_sits_between_checkpoint_b_and_lesson_12_with_s2_off_the_path():
    ids = lambda pair: tuple(p.id if p else None for p in pair)  # noqa: E731
    assert ids(COURSE.neighbours(COURSE.page("11"))) == ("B", "12")
    assert ids(COURSE.neighbours(COURSE.page("12")))[0] == "11"
    assert ids(COURSE.neighbours(COURSE.page("S2"))) == ("11", "12")
