"""The glossary (builder/glossary.py) on copies of the fixture book (tests/fixtures/book): its
welcome page 00 comes before lesson 01. A term is introduced by a `{term}` role and a line of the
page's `::: terms`; a use on an earlier page stops the build at its file and line unless it is
marked `{ahead}`; a later page's first use gets a card; glossary.html lists every term."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from builder import course as course_stage, glossary, search, source as source_stage
from builder.errors import BuildError
from builder.pipeline import build
from builder.project import Project

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "book"
WELCOME = "lessons/00-welcome/page.md"
LESSON = "lessons/01-hello/page.md"

INTRODUCE = """
## Salutations

A {term}`salutation` is what a program says first.

::: terms
- salutation | salutations: the first words a program says, before it does any work.
:::
"""


@pytest.fixture
def book(tmp_path) -> Path:
    copy = tmp_path / "book"
    shutil.copytree(FIXTURE, copy)
    return copy


def add(book: Path, rel: str, text: str) -> None:
    page = book / rel
    page.write_text(page.read_text(encoding="utf-8") + text, encoding="utf-8")


def line_of(book: Path, rel: str, needle: str) -> int:
    lines = (book / rel).read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if needle in line)


def collect(book: Path) -> glossary.Glossary:
    project = Project.at(book)
    course = course_stage.load(project)
    return glossary.collect([source_stage.parse(project, course, page) for page in course.written])


def refused(book: Path) -> BuildError:
    with pytest.raises(BuildError) as caught:
        collect(book)
    return caught.value


# -- the rule ---------------------------------------------------------------------------------

def test_a_term_used_before_its_page_stops_the_build_at_its_file_and_line(book):
    add(book, LESSON, INTRODUCE)
    add(book, WELCOME, "\nEvery lesson opens with a\nsalutation of its own.\n")
    error = refused(book)
    assert (error.path, error.line) == (WELCOME, line_of(book, WELCOME, "salutation of its own"))
    assert str(error) == (f"{WELCOME}:{line_of(book, WELCOME, 'salutation of its own')}: 'salutation' is used "
                          f"before the page that introduces it, Lesson 01 · Say hello "
                          f"({LESSON}:{line_of(book, LESSON, '{term}')}): reword it, or mark a deliberate "
                          "forward reference {ahead}`salutation`")


def test_every_early_use_is_named_with_its_line(book):
    add(book, LESSON, INTRODUCE)
    add(book, WELCOME, "\n## Salutations ahead\n\nTwo salutations here.\n\n- and a Salutation in a list\n")
    error = refused(book)
    said = str(error)
    introduced = f"{LESSON}:{line_of(book, LESSON, '{term}')}"
    assert said == "\n".join(
        f"{WELCOME}:{line_of(book, WELCOME, needle)}: '{word}' is used before the page that introduces "
        f"it, Lesson 01 · Say hello ({introduced}): reword it, or mark a deliberate forward reference "
        f"{{ahead}}`{word}`"
        for needle, word in (("## Salutations ahead", "Salutations"), ("Two salutations", "salutations"),
                             ("a Salutation in a list", "Salutation"))) + "\n3 glossary problems in all"


def test_an_ahead_use_code_and_link_text_pass(book):
    add(book, LESSON, INTRODUCE)
    add(book, WELCOME, "\nLesson 01 teaches the {ahead}`salutation`. In code: `salutation`, and "
                       "[a salutation link](lesson:01).\n\n```text\nsalutation\n```\n")
    found = collect(book)
    assert list(found.terms) == ["salutation"]
    assert found.ahead == 1
    assert found.terms["salutation"].section == "Salutations"


def test_an_ahead_on_a_term_already_introduced_is_refused(book):
    add(book, WELCOME, INTRODUCE)
    add(book, LESSON, "\nThe {ahead}`salutation` again.\n")
    error = refused(book)
    assert str(error) == (f"{LESSON}:{line_of(book, LESSON, '{ahead}')}: {{ahead}}`salutation` marks a "
                          f"forward reference, but 'salutation' is introduced by Welcome "
                          f"({WELCOME}:{line_of(book, WELCOME, '{term}')}), not after this page: drop the mark")


def test_a_definition_without_its_term_is_refused(book):
    add(book, LESSON, "\n::: terms\n- farewell: the last words.\n:::\n")
    error = refused(book)
    assert (error.path, error.line) == (LESSON, line_of(book, LESSON, "- farewell"))
    assert error.message == ("the term 'farewell' has a definition but no {term}`farewell` on this "
                             "page: mark the place the page teaches it")


def test_a_term_without_its_definition_is_refused(book):
    add(book, LESSON, "\nA {term}`farewell` ends it.\n")
    error = refused(book)
    assert (error.path, error.line) == (LESSON, line_of(book, LESSON, "{term}`farewell`"))
    assert error.message == ("{term}`farewell` has no line in this page's '::: terms' box: add "
                             "'- farewell: <its one-line definition>'")


def test_a_term_defined_twice_is_refused_with_both_places(book):
    add(book, WELCOME, INTRODUCE)
    add(book, LESSON, INTRODUCE)
    said = str(refused(book))
    assert said == (f"{LESSON}:{line_of(book, LESSON, '{term}')}: {{term}}`salutation`: the term is "
                    f"introduced by Welcome ({WELCOME}:{line_of(book, WELCOME, '{term}')}); write it "
                    f"plain here\n"
                    f"{LESSON}:{line_of(book, LESSON, '- salutation')}: the term 'salutation' is defined "
                    f"twice: first at {WELCOME}:{line_of(book, WELCOME, '- salutation')}\n"
                    "2 glossary problems in all")


def test_a_malformed_terms_line_stops_the_parse(book):
    add(book, LESSON, "\nA {term}`farewell`.\n\n::: terms\n- farewell without a colon\n:::\n")
    with pytest.raises(BuildError) as caught:
        collect(book)
    assert caught.value.line == line_of(book, LESSON, "- farewell without")
    assert str(caught.value) == (f"{LESSON}:{line_of(book, LESSON, '- farewell without')}: a line of "
                                 "'::: terms' is '- term: its one-line definition' (other forms after "
                                 "the term, with |)")


# -- what the build draws -----------------------------------------------------------------------

@pytest.fixture
def built(book, tmp_path, monkeypatch):
    add(book, WELCOME, INTRODUCE)
    add(book, LESSON, "\n## Salutations in headings\n\nA salutation first, then salutations "
                      "again, `salutation` in code.\n")
    seen = {}
    documents = search.documents
    monkeypatch.setattr(search, "documents", lambda pages: seen.setdefault("docs", documents(pages)))
    out = tmp_path / "site"
    build(Project.at(book), out, assets=False, log=lambda line: None)
    return out, seen["docs"]


def test_the_first_later_use_has_a_card_and_no_other(built):
    out, _ = built
    html = (out / "lesson-01.html").read_text(encoding="utf-8")
    assert html.count('class="term"') == 1
    assert html.count('class="term-card"') == 1
    card = re.search(r'<span class="term">.*?</span></span>', html, re.S).group(0)
    assert '<a class="term-link" href="glossary.html#salutation" aria-describedby="card-salutation">salutation</a>' in card
    assert "the first words a program says" in card
    assert 'href="welcome.html#term-salutation">Introduced in Welcome' in card
    assert '<h2 id="salutations-in-headings"' in html and "Salutations in headings</h2>" in html
    assert "<code>salutation</code>" in html


def test_the_introduction_is_a_dfn_and_the_box_lists_the_words(built):
    out, _ = built
    html = (out / "welcome.html").read_text(encoding="utf-8")
    assert '<dfn class="term-intro" id="term-salutation">salutation</dfn>' in html
    assert "Words this page introduced" in html
    assert '<a href="glossary.html#salutation">salutation</a>' in html
    assert 'class="term-card"' not in html        # not on the page that introduces it


def test_the_glossary_page_lists_each_term_with_its_pages(built):
    out, _ = built
    html = (out / "glossary.html").read_text(encoding="utf-8")
    assert '<h3 id="salutation">salutation</h3>' in html
    assert "the first words a program says, before it does any work." in html
    assert 'Introduced in <a href="welcome.html#term-salutation">Welcome</a>, in “Salutations”.' in html
    assert 'Used after in <a href="lesson-01.html">Lesson 01 · Say hello</a>.' in html
    assert "<script" not in html.split("<main")[1].split("</main>")[0]   # reads without JavaScript
    assert 'href="glossary.html"' in (out / "index.html").read_text(encoding="utf-8")


def test_search_indexes_the_glossary_but_not_the_cards(built):
    _, docs = built
    entry = next(d for d in docs if d["url"] == "glossary.html#salutation")
    assert entry["title"] == "salutation" and "the first words a program says" in entry["text"]
    lesson = " ".join(d["text"] for d in docs if d["url"].startswith("lesson-01.html"))
    assert "A salutation first" in lesson and "Introduced in" not in lesson
