"""Wrong designs must fail their labs, plainly.

A lab test that passes a broken harness teaches nothing. Every lesson folder's wrong.yaml lists
changes a reader might plausibly make, each one the lesson argues against; each must FAIL the
tests it names, with a message a reader can act on: never pass, never end in an error or a
time-out (builder/wrong.py says what counts). The runner is the reader's own, lab_check."""
from __future__ import annotations

import pytest

from builder import course as course_stage, wrong
from builder.labs import Labs
from builder.project import Project
from lab import lab_check

PROJECT = Project.book()
COURSE = course_stage.load(PROJECT)
LABS = Labs(PROJECT, COURSE)
LESSONS = [page for page in COURSE.pages if page.labs]


def _designs(page):
    ids = {test_id for test_id, _, _ in lab_check.sentences(PROJECT.tests_file(page))}
    return wrong.load(PROJECT, page, ids)


DESIGNS = [(page, design) for page in LESSONS for design in _designs(page)]


@pytest.mark.parametrize("page", LESSONS, ids=[p.id for p in LESSONS])
def test_every_lab_has_a_wrong_design(page):
    labs = {design.lab for design in _designs(page)}
    missing = [k for k in range(1, len(page.labs) + 1) if k not in labs]
    assert not missing, (f"lessons/{page.folder}/wrong.yaml has no wrong design for lab "
                         f"{page.point(missing[0])}")


@pytest.mark.parametrize("page", LESSONS, ids=[p.id for p in LESSONS])
def test_every_replacement_is_found_once(page):
    wrong.check_applies(PROJECT, page, _designs(page), LABS.stages.solution)


@pytest.mark.parametrize("page,design", DESIGNS,
                         ids=[f"{d.point}-{d.name.replace(' ', '_')}" for _, d in DESIGNS])
def test_wrong_design_fails_plainly(tmp_path, page, design):
    verdict, = wrong.judge(PROJECT, page, [design], LABS.stages.solution, tmp_path)
    assert not verdict.problems, (
        f"lessons/{page.folder}/wrong.yaml:{design.line}: {design.name!r} is not caught plainly:\n"
        + "\n".join(verdict.problems))


# Right designs a reader may write, each a correct harness in another shape: every test of the lab
# must pass it. A test that inspects the reader's code (lab 1.1 reads chat's code for the names it
# uses) must not trip over a comprehension, a generator expression, a lambda or a nested def, whose
# code Python keeps as constants of chat's own (a list comprehension too, on CPython 3.10 and 3.11).
RIGHT = [
    ("1.1", "chat with a comprehension, a generator expression, a lambda and a nested def", """
def chat(model, messages, text):
    \"\"\"The same exchange, written with nested code.\"\"\"
    add = lambda message: messages.append(message)
    def ask():
        return model.complete(SYSTEM, messages, [])
    add(user_message(text))
    assert all(isinstance(m, dict) for m in messages) and [m for m in messages if m]
    reply = ask()
    add(reply)
    return reply
"""),
]


@pytest.mark.parametrize("point,name,code", RIGHT, ids=[f"{p}-{n.split(' ')[1]}" for p, n, _ in RIGHT])
def test_a_right_design_in_another_shape_passes_every_test(tmp_path, point, name, code):
    page = next(page for page in LESSONS if any(page.point(k) == point for k in range(1, len(page.labs) + 1)))
    lab = next(k for k in range(1, len(page.labs) + 1) if page.point(k) == point)
    design = wrong.WrongDesign(name=name, lab=lab, why="", fails=(), line=0, append=code, point=point)
    verdict, = wrong.judge(PROJECT, page, [design], LABS.stages.solution, tmp_path)
    failed = [f"{r['id']}: {r['status']}: {r['message'][:300]}" for r in verdict.results
              if r["status"] != "pass"]
    assert not failed, f"lab {point}'s tests fail a right design ({name}):\n" + "\n".join(failed)
