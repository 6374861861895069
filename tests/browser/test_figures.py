"""Figures a reader can read: on a 390 px phone each drawing keeps the width at which its smallest
label is at least LEGIBLE_PX (swiped sideways), and a tap opens it in a viewer that pans and
zooms, with a way back (Close, Escape, the browser's Back)."""
from __future__ import annotations

import pytest

import re
from pathlib import Path

from conftest import screenshot
from builder.figures import LEGIBLE_PX

pytestmark = pytest.mark.no_python     # these pages are read, never run: no Python boots beside them

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
         "has_touch": True}


def smallest_label(svg: Path) -> tuple[float, float]:
    """(the drawing's viewBox width, its smallest font size), read from the SVG's text."""
    text = svg.read_text(encoding="utf-8")
    width = float(re.search(r'<svg[^>]*viewBox="0 0 ([\d.]+) ', text).group(1))
    sizes = [float(s) for s in re.findall(r'font-size\s*[:=]\s*"?([\d.]+)', text)]
    return width, min(sizes)


def test_every_figure_of_a_lesson_reads_on_a_phone(profiles, base_url, site_dir):
    page = profiles.fresh(**PHONE).new_page()
    page.goto(base_url + "lesson-14.html")
    figures = page.evaluate("""() => [...document.querySelectorAll('.figure img')].map(i =>
        ({src: i.getAttribute('src'), width: i.getBoundingClientRect().width}))""")
    assert len(figures) >= 2
    for figure in figures:
        box, smallest = smallest_label(site_dir / figure["src"])
        shown = figure["width"] / box * smallest
        assert shown >= LEGIBLE_PX, f"{figure['src']}: its smallest label shows at {shown:.1f} px"
    assert page.locator(".figure-swipe").first.is_visible(), "the phone reader is told to swipe"
    page.locator(".figure").first.scroll_into_view_if_needed()
    screenshot(page, "figure-phone-inline")


def test_a_figure_fits_its_column_on_a_desktop(page, base_url):
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(base_url + "lesson-14.html")
    column = page.evaluate("document.querySelector('.figure').getBoundingClientRect().width")
    image = page.evaluate("document.querySelector('.figure img').getBoundingClientRect().width")
    assert image <= column
    assert not page.locator(".figure-swipe").first.is_visible()


def test_a_tap_opens_the_figure_large_to_pan_and_zoom_and_back_closes_it(profiles, base_url):
    page = profiles.fresh(**PHONE).new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(base_url + "lesson-14.html")
    url = page.url
    link = page.locator(".figure-open").first
    link.scroll_into_view_if_needed()
    link.locator("img").tap()
    viewer = page.locator("dialog.figure-viewer[open]")
    viewer.wait_for()
    assert viewer.locator(".figure-viewer-title").text_content() == "Figure 14.1"
    assert page.evaluate("document.activeElement.classList.contains('figure-viewer-pane')")
    width = lambda: page.evaluate("document.querySelector('.figure-viewer img').getBoundingClientRect().width")
    legible = int(link.evaluate("a => getComputedStyle(a).getPropertyValue('--legible')").removesuffix("px"))
    start = width()
    assert start >= legible
    screenshot(page, "figure-phone-viewer")
    viewer.get_by_role("button", name="Zoom in").click()
    assert width() > start
    page.keyboard.press("-")
    page.keyboard.press("-")
    assert width() < start
    # The arrow keys move around the drawing; they turn no page.
    page.keyboard.press("ArrowRight")
    assert page.url == url and viewer.is_visible()
    # Back closes the viewer and stays on the page.
    page.go_back()
    page.wait_for_function("!document.querySelector('dialog.figure-viewer').open")
    assert page.url == url
    # Escape closes it too, and the focus goes back to the figure.
    link.locator("img").tap()
    viewer.wait_for()
    page.keyboard.press("Escape")
    page.wait_for_function("!document.querySelector('dialog.figure-viewer').open")
    assert page.evaluate("document.activeElement === document.querySelector('.figure-open')")
    assert page.url == url
    # and one more Back leaves the page as it always did: the viewer left no step behind.
    assert errors == []
