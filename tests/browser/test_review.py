"""The review (review.html, issue 41 part 1) and the course map's harness (part 4), in Chromium.

The spacing runs on Playwright's fake clock (page.clock): a check answered wrong on its page comes
back a day later, then 3 and 7 days after each review, its options in a new order, its answer and
explanations absent from the page until it is answered, and leaves once answered right at the
first try twice. The map counts what is due; the review state travels in the export, and an older
export without it imports; the page works offline; axe finds nothing in both themes, wide and on a
phone."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from conftest import screenshot
from fixture_site import wait_saved
from test_accessibility import audit

KIND = "agent-harness-book progress"
START = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
DAY = timedelta(days=1)


@pytest.fixture(scope="module")
def questions(site_dir) -> dict:
    return json.loads((site_dir / "questions.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def course(site_dir) -> dict:
    return json.loads((site_dir / "course.json").read_text(encoding="utf-8"))


def stored(page) -> dict:
    return json.loads(page.evaluate("localStorage.getItem('agent-harness-book/work')") or "{}")


def import_work(page, base_url, tmp_path, work: dict, name: str = "progress.json") -> None:
    """Import `work` through the course map's own control, as a reader would."""
    if not page.url.endswith("index.html"):
        page.goto(base_url + "index.html")
    path = tmp_path / name
    path.write_text(json.dumps({"kind": KIND, "exported": "2026-11-30T00:00:00Z", "work": work}))
    page.locator("#progress-tools input[type=file]").set_input_files(str(path))
    page.wait_for_function("document.querySelector('#progress-tools .progress-message')?.dataset.state === 'imported'")


def old_work(**sections) -> dict:
    """Saved work as a build before the review wrote it: no "review", no `first`."""
    work = {"format": 1, "saved": "2026-11-30T00:00:00Z", "cells": {}, "labs": {}, "answers": {}, "hints": {}}
    work.update(sections)
    return work


def review_texts(page) -> list[str]:
    return page.locator("#review-body .review-check .option-body").all_inner_texts()


def plain(html: str) -> str:
    from html.parser import HTMLParser
    parts: list[str] = []
    parser = HTMLParser()
    parser.handle_data = parts.append
    parser.feed(html)
    return " ".join("".join(parts).split())


def due_line(page) -> str:
    link = page.locator("#map-review a")
    page.wait_for_function("document.querySelector('#map-review')?.dataset.due !== undefined")
    return link.inner_text()


def answer_review(page, check: dict, right: bool) -> None:
    """Choose the right option of the one check on the review page, or the first wrong one."""
    wanted = plain(check["options"][check["right"]]["text"]) if right else \
        next(plain(o["text"]) for i, o in enumerate(check["options"]) if i != check["right"])
    options = page.locator("#review-body .review-check .option-button")
    for i in range(options.count()):
        if " ".join(options.nth(i).locator(".option-body").inner_text().split()) == wanted:
            options.nth(i).click()
            return
    raise AssertionError(f"no option reads {wanted!r}")


def test_a_reader_who_got_nothing_wrong_is_told_so(page, base_url):
    page.goto(base_url + "index.html")
    assert due_line(page) == "Review: nothing got wrong so far"
    assert page.locator("#map-review a").get_attribute("href") == "review.html"
    page.locator(".site-nav a[href='review.html']").click()
    page.wait_for_url("**/review.html")
    none = page.locator("#review-body .review-none")
    none.wait_for()
    assert none.inner_text().startswith("You have got nothing wrong so far")
    assert page.locator("#review-body").get_attribute("data-state") == "none"


def test_a_check_missed_comes_back_spaced_until_answered_right_twice(page, base_url, questions):
    """1 day after the wrong answer, then 3 and 7 days after each review; learned after two
    reviews answered right at the first try (the second after a wrong one in between)."""
    check = questions["checks"]["1-1"]
    page.clock.install(time=START)
    page.goto(base_url + "lesson-01.html")
    # checks.js draws the option buttons after load: read the options once all of them are drawn.
    page.wait_for_function("n => document.querySelectorAll('#check-1-1 .option-body').length === n",
                           arg=len(check["options"]))
    lesson_order = [" ".join(t.split()) for t in page.locator("#check-1-1 .option-body").all_inner_texts()]
    wrong = next(i for i in range(len(check["options"])) if i != check["right"]) + 1
    # Clicked in the DOM: the page moves as Python and the editors arrive, and a click aimed at a
    # place on the screen could land elsewhere.
    page.locator(f'#check-1-1 .check-option[data-option="{wrong}"] .option-button').evaluate("b => b.click()")
    page.wait_for_function("document.getElementById('check-1-1').dataset.state === 'wrong'")
    page.locator(f'#check-1-1 .check-option[data-option="{check["right"] + 1}"] .option-button').evaluate("b => b.click()")
    page.wait_for_function("document.getElementById('check-1-1').dataset.state === 'right'")
    wait_saved(page, '"first":false', '"right":true')
    assert stored(page)["answers"]["check:1-1"]["value"]["right"] is True, "answered right in the end"

    # The same day: not due yet, and the map says when it comes back.
    page.goto(base_url + "index.html")
    assert due_line(page) == "Review: nothing due today, the next on Wed 2 Dec"
    page.goto(base_url + "review.html")
    page.locator("#review-body .review-count").wait_for()
    assert page.locator("#review-body .review-count").inner_text() == \
        "Nothing is due today. The next check comes back on Wed 2 Dec."
    assert "Wed 2 Dec" in page.locator("#review-body .review-later").inner_text()

    # A day later: due, counted on the map, options in a new order, no answer in the page.
    page.clock.set_system_time(START + DAY + timedelta(hours=1))
    page.goto(base_url + "index.html")
    assert due_line(page) == "1 question to review"
    screenshot(page, "review-map-due")
    page.goto(base_url + "review.html")
    page.locator("#review-body .review-check").wait_for()
    page.wait_for_function("n => document.querySelectorAll('#review-body .review-check .option-body').length === n",
                           arg=len(lesson_order))
    order = [" ".join(t.split()) for t in review_texts(page)]
    assert sorted(order) == sorted(lesson_order) and order != lesson_order
    body = page.inner_html("body")
    assert "data-right" not in body and "is-right" not in body
    for option in check["options"]:
        assert plain(option["explain"])[:60] not in plain(body), "an explanation shows before the answer"
    assert plain(check["explain"][0])[:60] not in plain(body)
    screenshot(page, "review-due-before-answer")
    answer_review(page, check, right=True)
    verdict = page.locator("#review-body .check-verdict")
    assert verdict.inner_text() == "Right, at the first try."
    assert plain(check["explain"][0])[:60] in plain(page.inner_html("#review-body"))
    assert page.locator(".review-next").inner_text() == "It comes back on Sat 5 Dec."
    wait_saved(page, '"rights":1')
    assert stored(page)["review"]["check:1-1"]["step"] == 1
    screenshot(page, "review-answered")

    # Three days on: due again; a wrong first answer counts, even once put right.
    page.clock.set_system_time(START + 4 * DAY + timedelta(hours=2))
    page.goto(base_url + "review.html")
    page.locator("#review-body .review-check").wait_for()
    answer_review(page, check, right=False)
    assert page.locator("#review-body .check-verdict").inner_text() == "Not quite. Read why, then try another."
    answer_review(page, check, right=True)
    assert page.locator("#review-body .check-verdict").inner_text() == "Right."
    assert page.locator(".review-next").inner_text() == "It comes back on Sat 12 Dec."
    wait_saved(page, '"step":2')
    assert stored(page)["review"]["check:1-1"]["rights"] == 1

    # Six days on: not yet. Seven: due, right at the first try: learned, and asked no more.
    page.clock.set_system_time(START + 10 * DAY + timedelta(hours=2))
    page.goto(base_url + "review.html")
    page.locator("#review-body .review-count").wait_for()
    assert page.locator("#review-body .review-check").count() == 0
    page.clock.set_system_time(START + 11 * DAY + timedelta(hours=3))
    page.goto(base_url + "review.html")
    page.locator("#review-body .review-check").wait_for()
    answer_review(page, check, right=True)
    assert page.locator(".review-next").inner_text() == "Learned: right at the first try twice. It will not come back."
    wait_saved(page, '"done":true')
    page.clock.set_system_time(START + 60 * DAY)
    page.goto(base_url + "review.html")
    page.locator("#review-body .review-learned").wait_for()
    assert page.locator("#review-body .review-check").count() == 0
    assert page.locator("#review-body .review-learned").inner_text().startswith("1 check you once missed")
    page.goto(base_url + "index.html")
    assert due_line(page) == "Review what you got wrong"


def test_an_older_export_imports_and_the_review_travels_in_the_next(page, base_url, questions, course, tmp_path, profiles):
    three = next(p for p in course["pages"] if p["id"] == "03")
    lab = three["labs"][0]
    failed = [t["id"] for t in lab["tests"][:2]]
    work = old_work(answers={
        "check:3-1": {"lesson": "3", "value": {"option": 1 + (questions["checks"]["3-1"]["right"] + 1) % 2, "right": False}},
        "check:3-2": {"lesson": "3", "value": {"option": questions["checks"]["3-2"]["right"] + 1, "right": True}},
        "prompt:2-1": {"lesson": "2", "value": "no idea", "revealedWith": 2},
    }, labs={f"3-{lab['number']}": {"passed": True, "failed": failed}})
    import_work(page, base_url, tmp_path, work, "old.json")
    assert due_line(page) == "2 questions to review", "a check still wrong from an old save, and a prompt opened unwritten"

    page.goto(base_url + "review.html")
    page.locator("#review-body .review-check").wait_for()
    assert page.locator("#review-body .review-check").count() == 1, "a check right in an old save is not counted wrong"
    rules = page.locator("#review-body .review-rule").all_inner_texts()
    assert rules == [t["sentence"] for t in lab["tests"][:2]]
    assert "(passed since)" in page.locator("#review-body .review-lab").inner_text()

    # The prompt: its model answer waits for a sentence of the reader's own.
    prompt = questions["prompts"]["2-1"]
    box = page.locator("#review-body .review-prompt")
    assert plain(prompt["answer"][0])[:60] not in plain(page.inner_html("body"))
    box.locator("textarea").fill("not sure")
    box.locator(".answer-reveal").click()
    assert "Write a sentence of your own first" in box.locator(".answer-nudge").inner_text()
    assert box.locator(".review-answer").count() == 0
    box.locator("textarea").fill("the harness keeps the messages and sends them all again")
    box.locator(".answer-reveal").click()
    assert plain(prompt["answer"][0])[:60] in plain(box.inner_html())
    answer_review(page, questions["checks"]["3-1"], right=False)
    wait_saved(page, '"prompt:2-1":{"lesson":"2","done":true}', '"check:3-1":{"lesson":"3"')

    page.goto(base_url + "index.html")
    assert due_line(page).startswith("Review: nothing due today")
    with page.expect_download() as info:
        page.locator("#progress-tools .progress-export").click()
    exported = tmp_path / "exported.json"
    info.value.save_as(exported)
    review = json.loads(exported.read_text())["work"]["review"]
    assert review["check:3-1"]["step"] == 1 and review["check:3-1"]["rights"] == 0
    assert review["prompt:2-1"]["done"] is True

    fresh = profiles.fresh().new_page()
    fresh.goto(base_url + "index.html")
    fresh.locator("#progress-tools input[type=file]").set_input_files(str(exported))
    fresh.wait_for_function("document.querySelector('#progress-tools .progress-message')?.dataset.state === 'imported'")
    assert stored(fresh)["review"] == review
    assert due_line(fresh).startswith("Review: nothing due today")
    fresh.goto(base_url + "review.html")
    fresh.locator("#review-body .review-later").wait_for()
    assert fresh.locator("#review-body .review-prompt").count() == 0


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_the_review_passes_axe_in_both_themes_wide_and_on_a_phone(page, base_url, questions, course, tmp_path, theme, width):
    page.emulate_media(color_scheme=theme)
    page.set_viewport_size({"width": width, "height": 900})
    three = next(p for p in course["pages"] if p["id"] == "03")
    work = old_work(answers={
        "check:2-1": {"lesson": "2", "value": {"option": 1, "right": questions["checks"]["2-1"]["right"] == 0}, "first": False},
        "prompt:2-1": {"lesson": "2", "value": "", "revealedWith": 0},
    }, labs={"3-1": {"passed": False, "failed": [three["labs"][0]["tests"][0]["id"]]}})
    import_work(page, base_url, tmp_path, work)
    page.goto(base_url + "review.html")
    page.locator("#review-body .review-check").wait_for()
    assert audit(page) == []
    answer_review(page, questions["checks"]["2-1"], right=False)
    answer_review(page, questions["checks"]["2-1"], right=True)
    page.locator("#review-body .review-prompt textarea").fill("it sends the whole list of messages every time")
    page.locator("#review-body .review-prompt .answer-reveal").click()
    violations = audit(page)
    assert violations == [], json.dumps(violations, indent=1)
    if width < 500:
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"the review is {overflow}px wider than the phone"
    screenshot(page, f"review-{theme}-{width}")
    page.goto(base_url + "index.html")
    page.locator("#map-harness:not([hidden])").wait_for()
    due_line(page)
    assert audit(page) == []
    screenshot(page, f"map-review-harness-{theme}-{width}")


def test_the_map_shows_the_harness_built_so_far_and_the_closing_page_the_whole_list(page, base_url, course, tmp_path):
    capable = [p for p in course["pages"] if p["capability"]]
    page.goto(base_url + "index.html")
    box = page.locator("#map-harness")
    box.locator(".map-harness-none").wait_for()
    assert box.locator(".map-harness-none").inner_text() == f"Nothing yet: the lab of {capable[0]['name']} gives it its first capability."
    labs = {}
    for p in capable[:2]:
        for lab in p["labs"]:
            labs[f"{p['number']}-{lab['number']}"] = {"passed": True}
    third = capable[2]
    answers = {f"check:{third['number']}-1": {"lesson": str(third["number"]), "value": {"option": 1, "right": True}}}
    import_work(page, base_url, tmp_path, old_work(labs=labs, answers=answers))
    items = box.locator(".map-harness-list li")
    page.wait_for_function("document.querySelectorAll('#map-harness .map-harness-list li').length === 3")
    assert [" ".join(t.split()) for t in items.all_inner_texts()] == [
        p["capability"] + (" (built: its labs passed)" if i < 2 else " (not yet: its labs have not all passed)")
        for i, p in enumerate(capable[:3])]
    assert [items.nth(i).get_attribute("data-done") for i in range(3)] == ["true", "true", "false"]
    assert box.locator(".map-harness-count").inner_text() == f"2 of {len(capable)} capabilities built"
    screenshot(page, "map-harness")

    closing = next(p for p in course["pages"] if p["kind"] == "closing")
    page.goto(base_url + closing["path"])
    page.wait_for_function("document.querySelector('.capabilities li[data-done]')")
    whole = page.locator(".capabilities > ul > li")
    assert whole.count() == len(capable)
    done = [whole.nth(i).get_attribute("data-done") for i in range(whole.count())]
    assert done == ["true", "true"] + ["false"] * (len(capable) - 2)


def test_the_review_works_offline(profiles, base_url, questions):
    context = profiles.fresh()
    page = context.new_page()
    page.goto(base_url + "index.html")
    page.wait_for_function("navigator.serviceWorker && navigator.serviceWorker.controller !== null", timeout=180_000)
    page.evaluate("""() => {
        const work = {format: 1, saved: new Date().toISOString(), cells: {}, labs: {}, hints: {},
                      answers: {"check:1-2": {lesson: "1", value: {option: 1, right: false}}}};
        localStorage.setItem("agent-harness-book/work", JSON.stringify(work));
    }""")
    context.set_offline(True)
    response = page.goto(base_url + "review.html")
    assert response.from_service_worker
    page.locator("#review-body .review-check").wait_for()
    assert plain(questions["checks"]["1-2"]["question"])[:50] in plain(page.inner_html("#review-body"))
    page.goto(base_url + "index.html")
    assert due_line(page) == "1 question to review"


def test_a_lesson_keeps_what_the_review_needs_a_failed_test_and_a_model_answer_opened_unwritten(page, base_url, course):
    """On a real page: a lab run that fails keeps the tests it failed (its rules then listed on the
    review, with the lab passed after); a model answer opened with two words written is kept as
    opened unwritten, and counted on the map."""
    from fixture_site import type_into_editor, wait_editor, wait_ready
    from test_labs import run_tests, solution
    right = solution("1.1")
    wrong = right.replace('return {"role": "user", "content": text}', 'return {"role": "user", "content": [text]}')
    assert wrong != right
    page.goto(base_url + "lesson-01.html")
    prompt = page.locator(".prompt[data-prompt]").first
    prompt_id = prompt.get_attribute("data-prompt")
    prompt.locator(".prompt-input").fill("no idea")
    prompt.locator(".answer-reveal").evaluate("b => b.click()")
    wait_saved(page, '"revealedWith":2')

    wait_ready(page)
    wait_editor(page, "#lab-1-1")
    type_into_editor(page, "#lab-1-1", wrong)
    results = run_tests(page, "lab-1-1")
    failed = sorted(test for test, status in results.items() if status == "fail")
    assert failed, results
    wait_saved(page, '"failed":[')
    kept = stored(page)["labs"]["1-1"]["failed"]
    assert sorted(t.split(".")[-1] for t in kept) == sorted(t.split(".")[-1] for t in failed)
    type_into_editor(page, "#lab-1-1", right)
    assert set(run_tests(page, "lab-1-1").values()) == {"pass"}
    wait_saved(page, '"passed":true')

    page.goto(base_url + "index.html")
    assert due_line(page) == "1 question to review"
    page.goto(base_url + "review.html")
    page.locator("#review-body .review-rule").first.wait_for()
    lab = next(p for p in course["pages"] if p["id"] == "01")["labs"][0]
    sentences = [t["sentence"] for t in lab["tests"] if t["id"] in kept]
    assert page.locator("#review-body .review-rule").all_inner_texts() == sentences
    assert "(passed since)" in page.locator("#review-body .review-lab").inner_text()
    assert page.locator(f"#review-prompt-{prompt_id}").count() == 1
    screenshot(page, "review-lab-rules")
