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
