"""Checks and hints in Chromium, with and without JavaScript.

The site is the fixture course (tests/fixtures/book) built by the real pipeline, browser assets
included, so these tests know exactly which option of which check is right. With JavaScript a
check is a set of toggle buttons with an aria-live verdict and hints come one at a time; without
it every explanation and every cell's recorded output is still on the page."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

from builder.pipeline import build  # noqa: E402
from builder.project import Project  # noqa: E402
from conftest import screenshot  # noqa: E402
from fixture_site import serving  # noqa: E402

pytestmark = pytest.mark.no_python     # these pages are read, never run: no Python boots beside them

FIXTURE = ROOT / "tests" / "fixtures" / "book"


@pytest.fixture(scope="module")
def book_url(tmp_path_factory):
    out = tmp_path_factory.mktemp("checks") / "_site"
    build(Project.at(FIXTURE), out, log=lambda line: None)
    with serving(out) as url:
        yield url


def open_lesson(page, book_url):
    page.goto(book_url + "lesson-01.html")
    page.wait_for_selector(".check[data-live]")
    return page.locator(".check").first


def test_a_wrong_answer_then_the_right_one(page, book_url):
    check = open_lesson(page, book_url)
    buttons = check.get_by_role("button")
    assert buttons.count() == 3
    assert check.locator(".check-options").get_attribute("role") == "group"
    verdict = check.locator(".check-verdict")
    assert verdict.get_attribute("aria-live") == "polite"
    explain = check.locator(".check-explain")
    assert not explain.is_visible()
    assert [b.get_attribute("aria-pressed") for b in buttons.all()] == ["false"] * 3

    wrong = buttons.nth(0)
    wrong.click()
    assert wrong.get_attribute("aria-pressed") == "true"
    assert verdict.inner_text().startswith("Not quite")
    options = check.locator(".check-option")
    assert options.nth(0).locator(".option-explain").is_visible()
    assert "misses the comma" in options.nth(0).locator(".option-explain").inner_text()
    assert not options.nth(1).locator(".option-explain").is_visible()
    assert not explain.is_visible(), "the longer explanation waits for the right answer"

    # the keyboard reaches the right option and Space chooses it
    buttons.nth(1).focus()
    page.keyboard.press("Space")
    assert buttons.nth(1).get_attribute("aria-pressed") == "true"
    assert wrong.get_attribute("aria-pressed") == "false"
    assert verdict.inner_text() == "Right."
    assert options.nth(1).locator(".option-explain").is_visible()
    assert "between the comma and the full stop" in options.nth(1).inner_text()
    assert not options.nth(0).locator(".option-explain").is_visible()
    assert explain.is_visible() and "composed" in explain.inner_text()
    assert check.get_attribute("data-state") == "right"
    check.scroll_into_view_if_needed()
    screenshot(page, "check-answered")


def test_reading_another_option_after_the_right_answer_keeps_the_check_answered(page, book_url):
    check = open_lesson(page, book_url)
    buttons = check.locator(".option-button")
    options = check.locator(".check-option")
    buttons.nth(1).click()
    assert check.get_attribute("data-state") == "right"
    buttons.nth(0).click()  # the welcome page invites this: read why the others miss
    assert check.get_attribute("data-state") == "right"
    assert "still answered" in check.locator(".check-verdict").inner_text()
    assert options.nth(0).locator(".option-explain").is_visible()
    assert "misses the comma" in options.nth(0).locator(".option-explain").inner_text()
    assert check.locator(".check-explain").is_visible(), "the longer explanation stays open"
    page.reload()
    check = page.locator(".check[data-live]").first
    page.wait_for_function("document.querySelector('.check').dataset.state === 'right'")
    assert check.locator(".check-verdict").inner_text() == "Right.", "the saved answer is the right one"


def test_hints_are_revealed_one_at_a_time(page, book_url):
    open_lesson(page, book_url)
    prompt = page.locator(".prompt").first
    hints = prompt.locator(".hint")
    more = prompt.locator("button.hint-next")
    assert more.inner_text() == "Show hint 1 of 2"
    assert not hints.nth(0).is_visible() and not hints.nth(1).is_visible()
    more.click()
    assert hints.nth(0).is_visible() and "Which one goes inside" in hints.nth(0).inner_text()
    assert not hints.nth(1).is_visible()
    assert more.inner_text() == "Show hint 2 of 2"
    more.press("Enter")
    assert hints.nth(1).is_visible() and "shout(greet(...))" in hints.nth(1).inner_text()
    assert not more.is_visible()
    # the model answer waits until the reader has written something
    answer = prompt.locator(".prompt-answer")
    reveal = prompt.locator("button.answer-reveal")
    assert not answer.is_visible()
    reveal.click()
    assert not answer.is_visible() and "Write yours first" in prompt.locator(".answer-nudge").inner_text()
    assert page.evaluate("document.activeElement.classList.contains('prompt-input')")
    prompt.locator(".prompt-input").fill("shout(greet('Ada'))")
    reveal.click()
    assert answer.is_visible() and "HELLO, ADA.!" in answer.inner_text()
    assert prompt.locator(".prompt-misses").is_visible() and not reveal.is_visible()
    # the lab's hints are their own sequence
    lab_more = page.locator(".lab").first.get_by_role("button", name="Show hint 1 of 2")
    assert lab_more.is_visible()
    prompt.scroll_into_view_if_needed()
    screenshot(page, "hints")


def test_the_page_reads_completely_without_javascript(profiles, book_url):
    context = profiles.fresh(java_script_enabled=False)
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(book_url + "lesson-01.html")
    check = page.locator(".check").first
    assert check.locator("button").count() == 0
    options = check.locator(".check-option")
    assert options.count() == 3
    first = options.nth(0).locator("details.option-explain")
    first.locator("summary").click()
    assert "misses the comma" in first.inner_text() and "Not this one." in first.inner_text()
    assert "The right answer." in options.nth(1).locator("details").text_content()
    longer = check.locator("details.check-explain")
    longer.locator("summary").click()
    assert "composed" in longer.inner_text()
    outputs = page.locator(".cell-output")
    assert outputs.nth(0).inner_text().strip() == "Hello, Ada."
    assert "TypeError: greet() missing 1 required positional argument" in outputs.nth(2).inner_text()
    lab = page.locator(".lab").first
    assert "Write greet(name)" in lab.locator(".lab-spec").inner_text()
    assert "def greet" not in lab.locator(".lab-starting").inner_text()
    assert "# --- your code ---" in lab.locator(".lab-starting").inner_text()
    assert lab.locator(".lab-command").inner_text() == \
        "python lab/lab_check.py --harness harness.py --lesson 1 tests.py"
    assert lab.locator(".hint").count() == 2
    screenshot(page, "no-javascript")


def test_a_check_of_the_real_lesson_11(page, base_url):
    """The book itself (conftest builds _site if it is not there): lesson 11's first check."""
    page.set_viewport_size({"width": 1100, "height": 1150})
    page.goto(base_url + "lesson-11.html")
    page.wait_for_selector(".check[data-live]")
    check = page.locator(".check").first
    options = check.locator(".check-option")
    wrong = check.locator(".check-option:not([data-right]) .option-button").first
    right = check.locator(".check-option[data-right] .option-button")
    assert options.count() >= 2 and right.count() == 1
    wrong.click()
    assert check.get_attribute("data-state") == "wrong"
    right.click()
    assert check.locator(".check-verdict").inner_text() == "Right."
    assert check.locator(".check-explain").is_visible()
    page.evaluate("window.scrollTo(0, 70)")
    screenshot(page, "lesson-11-check")


def test_every_check_and_cell_of_lesson_11_reads_without_javascript(profiles, base_url, site_dir):
    context = profiles.fresh(java_script_enabled=False)
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(base_url + "lesson-11.html")
    explains = page.locator(".option-explain")
    assert explains.count() >= 6
    for i in range(explains.count()):
        verdict = explains.nth(i).locator(".option-verdict").text_content()
        assert verdict in ("The right answer.", "Not this one.")
        assert len(explains.nth(i).text_content()) > len(verdict) + 20, "each option explains itself"
    cells = page.locator(".cell")
    assert cells.count() == page.locator(".cell .cell-output").count() >= 5
    for i in range(cells.count()):
        assert cells.nth(i).locator(".cell-output").text_content().strip()
    assert page.locator(".lab .lab-starting").count() == page.locator(".lab").count() >= 2


KEY = "agent-harness-book/work"


def test_a_saved_answer_follows_its_question_when_checks_move(page, base_url):
    """A check's id is its place on the page. Saved answers carry the fingerprint of their
    question and of the option chosen: when two checks swap places each answer follows its own
    question (and its review state with it), and an answer whose option's words changed is not
    put back on another option."""
    page.goto(base_url + "lesson-11.html")
    page.wait_for_selector(".check[data-live]")
    checks = page.locator(".check")
    assert checks.count() >= 3
    first, second, third = (checks.nth(i) for i in range(3))

    def fingerprints(check):
        right = check.locator(".check-option[data-right]")
        wrong = check.locator(".check-option:not([data-right])").first
        return (check.get_attribute("data-check"), check.get_attribute("data-question"),
                right.get_attribute("data-key"), int(right.get_attribute("data-option")),
                wrong.get_attribute("data-key"), int(wrong.get_attribute("data-option")))

    (id1, q1, right1, _, wrong1, wrong1_at), (id2, q2, right2, right2_at, _, _), (id3, q3, *_) = \
        fingerprints(first), fingerprints(second), fingerprints(third)
    answer = lambda question, key, at, right: {  # noqa: E731
        "lesson": "11", "question": question, "value": {"option": at, "right": right, "key": key},
        "first": right, "firstAt": "2026-12-01T09:00:00Z"}
    # Saved by an older build in which the first two checks stood the other way round: the answer
    # to today's second question is under the first id, and the other way round. The third's
    # answer chose an option whose words have since changed.
    work = {"format": 1, "saved": "2026-12-01T09:00:00Z", "cells": {}, "labs": {}, "hints": {},
            "answers": {f"check:{id1}": answer(q2, right2, right2_at, True),
                        f"check:{id2}": answer(q1, wrong1, wrong1_at, False),
                        f"check:{id3}": answer(q3, "000000000000", 1, False)},
            "review": {f"check:{id2}": {"lesson": "11", "step": 1, "rights": 0,
                                        "due": "2026-12-02T09:00:00Z", "done": False}}}
    page.evaluate(f"localStorage.setItem({KEY!r}, {json.dumps(json.dumps(work))})")
    page.reload()
    page.wait_for_selector(".check[data-live]")

    assert second.get_attribute("data-state") == "right", "the right answer followed its question"
    assert first.get_attribute("data-state") == "wrong", "the wrong answer followed its question"
    assert first.locator(f".check-option[data-key='{wrong1}'] .option-button").get_attribute("aria-pressed") == "true"
    assert third.get_attribute("data-state") is None, "an option whose words changed is not chosen for the reader"
    page.wait_for_function(f"JSON.parse(localStorage.getItem({KEY!r}) || '{{}}').answers?.['check:{id1}']?.question === {q1!r}")
    stored = json.loads(page.evaluate(f"localStorage.getItem({KEY!r})"))
    assert stored["answers"][f"check:{id1}"]["question"] == q1
    assert stored["answers"][f"check:{id2}"]["question"] == q2
    assert stored["review"].get(f"check:{id1}", {}).get("due") == "2026-12-02T09:00:00Z", \
        "the review state went with its answer"
    assert f"check:{id2}" not in stored["review"]


def test_an_answer_saves_the_fingerprints_of_its_question_and_option(page, base_url):
    page.goto(base_url + "lesson-11.html")
    page.wait_for_selector(".check[data-live]")
    check = page.locator(".check").first
    right = check.locator(".check-option[data-right]")
    right.locator(".option-button").click()
    ident = check.get_attribute("data-check")
    page.wait_for_function(f"JSON.parse(localStorage.getItem({KEY!r}) || '{{}}').answers?.['check:{ident}']")
    entry = json.loads(page.evaluate(f"localStorage.getItem({KEY!r})"))["answers"][f"check:{ident}"]
    assert entry["question"] == check.get_attribute("data-question")
    assert entry["value"]["key"] == right.get_attribute("data-key")
    assert entry["value"]["right"] is True
