"""The book's rules about prompts and about the whole book (builder/rules.py), on copies of the
fixture book (tests/fixtures/book) given the checks or blocks each rule is about."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from builder import course as course_stage, rules, source as source_stage
from builder.errors import BuildError
from builder.project import Project

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "book"
LESSON = "lessons/01-hello/page.md"


@pytest.fixture
def book(tmp_path) -> Path:
    copy = tmp_path / "book"
    shutil.copytree(FIXTURE, copy)
    return copy


def parsed(book: Path) -> list:
    project = Project.at(book)
    course = course_stage.load(project)
    return [source_stage.parse(project, course, page) for page in course.written]


def lesson(book: Path):
    return next(s for s in parsed(book) if s.rel == LESSON)


# -- one list of common answers per prompt --------------------------------------------------------

def test_a_prompt_with_one_misses_block_passes(book):
    assert list(rules.prompts_have_one_misses_block(lesson(book))) == []


def test_a_second_misses_block_is_refused_at_its_line(book):
    page = book / LESSON
    text = page.read_text()
    second = '::: misses\n- "`shout(greet)`." That passes the function, not its result.\n:::\n'
    page.write_text(text.replace("::::\n\n```python cell editable id=shout", second + "::::\n\n```python cell editable id=shout", 1))
    lines = page.read_text().splitlines()
    first, again = [n for n, line in enumerate(lines, 1) if line == "::: misses"]
    assert list(rules.prompts_have_one_misses_block(lesson(book))) == [
        (again, f"prompt 1 has a second '::: misses' (the first is on line {first}): put the "
                f"common answers in one list")]


# -- where the right answers sit, across the whole book --------------------------------------------

OPTION_TEXTS = ("Alpha", "Bravo two", "Charlie three x", "Delta four four")


def check(right: int, options: int = 3, right_longest: bool = False) -> str:
    """A check whose right option is at `right` (1-based). The options get lengths that vary with
    the position, so the right one is the longest only when asked (or when it falls there)."""
    parts = [":::: check", "Which one?", ""]
    for n in range(1, options + 1):
        text = OPTION_TEXTS[n - 1]
        if right_longest and n == right:
            text = "The longest option of them all"
        parts += [f"::: option{' right' if n == right else ''}", text, "", "Because.", ":::", ""]
    return "\n".join(parts + ["::::", ""])


def add_checks(book: Path, rights: list[int], **kind) -> None:
    page = book / LESSON
    page.write_text(page.read_text() + "\n" + "\n".join(check(r, **kind) for r in rights))


def checks_of(book: Path) -> list:
    return [c for s in parsed(book) for c in s.model.checks]


def test_the_fixture_book_and_a_balanced_book_pass(book):
    rules.check_book(parsed(book), "lessons/course.yaml")      # one check: nothing to judge
    add_checks(book, [1, 2, 3] * 8)
    rules.check_book(parsed(book), "lessons/course.yaml")


def test_a_position_never_right_stops_the_build_with_the_table(book):
    add_checks(book, [2, 3] * 12)          # 25 checks with the fixture's; first never right
    with pytest.raises(BuildError) as caught:
        rules.check_book(parsed(book), "lessons/course.yaml")
    error = caught.value
    assert (error.path, error.line) == ("lessons/course.yaml", 0)
    assert error.message == ("right answers are lopsided across the book's 25 checks: "
        "the right option is in position 1 in none of 25 checks (8.3 by chance)")
    rows = [line.split() for line in error.detail.splitlines()]
    assert rows[0] == ["checks", "right", "by", "chance"]
    assert rows[1:4] == [["position", "1", "25", "0", "8.3"], ["position", "2", "25", "13", "8.3"],
                         ["position", "3", "25", "12", "8.3"]]


def test_a_position_with_far_more_than_its_share_stops_the_build(book):
    add_checks(book, [2] * 20 + [1, 3, 1, 3])
    with pytest.raises(BuildError) as caught:
        rules.check_book(parsed(book), "lessons/course.yaml")
    assert str(caught.value) == ("lessons/course.yaml: right answers are lopsided across the book's 25 checks: "
        "the right option is in position 2 far more often than chance (21 of 25 checks, 8.3 by chance)\n"
        "                      checks  right  by chance\n"
        "  position 1              25      2        8.3\n"
        "  position 2              25     21        8.3\n"
        "  position 3              25      2        8.3\n"
        "  the longest option      25      2        8.3")


def test_a_position_never_right_in_a_few_checks_is_chance(book):
    add_checks(book, [2, 3] * 3)           # 7 checks, first never right: 6% likely, not refused
    rules.check_book(parsed(book), "lessons/course.yaml")


def test_the_right_option_being_the_longest_far_too_often_stops_the_build(book):
    add_checks(book, [1, 2, 3] * 8, right_longest=True)
    with pytest.raises(BuildError) as caught:
        rules.check_book(parsed(book), "lessons/course.yaml")
    assert str(caught.value) == ("lessons/course.yaml: right answers are lopsided across the book's 25 checks: "
        "the right option is the longest option far more often than chance (24 of 25 checks, 8.3 by chance)\n"
        "                      checks  right  by chance\n"
        "  position 1              25      8        8.3\n"
        "  position 2              25      9        8.3\n"
        "  position 3              25      8        8.3\n"
        "  the longest option      25     24        8.3")
    assert "position" not in caught.value.message


def test_a_fourth_position_counts_only_in_checks_that_have_one(book):
    add_checks(book, [1, 2, 3, 4] * 6, options=4)
    tallies = {t.name: t for t in rules.answer_tallies(checks_of(book))}
    assert (tallies["position 4"].available, tallies["position 4"].observed) == (24, 6)
    assert tallies["position 4"].expected == pytest.approx(6.0)
    assert tallies["position 1"].expected == pytest.approx(6.0 + 1 / 3)
    rules.check_book(parsed(book), "lessons/course.yaml")


def test_chance_is_the_sum_of_each_checks_own_odds():
    tally = rules.Tally(name="position 1", available=2, observed=0, chances=[0.5, 0.25])
    assert tally.distribution() == pytest.approx([0.375, 0.5, 0.125])


def test_a_position_seldom_right_stops_the_build(book):
    add_checks(book, [1] + [2, 3] * 20)
    with pytest.raises(BuildError) as caught:
        rules.check_book(parsed(book), "lessons/course.yaml")
    assert str(caught.value) == ("lessons/course.yaml: right answers are lopsided across the book's 42 checks: "
        "the right option is in position 1 far less often than chance (1 of 42 checks, 14.0 by chance)\n"
        "                      checks  right  by chance\n"
        "  position 1              42      1       14.0\n"
        "  position 2              42     21       14.0\n"
        "  position 3              42     20       14.0\n"
        "  the longest option      42     20       14.0")
