"""The course map as a reader's home: the whole course's time and progress, Continue to the first
page not complete, a page marked complete when its questions are answered and its labs pass; and
← and → turning the pages."""
from __future__ import annotations

import pytest

import json

from conftest import screenshot

pytestmark = pytest.mark.no_python     # these pages are read, never run: no Python boots beside them


def work_with(pages: list[dict]) -> dict:
    """Saved work in which every question of `pages` is answered and every lab passed."""
    labs, answers = {}, {}
    for page in pages:
        lesson = str(int(page["id"])) if page["id"].isdigit() else page["id"]
        for k in range(1, page["questions"] + 1):
            answers[f"check:{lesson}-{k}"] = {"lesson": lesson, "value": {"option": 1, "right": True}}
        for lab in page["labs"]:
            labs[f"{lesson}-{lab['number']}"] = {"passed": True}
    return {"format": 1, "saved": "2026-12-03T00:00:00Z", "cells": {}, "labs": labs, "answers": answers, "hints": {}}


def test_the_map_says_where_to_go_on_and_how_far_the_reader_is(page, base_url, site_dir, tmp_path):
    course = json.loads((site_dir / "course.json").read_text())
    written = [p for p in course["pages"] if p["path"]]
    counted = [p for p in written if p["kind"] != "side-quest" and (p["labs"] or p["questions"])]
    page.goto(base_url + "index.html")
    assert "hours in all" in page.locator(".lesson-meta").inner_text()
    count = page.locator("#course-progress .course-count")
    count.wait_for()
    assert count.inner_text() == f"0 of {len(counted)} pages complete"
    go = page.locator("#course-progress .course-continue")
    assert go.inner_text().startswith("Start: "), "a new reader is sent to the beginning"
    assert go.get_attribute("href") == written[0]["path"]

    done = [p for p in counted if p["id"] in ("00", "01", "02")]   # 00 counts once it asks something
    saved = tmp_path / "progress.json"
    saved.write_text(json.dumps({"kind": "agent-harness-book progress", "work": work_with(done)}))
    page.locator("#progress-tools input[type=file]").set_input_files(str(saved))
    page.wait_for_function("document.querySelector('#progress-tools .progress-message').dataset.state === 'imported'")
    assert count.inner_text() == f"{len(done)} of {len(counted)} pages complete"
    assert page.locator('[data-page="01"]').get_attribute("data-progress") == "done"
    assert page.locator('[data-page="01"] .page-progress').inner_text().startswith("Complete")
    assert page.locator('[data-page="03"]').get_attribute("data-progress") == "none"
    assert go.inner_text() == "Continue: Lesson 03 · The loop"
    screenshot(page, "course-map-continue")
    go.click()
    page.wait_for_url("**/lesson-03.html")


def test_arrow_keys_turn_the_page_but_not_while_typing(page, base_url):
    page.goto(base_url + "lesson-02.html")
    page.locator("h1").click()
    page.keyboard.press("ArrowRight")
    page.wait_for_url("**/lesson-03.html")
    page.locator("h1").click()
    page.keyboard.press("ArrowLeft")
    page.wait_for_url("**/lesson-02.html")
    page.keyboard.press("/")
    # In the search box a caret moves and the page stays. The next link would be clicked inside
    # the keydown handler, and press() returns once the key's events are handled: so a click on
    # it would be counted by now.
    page.evaluate("""() => document.querySelector(".page-nav a[rel='next']")
        .addEventListener("click", (event) => { event.preventDefault(); window.turned = true; })""")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("window.turned === undefined"), "ArrowRight in the search box turned the page"
    assert page.url.endswith("lesson-02.html")


def test_a_course_json_that_cannot_be_read_is_said_on_the_map_and_on_a_lesson(page, base_url):
    """It was turned into an empty course in silence: no progress, no ticks, no word."""
    page.route("**/course.json", lambda route: route.fulfill(status=404, body="gone"))
    page.goto(base_url + "index.html")
    page.wait_for_selector("#book-warning", state="visible")
    assert page.locator("#book-warning").inner_text() == "Progress could not be shown: course.json: HTTP 404"
    page.route("**/course.json", lambda route: route.fulfill(status=200, body="<<<<<<< HEAD"))
    page.goto(base_url + "lesson-01.html")
    page.wait_for_selector("#book-warning", state="visible")
    why = page.evaluate("() => { try { JSON.parse('<<<<<<< HEAD'); } catch (e) { return e.message; } }")
    assert page.locator("#book-warning").inner_text() == (
        f"The list of what your harness can do could not be ticked: course.json: not JSON ({why})")
    assert page.locator("#book-warning p").count() == 1
