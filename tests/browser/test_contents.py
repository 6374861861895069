"""The book-wide contents (site/js/contents.js): every page of the book on every page, the current
one marked with its own sections under it, ticks from the saved work; a fold that stays at the top
of the window on a phone; and a lab's entry shows its latest result, not its best."""
from __future__ import annotations

import json

from conftest import screenshot
from fixture_site import type_into_editor, wait_editor, wait_ready
from test_labs import run_tests


def seed(page, base_url, work: dict) -> None:
    """Saved work in localStorage before the book's scripts read it."""
    page.goto(base_url + "404.html")
    page.evaluate("(work) => localStorage.setItem('agent-harness-book/work', JSON.stringify(work))", work)


def test_every_page_lists_the_book_with_this_page_marked_and_ticks(page, base_url, site_dir):
    course = json.loads((site_dir / "course.json").read_text())
    pages = [p for p in course["pages"] if p.get("path")]
    lesson01 = next(p for p in pages if p["id"] == "01")
    work = {"format": 1, "saved": "2026-01-01T00:00:00Z", "cells": {"2-1": {"code": "x", "base": "0"}},
            "labs": {"1-1": {"passed": True}}, "hints": {},
            "answers": {f"q{n}": {"lesson": "01", "value": 0} for n in range(lesson01["questions"])}}
    page.set_viewport_size({"width": 1366, "height": 900})
    seed(page, base_url, work)
    for path in ("welcome.html", "checkpoint-a.html", "lesson-11.html"):
        page.goto(base_url + path)
        book = page.locator("nav.contents .contents-book")
        book.wait_for()
        assert book.locator(":scope > li").count() == len(pages), path
        current = book.locator("a[aria-current=page]")
        assert current.count() == 1 and current.get_attribute("href") == path
    # Lesson 11's own sections sit under its entry, and the page's rail is still the one the
    # reader scrolls with.
    here = page.locator(".contents-book > li.is-here")
    assert here.locator(".contents-section").count() == page.locator("article.lesson h2:not(.lab-title)").count()
    one = page.locator('.contents-book > li[data-page-id="01"]')
    assert "is-complete" in one.get_attribute("class") and "(complete)" in one.inner_text()
    two = page.locator('.contents-book > li[data-page-id="02"]')
    assert "is-started" in two.get_attribute("class") and "(started)" in two.inner_text()
    assert page.locator(".contents").is_visible()
    screenshot(page, "contents-book-desktop")

    # On a phone: folded, and still at the top of the window far down the page.
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    page.locator(".contents-book").wait_for(state="attached")
    assert page.locator(".contents-book").is_hidden()
    page.locator("section.lab").last.scroll_into_view_if_needed()
    page.wait_for_timeout(200)
    box = page.locator(".contents-fold > summary").bounding_box()
    assert box and 0 <= box["y"] < 60, f"the fold stays at the top as the page scrolls: {box}"
    page.locator(".contents-fold > summary").click()
    assert page.locator(".contents-book").is_visible()
    screenshot(page, "contents-book-phone")
    page.locator('.contents-book > li[data-page-id="12"] > a').click()
    page.wait_for_url("**/lesson-12.html")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_a_labs_entry_shows_its_latest_result(page, base_url, site_dir):
    solution = json.loads((site_dir / "solutions/lesson-01/lab-1.json").read_text())["file"]
    page.goto(base_url + "lesson-01.html")
    wait_ready(page)
    wait_editor(page, "section.lab")
    lab_id = page.locator("section.lab").first.get_attribute("id")
    entry = page.locator(".contents-sections .contents-lab").first
    type_into_editor(page, f"#{lab_id}", solution)
    assert set(run_tests(page, lab_id).values()) == {"pass"}
    page.wait_for_function("document.querySelector('.contents-sections .contents-lab').classList.contains('is-done')")
    type_into_editor(page, f"#{lab_id}", solution.replace('"role": "user"', '"role": "human"'))
    assert "fail" in run_tests(page, lab_id).values()
    page.wait_for_function("document.querySelector('.contents-sections .contents-lab').classList.contains('is-failing')")
    assert "is-done" not in entry.get_attribute("class")
