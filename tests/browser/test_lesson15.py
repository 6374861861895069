"""Lesson 15 as a reader does it: a check answered, a cell that cancels a run (the Esc of Tau's
terminal, on the simulated clock), the editable cell fixed, and both labs run on the reference
solution, in real Chromium on Pyodide."""
from __future__ import annotations

from fixture_site import recorded, rewrite_cell, run_cell, wait_ready
from test_labs import run_tests, set_lab_text, solution, starting


def test_lesson_15_as_a_reader_does_it(page, base_url, site_dir):
    assert (site_dir / "lesson-15.html").exists(), "lesson-15.html was not built"
    page.goto(base_url + "lesson-15.html")
    wait_ready(page)

    # A check: a wrong option first, then the right one.
    check = page.locator("#check-15-1")
    check.locator(".check-option:not([data-right]) .option-button").first.click()
    assert check.get_attribute("data-state") == "wrong"
    check.locator(".check-option[data-right] .option-button").click()
    assert check.get_attribute("data-state") == "right"

    # Esc mid-stream: the words shown are the words recorded.
    output = run_cell(page, "15-2")
    assert output == recorded(page, "15-2") and "shown:    'I will read the '" in output

    # A cell that cancels a run from a timer prints in the page what it printed in the build.
    output = run_cell(page, "15-3")
    assert output == recorded(page, "15-3")
    assert "stopped after 5 of 10 steps" in output and "model calls: 1" in output

    # The seed's regression, both ways: the consumer's log loses R(d1), the listener's keeps it.
    output = run_cell(page, "15-5")
    assert output == recorded(page, "15-5")
    assert "log after a reboot: U A[d1] R(d1)" in output

    # The editable cell, shipped with the guess that swallows CancelledError, then fixed.
    assert "task cancelled: False | model calls: 2" in run_cell(page, "15-4")
    source = page.eval_on_selector("#cell-15-4 .code-editor", "node => node.bookEditor.getText()")
    fixed = source.replace('        return "build stopped"', "        raise")
    assert fixed != source
    rewrite_cell(page, "15-4", fixed)
    assert "task cancelled: True | model calls: 1" in run_cell(page, "15-4")

    # A break out of an async run: still running at once, idle a moment later, and aclosing.
    output = run_cell(page, "15-7")
    assert output == recorded(page, "15-7")
    assert "after the break, running: True" in output and "after aclosing, running: False" in output

    # Both labs: they fail on the starting file and pass on the reference solution.
    for number in (1, 2):
        lab_id, point = f"lab-15-{number}", f"15.{number}"
        before = run_tests(page, lab_id)
        assert before and "fail" in before.values(), f"lab {point} passed on its starting file"
        set_lab_text(page, lab_id, solution(point))
        after = run_tests(page, lab_id)
        assert after and set(after.values()) == {"pass"}, f"lab {point} on its solution: {after}"

    # The cell marked lab=2 now runs on the reader's harness: the Esc on their own code.
    assert run_cell(page, "15-8") == recorded(page, "15-8")
    assert page.locator("#cell-15-8").get_attribute("data-harness") == "mine"
