"""questions.json and review.html, as the build writes them from the fixture course
(tests/fixtures/book): every check and prompt with the HTML its page draws, the right option by
its place, and a review page whose HTML holds no question, no option and no answer."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.pipeline import build
from builder.project import Project
from test_build import FIXTURE, dom


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "_site"
    build(Project.at(FIXTURE), out, assets=False, log=lambda line: None)
    return out


def test_questions_json_holds_each_check_as_its_page_draws_it(site):
    questions = json.loads((site / "questions.json").read_text(encoding="utf-8"))
    page = dom(site / "lesson-01.html").find("section", "check")
    check = questions["checks"]["1-1"]
    assert check["page"] == "01" and check["href"] == "lesson-01.html#check-1-1"
    assert check["name"] == "Lesson 01 · Say hello"
    assert "harness.greet" in check["question"]
    drawn = page.find_all("li", "check-option")
    assert len(check["options"]) == len(drawn) == 3
    assert check["right"] == [("data-right" in o.attrs) for o in drawn].index(True) == 1
    assert "without the comma" in check["options"][0]["text"]
    assert "misses the comma" in check["options"][0]["explain"]
    # the option's own words only: the page's "Explanation" fold and verdict are the page's
    assert "Explanation" not in check["options"][0]["explain"]
    assert "composed" in check["explain"][0]


def test_questions_json_holds_each_prompt_with_its_model_answer(site):
    questions = json.loads((site / "questions.json").read_text(encoding="utf-8"))
    prompt = questions["prompts"]["1-1"]
    assert "shouts a greeting" in prompt["question"]
    assert "HELLO, ADA.!" in prompt["answer"][0]
    assert "shouts only the name" in prompt["misses"][0]
    assert prompt["href"] == "lesson-01.html#prompt-1-1"


def test_the_review_page_holds_no_question_and_no_answer(site):
    html = (site / "review.html").read_text(encoding="utf-8")
    root = dom(site / "review.html")
    assert root.find("div", "review-body").attrs["id"] == "review-body"
    for text in ("harness.greet", "without the comma", "composed", "HELLO, ADA", "data-right"):
        assert text not in html
    assert "questions.json" not in html   # read by the script, never inlined


def test_the_review_is_linked_from_every_page_header_and_the_course_map(site):
    for name in ("index.html", "welcome.html", "lesson-01.html", "review.html"):
        nav = dom(site / name).find("nav", "site-nav")
        assert "review.html" in [a.attrs.get("href") for a in nav.find_all("a")], name
    assert dom(site / "index.html").find("p", "map-review").find("a").attrs["href"] == "review.html"


def test_the_review_and_its_questions_are_saved_for_offline_study(site):
    listed = json.loads((site / "precache.json").read_text())["files"]
    assert "review.html" in listed and "questions.json" in listed
    for script in ("review.js", "review-items.js", "schedule.js", "review-due.js", "questions.js", "harness-map.js"):
        assert f"assets/js/{script}" in listed
