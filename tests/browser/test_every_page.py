"""Every written page of the book, read and done the way a reader does it, in Chromium.

With JavaScript: every check answered (a wrong option first, then the right one), every hint
revealed, every prompt answered before its model answer opens (a cell that answers a check shows
its output only once the check is answered), and a full-page screenshot kept in
test-artifacts/page-<id>.png. Cells are run through the page where the page treats them in a way
of their own: each page's first cell, its first cell that answers a check, and every editable,
raising, lab-tied or longer-timed cell, each output compared with what the build recorded. What
every cell prints under Pyodide, on both boots, is tests/test_pyodide_parity.py's (one Node
process, the page's own py/ files and snapshot). Without
JavaScript: every check shows its options with their explanations, every cell its code and its
recorded output, every figure its picture. The counts come from the page model the build read,
so the page is checked against its source. (Labs: test_labs.py and test_pyodide_parity.py.)"""
from __future__ import annotations

import json

import pytest

from builder import course as course_stage, directives, source as source_stage
from builder.project import Project
from conftest import screenshot
from fixture_site import recorded, run_cell, wait_ready

PROJECT = Project.book()
COURSE = course_stage.load(PROJECT)
PAGES = COURSE.written


def parts(page):
    parsed = source_stage.parse(PROJECT, COURSE, page)
    model = parsed.model
    return {"checks": len(model.checks), "prompts": len(model.prompts), "cells": len(parsed.cells),
            "figures": len(model.figures), "answers": sum(1 for c in parsed.cells if c.answers),
            "hints": sum(len(p.hints) for p in model.prompts) + sum(len(l.hints) for l in model.labs)
            + sum(len(directives.kids(t, "hint")) for t in parsed.tokens   # an exercise's answer, folded
                  if t.type == "directive" and t.info == "hints")}


@pytest.mark.parametrize("book_page", PAGES, ids=[p.id for p in PAGES])
def test_a_reader_does_every_check_hint_prompt_and_cell(page, base_url, book_page):
    counts = parts(book_page)
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(base_url + book_page.path)
    if counts["cells"]:
        wait_ready(page)

    folded = page.locator("details.cell-answer:not([open])")
    assert folded.count() == counts["answers"], "a cell that answers a check starts folded"
    checks = page.locator("section.check")
    assert checks.count() == counts["checks"]
    for check in checks.all():
        name = check.get_attribute("data-check")
        check.locator(".check-option:not([data-right]) .option-button").first.click()
        assert check.get_attribute("data-state") == "wrong", f"check {name}"
        assert check.locator(".check-option.is-chosen .option-explain").is_visible()
        assert check.locator(".check-explain").is_hidden(), f"check {name}: explained too early"
        check.locator(".check-option[data-right] .option-button").click()
        assert check.get_attribute("data-state") == "right", f"check {name}"
        if check.locator(".check-explain").count():
            assert check.locator(".check-explain").is_visible(), f"check {name}: no explanation"

    revealed = 0
    for box in page.locator(".hints").all():
        button = box.locator(".hint-next")
        while button.is_visible():
            button.click()
        for hint in box.locator(".hint").all():
            assert hint.is_visible() and hint.get_attribute("open") is not None
            revealed += 1
    assert revealed == counts["hints"]

    prompts = page.locator("section.prompt")
    assert prompts.count() == counts["prompts"]
    for prompt in prompts.all():
        answer = prompt.locator("details.prompt-answer")
        prompt.locator(".answer-reveal").click()   # nothing written yet: the page asks first
        assert answer.is_hidden()
        prompt.locator(".prompt-input").fill("My own answer first.")
        prompt.locator(".answer-reveal").click()
        assert answer.is_visible() and answer.text_content().strip()
    assert page.locator("details.cell-answer:not([open])").count() == 0, (
        "every question is answered, so every folded output is open")

    cells = page.locator(".cell[data-cell]")
    assert cells.count() == counts["cells"]
    answering = False
    for index, cell in enumerate(cells.all()):
        cell_id = cell.get_attribute("data-cell")
        kind = [name for name in ("data-editable", "data-raises", "data-lab") if cell.get_attribute(name) is not None]
        first_answer = cell.get_attribute("data-answers") is not None and not answering
        answering = answering or first_answer
        if not (index == 0 or kind or first_answer or cell.get_attribute("data-timeout") != "10"):
            continue        # a plain cell: what it prints under Pyodide is test_pyodide_parity.py's
        output = run_cell(page, cell_id, timeout=120_000)
        assert output == recorded(page, cell_id), f"cell {cell_id} printed otherwise in the page"
        wanted = "error" if cell.get_attribute("data-raises") is not None else "done"
        assert cell.get_attribute("data-state") == wanted, f"cell {cell_id}"
    screenshot(page, f"page-{book_page.id}", full_page=True)


@pytest.mark.parametrize("book_page", PAGES, ids=[p.id for p in PAGES])
def test_the_page_reads_without_javascript(profiles, base_url, book_page):
    counts = parts(book_page)
    context = profiles.fresh(java_script_enabled=False)
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(base_url + book_page.path)
    assert page.locator("h1").text_content().strip() == book_page.title
    checks = page.locator("section.check")
    assert checks.count() == counts["checks"]
    for check in checks.all():
        assert check.locator(".check-option").count() >= 3
        assert check.locator(".check-option[data-right]").count() == 1
        for option in check.locator(".check-option").all():
            assert option.locator(".option-text").text_content().strip()
            assert option.locator("details.option-explain").count() == 1
    cells = page.locator(".cell[data-cell]")
    assert cells.count() == counts["cells"]
    for cell in cells.all():
        data = json.loads(cell.locator(".cell-data").text_content())
        assert cell.locator(".cell-code").text_content().strip()
        assert cell.locator(".cell-code").text_content() == data["source"]
    assert page.locator("figure.figure img").count() == counts["figures"]
    for image in page.locator("figure img").all():
        assert image.get_attribute("alt")
    screenshot(page, f"page-{book_page.id}-nojs", full_page=True)


def test_lesson_11_leads_back_to_checkpoint_b_and_on_to_lesson_12(profiles, base_url):
    """The way on is the main path; side quest S2 is offered in its own pointer."""
    context = profiles.fresh(java_script_enabled=False)
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(base_url + "lesson-11.html")
    assert "Transcript doctor II" in page.locator(".page-nav-previous").text_content()
    assert "The wall" in page.locator(".page-nav-next").text_content()
    assert "The session tree" in page.locator(".sidequest").text_content()
