"""Saved work: edits are stored (the page says when a save is whole) and come back after a reload and after the
browser is killed; progress exported from the course map restores everything in a fresh profile;
a bad import is refused and changes nothing; damaged storage warns, never blanks the page; a
changed starting file never overwrites the reader's code."""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from urllib.parse import urlparse

import pytest

from fixture_site import (WORK_KEY as KEY, editor_text, recorded, run_cell, type_into_editor,
                          wait_editor, wait_ready, wait_saved)
from test_labs import FIXTURE_SOLUTION, run_tests, solution

ROOT = Path(__file__).resolve().parents[2]




def first_page(context):
    return context.pages[0] if context.pages else context.new_page()


def stored(page) -> dict:
    text = page.evaluate(f"localStorage.getItem({KEY!r})")
    return json.loads(text) if text else {}


def kill_browser(profile: Path) -> int:
    """SIGKILL every process of the Chromium this test started on `profile` (found by its
    --user-data-dir): no shutdown, no last writes. Returns how many were killed."""
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"--user-data-dir={profile}".encode() in command:
            try:
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
    return killed


EDITED = 'print("my own line")\n'

# Record what lesson 11's line on the course map says at the moment the import says "imported".
MAP_AT_IMPORT = """() => {
  const message = document.querySelector('#progress-tools .progress-message');
  new MutationObserver(() => {
    if (message.dataset.state === 'imported' && !('mapAtImport' in window))
      window.mapAtImport = document.querySelector('[data-page="11"] .page-progress')?.textContent ?? '';
  }).observe(message, { attributes: true });
}"""


def test_edits_are_saved_and_survive_reload_and_a_killed_browser(profiles, fixture_url):
    """How soon a save is written (0.3 s after a change) is storage.js's DELAY_MS, not a bound
    here: on a loaded machine a test waits for the page to say the save is whole."""
    profile = profiles.new_profile_dir()
    page = first_page(profiles.open(profile))
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    type_into_editor(page, "#cell-99-2", EDITED)
    type_into_editor(page, "#lab-99-1", FIXTURE_SOLUTION)
    wait_saved(page, "my own line", "entry in entries")
    assert stored(page)["labs"]["99-1"]["code"] == FIXTURE_SOLUTION

    page.reload()
    wait_editor(page, "#cell-99-2")
    assert editor_text(page, "#cell-99-2") == EDITED
    assert editor_text(page, "#lab-99-1") == FIXTURE_SOLUTION

    type_into_editor(page, "#cell-99-2", 'print("after the reload")\n')
    # The plug is pulled as soon as the page says the save is whole (IndexedDB written).
    wait_saved(page, "after the reload")
    assert kill_browser(profile) > 0
    reopened = first_page(profiles.open(profile))
    reopened.goto(fixture_url + "lesson-99.html")
    wait_editor(reopened, "#cell-99-2")
    assert editor_text(reopened, "#cell-99-2") == 'print("after the reload")\n'
    assert editor_text(reopened, "#lab-99-1") == FIXTURE_SOLUTION


def test_export_then_import_into_a_fresh_profile_restores_everything(profiles, base_url, site_dir, tmp_path):
    assert (site_dir / "lesson-11.html").exists(), "lesson-11.html was not built"
    page = first_page(profiles.fresh())
    page.goto(base_url + "lesson-11.html")
    wait_ready(page)
    ada = page.locator(".cell[data-editable]").first.get_attribute("data-cell")
    type_into_editor(page, f"#cell-{ada}", EDITED)
    check = page.locator(".check[data-check]").first
    check_id = check.get_attribute("data-check")
    check.locator(".option-button").first.click()
    hints = page.locator(".hints .hint-next").first
    hints.click()
    prompt = page.locator(".prompt[data-prompt] .prompt-input").first
    prompt.fill("the lines, in order")
    type_into_editor(page, "#lab-11-1", solution("11.1"))
    assert set(run_tests(page, "lab-11-1").values()) == {"pass"}
    wait_saved(page, "the lines, in order", "passedCode")
    before = stored(page)

    page.goto(base_url + "index.html")
    entry = page.locator('[data-page="11"] .page-progress')
    assert "1 of 2 labs passed" in entry.text_content()
    with page.expect_download() as info:
        page.locator("#progress-tools .progress-export").click()
    exported = tmp_path / "progress.json"
    info.value.save_as(exported)

    fresh_profile = profiles.fresh()
    fresh = first_page(fresh_profile)
    # course.json is held back until the file is chosen, as on a loaded machine: the page must
    # still not say "imported" before the map shows what was imported.
    held = []
    fresh_profile.route("**/course.json", lambda route: held.append(route))
    with fresh.expect_request("**/course.json", timeout=30_000):   # asked for at load or at the import
        fresh.goto(base_url + "index.html", wait_until="domcontentloaded")
        fresh.locator("#progress-tools .progress-message").wait_for(state="attached")
        fresh.evaluate(MAP_AT_IMPORT)
        fresh.locator("#progress-tools input[type=file]").set_input_files(str(exported))
    fresh.evaluate("0")   # one round trip: the request's route, sent with it, has reached the handler
    assert held, "the course map did not ask for course.json"
    for route in held:
        route.continue_()
    fresh.wait_for_function("'mapAtImport' in window")
    assert "1 of 2 labs passed" in fresh.evaluate("window.mapAtImport"), "'imported' ran ahead of the map"
    after = stored(fresh)
    for section in ("cells", "labs", "answers", "hints"):
        assert after[section] == before[section], section

    fresh.goto(base_url + "lesson-11.html")
    wait_editor(fresh, f"#cell-{ada}")
    assert editor_text(fresh, f"#cell-{ada}") == EDITED
    assert editor_text(fresh, "#lab-11-1") == solution("11.1")
    assert fresh.locator("#lab-11-1").get_attribute("data-passed") == "true"
    restored = fresh.locator(f'.check[data-check="{check_id}"] .option-button').first
    assert restored.get_attribute("aria-pressed") == "true"
    assert fresh.locator(".prompt[data-prompt] .prompt-input").first.input_value() == "the lines, in order"
    assert fresh.locator(".hints .hint").first.is_visible()


@pytest.fixture(scope="module")
def saved_once(shared_browser, fixture_url):
    """One context, with an edit saved, for the three bad imports: each is refused and changes
    nothing, so the work they are refused against is typed and saved once (Python booted once),
    not three times. The checks of conftest's `page` are kept: no JavaScript error, no request
    off 127.0.0.1."""
    context = shared_browser.new_context()
    errors, foreign = [], []
    context.on("request", lambda request: urlparse(request.url).hostname not in (None, "127.0.0.1")
               and urlparse(request.url).scheme.startswith("http") and foreign.append(request.url))
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    type_into_editor(page, "#cell-99-2", EDITED)
    wait_saved(page, "my own line")
    yield page, page.evaluate(f"localStorage.getItem({KEY!r})")
    context.close()
    assert errors == [] and foreign == [], (errors, foreign)


@pytest.mark.parametrize("content", ['{"kind": "not this book"}', "{this is not json", '{"kind": '
                                     '"agent-harness-book progress", "work": {"format": 1, "cells": []}}'])
def test_a_bad_import_is_refused_and_changes_nothing(saved_once, fixture_url, tmp_path, content):
    page, before = saved_once
    page.goto(fixture_url + "index.html")
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    page.locator("#progress-tools input[type=file]").set_input_files(str(bad))
    message = page.locator("#progress-tools .progress-message")
    page.wait_for_function("document.querySelector('#progress-tools .progress-message').dataset.state === 'refused'")
    assert "Not imported" in message.text_content() and "Nothing was changed" in message.text_content()
    assert page.evaluate(f"localStorage.getItem({KEY!r})") == before


def test_damaged_storage_warns_and_the_page_still_works(page, fixture_url):
    page.goto(fixture_url + "lesson-99.html")
    page.evaluate(f"localStorage.setItem({KEY!r}, '{{\"format\": 1, \"cells\": ')")
    page.reload()
    wait_ready(page)
    assert "could not be restored" in page.locator("#book-warning").text_content()
    assert page.locator("#book-warning").is_visible()
    assert run_cell(page, "99-1") == recorded(page, "99-1")
    assert page.evaluate(f"localStorage.getItem({KEY!r} + '.corrupt')").startswith('{"format": 1')


def test_full_storage_gives_a_visible_warning(page, fixture_url):
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    page.evaluate("""() => {
        const full = () => { throw new DOMException('full', 'QuotaExceededError'); };
        Storage.prototype.setItem = full;
        IDBObjectStore.prototype.put = full; }""")
    type_into_editor(page, "#cell-99-2", EDITED)
    page.wait_for_selector("#book-warning", state="visible", timeout=15_000)
    assert "storage is full" in page.locator("#book-warning").text_content()


def test_a_changed_starting_file_keeps_the_readers_code_and_offers_the_new_one(page, fixture_url):
    page.goto(fixture_url + "lesson-99.html")
    work = {"format": 1, "saved": "", "answers": {}, "hints": {}, "cells": {},
            "labs": {"99-1": {"code": "# mine, from an older book\n", "base": "00000000"}}}
    page.evaluate(f"localStorage.setItem({KEY!r}, {json.dumps(json.dumps(work))})")
    page.reload()
    wait_editor(page, "#lab-99-1")
    assert editor_text(page, "#lab-99-1") == "# mine, from an older book\n"
    notice = page.locator("#lab-99-1 .lab-notice")
    assert notice.is_visible() and "Your harness.py is kept" in notice.text_content()
    notice.locator(".lab-take-new").click()
    import stages
    harness = ROOT / "tests" / "fixtures" / "browser" / "harness_py" / "course" / "harness.py"
    starting = stages.load(harness, points=["98.1", "99.1"]).starting("99.1")
    assert editor_text(page, "#lab-99-1") == starting


def test_two_tabs_on_two_lessons_keep_both_readers_edits(profiles, base_url):
    """A tab saves only what it changed, onto what another tab saved since; and a course map open
    in a third tab shows both edits as they are saved, without a reload."""
    context = profiles.fresh()
    course_map = first_page(context)
    course_map.goto(base_url + "index.html")
    course_map.locator('[data-page="11"] .page-progress').wait_for(state="attached")
    assert course_map.evaluate("!globalThis.bookPythonBoot && !document.getElementById('python-status')"), \
        "the course map has no code, so it starts no Python"
    first, eleventh = context.new_page(), context.new_page()
    first.goto(base_url + "lesson-01.html")
    eleventh.goto(base_url + "lesson-11.html")
    ids = {}
    for tab, lesson in ((first, "01"), (eleventh, "11")):
        ids[lesson] = tab.locator(".cell[data-editable]").first.get_attribute("data-cell")
        wait_editor(tab, f"#cell-{ids[lesson]}")

    type_into_editor(first, f"#cell-{ids['01']}", 'print("edited in lesson 01")\n')
    wait_saved(first, "edited in lesson 01")
    # The lesson 11 tab was opened before that save; its own save must not write over it.
    type_into_editor(eleventh, f"#cell-{ids['11']}", 'print("edited in lesson 11")\n')
    wait_saved(eleventh, "edited in lesson 11")
    cells = stored(eleventh)["cells"]
    assert cells[ids["01"]]["code"] == 'print("edited in lesson 01")\n', "the second tab wrote over the first's edit"
    assert cells[ids["11"]]["code"] == 'print("edited in lesson 11")\n'

    for lesson in ("01", "11"):
        course_map.wait_for_function(
            f"document.querySelector('[data-page=\"{lesson}\"] .page-progress').textContent.includes('1 cell edited')",
            timeout=15_000)

    first.reload()
    assert editor_text(first, f"#cell-{ids['01']}") == 'print("edited in lesson 01")\n'
    eleventh.reload()
    assert editor_text(eleventh, f"#cell-{ids['11']}") == 'print("edited in lesson 11")\n'


def test_an_import_refreshes_the_harness_switch_of_lab_linked_cells_at_once(page, fixture_url):
    """Importing replaces every saved entry at once (storage.js replaceAll): a cell linked to a lab
    the import says passed offers the reader's harness without a reload."""
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    assert page.locator("#cell-99-7 .harness-switch").is_hidden()
    page.evaluate("""async (code) => {
        const storage = await import(new URL("assets/js/storage.js", location.href).href);
        await storage.replaceAll({ format: 1, saved: "", answers: {}, hints: {}, cells: {},
            labs: { "99-1": { passed: true, passedCode: code, useMine: true } } });
    }""", FIXTURE_SOLUTION)
    assert page.locator("#cell-99-7 .harness-switch").is_visible()
    assert page.locator("#cell-99-7 .harness-mine").get_attribute("aria-pressed") == "true"
    assert run_cell(page, "99-7") == "the reader's harness\n[1, 2]\n"
