"""Search across the book, in Chromium: "/" reaches the box from anywhere, a search in lesson 01
finds a section of lesson 11 and goes straight to it, checks, cells' code and labs are found,
nothing a page asks first is given away, and the keyboard alone can use it. Offline, from the
downloaded book, is in test_offline.py."""
from __future__ import annotations

import json

import pytest

from conftest import screenshot
from fixture_site import RESULTS, search

pytestmark = pytest.mark.no_python     # search needs no Python: none boots beside it

def test_a_search_in_lesson_01_finds_a_section_of_lesson_11_and_goes_there(page, base_url):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(base_url + "lesson-01.html")
    results = search(page, "torn write")
    sections = [n for n, r in enumerate(results)
                if r["kind"] == "Section" and r["href"].startswith("lesson-11.html#")]
    assert sections, f"no section of lesson 11 among {results}"
    first = results[sections[0]]
    assert first["where"].startswith("Lesson 11 · "), "a result names its page"
    assert " › " in first["where"], "and its section"
    assert "torn" in first["snippet"].lower(), "the snippet shows the words found"
    assert page.locator(f"{RESULTS} mark").count() >= 1, "the words found are marked"
    screenshot(page, "search-results")
    page.locator(RESULTS).nth(sections[0]).click()
    page.wait_for_url("**/lesson-11.html#*")
    anchor = first["href"].split("#", 1)[1]
    target = page.locator(f"[id='{anchor}']")
    assert target.count() == 1, f"the result's anchor #{anchor} is on the page"
    box = target.bounding_box()
    assert -2 <= box["y"] < 900, "the page opens at the place found"
    marks = page.locator("main mark")   # in the section: its heading and what follows it
    assert marks.count() >= 1, "the words found are marked where the reader lands"
    assert "torn" in " ".join(m.lower() for m in marks.all_inner_texts())


@pytest.mark.parametrize("words, kind, href", [
    ("plug message 4 stored", "Check", "lesson-11.html#check-11-"),  # a check's question (the seed's)
    ("ScriptedModel forgetful", "Code cell", "lesson-01.html#cell-1-"),  # a cell's code
    ("SessionLog", "Lab: SessionLog", "lesson-11.html#lab-11-1"),    # a lab's title
])
def test_checks_cells_and_labs_are_found(page, base_url, words, kind, href):
    page.goto(base_url + "lesson-02.html")
    results = search(page, words)
    assert any(r["kind"] == kind and r["href"].startswith(href) for r in results), results


def test_a_word_found_as_written_comes_before_one_a_letter_away(page, base_url):
    """A typo is forgiven only when the word itself is nowhere: "replay" lists places that say
    replay, not the many that say "reply"."""
    page.goto(base_url + "lesson-11.html")
    results = search(page, "replay")
    # a glossary entry says its term in its heading ("Glossary › replay"), its definition below
    assert results and all("replay" in (r["snippet"] + r["where"]).lower() for r in results), results
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")      # out of the box, so that "/" reaches it again
    results = search(page, "replya")   # nowhere as written: the typo is forgiven
    assert results, "a long word one letter off still finds something"


def test_an_identifier_is_searched_whole_and_its_parts_still_find_it(page, base_url):
    page.goto(base_url + "lesson-04.html")
    results = search(page, "is_error")
    assert results, "is_error is in the book"
    marks = page.locator(f"{RESULTS} mark").all_inner_texts()
    assert marks and {m.lower() for m in marks} == {"is_error"}, f"only is_error is marked, not every 'is': {marks}"
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    assert search(page, "error"), "a part of an identifier still finds it"


def test_places_that_say_every_word_come_first(page, base_url, site_dir):
    index = json.loads((site_dir / "search" / "index.json").read_text())
    text = {f["url"]: f.get("text", "").lower() for f in index["index"]["storedFields"].values()}
    page.goto(base_url + "lesson-11.html")
    results = search(page, "torn write")
    assert results and "torn" in results[0]["snippet"].lower(), results[0]
    saying = [("torn" in text[r["href"]] and "write" in text[r["href"]]) for r in results]
    assert saying == sorted(saying, reverse=True), f"a place without every word ranks above one with all: {results}"


def test_the_index_never_gives_away_an_explanation_or_a_model_answer(page, base_url, site_dir):
    """What a page folds away until the reader has answered (an option's explanation, a hint, a
    model answer) is not in the index, word for word."""
    index = json.loads((site_dir / "search" / "index.json").read_text())
    stored = " ".join(doc["text"] for doc in index["index"]["storedFields"].values())
    page.goto(base_url + "lesson-11.html")
    folded = page.eval_on_selector_all(
        "details.option-explain, details.hint, details.prompt-answer, details.prompt-misses",
        """nodes => nodes.map(node => {
            const copy = node.cloneNode(true);
            copy.querySelector('summary')?.remove();
            return copy.textContent.split(/\\s+/).join(' ').trim();
        })""")
    pieces = [text[len(text) // 2 - 20: len(text) // 2 + 20] for text in folded if len(text) > 80]
    assert len(pieces) > 20
    leaked = [piece for piece in pieces if piece in stored]
    assert leaked == [], f"the index holds what the page folds away: {leaked[:3]}"


def test_the_keyboard_alone_searches_and_leaves(page, base_url):
    page.goto(base_url + "lesson-03.html")
    search(page, "run_agent")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.classList.contains('search-result')")
    page.keyboard.press("ArrowDown")
    second = page.evaluate("document.activeElement.getAttribute('href')")
    assert second == page.locator(RESULTS).nth(1).get_attribute("href")
    page.keyboard.press("Escape")
    assert page.locator(".search-results").is_hidden()
    assert page.evaluate("document.activeElement.id") == "search-input"
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.id") != "search-input", "a second Escape leaves the box"
    # Enter goes to the best result.
    page.keyboard.press("/")
    page.keyboard.press("Control+a")
    page.keyboard.type("SessionLog")
    page.keyboard.press("Enter")
    page.wait_for_url("**/lesson-11.html#*")


def test_slash_in_a_text_box_is_only_a_character(page, base_url):
    page.goto(base_url + "lesson-01.html")
    answer = page.locator(".prompt-input").first
    answer.click()
    page.keyboard.type("a/b")
    assert answer.input_value() == "a/b"
    assert page.evaluate("document.activeElement.id") != "search-input"


def test_a_word_the_book_does_not_have_says_so(page, base_url):
    page.goto(base_url + "index.html")
    results = search(page, "zyxwvut")
    assert results == []
    assert "Nothing in the book matches" in page.text_content(".search-status")


def test_search_on_a_phone_fits_the_screen(page, base_url):
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(base_url + "lesson-06.html")
    search(page, "truncate_tail")
    panel = page.locator(".search-results").bounding_box()
    assert panel["x"] >= 0 and panel["x"] + panel["width"] <= 390
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "search-results-phone")
