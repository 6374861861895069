"""Labs in the page: the checklist fails on the starting file and passes on the solution, a file
that does not import says so with its line, a failure many tests share is said once under the
verdict (and failures that differ are not), a lab-marked cell then runs against the reader's
code, and the downloaded folder runs under local CPython."""
from __future__ import annotations

import re
import subprocess
import sys
import zipfile

import pytest

from conftest import screenshot
from fixture_site import (editor_text, recorded, run_cell,
                          type_into_editor, wait_editor, wait_ready, wait_saved)





FIXTURE_SOLUTION = '''"""Your harness for lab 99.1."""
print("the reader's harness")


def greet(name):
    return f"Hello, {name}."


def remember(entries):
    return [entry["message"] for entry in entries]
'''


def run_tests(page, lab_id: str, timeout: int = 120_000) -> dict[str, str]:
    """Click Run tests and return {test id: "pass" | "fail"} from the checklist."""
    page.locator(f"#{lab_id} .lab-run").click()
    page.wait_for_function(
        f"['pass', 'fail', 'failed'].includes(document.getElementById('{lab_id}').dataset.state)",
        timeout=timeout)
    return {li.get_attribute("data-test"): li.get_attribute("data-status")
            for li in page.locator(f"#{lab_id} .lab-tests li[data-test]").all()}


HANGING = FIXTURE_SOLUTION.replace('    return f"Hello, {name}."', '    while True:\n        pass')


def lab_state(page, lab_id: str) -> str:
    return page.eval_on_selector(f"#{lab_id}", "node => node.dataset.state || ''")


def test_a_lab_that_hangs_is_stopped_and_its_test_named(page, fixture_url):
    """Stop ends a lab run like a cell's; a test that runs past the limit is named in a sentence;
    a new run starts from a blank checklist; and the next run after a stop works."""
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    wait_editor(page, "#lab-99-1")
    assert run_tests(page, "lab-99-1")["Lab1.test_greet"] == "pass"   # ticks from a run before

    type_into_editor(page, "#lab-99-1", HANGING)
    stop = page.locator("#lab-99-1 .lab-stop")
    assert stop.is_hidden()
    page.locator("#lab-99-1 .lab-run").click()
    statuses = [li.get_attribute("data-status") for li in page.locator("#lab-99-1 li[data-test]").all()]
    assert statuses == ["", ""], f"the last run's ticks clear when a run starts: {statuses}"
    assert lab_state(page, "lab-99-1") == "running" and stop.is_visible()
    stop.click()
    page.wait_for_function("document.getElementById('lab-99-1').dataset.state === 'failed'", timeout=15_000)
    verdict = page.locator("#lab-99-1 .lab-summary").inner_text()
    assert verdict.startswith("You stopped the tests") and "greet" in verdict, verdict
    assert "Traceback" not in page.locator("#lab-99-1 .lab-report").inner_text()
    assert stop.is_hidden()

    page.locator("#lab-99-1 .lab-run").click()
    page.wait_for_function("document.getElementById('lab-99-1').dataset.state === 'failed'", timeout=60_000)
    verdict = page.locator("#lab-99-1 .lab-summary").inner_text()
    assert "did not finish: your code did not finish within 20 s" in verdict, verdict
    page.locator("#lab-99-1 .lab-report").scroll_into_view_if_needed()
    screenshot(page, "lab-hang-stopped")
    assert page.locator('#lab-99-1 li[data-test="Lab1.test_greet"]').get_attribute("data-status") == "fail"
    assert "Traceback" not in page.locator("#lab-99-1 .lab-report").inner_text()

    type_into_editor(page, "#lab-99-1", FIXTURE_SOLUTION)
    assert run_tests(page, "lab-99-1") == {"Lab1.test_greet": "pass", "Lab1.test_remember": "pass"}


def test_fixture_lab_fails_passes_and_switches_the_cell_to_the_readers_harness(page, fixture_url, tmp_path):
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    wait_editor(page, "#lab-99-1")
    assert page.locator("#cell-99-7 .harness-switch").is_hidden(), "no switch before the lab passes"
    statuses = run_tests(page, "lab-99-1")
    assert statuses == {"Lab1.test_greet": "pass", "Lab1.test_remember": "fail"}
    message = page.locator('#lab-99-1 li[data-test="Lab1.test_remember"] .test-message').text_content()
    assert message.strip(), "a failed test shows what was expected and what happened"
    assert page.locator("#lab-99-1 .lab-done").is_hidden()

    type_into_editor(page, "#lab-99-1", FIXTURE_SOLUTION)
    assert run_tests(page, "lab-99-1") == {"Lab1.test_greet": "pass", "Lab1.test_remember": "pass"}
    assert page.locator("#lab-99-1 .lab-done").is_visible()

    # The lab-marked cell now offers the switch, set to the reader's harness, and runs against it.
    assert page.locator("#cell-99-7 .harness-switch").is_visible()
    assert page.locator("#cell-99-7 .harness-mine").get_attribute("aria-pressed") == "true"
    assert run_cell(page, "99-7") == "the reader's harness\n[1, 2]\n"
    page.locator("#cell-99-7 .harness-book").click()
    assert run_cell(page, "99-7") == recorded(page, "99-7") == "[1, 2]\n"

    # The folder as a zip, made in the page, runs under this machine's CPython.
    with page.expect_download() as info:
        page.locator("#lab-99-1 .lab-download").click()
    archive = tmp_path / "lab.zip"
    info.value.save_as(archive)
    with zipfile.ZipFile(archive) as zipped:
        assert zipped.testzip() is None, "a CRC in the zip is wrong"
        names = zipped.namelist()
        assert {"lesson-99/harness.py", "lesson-99/tests.py", "lesson-99/lab/lab_check.py"} <= set(names)
        zipped.extractall(tmp_path)
    folder = tmp_path / "lesson-99"
    assert (folder / "harness.py").read_text() == FIXTURE_SOLUTION
    done = subprocess.run([sys.executable, "lab/lab_check.py", "--harness", "harness.py", "--lesson", "99",
                           "tests.py"], cwd=folder, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed, 0 failed" in done.stdout


def test_a_harness_that_does_not_import_is_reported_with_its_line(page, fixture_url):
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    broken = FIXTURE_SOLUTION.replace("def remember(entries):", "def remember(entries)")
    type_into_editor(page, "#lab-99-1", broken)
    statuses = run_tests(page, "lab-99-1")
    assert set(statuses.values()) == {"fail"}
    shown = page.locator("#lab-99-1").text_content()
    line = broken.splitlines().index("def remember(entries)") + 1
    assert f"line {line}" in shown, shown
    # The one reason both tests failed is said once, under the verdict, and each test points at it;
    # a button beside it shows that line in the editor.
    said = " ".join(page.locator("#lab-99-1 .lab-error, #lab-99-1 .test-message").all_text_contents())
    assert said.count(f"line {line}") == 1, said
    page.locator("#lab-99-1 .test-line").click()
    assert editor_view(page, "lab-99-1", CURSOR_LINE) == line
    report = seen(page.locator("#lab-99-1 .lab-report").inner_text())
    assert report.startswith("0 passed, 2 failed.\nBoth tests fail the same way:\nharness.py does not import"), report
    for li in page.locator("#lab-99-1 .lab-tests li[data-test]").all():
        assert li.inner_text().endswith("Same failure as above."), li.inner_text()


def solution(point: str) -> str:
    import stages

    return stages.load().solution(point)


def starting(point: str) -> str:
    import stages

    return stages.load().starting(point)


def set_lab_text(page, lab_id: str, text: str) -> None:
    """Give a lab's editor new text through the editor's API (a busy machine cannot lose
    keystrokes), and make sure the editor holds it."""
    wait_editor(page, f"#{lab_id}")
    page.eval_on_selector(f"#{lab_id} .code-editor", "(node, text) => node.bookEditor.setText(text)", text)
    assert editor_text(page, f"#{lab_id}") == text, f"{lab_id}: the editor did not take the new text"


def without(source: str, name: str) -> str:
    """`source` with its top-level class or def `name` taken out, body and all: a harness that
    lacks a name the tests use."""
    lines = source.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if re.match(rf"(class|def) {name}\b", line))
    end = next((i for i in range(start + 1, len(lines))
                if lines[i].strip() and not lines[i][0].isspace()), len(lines))
    shorter = "".join(lines[:start] + lines[end:])
    compile(shorter, "harness.py", "exec")
    assert not re.search(rf"^(class|def) {name}\b", shorter, re.M)
    return shorter


def seen(text: str) -> str:
    """Text as the reader reads it, line by line, without the blank lines between paragraphs."""
    return "\n".join(line for line in text.splitlines() if line.strip())


def lab_report(page, lab_id: str) -> tuple[str, str, dict[str, str]]:
    """What the reader sees: the whole lab's text, its report (verdict first), and each test's
    item of the checklist, by test id."""
    section = page.locator(f"#{lab_id}")
    items = {li.get_attribute("data-test"): seen(li.inner_text())
             for li in section.locator(".lab-tests li[data-test]").all()}
    return seen(section.inner_text()), seen(section.locator(".lab-report").inner_text()), items


def test_a_name_the_harness_lacks_is_said_once_above_the_tests(page, base_url):
    """Lab 11.2's starting file without its SessionLog: every test fails on the missing name, most
    of them in a helper of the tests, one in its own body, so the messages differ in where the
    tests file stopped. That is one failure: said once, under the verdict; each test points up."""
    page.goto(base_url + "lesson-11.html")
    wait_ready(page)
    set_lab_text(page, "lab-11-2", without(starting("11.2"), "SessionLog"))
    statuses = run_tests(page, "lab-11-2")
    assert len(statuses) > 2 and set(statuses.values()) == {"fail"}, statuses
    shown, report, items = lab_report(page, "lab-11-2")
    count = len(statuses)
    # the messages differ (where the tests file stopped): what they share is lab_check's cause
    assert report.startswith(f"0 passed, {count} failed.\nAll {count} tests fail the same way:\n"
                             "harness.py has no SessionLog"), report
    assert shown.count("harness.py has no SessionLog") == 1, shown
    assert "has no attribute 'SessionLog'" not in shown, shown
    for test, text in items.items():
        assert text.endswith("\nSame failure as above."), (test, text)
    assert page.locator("#lab-11-2 .lab-tests .test-message").count() == 0
    summary = page.locator("#lab-11-2 .lab-summary").bounding_box()
    shared = page.locator("#lab-11-2 .lab-same").bounding_box()
    first = page.locator("#lab-11-2 .lab-tests li").first.bounding_box()
    assert summary["y"] < shared["y"] < first["y"], "the verdict, then the shared failure, then the tests"


USER_MESSAGE_NONE = '''

def user_message(text):
    return None
'''


def test_failures_that_differ_keep_their_own_messages(page, base_url):
    """Lesson 1's starting file lacks two names: two failures, each said once, and each test says
    which one is its own. Then with a user_message that returns None, its tests fail in different
    ways: each keeps its own message, and only chat's failure is said once."""
    page.goto(base_url + "lesson-01.html")
    wait_ready(page)
    set_lab_text(page, "lab-1-1", starting("1.1"))
    statuses = run_tests(page, "lab-1-1")
    chat = [test for test in statuses if "user_message" not in test]
    total, mine = len(statuses), len(statuses) - len(chat)
    assert len(chat) > 2 and mine >= 2 and set(statuses.values()) == {"fail"}, statuses
    shown, report, items = lab_report(page, "lab-1-1")
    assert report.startswith(f"0 passed, {total} failed.\n{mine} of {total} tests fail the same way:\n"), report
    assert f"\n{len(chat)} of {total} tests fail the same way:\n" in report, report
    for name in ("chat", "user_message"):
        assert report.splitlines().count(f"harness.py has no {name}") == 1, (name, report)
    assert page.locator("#lab-1-1 .lab-tests .test-message").count() == 0
    for test, text in items.items():   # two failures above: each test names its own, in one line
        name = "chat" if test in chat else "user_message"
        assert text.endswith(f"\nSame failure as above: harness.py has no {name}."), text

    set_lab_text(page, "lab-1-1", starting("1.1") + USER_MESSAGE_NONE)
    statuses = run_tests(page, "lab-1-1")
    assert set(statuses.values()) == {"fail"}, statuses
    shown, report, items = lab_report(page, "lab-1-1")
    assert report.startswith(f"0 passed, {total} failed.\n{len(chat)} of {total} tests fail the same way:\n"), report
    assert report.count("fail the same way") == 1, report
    assert shown.count("harness.py has no chat") == 1, shown
    own = {test: page.locator(f'#lab-1-1 li[data-test="{test}"] .test-message').inner_text()
           for test in statuses if test not in chat}
    assert len(own) == mine and len(set(own.values())) == mine, own
    for test, message in own.items():
        assert "None" in message and "Same failure" not in items[test], (test, items[test])
        assert shown.count(message) == 1, (message, shown)
    for test in chat:
        assert items[test].endswith("\nSame failure as above."), items[test]


def test_lesson_11_labs_fail_on_their_starting_files_and_pass_on_the_solutions(page, base_url, site_dir):
    assert (site_dir / "lesson-11.html").exists(), "lesson-11.html was not built"
    page.goto(base_url + "lesson-11.html")
    wait_ready(page)
    for number in (1, 2):
        lab_id, point = f"lab-11-{number}", f"11.{number}"
        wait_editor(page, f"#{lab_id}")
        assert editor_text(page, f"#{lab_id}") == starting(point)
        before = run_tests(page, lab_id)
        assert before and "fail" in before.values(), f"lab {point} passed on its starting file"
        assert page.locator(f"#{lab_id}").get_attribute("data-passed") != "true"
        type_into_editor(page, f"#{lab_id}", solution(point))
        after = run_tests(page, lab_id)
        assert after and set(after.values()) == {"pass"}, f"lab {point} on its solution: {after}"
    # The cell marked lab=2 now runs against the reader's harness, and prints what the build did.
    cell = page.locator(".cell[data-lab='2']").first
    cell_id = cell.get_attribute("data-cell")
    assert cell.locator(".harness-switch").is_visible()
    assert run_cell(page, cell_id) == recorded(page, cell_id)
    assert cell.get_attribute("data-harness") == "mine"


def labs_in_the_page() -> list[tuple[str, str]]:
    """(page, point) of the labs run here through the page: the book's first lab, the side
    quest's first (its id is a word, S2) and the book's last (the longest file). Every lab's
    starting file failing and its solution passing under Pyodide is tests/test_pyodide_parity.py's
    (one Node process, the page's own py/ files and snapshot), and every page showing the
    starting file its tests run is checked there too: the browser adds the page's own path."""
    from builder import course as course_stage
    from builder.project import Project
    course = course_stage.load(Project.book())
    every = [(page.path, point) for page in course.written for point in page.points]
    side = next(lab for lab in every if lab[1].startswith("S"))
    return list(dict.fromkeys([every[0], side, every[-1]]))


@pytest.mark.parametrize("page_name, point", labs_in_the_page())
def test_a_lab_fails_on_its_starting_file_and_passes_on_its_solution_in_the_page(page, base_url, page_name,
                                                                                   point):
    lesson, number = point.split(".")
    lab_id = f"lab-{int(lesson) if lesson.isdigit() else lesson}-{number}"   # lab-11-2, lab-S2-1
    page.goto(base_url + page_name)
    wait_ready(page)
    wait_editor(page, f"#{lab_id}")
    assert editor_text(page, f"#{lab_id}") == starting(point)
    before = run_tests(page, lab_id)
    assert before and "fail" in before.values(), f"lab {point} passed on its starting file"
    type_into_editor(page, f"#{lab_id}", solution(point))
    after = run_tests(page, lab_id)
    assert after and set(after.values()) == {"pass"}, f"lab {point} on its solution: {after}"
    assert page.locator(f"#{lab_id} .lab-done").is_visible()


def editor_view(page, lab_id: str, script: str):
    return page.eval_on_selector(f"#{lab_id} .code-editor", script)


CURSOR_LINE = "node => node.bookEditor.cursorLine()"
LINE_TEXT = "(node, n) => node.bookEditor.view.state.doc.line(n).text"


def test_a_long_lab_opens_at_its_first_gap_and_is_searched_inside(page, base_url):
    """Lesson 11's second lab file is some 470 lines and its first gap is far down: the editor opens there
    (its box scrolled, the page not moved), Next gap walks the gaps, Search opens CodeMirror's
    search, Taller gives it the screen, and the heading says whose file it is once edited."""
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(base_url + "lesson-11.html")
    wait_ready(page)
    wait_editor(page, "#lab-11-2")
    text = editor_text(page, "#lab-11-2")
    first_gap = text.splitlines().index(next(l for l in text.splitlines() if "# --- your code ---" in l)) + 1
    assert first_gap > 100, "the test needs a gap far down the file"
    holder = page.locator("#lab-11-2 .code-editor")
    holder.scroll_into_view_if_needed()   # the reader comes down to the lab
    window = page.evaluate("window.scrollY")
    # the line with the cursor (CodeMirror's active line) comes to rest inside the editor's box
    page.wait_for_function("""() => {
        const box = document.querySelector('#lab-11-2 .code-editor').getBoundingClientRect();
        const line = document.querySelector('#lab-11-2 .cm-activeLine')?.getBoundingClientRect();
        return line && line.top >= box.top && line.bottom <= box.bottom;
    }""")
    assert "# --- your code ---" in page.locator("#lab-11-2 .cm-activeLine").inner_text(), "the first gap is in view"
    assert editor_view(page, "lab-11-2", CURSOR_LINE) == first_gap
    assert page.evaluate("window.scrollY") == window, "the editor's box scrolled to the gap, not the page"
    page.evaluate("window.scrollBy(0, -120)")
    screenshot(page, "lab-long-opened-at-gap")

    page.locator("#lab-11-2 .lab-next-gap").click()
    second = editor_view(page, "lab-11-2", CURSOR_LINE)
    assert second != first_gap
    assert "# --- your code ---" in page.eval_on_selector("#lab-11-2 .code-editor", LINE_TEXT, second)

    page.locator("#lab-11-2 .lab-search").click()
    search = page.locator("#lab-11-2 .cm-search input[name='search']")
    search.wait_for()
    search.type("def append_message")   # typed: the panel reads its query on each key
    page.keyboard.press("Enter")
    found = editor_view(page, "lab-11-2", CURSOR_LINE)
    assert "def append_message" in page.eval_on_selector("#lab-11-2 .code-editor", LINE_TEXT, found)
    page.keyboard.press("Escape")

    before = holder.bounding_box()["height"]
    tall = page.locator("#lab-11-2 .lab-tall")
    tall.click()
    assert tall.get_attribute("aria-pressed") == "true"
    assert holder.bounding_box()["height"] > before + 100, "Taller gives the editor more of the screen"

    title = page.locator("#lab-11-2 .lab-file h3")
    assert title.inner_text().startswith("The file you start from")
    set_lab_text(page, "lab-11-2", text + "\n# mine\n")
    assert title.inner_text().startswith("Your harness.py")
    page.locator("#lab-11-2 .lab-reset").click()
    assert title.inner_text().startswith("The file you start from")


def test_a_failure_names_a_line_and_a_click_shows_it(page, fixture_url):
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    broken = FIXTURE_SOLUTION.replace('    return f"Hello, {name}."', '    return 1 / 0')
    set_lab_text(page, "lab-99-1", broken)
    run_tests(page, "lab-99-1")
    link = page.locator("#lab-99-1 .test-line").first
    number = int(link.inner_text().split("line ")[1].split()[0])
    link.click()
    assert editor_view(page, "lab-99-1", CURSOR_LINE) == number
    assert "1 / 0" in page.eval_on_selector("#lab-99-1 .code-editor", LINE_TEXT, number)


def test_a_failure_worded_by_its_test_goes_to_the_function_it_names(page, fixture_url):
    """The test's own sentence has no line of harness.py; lab_check finds the def of the function
    it names (remember), and the button goes there."""
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    broken = FIXTURE_SOLUTION.replace("for entry in entries]", "for entry in reversed(entries)]")
    set_lab_text(page, "lab-99-1", broken)
    assert run_tests(page, "lab-99-1") == {"Lab1.test_greet": "pass", "Lab1.test_remember": "fail"}
    line = broken.splitlines().index("def remember(entries):") + 1
    item = page.locator('#lab-99-1 li[data-test="Lab1.test_remember"]')
    assert "harness.py, line" not in item.locator(".test-message").inner_text()
    link = item.locator(".test-line")
    assert link.inner_text() == f"Go to remember, line {line}"
    link.click()
    assert editor_view(page, "lab-99-1", CURSOR_LINE) == line
    assert page.eval_on_selector("#lab-99-1 .code-editor", LINE_TEXT, line).startswith("def remember")


def test_a_passed_lab_reads_as_passed_after_a_reload_and_ticks_its_capability(page, base_url):
    page.goto(base_url + "lesson-01.html")
    wait_ready(page)
    mark = page.locator(".capabilities li").last
    page.wait_for_function("document.querySelector('.capabilities li')?.dataset.done !== undefined")
    assert mark.get_attribute("data-done") == "false", "nothing is ticked before its lab passes"
    set_lab_text(page, "lab-1-1", solution("1.1"))
    assert set(run_tests(page, "lab-1-1").values()) == {"pass"}
    page.wait_for_function("document.querySelector('.capabilities li:last-child').dataset.done === 'true'")
    wait_saved(page, "passedCode")      # the pass is in the saved work before the reload
    page.reload()
    page.wait_for_function("document.getElementById('lab-1-1').dataset.state === 'pass'")
    assert "passed when you last ran them" in page.locator("#lab-1-1 .lab-summary").inner_text()
    statuses = {li.get_attribute("data-status") for li in page.locator("#lab-1-1 li[data-test]").all()}
    assert statuses == {"pass"}
    assert page.locator("#lab-1-1 .lab-file h3").inner_text().startswith("Your harness.py")
    page.wait_for_function("document.querySelector('.capabilities li:last-child').dataset.done === 'true'")


def test_side_quest_s2_lab_runs_the_readers_tree_and_downloads_as_lesson_s2(page, base_url, tmp_path):
    """A side quest's lab in the page: its lesson is "S2", not a number. Lab S2.2 passes on its
    solution; the cell marked lab=2 then runs on the reader's SessionTree and prints what the build
    recorded; the downloaded folder is lesson-S2/ and its tests run under local CPython with
    --lesson S2."""
    page.goto(base_url + "side-quest-s2.html")
    wait_ready(page)
    set_lab_text(page, "lab-S2-2", solution("S2.2"))
    assert set(run_tests(page, "lab-S2-2").values()) == {"pass"}
    cell = page.locator(".cell[data-lab='2']").first
    cell_id = cell.get_attribute("data-cell")
    assert cell.locator(".harness-switch").is_visible()
    assert run_cell(page, cell_id) == recorded(page, cell_id)
    assert cell.get_attribute("data-harness") == "mine"

    with page.expect_download() as info:
        page.locator("#lab-S2-2 .lab-download").click()
    archive = tmp_path / "lab.zip"
    info.value.save_as(archive)
    with zipfile.ZipFile(archive) as zipped:
        assert {"lesson-S2/harness.py", "lesson-S2/tests.py",
                "lesson-S2/lab/lab_check.py"} <= set(zipped.namelist())
        zipped.extractall(tmp_path)
    done = subprocess.run([sys.executable, "lab/lab_check.py", "--harness", "harness.py",
                           "--lesson", "S2", "tests.py"], cwd=tmp_path / "lesson-S2",
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Side quest S2, all labs:"), done.stdout
    assert re.search(r"^\d+ passed, 0 failed$", done.stdout, re.M), done.stdout
