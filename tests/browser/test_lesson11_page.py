"""Lesson 11's page, read and done the way a reader does it, in Chromium.

With JavaScript: every check answered (a wrong option first, then the right one), every hint
revealed, every model answer opened, every cell run and its output compared with what the build
recorded, and a full-page screenshot kept in test-artifacts/lesson11-page.png.
Without JavaScript: the page still reads: every check shows its options and their explanations,
every cell its code and recorded output, every figure its picture and caption.
(The two labs are done in the page by H4's test of the labs.)
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ARTIFACTS
from fixture_site import recorded, run_cell, wait_ready

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "lessons" / "11-memory.md"
PAGE = "lesson-11.html"


def lesson_counts() -> dict[str, int]:
    """How many of each part the source holds, so the page is checked against the source."""
    text = SOURCE.read_text(encoding="utf-8")
    return {"checks": len(re.findall(r"^:::: check$", text, re.M)),
            "prompts": len(re.findall(r"^:::: prompt$", text, re.M)),
            "cells": len(re.findall(r"^```python cell", text, re.M)),
            "figures": len(re.findall(r"^::: figure ", text, re.M)),
            "hints": len(re.findall(r"^::: hint", text, re.M))}


@pytest.fixture
def lesson(site_dir: Path) -> Path:
    path = site_dir / PAGE
    assert path.exists(), f"{path} was not built"
    return path


def test_every_check_hint_answer_and_cell_works(page, base_url, lesson):
    counts = lesson_counts()
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(base_url + PAGE)
    wait_ready(page)

    checks = page.locator("section.check")
    assert checks.count() == counts["checks"]
    for check in checks.all():
        name = check.get_attribute("data-check")
        wrong = check.locator(".check-option:not([data-right]) .option-button").first
        wrong.click()
        assert check.get_attribute("data-state") == "wrong", f"check {name}"
        assert check.locator(".check-option.is-chosen .option-explain").is_visible()
        assert check.locator(".check-explain").is_hidden(), f"check {name}: explained too early"
        check.locator(".check-option[data-right] .option-button").click()
        assert check.get_attribute("data-state") == "right", f"check {name}"
        assert "Right" in check.locator(".check-verdict").text_content()
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
        reveal = prompt.locator(".answer-reveal")
        reveal.click()                      # nothing written yet: the page asks for yours first
        assert answer.is_hidden()
        assert prompt.locator(".answer-nudge").text_content().strip()
        prompt.locator(".prompt-input").fill("My own answer first.")
        reveal.click()
        assert answer.is_visible() and answer.get_attribute("open") is not None
        assert answer.text_content().strip()
        misses = prompt.locator("details.prompt-misses")
        if misses.count():
            misses.locator("summary").click()
            assert misses.get_attribute("open") is not None

    cells = page.locator(".cell[data-cell]")
    assert cells.count() == counts["cells"]
    for cell in cells.all():
        cell_id = cell.get_attribute("data-cell")
        output = run_cell(page, cell_id, timeout=120_000)
        assert output == recorded(page, cell_id), f"cell {cell_id} printed otherwise in the page"
        assert cell.get_attribute("data-state") == "done", f"cell {cell_id}"

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "lesson11-page.png"), full_page=True)


def test_the_page_reads_without_javascript(profiles, base_url, lesson):
    counts = lesson_counts()
    context = profiles.open(java_script_enabled=False)
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(base_url + PAGE)
    assert page.locator("h1").text_content().strip() == "Memory that outlives the process"

    checks = page.locator("section.check")
    assert checks.count() == counts["checks"]
    for check in checks.all():
        options = check.locator(".check-option")
        assert options.count() == 3
        assert check.locator(".check-option[data-right]").count() == 1
        for option in options.all():
            assert option.locator(".option-text").text_content().strip()
            assert option.locator("details.option-explain").count() == 1

    cells = page.locator(".cell[data-cell]")
    assert cells.count() == counts["cells"]
    for cell in cells.all():
        data = json.loads(cell.locator(".cell-data").text_content())
        assert cell.locator(".cell-code").text_content().strip()
        assert cell.locator(".cell-output").text_content() == data["output"]

    figures = page.locator("figure")
    assert figures.count() >= counts["figures"]
    for number in range(1, counts["figures"] + 1):
        assert page.get_by_text(f"Figure 11.{number}").count() >= 1
    for image in page.locator("figure img").all():
        assert image.get_attribute("alt")
    assert page.locator("a[href*='github.com/huggingface/tau/blob/62eab4e5']").count() >= 20
    # The way on is the main path: back to checkpoint B, on to lesson 12. Side quest S2 is
    # offered in its own pointer, not as the next page.
    assert "Transcript doctor II" in page.locator(".page-nav-previous").text_content()
    assert "The wall" in page.locator(".page-nav-next").text_content(), (
        "the Next link of lesson 11 should be lesson 12, not the optional side quest")
    assert "The session tree" in page.locator(".sidequest").text_content()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "lesson11-page-nojs.png"), full_page=True)
