"""The label over a cell's folded output, the one that says "answer the check above first, or run
the cell" (issue 40: it stayed after both were done). Answering renews it in test_workbench.py;
here running the cell first, and a reload after answering, renew it too."""
from __future__ import annotations

from fixture_site import wait_ready

FIRST = "What it printed (answer the check above first, or run the cell)"


def test_running_the_cell_first_renews_the_label_and_answering_keeps_it(page, base_url):
    page.goto(base_url + "lesson-01.html")
    wait_ready(page)
    cell = page.locator(".cell[data-answers]").first
    label = cell.locator(".cell-answer > summary")
    assert label.inner_text() == FIRST
    cell.locator(".cell-run").click()
    page.wait_for_function("(c) => ['done', 'error'].includes(c.dataset.state)", arg=cell.element_handle(), timeout=60_000)
    assert label.inner_text() == "What it printed" and cell.locator("details.cell-answer").get_attribute("open") is not None
    check = page.locator(f"section#{cell.get_attribute('data-answers')}")
    check.locator(".check-option[data-right] .option-button").click()
    assert label.inner_text() == "What it printed"


def test_a_reload_after_answering_shows_the_renewed_label(page, base_url):
    page.goto(base_url + "lesson-01.html")
    wait_ready(page)
    cell = page.locator(".cell[data-answers]").first
    page.locator(f"section#{cell.get_attribute('data-answers')} .check-option[data-right] .option-button").click()
    page.reload()
    wait_ready(page)
    assert page.locator(".cell[data-answers]").first.locator(".cell-answer > summary").inner_text() == "What it printed"
