"""axe-core (node_modules/axe-core, a dev dependency) on every written page of the book and the
course map, in the light and then the dark theme on the same page, after a reader answered a
check, ran a cell and ran a lab's tests (so the verdicts, outputs and test messages are audited too): 0 violations. The
search box is audited with its results open, in both themes and on a phone.

A violation is reported with its rule, its impact and the first few elements it names, so a
failure says what to fix."""
from __future__ import annotations

import json

import pytest

from conftest import ROOT
from fixture_site import run_cell, search, wait_ready
from test_labs import run_tests

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"


def written_paths() -> list[str]:
    from builder import course as course_stage
    from builder.project import Project
    course = course_stage.load(Project.book())
    return ["index.html", "glossary.html"] + [page.path for page in course.written]


PATHS = written_paths()


def audit(page) -> list[dict]:
    """Run axe on the page as it stands; its violations, each with a few of its elements."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate("""async () => {
        const r = await axe.run(document, {resultTypes: ["violations"]});
        return r.violations.map(v => ({id: v.id, impact: v.impact, count: v.nodes.length,
            nodes: v.nodes.slice(0, 3).map(n => [n.target.join(" "), n.failureSummary.slice(0, 200)])}));
    }""")
    return result


def do_things(page) -> None:
    """What a reader does first: answer a check, run a cell, run a lab's tests."""
    check = page.locator("section.check").first
    if check.count():
        check.locator(".check-option:not([data-right]) .option-button").first.click()
        check.locator(".check-option[data-right] .option-button").click()
    if page.locator(".cell[data-cell], .lab").count():
        wait_ready(page)
    cell = page.locator(".cell[data-cell]").first
    if cell.count():
        run_cell(page, cell.get_attribute("data-cell"), timeout=60_000)
    lab = page.locator("section.lab").first
    if lab.count():
        run_tests(page, lab.get_attribute("id"))


THEME = ("document.documentElement.dataset.theme || "
         "matchMedia('(prefers-color-scheme: dark)').matches && 'dark' || 'light'")


@pytest.mark.parametrize("path", PATHS)
def test_axe_finds_no_violation(page, base_url, path):
    """One boot a page: the reader's actions once, then axe in the light theme and, on the same
    page with the same verdicts, outputs and test messages showing, in the dark one."""
    page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(base_url + path)
    page.wait_for_load_state("load")
    do_things(page)
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        page.wait_for_function(f"({THEME}) === '{theme}'", timeout=5_000)   # the page follows the system
        violations = audit(page)
        assert violations == [], f"{theme} theme: " + json.dumps(violations, indent=1)


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_axe_finds_no_violation_with_search_results_open(page, base_url, theme, width):
    page.emulate_media(color_scheme=theme)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(base_url + "lesson-04.html")
    assert search(page, "run_tool error"), "the search found nothing to audit"
    assert page.locator(".search-results").is_visible()
    violations = audit(page)
    assert violations == [], json.dumps(violations, indent=1)
