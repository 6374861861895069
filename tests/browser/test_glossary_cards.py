"""The glossary in Chromium (builder/glossary.py, site/js/glossary.js): a term's first use on a
later page opens its card on hover and on focus on a desktop, on a tap on a phone (a second tap
follows the link), and Escape closes it; the card stays on the screen, in both themes; the
glossary page reads without JavaScript and passes axe in both themes."""
from __future__ import annotations

import pytest

from conftest import screenshot
from test_accessibility import AXE, audit

pytestmark = pytest.mark.no_python     # these pages are read, never run: no Python boots beside them

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
         "has_touch": True}
PAGE = "lesson-05.html"


def first_term(page):
    term = page.locator(".term").first
    term.scroll_into_view_if_needed()
    return term, term.locator(".term-card")


def on_screen(page, card) -> None:
    box = card.bounding_box()
    width = page.evaluate("document.documentElement.clientWidth")
    assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, f"the card runs off the screen: {box}"
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "the page got wider"


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_card_opens_on_hover_and_on_focus_and_escape_closes_it(page, base_url, theme):
    page.emulate_media(color_scheme=theme)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(base_url + PAGE)
    term, card = first_term(page)
    assert not card.is_visible(), "a card is shut until asked for"
    term.locator(".term-link").hover()
    card.wait_for(state="visible")
    name = term.locator(".term-card-name").text_content()
    assert term.locator(".term-card-def").text_content().strip()
    assert term.locator(".term-card-from").get_attribute("href").endswith(f"#term-{term.locator('.term-link').get_attribute('href').split('#')[1]}")
    on_screen(page, card)
    colours = card.evaluate("c => [getComputedStyle(c).backgroundColor, getComputedStyle(c).color]")
    assert colours[0] != colours[1]
    screenshot(page, f"glossary-card-{theme}")
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate("""async () => {
        const r = await axe.run(document.querySelector('.term'), {resultTypes: ['violations']});
        return r.violations.map(v => v.id + ': ' + v.nodes.map(n => n.failureSummary).join(' / '));
    }""")
    assert violations == [], violations
    page.keyboard.press("Escape")
    card.wait_for(state="hidden")
    page.mouse.move(0, 0)
    # the keyboard: Tab reaches the term, its card opens, Escape shuts it, the link stays focused
    term.locator(".term-link").focus()
    card.wait_for(state="visible")
    assert card.text_content().startswith(name)
    page.keyboard.press("Escape")
    card.wait_for(state="hidden")
    assert page.evaluate("document.activeElement.classList.contains('term-link')")


def test_on_a_phone_a_tap_opens_the_card_and_a_second_follows_the_link(profiles, base_url):
    page = profiles.fresh(**PHONE).new_page()
    page.goto(base_url + PAGE)
    term, card = first_term(page)
    link = term.locator(".term-link")
    target = link.get_attribute("href")
    link.tap()
    card.wait_for(state="visible")
    assert page.url.endswith(PAGE), "the first tap shows the card and stays on the page"
    on_screen(page, card)
    screenshot(page, "glossary-card-phone")
    page.locator("main p").first.tap()
    card.wait_for(state="hidden")
    link.tap()
    card.wait_for(state="visible")
    covered = link.evaluate("""l => { const b = l.getBoundingClientRect();
        const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
        return hit === l || l.contains(hit) ? null : (hit && hit.className); }""")
    assert covered is None, f"the open card covers its own term on a phone (the tap lands on {covered})"
    link.tap()
    page.wait_for_url(f"**/{target}")
    entry = page.locator(f"#{target.split('#')[1]}")
    assert entry.is_visible()


def test_the_glossary_page_reads_without_javascript(profiles, base_url):
    page = profiles.fresh(java_script_enabled=False).new_page()
    page.goto(base_url + "glossary.html")
    entries = page.locator(".glossary-entry")
    assert entries.count() >= 60
    transcript = page.locator(".glossary-entry", has=page.locator("h3#transcript"))
    assert "Lesson 01" in transcript.locator(".glossary-from").text_content()
    assert transcript.locator(".glossary-uses a").count() >= 5
    transcript.locator(".glossary-from a").click()
    page.wait_for_url("**/lesson-01.html#term-transcript")
    assert page.locator("dfn#term-transcript").is_visible()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_glossary_page_passes_axe(page, base_url, theme):
    page.emulate_media(color_scheme=theme)
    page.goto(base_url + "glossary.html")
    violations = audit(page)
    assert violations == [], violations
