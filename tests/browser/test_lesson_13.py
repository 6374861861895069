"""Lesson 13, done as a reader does it, in Chromium: a check answered (wrong, then right), the
first cell run and printing what the build recorded, the editable cell fixed by its hint and run
again, and both labs failing on their starting files and passing on their solutions, after which
the cell marked lab=2 runs on the reader's own Session."""
from __future__ import annotations

from conftest import screenshot
from fixture_site import editor_text, recorded, rewrite_cell, run_cell, wait_ready
from test_labs import run_tests, set_lab_text, solution, starting
from test_lesson14 import cell_holding

LESSON = "lesson-13.html"


def test_lesson_13_as_a_reader(page, base_url, site_dir):
    assert (site_dir / LESSON).exists(), f"{LESSON} was not built"
    page.set_viewport_size({"width": 1100, "height": 1000})
    page.goto(base_url + LESSON)
    page.wait_for_selector(".check[data-live]")

    # The first check: a wrong option says why, then the right one opens the explanation.
    check = page.locator(".check").first
    check.locator(".check-option:not([data-right]) .option-button").first.click()
    assert check.get_attribute("data-state") == "wrong"
    check.locator(".check-option[data-right] .option-button").click()
    assert check.locator(".check-verdict").inner_text() == "Right."
    assert check.locator(".check-explain").is_visible()

    # The cell that answers it prints, in the page, what the build recorded.
    wait_ready(page)
    assert run_cell(page, "13-1") == recorded(page, "13-1")
    assert "pytest checks" in recorded(page, "13-1")

    # The editable cell ships with lesson 12's estimate: the request is refused. The hint's fix
    # counts the prompt, and the same cell then says to compact first.
    editable = cell_holding(page, "return harness.estimate_tokens(messages + [harness.user_message(text)])")
    cell = page.locator(f"#cell-{editable}")
    assert cell.get_attribute("data-editable") is not None
    shipped = run_cell(page, editable)
    assert shipped == recorded(page, editable) and "prompt is too long" in shipped
    code = editor_text(page, f"#cell-{editable}")
    guess = "    return harness.estimate_tokens(messages + [harness.user_message(text)])"
    assert guess in code
    fixed = code.replace(guess, "    return harness.estimate_tokens([harness.user_message(system)]"
                                " + messages + [harness.user_message(text)])")
    rewrite_cell(page, editable, fixed)
    assert "over: compact before sending" in run_cell(page, editable)
    screenshot(page, "lesson-13-editable-cell")

    # Both labs: red on the starting file, green on the solution.
    for number in (1, 2):
        lab_id, point = f"lab-13-{number}", f"13.{number}"
        assert editor_text(page, f"#{lab_id}") == starting(point)
        before = run_tests(page, lab_id)
        assert before and "fail" in before.values(), f"lab {point} passed on its starting file"
        set_lab_text(page, lab_id, solution(point))
        after = run_tests(page, lab_id)
        assert after and set(after.values()) == {"pass"}, f"lab {point} on its solution: {after}"
        assert page.locator(f"#{lab_id} .lab-done").is_visible()

    # The cell marked lab=2 now runs on the reader's Session, and prints what the build did.
    cell = page.locator(".cell[data-lab='2']").first
    cell_id = cell.get_attribute("data-cell")
    assert cell.locator(".harness-switch").is_visible()
    assert run_cell(page, cell_id) == recorded(page, cell_id)
    assert cell.get_attribute("data-harness") == "mine"
