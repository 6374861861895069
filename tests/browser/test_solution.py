"""The book's answer to a lab (site/js/solution.js): offered only after the last hint, after three
runs without a pass, or once the lab passes; shown after a step that says it shows the answer,
fetched only then (never in the page's HTML), as a diff of the reader's gaps against the book's."""
from __future__ import annotations

import json

from conftest import screenshot
from fixture_site import type_into_editor, wait_editor, wait_ready
from test_labs import FIXTURE_SOLUTION, run_tests

LAB = "#lab-99-1"
BOOK_LINE = 'return [entry["message"] for entry in entries]'


def watch_solutions(page) -> list[str]:
    asked: list[str] = []
    page.on("request", lambda request: "/solutions/" in request.url and asked.append(request.url))
    return asked


def test_the_answer_waits_for_the_last_hint_and_a_clear_step(page, fixture_url, fixture_root):
    solution = json.loads((fixture_root / "solutions/lesson-99/lab-1.json").read_text())
    assert solution["gaps"][0]["code"].endswith(BOOK_LINE)
    html = (fixture_root / "lesson-99.html").read_text()
    assert "solutions/lesson-99/lab-1.json" in html and '"gaps"' not in html
    assert f"    {BOOK_LINE}" not in html, "the solution's code is not in the page"

    asked = watch_solutions(page)
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    wait_editor(page, LAB)
    offer = page.locator(f"{LAB} .lab-solution")
    assert offer.is_hidden(), "no answer offered before the hints are read"
    hint = page.locator(f"{LAB} .hint-next")
    hint.click()
    assert offer.is_hidden(), "one hint of two: not yet"
    hint.click()
    assert offer.is_visible()
    assert "every hint" in offer.inner_text()
    page.locator(f"{LAB} .solution-ask").click()
    confirm = page.locator(f"{LAB} .solution-confirm")
    assert "This shows the answer" in confirm.inner_text()
    assert asked == [], "nothing is fetched before the reader confirms"
    page.locator(f"{LAB} .solution-cancel").click()
    assert confirm.count() == 0 and page.locator(f"{LAB} .solution-ask").is_visible()
    page.locator(f"{LAB} .solution-ask").click()
    page.locator(f"{LAB} .solution-show").click()
    body = page.locator(f"{LAB} .solution-body")
    body.wait_for()
    assert len(asked) == 1
    rows = page.locator(f"{LAB} .solution-gap .diff-add .diff-text").all_text_contents()
    assert any(BOOK_LINE in row for row in rows), rows
    gone = page.locator(f"{LAB} .solution-gap .diff-del .diff-text").all_text_contents()
    assert any('entries[-1]["message"]' in row for row in gone), gone
    assert "Gap 1 of 1" in page.locator(f"{LAB} .solution-gap summary").inner_text()
    assert page.evaluate("document.activeElement.className") == "solution-title"
    body.scroll_into_view_if_needed()
    screenshot(page, "solution-desktop")
    page.set_viewport_size({"width": 390, "height": 844})
    body.scroll_into_view_if_needed()
    screenshot(page, "solution-phone")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the answer's diff scrolls in its box, not the page ({width} px)"


def test_three_failed_runs_offer_the_answer_and_a_pass_offers_the_books_way(page, fixture_url):
    asked = watch_solutions(page)
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    wait_editor(page, LAB)
    offer = page.locator(f"{LAB} .lab-solution")
    for run in range(3):
        assert offer.is_hidden(), f"offered after {run} failed runs"
        run_tests(page, "lab-99-1")
        page.locator(f"{LAB} .lab-run:not([aria-disabled])").wait_for()
    assert offer.is_visible() and "3 runs" in offer.inner_text()

    type_into_editor(page, LAB, FIXTURE_SOLUTION)
    assert set(run_tests(page, "lab-99-1").values()) == {"pass"}
    assert "You passed" in offer.inner_text()
    ask = page.locator(f"{LAB} .solution-ask")
    assert ask.inner_text() == "See how the book did it"
    ask.click()   # a pass gives nothing away: no second step
    page.locator(f"{LAB} .solution-body").wait_for()
    assert len(asked) == 1
    # this file has no gap markers left: every place it differs from the book's, change by change
    assert "no longer has the gap markers" in page.locator(f"{LAB} .solution-body").inner_text()
    added = page.locator(f"{LAB} .solution-gap .diff-del .diff-text").all_text_contents()
    assert added == ["print(\"the reader's harness\")"], added
