"""The spec beside the code (site/js/labside.js): on a wide screen a lab lays out its spec in a
column beside its file and tests, the spec held in view; the choice holds after a reload; on a
phone the button is not there and the lab is one column."""
from __future__ import annotations

from conftest import screenshot
from fixture_site import wait_editor, wait_ready


def test_the_spec_beside_the_code_on_a_wide_screen(page, base_url):
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(base_url + "lesson-14.html")
    wait_ready(page)
    lab = page.locator("section.lab").first
    wait_editor(page, f"#{lab.get_attribute('id')}")
    toggle = lab.locator(".lab-side-toggle")
    assert toggle.is_visible() and toggle.get_attribute("aria-pressed") == "false"
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    spec = lab.locator(".lab-spec").bounding_box()
    editor = lab.locator(".code-editor").bounding_box()
    assert spec["x"] + spec["width"] <= editor["x"], f"the spec is left of the editor: {spec} {editor}"
    assert editor["width"] >= 600, editor
    # the spec stays in view while the reader works far down the file
    lab.locator(".lab-checklist").scroll_into_view_if_needed()
    spec = lab.locator(".lab-spec").bounding_box()
    assert 0 <= spec["y"] < 100, spec
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    lab.locator(".lab-tools").scroll_into_view_if_needed()
    page.evaluate("scrollBy(0, -60)")
    screenshot(page, "lab-side-desktop")
    page.reload()
    wait_ready(page)
    assert page.locator("section.lab.is-side").count() == page.locator("section.lab").count(), "the choice holds"
    page.locator("section.lab.is-side .lab-side-toggle").first.click()
    assert page.locator("section.lab.is-side").count() == 0

    page.set_viewport_size({"width": 390, "height": 844})
    assert page.locator("section.lab .lab-side-toggle").first.is_hidden()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
