"""The book engine, end to end, on the fixture course in tests/fixtures/book (one lesson with two
labs that uses every directive, a welcome page, and pages not yet written).

Each test builds into a temporary folder with the real pipeline: the real stages.py, lab_check,
cellrun and lab package. The bad-source tests each break one thing in a copy of the fixture and
assert the message, the exact line, exit status 1, and that the site already there is untouched."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

from builder.errors import BuildError  # noqa: E402
from builder.pipeline import build  # noqa: E402
from builder.project import Project  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "book"
PIN = "62eab4e5fe20018613f91bd085b3c9ed69e013a7"


# -- a tiny DOM, so assertions are about elements and attributes, not substrings ----------------

class Node:
    def __init__(self, tag: str, attrs: dict, parent: "Node | None") -> None:
        self.tag, self.attrs, self.parent, self.children, self.text_parts = tag, attrs, parent, [], []

    @property
    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()

    def text(self) -> str:
        return "".join(p if isinstance(p, str) else p.text() for p in self.text_parts)

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs) -> list["Node"]:
        found = []
        for child in self.children:
            if ((tag is None or child.tag == tag) and (cls is None or cls in child.classes)
                    and all(child.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())):
                found.append(child)
            found.extend(child.find_all(tag, cls, **attrs))
        return found

    def find(self, tag: str | None = None, cls: str | None = None, **attrs) -> "Node":
        found = self.find_all(tag, cls, **attrs)
        assert found, f"no <{tag or '*'} class={cls!r} {attrs}> inside <{self.tag}>"
        return found[0]


VOID = {"meta", "link", "img", "br", "hr", "input"}


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.current = Node("#root", {}, None)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: (v if v is not None else "") for k, v in attrs}, self.current)
        self.current.children.append(node)
        self.current.text_parts.append(node)
        if tag not in VOID:
            self.current = node

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.text_parts.append(data)


def dom(path: Path) -> Node:
    parser = _Parser()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.root


# -- fixtures ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "_site"
    report = build(Project.at(FIXTURE), out, assets=False, log=lambda line: None)
    assert report.pages == 2 and report.cells == 5 and report.labs == 2
    return out


@pytest.fixture(scope="module")
def lesson(site) -> Node:
    return dom(site / "lesson-01.html")


@pytest.fixture
def book(tmp_path) -> Path:
    """A copy of the fixture course that a test may break."""
    copy = tmp_path / "book"
    shutil.copytree(FIXTURE, copy)
    return copy


def stages():
    import stages as module
    return module.load(FIXTURE / "harness_py" / "course" / "harness.py", points=["1.1", "1.2", "2.1"])


# -- the pages -----------------------------------------------------------------------------------

def test_lesson_header_names_number_title_minutes_labs_and_what_it_builds_on(lesson):
    header = lesson.find("header", "lesson-header")
    assert header.find(cls="lesson-number").text() == "Lesson 01"
    assert header.find("h1").text() == "Say hello"
    assert header.find(cls="lesson-subtitle").text() == "Two functions and a greeting"
    assert header.find(cls="lesson-minutes").text() == "~20 min"
    assert header.find(cls="lesson-labs").text() == "2 labs"
    builds_on = header.find(cls="lesson-builds-on")
    assert builds_on.find("a").attrs["href"] == "welcome.html"
    new_here = header.find(cls="new-here")
    assert "New here?" in new_here.text()
    assert new_here.find("a").attrs["href"] == "welcome.html"


def test_check_has_its_options_each_with_its_explanation_and_exactly_one_right(lesson):
    check = lesson.find("section", "check")
    assert check.attrs["data-check"] == "1-1"
    assert "harness.greet" in check.find(cls="check-question").text()
    options = check.find_all("li", "check-option")
    assert len(options) == 3
    assert [("data-right" in o.attrs) for o in options] == [False, True, False]
    for option in options:
        explain = option.find("details", "option-explain")
        assert explain.find("summary").text() == "Explanation"
    assert "The right answer." in options[1].find("details").text()
    assert "without the comma" in options[0].find(cls="option-text").text()
    assert "misses the comma" in options[0].find("details").text()
    assert check.find(cls="check-verdict").attrs["aria-live"] == "polite"
    assert "composed" in check.find("details", "check-explain").text()


def test_prompt_has_question_hints_in_order_answer_and_common_answers(lesson):
    prompt = lesson.find("section", "prompt")
    assert "shouts a greeting" in prompt.find(cls="prompt-question").text()
    hints = prompt.find(cls="hints").find_all("details", "hint")
    assert [h.find("summary").text() for h in hints] == ["Hint 1 of 2", "Hint 2 of 2: Nearly the code"]
    assert "HELLO, ADA.!" in prompt.find("details", "prompt-answer").text()
    assert "shouts only the name" in prompt.find("details", "prompt-misses").text()
    assert prompt.find("textarea", "prompt-input")


def test_cells_follow_the_html_contract_with_the_output_the_build_recorded(lesson):
    cells = lesson.find_all("div", "cell")
    assert [c.attrs["data-cell"] for c in cells] == ["1-1", "1-shout", "1-3", "1-4"]
    first, shout, raises, streams = cells
    assert first.attrs["id"] == "cell-1-1" and first.attrs["data-lesson"] == "1"
    assert first.attrs["data-timeout"] == "10"
    assert "data-editable" not in first.attrs and "data-editable" in shout.attrs
    assert "data-raises" in raises.attrs and streams.attrs["data-lab"] == "2"
    assert streams.attrs["data-timeout"] == "5"
    data = json.loads(first.find("script", "cell-data").text())
    # the source only: the output is in the page once, as text (the page never read a JSON copy)
    assert data == {"source": 'import harness\nprint(harness.greet("Ada"))\n'}
    assert first.find("pre", "cell-output").text() == "Hello, Ada.\n"
    assert first.find("pre", "cell-code").find_all("span"), "the code is highlighted by Pygments"
    assert first.find("pre", "cell-code").text() == data["source"]
    assert raises.find("pre", "cell-output").text().endswith(
        "TypeError: greet() missing 1 required positional argument: 'name'\n")
    # no declared output: the page shows what the run printed, stdout and stderr in order
    assert streams.find("pre", "cell-output").text() == "to stdout\nto stderr\n"


def test_figures_are_numbered_per_lesson_with_alt_and_the_file_copied(site, lesson):
    figure = lesson.find("figure", "figure")
    assert figure.find(cls="figure-number").text() == "Figure 1.1"
    image = figure.find("img")
    assert image.attrs["alt"] == "A box labelled greet with an arrow to the word Hello."
    assert image.attrs["src"] == "assets/figures/01-1-hello.svg"
    assert (site / image.attrs["src"]).read_bytes() == (FIXTURE / "lessons/01-hello/figures/01-1-hello.svg").read_bytes()
    assert "in one arrow" in figure.find("figcaption").text()


def test_tau_citations_link_to_the_pinned_commit_and_lines(lesson):
    links = [a for a in lesson.find_all("a", "tau")]
    hrefs = [a.attrs["href"] for a in links]
    assert f"https://github.com/huggingface/tau/blob/{PIN}/src/tau_agent/harness.py#L108-L115" in hrefs
    assert f"https://github.com/huggingface/tau/blob/{PIN}/dev-notes/push-based-persistence.md" in hrefs
    assert links[0].text() == "src/tau_agent/harness.py:108-115"
    assert lesson.find(cls="general").text() == "general knowledge Most programs greet before they work."


def test_notes_asides_and_side_by_side(lesson):
    source = lesson.find("aside", "note-source")
    assert source.find(cls="note-title").text() == "Where this comes from"
    aside = lesson.find("aside", "note-aside")
    assert aside.find(cls="note-title").text() == "Why a full stop"
    sides = lesson.find(cls="side-by-side").find_all("figure", "side")
    assert [s.find("figcaption").text().strip() for s in sides] == ["Ours:", "Theirs:"]
    assert "def greet" in sides[0].find("pre").text()


def test_lab_sections_follow_the_contract_with_starting_file_diff_tests_and_command(lesson):
    first, second = lesson.find_all("section", "lab")
    assert (first.attrs["id"], first.attrs["data-lesson"], first.attrs["data-lab"],
            first.attrs["data-point"]) == ("lab-1-1", "1", "1", "1.1")
    assert second.attrs["data-point"] == "1.2"
    assert first.find(cls="lab-title").text() == "Lab 1.1 greet"
    assert "Write greet(name)" in first.find(cls="lab-spec").text()
    hints = first.find(cls="hints").find_all("details", "hint")
    assert len(hints) == 2
    data = json.loads(first.find("script", "lab-data").text())
    expected = stages()
    assert "starting" not in data           # on the page once: the <pre> below is the file
    assert (data["tests"], data["lesson"], data["lab"]) == ("py/tests/lesson01.py", 1, 1)
    assert first.find("pre", "lab-starting").text() == expected.starting("1.1")
    assert [(li.attrs["data-test"], li.text()) for li in first.find("ol", "lab-tests").find_all("li")] == [
        ("Lab1.test_greets_by_name", 'greet("Ada") returns "Hello, Ada.".'),
        ("Lab1.test_greets_anyone", "greet works for any name, the empty one included.")]
    assert [li.attrs["data-test"] for li in second.find("ol", "lab-tests").find_all("li")] == ["Lab2.test_shouts"]
    assert first.find("pre", "lab-command").text() == \
        "python lab/lab_check.py --harness harness.py --lesson 1 tests.py"
    assert "write greet" not in first.find(cls="lab-done").text() and \
        "You wrote a greeting" in first.find(cls="lab-done").text()
    # the first lab of the course has no earlier stage: no diff; the second diffs from the first
    assert not first.find_all(cls="lab-changes")
    changes = second.find(cls="lab-changes")
    assert changes.find("h3").text() == "What changed since the previous lab"
    rows = changes.find("table", "diff").find_all("tr")
    added = [r.find(cls="diff-text").text() for r in rows if "diff-add" in r.classes]
    removed = [r.find(cls="diff-text").text() for r in rows if "diff-del" in r.classes]
    diff = expected.diff("1.2")
    assert added == [line[1:] for line in diff if line.startswith("+") and not line.startswith("+++")]
    assert removed == [line[1:] for line in diff if line.startswith("-") and not line.startswith("---")]


def test_closing_parts_capabilities_card_sidequest_and_neighbours(lesson):
    assert lesson.find(cls="capabilities").find("li").text() == "Greet someone, and shout."
    card = lesson.find("section", "card")
    labels = [dt.text() for dt in card.find_all("dt")]
    assert labels == ["You hit", "You built", "The principle", "Your harness now", "Still open"]
    assert "return, do not print" in card.find(cls="card-principle").text()
    now = card.find(cls="card-now")
    assert now.find("ul", "inventory").text().split() == ["1", "·", "greetings", "greet,", "shout"], \
        "the card's harness is worked out from the page's reference harness, region by region"
    assert [s.text() for s in now.find_all("strong")] == ["greet", "shout"], "what the page added is marked"
    quest = lesson.find("aside", "sidequest")
    assert "Side quest S1: Greetings in other languages" in quest.text()
    assert "Not yet written." in quest.text() and not quest.find_all("a")
    nav = lesson.find("nav", "page-nav")
    assert nav.find(cls="page-nav-previous").find("a").attrs["href"] == "welcome.html"
    following = nav.find(cls="page-nav-next")
    assert not following.find_all("a") and "not yet written" in following.text()


def test_course_map_lists_every_page_in_order_and_never_links_an_unwritten_one(site):
    entries = dom(site / "index.html").find("ol", "map").find_all("li", "map-entry")
    assert [e.attrs["data-page"] for e in entries] == ["00", "01", "A", "02", "S1"]
    links = {e.attrs["data-page"]: [a.attrs["href"] for a in e.find_all("a")] for e in entries}
    assert links == {"00": ["welcome.html"], "01": ["lesson-01.html"], "A": [], "02": [], "S1": []}
    assert "not yet written" in entries[3].text() and "~25 min" in entries[3].text()
    assert "Say hello" in entries[1].text() and "Two functions and a greeting" in entries[1].text()
    for entry in entries:
        for a in entry.find_all("a"):
            assert (site / a.attrs["href"]).exists()


def test_no_page_links_to_a_file_the_site_does_not_have(site):
    checked = 0
    for page in ("index.html", "welcome.html", "lesson-01.html", "print.html"):
        root = dom(site / page)
        targets = [a.attrs["href"] for a in root.find_all("a") if "href" in a.attrs]
        targets += [n.attrs["src"] for n in root.find_all() if "src" in n.attrs]
        targets += [n.attrs["href"] for n in root.find_all("link")]
        for target in targets:
            if target.startswith(("https://", "#", "data:")):
                continue
            assert (site / target.split("#")[0]).exists(), f"{page} links to {target}"
            checked += 1
    assert checked > 20


def test_the_whole_book_to_print_holds_every_written_page_in_order_with_unique_ids(site, lesson):
    book = dom(site / "print.html")
    articles = book.find_all("article", "book-page")
    assert [(a.attrs["id"], a.attrs["data-page-id"]) for a in articles] == [("page-00", "00"), ("page-01", "01")]
    assert [a.find("h1").text() for a in articles] == ["Welcome", "Say hello"]
    ids = [n.attrs["id"] for n in book.find_all() if "id" in n.attrs]
    assert len(ids) == len(set(ids)), "an id is said twice in print.html"
    # links between pages and to sections lead inside the book
    internal = [a.attrs["href"] for a in book.find_all("a") if a.attrs.get("href", "").startswith("#")]
    assert set(internal) - {"#content"} and all(href[1:] in ids for href in internal)
    new_here = articles[1].find(cls="new-here").find("a", "page-link")
    assert new_here.attrs["href"] == "#page-00"
    assert articles[1].find("h2", id="page-01-a-first-cell").text() == "A first cell"
    # the same parts as the lesson's own page, with the outputs the build recorded
    one = articles[1]
    assert [c.attrs["id"] for c in one.find_all(cls="cell")] == [c.attrs["id"] for c in lesson.find_all(cls="cell")]
    assert [o.text() for o in one.find_all("pre", "cell-output")] == \
        [o.text() for o in lesson.find_all("pre", "cell-output")]
    assert len(one.find_all("li", "check-option")) == len(lesson.find_all("li", "check-option"))
    assert len(one.find_all(cls="figure")) == len(lesson.find_all(cls="figure")) > 0
    # no Python: no boot, no data-lesson, the print page's own script and not main.js
    html = (site / "print.html").read_text(encoding="utf-8")
    assert "boot.js" not in html and "main.js" not in html and "book-print.js" in html
    assert "data-lesson" not in book.find("html").attrs
    # the lesson's own page still links out (the tokens drawn twice are never changed)
    assert lesson.find(cls="new-here").find("a").attrs["href"] == "welcome.html"
    assert "print.html" in [a.attrs.get("href") for a in dom(site / "index.html").find_all("a")]


def test_sections_have_ids_to_link_to(lesson):
    assert lesson.find("h2", id="a-first-cell").text() == "A first cell"


def test_manifest_lists_pages_cells_labs_and_tests(site):
    manifest = json.loads((site / "course.json").read_text())
    assert re.fullmatch(r"[0-9a-f]{16}", manifest["build"])
    pages = {p["id"]: p for p in manifest["pages"]}
    assert list(pages) == ["00", "01", "A", "02", "S1"]
    one = pages["01"]
    assert (one["kind"], one["number"], one["title"], one["minutes"], one["path"]) == \
        ("lesson", 1, "Say hello", 20, "lesson-01.html")
    assert one["cells"] == [{"id": "1-1", "editable": False, "lab": None},
                            {"id": "1-shout", "editable": True, "lab": None},
                            {"id": "1-3", "editable": False, "lab": None},
                            {"id": "1-4", "editable": False, "lab": 2}]
    assert [(lab["number"], lab["title"], lab["point"]) for lab in one["labs"]] == \
        [(1, "greet", "1.1"), (2, "shout", "1.2")]
    assert one["labs"][1]["tests"] == [{"id": "Lab2.test_shouts", "sentence": 'shout("hi") returns "HI!".'}]
    assert pages["02"]["path"] is None and pages["A"]["kind"] == "checkpoint"


def test_worker_files_are_listed_and_present(site):
    listing = json.loads((site / "py" / "files.json").read_text())["files"]
    assert {"cellrun.py", "lab/__init__.py", "lab/lab_check.py", "reference/lesson01.py",
            "tests/lesson01.py", "reference/lesson00.py"} <= set(listing)
    assert (site / "py/reference/lesson00.py").read_text() == ""   # no lab before the welcome page
    on_disk = sorted(p.relative_to(site / "py").as_posix() for p in (site / "py").rglob("*")
                     if p.is_file() and p.name != "files.json")
    assert sorted(listing) == on_disk
    assert (site / "py/reference/lesson01.py").read_text() == stages().reference(1)


def test_downloaded_lab_folder_runs_its_command_under_plain_cpython(site, tmp_path):
    folder = tmp_path / "lesson-01"
    shutil.copytree(site / "downloads" / "lesson-01", folder)
    assert (folder / "harness.py").read_text() == stages().starting("1.1")
    assert (folder / "harness-lab2.py").read_text() == stages().starting("1.2")
    command = [sys.executable, "lab/lab_check.py", "--harness", "harness.py", "--lesson", "1", "tests.py"]
    starting = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=60)
    assert starting.returncode == 1, starting.stdout + starting.stderr
    assert "FAIL" in starting.stdout
    (folder / "harness.py").write_text(stages().solution("1.2"))
    solved = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=60)
    assert solved.returncode == 0, solved.stdout + solved.stderr
    assert "3 passed, 0 failed" in solved.stdout


def test_cli_run_prints_what_a_cell_of_the_lesson_prints(tmp_path):
    cell = tmp_path / "cell.py"
    cell.write_text('import harness\nprint(harness.shout(harness.greet("Bo")))\n')
    done = subprocess.run([sys.executable, "build.py", "--root", str(FIXTURE), "run", "--lesson", "1",
                           str(cell)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "HELLO, BO.!\n")
    cell.write_text("print('a')\n1 / 0\n")
    done = subprocess.run([sys.executable, "build.py", "--root", str(FIXTURE), "run", "--lesson", "1",
                           str(cell)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stdout.startswith("a\nTraceback (most recent call last):\n  File \"cell\", line 2")


def test_a_second_build_replaces_the_site_whole(tmp_path):
    out = tmp_path / "_site"
    first = build(Project.at(FIXTURE), out, assets=False, log=lambda line: None)
    (out / "stale.html").write_text("from an older build")
    again = build(Project.at(FIXTURE), out, assets=False, log=lambda line: None)
    assert not (out / "stale.html").exists() and (out / "lesson-01.html").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["_site"], "no temporary folder is left behind"
    assert first.manifest["build"] == again.manifest["build"], "the same sources, the same build id"


def test_the_build_id_changes_when_a_lesson_does(book, tmp_path):
    before = build(Project.at(FIXTURE), tmp_path / "a", assets=False, log=lambda line: None)
    change(book, "Because a greeting is a sentence", "Because a greeting is a whole sentence")
    after = build(Project.at(book), tmp_path / "b", assets=False, log=lambda line: None)
    assert before.manifest["build"] != after.manifest["build"]


# -- bad sources ---------------------------------------------------------------------------------

LESSON = "lessons/01-hello/page.md"


def line_of(book: Path, text: str, rel: str = LESSON) -> int:
    lines = (book / rel).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def change(book: Path, old: str, new: str, rel: str = LESSON, count: int = 1) -> None:
    path = book / rel
    text = path.read_text()
    assert old in text, f"{old!r} is not in {rel}"
    path.write_text(text.replace(old, new, count))


def fails(book: Path, tmp_path: Path) -> str:
    """Build `book` over an existing site; the build must fail and leave that site intact."""
    out = tmp_path / "_site"
    out.mkdir(exist_ok=True)
    (out / "index.html").write_text("the old site")
    with pytest.raises(BuildError) as caught:
        build(Project.at(book), out, assets=False, log=lambda line: None)
    assert (out / "index.html").read_text() == "the old site"
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("_site")] == ["_site"]
    return str(caught.value)


def test_unknown_directive(book, tmp_path):
    change(book, "::: aside Why a full stop", "::: quiz Why a full stop")
    message = fails(book, tmp_path)
    from builder import directives
    assert message == (f"{LESSON}:{line_of(book, '::: quiz')}: unknown directive '::: quiz' "
                       f"(known: {', '.join(sorted(directives.REGISTRY))})")


def test_a_written_harness_list_in_the_card_is_refused(book, tmp_path):
    change(book, "::: now\n:::", "::: now\n- greet\n:::")
    assert fails(book, tmp_path) == (
        f"{LESSON}:{line_of(book, '::: now')}: a card's '::: now' is worked out from the page's harness "
        "(builder/inventory.py), the same way on every page: leave it empty")


def test_check_without_a_right_option(book, tmp_path):
    change(book, "::: option right", "::: option")
    line = line_of(book, "What does `harness.greet(\"Bo\")`") - 1
    assert fails(book, tmp_path) == \
        f"{LESSON}:{line}: a check needs exactly one right option; this one has 0"


def test_check_with_two_right_options(book, tmp_path):
    change(book, "::: option\nNothing", "::: option right\nNothing")
    line = line_of(book, "What does `harness.greet(\"Bo\")`") - 1
    assert fails(book, tmp_path) == \
        f"{LESSON}:{line}: a check needs exactly one right option; this one has 2"


def test_missing_figure_file(book, tmp_path):
    (book / "lessons/01-hello/figures/01-1-hello.svg").unlink()
    assert fails(book, tmp_path) == \
        f"{LESSON}:{line_of(book, '::: figure')}: figure file lessons/01-hello/figures/01-1-hello.svg does not exist"


def test_cell_that_will_not_parse(book, tmp_path):
    change(book, 'print(harness.shout(harness.greet("Ada")))', 'print(harness.shout(harness.greet("Ada"))')
    line = line_of(book, 'print(harness.shout(harness.greet("Ada"))')
    message = fails(book, tmp_path)
    assert message == f"{LESSON}:{line}: cell does not parse: '(' was never closed"


def test_link_to_a_page_that_does_not_exist(book, tmp_path):
    change(book, "A greeting is the smallest program that talks back.",
           "A greeting is the smallest program that talks back.\nSee [nowhere](lesson:99).")
    assert fails(book, tmp_path) == \
        f"{LESSON}:{line_of(book, '(lesson:99)')}: link to lesson:99: there is no page '99' in course.yaml"


def test_link_to_a_page_not_written_yet(book, tmp_path):
    change(book, "The name goes between the comma and the full stop.",
           "The name goes between\nthe comma and [the full stop](lesson:02).")
    assert fails(book, tmp_path) == (f"{LESSON}:{line_of(book, '(lesson:02)')}: link to lesson:02: "
                                     f"02 (Say goodbye) is not written yet")


def test_link_in_front_matter_names_its_line(book, tmp_path):
    change(book, "[Read the welcome page](lesson:00)", "[Read the welcome page](lesson:A)")
    assert fails(book, tmp_path) == \
        f"{LESSON}:{line_of(book, 'new_here:')}: link to lesson:A: Checkpoint A (Greeting doctor) is not written yet"


def test_one_character_of_a_declared_output_fails_with_file_and_line(book, tmp_path):
    change(book, "HELLO, ADA.!\n```", "HELLO, ADA!!\n```")
    message = fails(book, tmp_path)
    line = line_of(book, "HELLO, ADA!!")
    assert message == (f"{LESSON}:{line}: cell output differs\n"
                       "--- declared\n+++ printed\n@@ -1 +1 @@\n-HELLO, ADA!!\n+HELLO, ADA.!")


def test_cell_that_raises_without_being_marked(book, tmp_path):
    change(book, "```python cell raises", "```python cell")
    message = fails(book, tmp_path)
    line = line_of(book, "harness.greet()")
    assert message == (f"{LESSON}:{line}: cell 1-3 raised TypeError: greet() missing 1 required "
                       "positional argument: 'name' (mark the cell `raises` if it is meant to)\n"
                       # the cell's own traceback, as the reader's page would show it: no build frame
                       "Traceback (most recent call last):\n"
                       '  File "cell", line 2, in <module>\n'
                       "    harness.greet()\n"
                       "TypeError: greet() missing 1 required positional argument: 'name'")


def test_cell_marked_raises_that_does_not(book, tmp_path):
    change(book, "```python cell editable id=shout", "```python cell editable id=shout raises")
    message = fails(book, tmp_path)
    assert message == (f"{LESSON}:{line_of(book, 'id=shout raises')}: cell 1-shout is marked "
                       "`raises` and did not raise\nHELLO, ADA.!")


def test_cell_over_its_timeout(book, tmp_path):
    change(book, "```python cell timeout=5 lab=2\nimport sys",
           "```python cell timeout=1 lab=2\nimport sys, time\ntime.sleep(30)")
    assert fails(book, tmp_path) == (f"{LESSON}:{line_of(book, 'timeout=1')}: cell 1-4 timed out after "
                                     f"1 s (give it timeout=S if it needs longer)")


def test_cell_that_ends_the_process(book, tmp_path):
    change(book, "```python cell timeout=5 lab=2\nimport sys", "```python cell timeout=5 lab=2\nimport os\nos._exit(3)\nimport sys")
    assert fails(book, tmp_path) == (f"{LESSON}:{line_of(book, 'timeout=5')}: cell 1-4 ended the Python "
                                     f"process it ran in (a cell must return, or raise)")


def test_capability_checklist_must_say_what_course_yaml_says(book, tmp_path):
    change(book, "- Greet someone, and shout.", "- Greet someone.")
    assert fails(book, tmp_path) == (f"{LESSON}:{line_of(book, '- Greet someone.')}: capability 1 says "
                                     f"'Greet someone.'; course.yaml says 'Greet someone, and shout.'")


def test_an_empty_capability_checklist_is_filled_from_course_yaml(book, tmp_path):
    change(book, "::: capabilities\n- Greet someone, and shout.\n:::", "::: capabilities\n:::")
    out = tmp_path / "_site"
    build(Project.at(book), out, assets=False, log=lambda line: None)
    items = dom(out / "lesson-01.html").find(cls="capabilities").find_all("li")
    assert [li.text() for li in items] == ["Greet someone, and shout."]


def test_lab_the_course_does_not_have(book, tmp_path):
    change(book, "::::: lab 2", "::::: lab 3")
    assert fails(book, tmp_path) == f"{LESSON}:{line_of(book, '::::: lab 3')}: lab 3: course.yaml gives page 01 2 labs"


def test_the_command_line_exits_1_with_the_message(book, tmp_path):
    change(book, "::: source", "::: sauce")
    out = tmp_path / "_site"
    out.mkdir()
    (out / "index.html").write_text("the old site")
    done = subprocess.run([sys.executable, "build.py", "--root", str(book), "--out", str(out), "--no-assets"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    from builder import directives
    assert done.stderr == (f"{LESSON}:{line_of(book, '::: sauce')}: unknown directive '::: sauce' "
                           f"(known: {', '.join(sorted(directives.REGISTRY))})\n")
    assert (out / "index.html").read_text() == "the old site"


def test_the_worked_example_in_the_authoring_guide_is_the_fixture_lesson():
    guide = (ROOT / "docs" / "authoring.md").read_text()
    example = guide.split("``````markdown\n", 1)[1].rsplit("``````", 1)[0]
    assert example == (FIXTURE / "lessons" / "01-hello" / "page.md").read_text()


def test_a_directive_that_is_never_closed(book, tmp_path):
    change(book, "Loud and clear.\n:::\n", "Loud and clear.\n")
    lines = (book / LESSON).read_text().splitlines()
    line = max(n for n, text in enumerate(lines, 1) if text == "::: done")
    assert fails(book, tmp_path) == f"{LESSON}:{line}: '::: done' is never closed (a line ':::' ends it)"


def test_a_part_left_open_inside_its_parent(book, tmp_path):
    change(book, "It returns the text. The cell above printed what it returned.\n:::\n",
           "It returns the text. The cell above printed what it returned.\n")
    options = [n for n, text in enumerate((book / LESSON).read_text().splitlines(), 1) if text == "::: option"]
    line = options[1]        # the third option of the check, the second one not marked right
    explain = line_of(book, "::: explain")
    assert fails(book, tmp_path) == (
        f"{LESSON}:{line}: '::: option' is never closed: the ':::' on line {explain + 2} closes it, "
        f"so '::: explain' on line {explain} ends up inside it")


# A git copy of Tau (bare or not), the same PATH `python build.py cite --tau PATH` takes.
TAU_GIT = Path(os.environ["BOOK_TAU"]) if os.environ.get("BOOK_TAU") else None


@pytest.mark.skipif(TAU_GIT is None, reason="set BOOK_TAU to a git copy of huggingface/tau")
def test_every_tau_citation_of_the_book_exists_at_the_pinned_commit():
    """Each {tau}`path:a-b` of every written lesson names a file at the pin with at least b lines.
    (The build checks every citation against lessons/tau.lock.json; this checks the lock's
    source itself, where a copy of Tau is at hand.)"""
    assert (TAU_GIT / "HEAD").exists() or (TAU_GIT / ".git").exists(), f"BOOK_TAU={TAU_GIT}: not a git copy"
    from builder import course as course_stage, source as source_stage

    project = Project.book()
    course = course_stage.load(project)

    def roles(tokens):
        for token in tokens:
            if token.type == "directive":
                yield from roles(token.children)
            for child in (token.children or []) if token.type == "inline" else []:
                if child.type == "myst_role" and child.meta["name"] == "tau":
                    yield child.content.strip()

    problems, seen = [], 0
    for page in course.written:
        for ref in roles(source_stage.parse(project, course, page).tokens):
            seen += 1
            path, _, lines = ref.partition(":")
            shown = subprocess.run(["git", "-C", str(TAU_GIT), "show", f"{course.tau_commit}:{path}"],
                                   capture_output=True, text=True)
            if shown.returncode:
                problems.append(f"lesson {page.id}: {ref}: no such file at {course.tau_commit[:7]}")
            elif lines and int(lines.split("-")[-1]) > len(shown.stdout.splitlines()):
                problems.append(f"lesson {page.id}: {ref}: the file has {len(shown.stdout.splitlines())} lines")
    assert seen and problems == []


# -- options (builder/options.py): every directive and the cell read theirs through a schema -----

OPTION_BREAKS = {
    "an unbalanced quote": (
        "```python cell editable id=shout", "```python cell editable id=it's",
        "cell: options \"editable id=it's\": no closing quotation (an unbalanced quote)"),
    "a negative timeout": (
        "```python cell timeout=5 lab=2", "```python cell timeout=-1 lab=2",
        "cell: timeout=-1: a number of seconds above 0 and at most 600"),
    "a zero timeout": (
        "```python cell timeout=5 lab=2", "```python cell timeout=0 lab=2",
        "cell: timeout=0: a number of seconds above 0 and at most 600"),
    "a timeout of nan": (
        "```python cell timeout=5 lab=2", "```python cell timeout=nan lab=2",
        "cell: timeout=nan: a number of seconds above 0 and at most 600"),
    "a timeout of inf": (
        "```python cell timeout=5 lab=2", "```python cell timeout=inf lab=2",
        "cell: timeout=inf: a number of seconds above 0 and at most 600"),
    "a timeout over the limit": (
        "```python cell timeout=5 lab=2", "```python cell timeout=601 lab=2",
        "cell: timeout=601: a number of seconds above 0 and at most 600"),
    "a timeout that is no number": (
        "```python cell timeout=5 lab=2", "```python cell timeout=five lab=2",
        "cell: timeout=five: not a number of seconds"),
    "a timeout with no value": (
        "```python cell timeout=5 lab=2", "```python cell timeout lab=2",
        "cell: timeout needs a value: timeout=<seconds, above 0 and at most 600>"),
    "an option given twice": (
        "```python cell timeout=5 lab=2", "```python cell timeout=5 lab=2 timeout=6",
        "cell: timeout is given twice"),
    "an unknown cell flag": (
        "```python cell editable id=shout", "```python cell editible id=shout",
        "cell: unknown option 'editible' (options: editable, raises, answers, lab=INT, "
        "timeout=SECONDS, id=NAME)"),
    "an unknown cell value": (
        "```python cell editable id=shout", "```python cell editable name=shout",
        "cell: unknown option name= (options: editable, raises, answers, lab=INT, "
        "timeout=SECONDS, id=NAME)"),
    "a lab that is no number": (
        "```python cell timeout=5 lab=2", "```python cell timeout=5 lab=two",
        "cell: lab=two: not a whole number"),
    "lab zero": (
        "```python cell timeout=5 lab=2", "```python cell timeout=5 lab=0",
        "cell: lab=0: must be 1 or more"),
    "a lab the page does not have": (
        "```python cell timeout=5 lab=2", "```python cell timeout=5 lab=3",
        "cell: lab=3: page 01 has labs 1 to 2"),
    "an id with other characters": (
        "```python cell editable id=shout", "```python cell editable id=sh.out",
        "cell: id=sh.out: use letters, digits, - and _"),
    "an option that is not right": (
        "::: option right\n`\"Hello, Bo.\"`", "::: option correct\n`\"Hello, Bo.\"`",
        "'::: option': unknown option 'correct' (options: right)"),
    "a check with options": (
        ":::: check\nWhat does", ":::: check hard\nWhat does",
        "':::: check': unknown option 'hard' (options: no options)"),
    "a figure without src": (
        "::: figure src=figures/01-1-hello.svg", "::: figure",
        "'::: figure': needs src= ('::: figure src=figures/<file>.svg')"),
    "a figure outside figures/": (
        "::: figure src=figures/01-1-hello.svg", "::: figure src=../01-1-hello.svg",
        "'::: figure': src=../01-1-hello.svg: a path inside the page's folder"),
    "a figure under another folder": (
        "::: figure src=figures/01-1-hello.svg", "::: figure src=pictures/01-1-hello.svg",
        "'::: figure': src=pictures/01-1-hello.svg: must be under figures/"),
    "an aside without a title": (
        "::: aside Why a full stop", "::: aside",
        "'::: aside': needs its title: '::: aside <Title>'"),
    "a lab without its number": (
        "::::: lab 2", "::::: lab",
        "'::::: lab': needs its number: '::: lab 1'"),
    "a lab whose number is a word": (
        "::::: lab 2", "::::: lab two",
        "'::::: lab': number=two: not a whole number"),
    "a side quest without its page": (
        "::: sidequest S1", "::: sidequest",
        "'::: sidequest': needs its page: '::: sidequest S2'"),
    "a part with options": (
        "::: explain\n", "::: explain more\n",
        "'::: explain': unknown option 'more' (options: no options)"),
}


@pytest.mark.parametrize("rule", OPTION_BREAKS)
def test_a_bad_option_stops_at_its_line_with_its_name(book, tmp_path, rule):
    old, new, message = OPTION_BREAKS[rule]
    change(book, old, new)
    lines = (book / LESSON).read_text().splitlines()
    line = lines.index(new.split("\n")[0]) + 1
    assert fails(book, tmp_path) == f"{LESSON}:{line}: {message}"


# -- numbering: a pass of its own, after every part is read (builder/source.py, number) -----------

def test_two_cells_with_one_id_stop_at_the_second(book, tmp_path):
    change(book, "```python cell raises\nimport harness", "```python cell raises id=shout\nimport harness")
    line = line_of(book, "```python cell raises id=shout")
    assert fails(book, tmp_path) == f"{LESSON}:{line}: two cells have the id 1-shout"


def test_a_lab_given_twice_stops_at_the_second(book, tmp_path):
    change(book, "::::: lab 2", "::::: lab 1")
    lines = (book / LESSON).read_text().splitlines()
    second = [n for n, text in enumerate(lines, 1) if text == "::::: lab 1"][1]
    assert fails(book, tmp_path) == f"{LESSON}:{second}: lab 1 appears twice"


def test_labs_out_of_order_stop_at_the_first(book, tmp_path):
    change(book, "::::: lab 1", "::::: lab 9")
    change(book, "::::: lab 2", "::::: lab 1")
    change(book, "::::: lab 9", "::::: lab 2")
    line = line_of(book, "::::: lab 2")
    assert fails(book, tmp_path) == f"{LESSON}:{line}: lab 2 comes before lab 1"


def test_a_cell_that_answers_before_any_question_stops_at_its_line(book, tmp_path):
    change(book, "```python cell\nimport harness\nprint(harness.greet", "```python cell answers\nimport harness\nprint(harness.greet")
    line = line_of(book, "```python cell answers")
    assert fails(book, tmp_path) == (f"{LESSON}:{line}: a cell that answers comes after the check "
                                     f"or prompt it answers")


def test_numbers_and_ids_follow_reading_order(site):
    from builder import course as course_stage, source as source_stage
    project = Project.at(FIXTURE)
    course = course_stage.load(project)
    parsed = source_stage.parse(project, course, course.page("01"))
    assert [c.number for c in parsed.model.checks] == [1]
    assert [f.number for f in parsed.model.figures] == [1]
    assert [c.id for c in parsed.cells] == ["1-1", "1-shout", "1-3", "1-4"]
    assert parsed.figures == ["figures/01-1-hello.svg"] and sorted(parsed.labs) == [1, 2]


def test_every_directive_declares_its_options():
    """A directive added without thinking about its options gets none: NONE, never a free pass."""
    from builder import directives, options
    for entry in directives.REGISTRY.values():
        assert isinstance(entry.options, options.Schema), entry.name


def test_the_default_timeout_is_one_number_for_the_build_and_the_page(site):
    from builder import options
    cell = dom(site / "lesson-01.html").find("div", "cell", data_cell="1-1")
    assert float(cell.attrs["data-timeout"]) == options.DEFAULT_TIMEOUT


# -- the book's rules (builder/rules.py): each one stops a page that breaks it at its line ------

RULE_BREAKS = {
    "two options": (
        "::: option\nNothing: it prints the greeting\n\nIt returns the text. The cell above printed "
        "what it returned.\n:::\n", "", "What does `harness.greet",
        "check 1 has 2 options; a check has at least three"),
    "an option with no explanation": (
        "Nothing: it prints the greeting\n\nIt returns the text. The cell above printed what it "
        "returned.\n", "Nothing: it prints the greeting\n", "Nothing: it prints the greeting",
        "check 1: this option has no explanation (say what it misses, or why it holds)"),
    "a prompt with no hint": (
        "::: hint\nYou have two functions. Which one goes inside the other?\n:::\n\n"
        "::: hint Nearly the code\n`shout(greet(...))`\n:::\n\n", "",
        "Write the one line that shouts", "prompt 1 has no '::: hint'"),
    "a prompt with no common answers": (
        "::: misses\n- \"`greet(shout(\"Ada\"))`.\" That shouts only the name.\n:::\n", "",
        "Write the one line that shouts", "prompt 1 has no '::: misses' (the common answers)"),
    "a lab whose last hint is not nearly the code": (
        "::: hint Nearly the code\n`text.upper()", "::: hint Closer\n`text.upper()", "::: hint Closer",
        "lab 2: the last hint is titled 'Nearly the code' (today: 'Closer')"),
    "a prompt with a second list of common answers": (
        "::: misses\n- \"`greet(shout(\"Ada\"))`.\" That shouts only the name.\n:::\n",
        "::: misses\n- \"`greet(shout(\"Ada\"))`.\" That shouts only the name.\n:::\n\n"
        "::: misses\n- \"`shout(greet)`.\" That passes the function, not its result.\n:::\n",
        "- \"`shout(greet)`.\"", "prompt 1 has a second '::: misses' (the first is on line 66): put the "
        "common answers in one list"),
    "a cell with no declared output": (
        "```output\nto stdout\nto stderr\n```\n", "", "```python cell timeout=5 lab=2",
        "cell 1-4 declares no ```output: write what it prints, so the build proves it"),
}


@pytest.mark.parametrize("rule", RULE_BREAKS)
def test_a_page_breaking_a_rule_stops_at_its_line(book, tmp_path, rule):
    old, new, at, message = RULE_BREAKS[rule]
    change(book, old, new)
    line = line_of(book, at) - (1 if at.startswith(("What does", "Write", "Nothing", "- ")) else 0)
    assert fails(book, tmp_path) == f"{LESSON}:{line}: {message}"


def test_a_figure_without_title_stops_at_its_line(book, tmp_path):
    svg = book / "lessons/01-hello/figures/01-1-hello.svg"
    svg.write_text(svg.read_text().replace("<title>greet</title>", ""))
    assert fails(book, tmp_path) == (f"{LESSON}:{line_of(book, '::: figure')}: figures/01-1-hello.svg "
                                     f"has no <title> (for readers who cannot see it)")


def test_a_figure_without_dark_colours_stops_at_its_line(book, tmp_path):
    svg = book / "lessons/01-hello/figures/01-1-hello.svg"
    svg.write_text(svg.read_text().replace("prefers-color-scheme: dark", "min-width: 10px"))
    assert fails(book, tmp_path) == (f"{LESSON}:{line_of(book, '::: figure')}: figures/01-1-hello.svg "
                                     "has no dark colours: add `@media (prefers-color-scheme: dark) { ... }` "
                                     "to its <style>, so the dark theme does not draw it dark on dark")


def test_a_lab_without_a_wrong_design_stops_at_the_lab(book, tmp_path):
    wrong_file = book / "lessons/01-hello/wrong.yaml"
    wrong_file.write_text(wrong_file.read_text().split("- name: whisper")[0])
    assert fails(book, tmp_path) == (f"{LESSON}:{line_of(book, '::::: lab 2')}: lab 2 has no wrong "
                                     "design: add one to wrong.yaml (a change the lesson argues against, "
                                     "which its tests must fail)")


def test_a_wrong_design_naming_a_test_that_does_not_exist_stops_at_its_entry(book, tmp_path):
    change(book, "fails: [test_shouts]", "fails: [test_whispers]", rel="lessons/01-hello/wrong.yaml")
    line = line_of(book, "- name: whisper", rel="lessons/01-hello/wrong.yaml")
    assert fails(book, tmp_path) == (f"lessons/01-hello/wrong.yaml:{line}: wrong design 'whisper': "
                                     f"there is no test Lab2.test_whispers in lessons/01-hello/tests.py")


def test_a_checklist_docstring_that_writes_an_escaped_newline_stops_at_its_line(book, tmp_path):
    # The checklist joins a docstring's words with spaces: the newline \n stands for would show
    # as a space ("a\nb" read "a b" on lesson 06's page). Written \\n it is the two characters.
    rel = "lessons/01-hello/tests.py"
    change(book, '"""greet works for any name, the empty one included."""',
           '"""greet works for any name: "a\\nb" too, and the empty one."""', rel=rel)
    line = line_of(book, '"a\\nb" too', rel=rel)
    assert fails(book, tmp_path) == (f"{rel}:{line}: the docstring of test_greets_anyone writes \\n, "
                                     f"which its checklist line shows as a space: write \\\\n for the "
                                     f"two characters")


def test_a_checklist_docstring_may_write_the_two_characters_or_be_raw():
    from builder.labs import lost_escapes
    source = ('class Lab1:\n'
              '    def test_a(self):\n        """"a\\\\nb" is two lines."""\n'
              '    def test_b(self):\n        r"""exit 2 gives "\\nCommand exited"."""\n'
              '    def test_c(self):\n        """one\n        tab\\there."""\n'
              'class Helper:\n    def test_d(self):\n        """a\\nb"""\n')
    assert lost_escapes(source) == [(8, "test_c", "\\t")]


def test_a_wrong_design_without_its_why_stops_at_its_entry(book, tmp_path):
    change(book, "why: Shouting is capitals and an exclamation mark; this returns the text as it came.",
           "why: TODO", rel="lessons/01-hello/wrong.yaml")
    line = line_of(book, "- name: whisper", rel="lessons/01-hello/wrong.yaml")
    assert fails(book, tmp_path) == (f"lessons/01-hello/wrong.yaml:{line}: wrong design 'whisper': "
                                     "why: says nothing yet; say what the change gets wrong, in the "
                                     "lesson's terms")


def test_a_wrong_design_whose_text_is_not_in_the_solution_stops_at_its_entry(book, tmp_path):
    change(book, 'return f"Hello, {name}."\n  with', 'return f"Hi, {name}."\n  with',
           rel="lessons/01-hello/wrong.yaml")
    line = line_of(book, "- name: no full stop", rel="lessons/01-hello/wrong.yaml")
    assert fails(book, tmp_path) == (f"lessons/01-hello/wrong.yaml:{line}: wrong design 'no full "
                                     "stop': the text to replace is found 0 times in the solution of "
                                     "1.1 (it must be found once)")


READ_WHAT_YOU_CITE = "run `python build.py cite --tau PATH-TO-TAU` and read what you cite"


def test_a_tau_citation_missing_from_the_lock_stops_at_its_line(book, tmp_path):
    change(book, "({tau}`README.md`)", "({tau}`README.md:1-2`)")
    assert fails(book, tmp_path) == (
        f"{LESSON}:{line_of(book, 'README.md:1-2')}: {{tau}}`README.md:1-2` is not in "
        f"lessons/tau.lock.json: {READ_WHAT_YOU_CITE}")


def test_a_lock_entry_no_page_cites_stops_the_build(book, tmp_path):
    lock = book / "lessons" / "tau.lock.json"
    data = json.loads(lock.read_text())
    data["citations"]["src/gone.py:1-3"] = {"path": "src/gone.py", "first": 1, "last": 3, "sha256": "0"}
    lock.write_text(json.dumps(data))
    assert fails(book, tmp_path) == ("lessons/tau.lock.json:1: src/gone.py:1-3 is in the lock and no "
                                     f"page cites it: {READ_WHAT_YOU_CITE}")


def test_a_lock_for_another_tau_commit_stops_the_build(book, tmp_path):
    change(book, PIN, "a" * 40, rel="lessons/course.yaml")
    assert fails(book, tmp_path) == ("lessons/tau.lock.json:1: the lock is for Tau 62eab4e5fe20; "
                                     f"course.yaml pins aaaaaaaaaaaa: {READ_WHAT_YOU_CITE}")


def test_cite_reads_the_pinned_commit_of_a_tau_repository(book, tmp_path):
    """`build.py cite` needs only a git repository of Tau: here a small one made on the spot."""
    repo = tmp_path / "tau"
    repo.mkdir()
    git = lambda *args: subprocess.run(["git", *args], cwd=repo, check=True,  # noqa: E731
                                       capture_output=True, text=True).stdout.strip()
    git("init", "-q")
    files = {"README.md": "# Tau\nA harness.\n", "dev-notes/push-based-persistence.md": "x\n" * 60,
             "src/tau_agent/harness.py": "line\n" * 120}
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "tau")
    commit = git("rev-parse", "HEAD")
    change(book, PIN, commit, rel="lessons/course.yaml")
    done = subprocess.run([sys.executable, "build.py", "--root", str(book), "cite", "--tau", str(repo)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lock = json.loads((book / "lessons" / "tau.lock.json").read_text())
    assert lock["commit"] == commit
    import hashlib
    assert lock["citations"]["README.md"]["sha256"] == hashlib.sha256(files["README.md"].encode()).hexdigest()
    build(Project.at(book), tmp_path / "site", assets=False, log=lambda line: None)
    change(book, "({tau}`README.md`)", "({tau}`README.md:1-9`)")
    done = subprocess.run([sys.executable, "build.py", "--root", str(book), "cite", "--tau", str(repo)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (1, f"build.py cite: {LESSON}:{line_of(book, 'README.md:1-9')}: "
                                                 f"{{tau}}`README.md:1-9`: the file has 2 lines at {commit[:12]}\n")
    change(book, "({tau}`README.md:1-9`)", "({tau}`NOTES.md`)")
    done = subprocess.run([sys.executable, "build.py", "--root", str(book), "cite", "--tau", str(repo)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (1, f"build.py cite: {LESSON}:{line_of(book, 'NOTES.md')}: "
                                                 f"{{tau}}`NOTES.md`: NOTES.md is not in Tau at {commit[:12]}: "
                                                 f"fatal: path 'NOTES.md' does not exist in '{commit}'\n")


def test_a_book_whose_right_answers_sit_in_one_position_stops_with_the_position_table(book, tmp_path):
    """The rule about the whole book (rules.check_book): 24 more checks, each right in second place."""
    one = ":::: check\nWhich one?\n\n" + "".join(
        f"::: option{' right' if n == 2 else ''}\nOption {n}\n\nBecause.\n:::\n\n" for n in (1, 2, 3)) + "::::\n"
    page = book / LESSON
    page.write_text(page.read_text() + "\n" + "\n".join([one] * 24))
    message = fails(book, tmp_path)
    assert message == (
        "lessons/course.yaml: right answers are lopsided across the book's 25 checks: the right option "
        "is in position 1 in none of 25 checks (8.3 by chance); the right option is in position 2 far "
        "more often than chance (25 of 25 checks, 8.3 by chance); the right option is in position 3 in "
        "none of 25 checks (8.3 by chance)\n"
        "                      checks  right  by chance\n"
        "  position 1              25      0        8.3\n"
        "  position 2              25     25        8.3\n"
        "  position 3              25      0        8.3\n"
        "  the longest option      25      0        8.3")


def test_a_figure_is_given_the_width_at_which_its_smallest_label_reads(tmp_path):
    from builder.figures import LEGIBLE_PX, FigureError, legible_width
    small = tmp_path / "small.svg"
    small.write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 700 400"><style>'
                     'text { font-size: 12px; } .tiny { font-size: 7px; }</style>'
                     '<text font-size="9">a</text></svg>', encoding="utf-8")
    assert legible_width(small) == round(700 * LEGIBLE_PX / 7)
    big = tmp_path / "big.svg"
    big.write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 640 300">'
                   '<text font-size="14">a</text></svg>', encoding="utf-8")
    assert legible_width(big) == 640
    boxless = tmp_path / "boxless.svg"
    boxless.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="10"/>', encoding="utf-8")
    with pytest.raises(FigureError) as caught:
        legible_width(boxless)
    assert str(caught.value) == 'its <svg> has no viewBox="0 0 WIDTH HEIGHT", so its size is unknown'


def test_a_page_breaking_several_rules_names_every_problem_in_line_order(book, tmp_path):
    """The rules stage says every problem of the page in one build, each with its line; the first
    stays the error's own `file:line: message`."""
    change(book, "::: hint Nearly the code\n`text.upper()", "::: hint Closer\n`text.upper()")
    change(book, "```output\nto stdout\nto stderr\n```\n", "")
    wrong_file = book / "lessons/01-hello/wrong.yaml"
    wrong_file.write_text(wrong_file.read_text().split("- name: whisper")[0])
    cell = line_of(book, "```python cell timeout=5 lab=2")
    lab = line_of(book, "::::: lab 2")
    hint = line_of(book, "::: hint Closer")
    assert cell < lab < hint
    assert fails(book, tmp_path) == "\n".join([
        f"{LESSON}:{cell}: cell 1-4 declares no ```output: write what it prints, so the build proves it",
        f"{LESSON}:{lab}: lab 2 has no wrong design: add one to wrong.yaml (a change the lesson argues "
        f"against, which its tests must fail)",
        f"{LESSON}:{hint}: lab 2: the last hint is titled 'Nearly the code' (today: 'Closer')"])


def test_every_rule_of_a_page_is_in_rules():
    """Adding a rule is adding a function to RULES: nothing is checked beside it."""
    import inspect
    from builder import rules
    page_rules = {name for name, f in vars(rules).items() if inspect.isfunction(f)
                  and f is not rules.check and list(inspect.signature(f).parameters) == ["source", "around"]}
    assert page_rules == {rule.__name__ for rule in rules.RULES}
    assert len(rules.RULES) == 7


def test_the_authoring_guides_directive_tables_are_written_from_the_registry():
    """docs/authoring.md's directive and cell option tables are what `python -m builder.directives`
    writes from the registry; every directive and option carries its one-line doc."""
    from builder import directives, options
    guide = (ROOT / "docs" / "authoring.md").read_text()
    assert directives.guide_text(guide) == guide, "run python -m builder.directives"
    for entry in directives.REGISTRY.values():
        assert entry.doc, f"::: {entry.name} has no doc"
        assert all(doc for _, doc in directives._option_rows(entry.options)), f"::: {entry.name}: an option has no doc"
    assert all(doc for _, doc in directives._option_rows(options.CELL))
    mentioned = set(re.findall(r":::+ ([a-z][a-z-]*)", guide)) - {"quiz"}   # its unknown directive
    assert mentioned <= set(directives.REGISTRY), f"the guide names {mentioned - set(directives.REGISTRY)}"
    closed = {name for name, entry in directives.REGISTRY.items() if entry.closed}
    assert closed == {"check", "prompt", "side-by-side", "hints", "card"}, "the guide lists the closed ones"


def test_the_execute_pass_runs_pages_at_once_and_raises_the_first_failing_page_in_reading_order(book, tmp_path, monkeypatch):
    """Execute is a pass over the whole book before any page is rendered; pages run at once."""
    import threading
    from builder import pipeline
    meeting = threading.Barrier(2, timeout=20)     # broken unless both pages run at the same time
    execute = pipeline.cells.execute

    def together(*args, **kwargs):
        meeting.wait()
        return execute(*args, **kwargs)
    monkeypatch.setattr(pipeline.cells, "execute", together)
    build(Project.at(book), tmp_path / "a", assets=False, log=lambda line: None, jobs=2)

    monkeypatch.setattr(pipeline.cells, "execute", execute)
    welcome = "lessons/00-welcome/page.md"
    text = (book / welcome).read_text()
    fence = text.index("```output\n") + len("```output\n")
    (book / welcome).write_text(text[:fence] + "not what it prints\n" + text[fence:])
    change(book, "```output\nto stdout\nto stderr\n```\n", "```output\nto stdout\n```\n")
    message = fails(book, tmp_path)
    assert message.startswith(f"{welcome}:"), "of two failing pages, the first in reading order"
