"""A transcript you can step through (issue 41): lesson 10's cell prints lab.timeline, and the
page draws that output as a stepper, one model call at a time. What the stepper shows is read back
against the printed text, step by step, from the recorded output and again after the cell runs;
Previous, Next and the arrow keys move it; it fits a 390 px phone (the block scrolls inside
itself, the page never does); axe finds nothing in either theme; without JavaScript the whole
text is there."""
from __future__ import annotations

import json

import pytest

from conftest import screenshot
from fixture_site import recorded, run_cell, wait_ready
from test_accessibility import audit

CELL = "10-timeline"
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True,
         "has_touch": True}
STEP = ("\u2500\u2500 call ", "\u2500\u2500 step ")
END = "\u2500\u2500 end of timeline"


def expected_steps(text: str) -> list[str]:
    """What the stepper must show for each step: the output with only that step's lines kept."""
    lines = text.rstrip("\n").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Timeline of "))
    end = lines.index(END)
    heads = [i for i in range(start, end) if lines[i].startswith(STEP)]
    bounds = heads + [end]
    return ["\n".join(lines[:start + 2] + lines[a:b] + lines[end:])
            for a, b in zip(bounds, bounds[1:])]


def stacked(step: str) -> str:
    """A step as a phone shows it: the record's column, then the view's, each row led by its mark
    and each cell exactly as printed."""
    lines = step.split("\n")
    heading = next(i for i, line in enumerate(lines) if line.startswith("record"))
    reply = next(i for i, line in enumerate(lines) if line.startswith("reply: "))
    width = lines[heading].index("   view")
    rows = [(line[:width].rstrip(), line[width + 1], line[width + 3:]) for line in lines[heading + 1:reply]]
    return "\n".join(lines[:heading] + [lines[heading][:width].rstrip()]
                     + [f"{mark} {left}" for left, mark, _ in rows if left]
                     + [lines[heading][width + 3:]]
                     + [f"{mark} {right}" for _, mark, right in rows if right] + lines[reply:])


def shown(page) -> dict:
    return page.evaluate("""(id) => {
        const cell = document.getElementById('cell-' + id);
        const view = cell.querySelector('.timeline-view');
        return {text: view.textContent.replace(/\\n$/, ''), count: cell.querySelector('.timeline-count').textContent,
                step: cell.querySelector('.timeline').dataset.step,
                prev: cell.querySelector('.timeline-prev').getAttribute('aria-disabled'),
                next: cell.querySelector('.timeline-next').getAttribute('aria-disabled'),
                outputHidden: cell.querySelector('.cell-output').hidden,
                marked: [...view.querySelectorAll('.tl-only-view')].map(s => s.textContent),
                fresh: [...view.querySelectorAll('.tl-new')].map(s => s.textContent)};
    }""", CELL)


def walk(page, text: str, phone: bool = False) -> None:
    """Step forward through every call and back again, checking each step against `text` (on a
    phone, the two columns of each step one above the other)."""
    steps = [stacked(step) if phone else step for step in expected_steps(text)]
    assert len(steps) == 3, text
    cell = page.locator(f"#cell-{CELL}")
    for k, want in enumerate(steps, 1):
        seen = shown(page)
        assert seen["text"] == want, f"step {k}:\n{seen['text']}\n!=\n{want}"
        assert seen["count"].startswith(f"step {k} of 3: call {k}, ")
        assert seen["outputHidden"], "the printed text is folded away while stepping"
        assert seen["prev"] == ("true" if k == 1 else None) and seen["next"] == ("true" if k == 3 else None)
        # The stand-in for c1 is marked, on every call after the interrupted one.
        assert len(seen["marked"]) == (0 if k == 1 else 1)
        assert all("R(c1)" in row and "[is_error]" in row for row in seen["marked"])
        # What the record gained since the call before is in bold, and said: 1, then 3, then 5.
        gained = {1: [], 2: ["A[c1]", "U"], 3: ["A", "U"]}[k]
        assert [row.lstrip("=-~ ").split(" ")[0] for row in seen["fresh"]] == gained, seen["fresh"]
        assert seen["count"].endswith("; 2 new in the record, in bold") == (k > 1), seen["count"]
        if k < 3:
            cell.locator(".timeline-next").click()
    cell.locator(".timeline-next").click(force=True)   # past the end: stays on the last step
    assert shown(page)["step"] == "3"
    for k in (2, 1):
        cell.locator(".timeline-prev").click()
        assert shown(page)["text"] == steps[k - 1]


def test_the_recorded_timeline_steps_call_by_call(page, base_url):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(base_url + "lesson-10.html")
    page.wait_for_selector(f"#cell-{CELL} .timeline-view")
    text = recorded(page, CELL)
    walk(page, text)
    # The keyboard: ← and → step inside the bar (and do not turn the page), Home and End jump.
    url = page.url
    page.locator(f"#cell-{CELL} .timeline-next").focus()
    page.keyboard.press("ArrowRight")
    assert shown(page)["step"] == "2"
    page.keyboard.press("End")
    assert shown(page)["step"] == "3"
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Home")
    assert shown(page)["step"] == "1" and page.url == url
    page.locator(f"#cell-{CELL} .timeline-view").focus()     # it scrolls sideways: its arrows
    page.keyboard.press("ArrowRight")                        # are its own, not the page's
    page.wait_for_timeout(300)
    assert page.url == url and shown(page)["step"] == "1"
    # "Whole output" gives the printed text back, whole.
    whole = page.locator(f"#cell-{CELL} .timeline-whole")
    whole.click()
    assert whole.get_attribute("aria-pressed") == "true"
    output = page.locator(f"#cell-{CELL} .cell-output")
    assert output.is_visible() and output.text_content() == text
    assert not page.locator(f"#cell-{CELL} .timeline-view").is_visible()
    whole.click()
    assert not output.is_visible() and shown(page)["step"] == "1"
    screenshot(page, "timeline-desktop")


def test_running_the_cell_draws_the_stepper_again(page, base_url):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(base_url + "lesson-10.html")
    wait_ready(page)
    text = recorded(page, CELL)
    page.locator(f"#cell-{CELL} .timeline-next").click()
    assert run_cell(page, CELL).rstrip("\n") == text.rstrip("\n")
    page.wait_for_function(f"document.querySelector('#cell-{CELL} .timeline-view') !== null "
                           f"&& document.querySelector('#cell-{CELL} .cell-output').hidden")
    page.locator(f"#cell-{CELL} .timeline-prev").click()
    walk(page, text)
    assert page.locator(f"#cell-{CELL} .timeline").count() == 1, "one stepper, drawn again"


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_phone_and_axe(profiles, base_url, theme):
    page = profiles.fresh(**PHONE, color_scheme=theme).new_page()
    page.goto(base_url + "lesson-10.html")
    stepper = page.locator(f"#cell-{CELL} .timeline")
    stepper.scroll_into_view_if_needed()
    assert stepper.get_attribute("data-layout") == "stacked"
    walk(page, recorded(page, CELL), phone=True)
    page.locator(f"#cell-{CELL} .timeline-next").click()
    walkable = page.evaluate("""(id) => {
        const cell = document.getElementById('cell-' + id);
        const view = cell.querySelector('.timeline-view').getBoundingClientRect();
        const buttons = [...cell.querySelectorAll('.timeline-bar button')].map(b => b.getBoundingClientRect());
        return {page: document.documentElement.scrollWidth, view: [view.left, view.right],
                buttons: buttons.map(b => [b.left, b.right, b.height]),
                rows: cell.querySelector('.timeline-view .tl-only-view').getBoundingClientRect().right,
                scrolls: cell.querySelector('.timeline-view').scrollWidth > cell.querySelector('.timeline-view').clientWidth};
    }""", CELL)
    assert walkable["page"] <= 390, f"the page scrolls sideways: {walkable['page']} px"
    assert 0 <= walkable["view"][0] and walkable["view"][1] <= 390, walkable
    assert all(0 <= left and right <= 390 and height >= 24 for left, right, height in walkable["buttons"]), walkable
    assert walkable["rows"] <= 390 and not walkable["scrolls"], "a step is read without scrolling sideways"
    assert page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") == (theme == "dark")
    screenshot(page, f"timeline-phone-{theme}")
    violations = audit(page)
    assert violations == [], json.dumps(violations, indent=1)
    page.locator(f"#cell-{CELL} .timeline-whole").click()     # the printed text, columns kept:
    assert page.evaluate("document.documentElement.scrollWidth") <= 390   # it scrolls in its box


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_axe_on_a_desktop(page, base_url, theme):
    page.emulate_media(color_scheme=theme)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(base_url + "lesson-10.html")
    page.locator(f"#cell-{CELL} .timeline-next").click()
    assert page.locator(f"#cell-{CELL} .tl-only-view").count() == 1
    violations = audit(page)
    assert violations == [], json.dumps(violations, indent=1)


def test_without_javascript_the_whole_text_is_there(profiles, base_url):
    page = profiles.fresh(java_script_enabled=False).new_page()
    page.goto(base_url + "lesson-10.html")
    output = page.locator(f"#cell-{CELL} .cell-output")
    assert output.is_visible()
    assert len(expected_steps(output.text_content())) == 3
    assert page.locator(".timeline").count() == 0


TIMELINE_PAGES = ["lesson-09.html", "lesson-10.html", "side-quest-s2.html"]


def test_the_pages_that_print_a_timeline_are_the_ones_walked_below(site_dir):
    """The stepper test below walks a fixed list of pages: a page that gains or loses a printed
    timeline must change that list, named here, not time out there."""
    printing = sorted(p.name for p in site_dir.glob("*.html")
                      if p.name != "print.html" and "Timeline of " in p.read_text(encoding="utf-8"))
    assert printing == TIMELINE_PAGES, (
        f"pages printing lab.timeline are {printing}; update TIMELINE_PAGES in {__file__}")


@pytest.mark.parametrize("path", TIMELINE_PAGES)
def test_every_printed_timeline_is_a_stepper(page, base_url, path):
    """Each page that prints a timeline gets a stepper for it, with one step per printed call (a
    cell that answers a question keeps it folded with its output)."""
    page.goto(base_url + path)
    page.wait_for_selector(".timeline-view", state="attached")   # lesson 09's is folded: it answers
    seen = page.evaluate("""async () => {
        const html = await (await fetch(location.href)).text();
        const served = new DOMParser().parseFromString(html, "text/html");
        return [...served.querySelectorAll('.cell[data-cell]')]
            .filter(cell => cell.querySelector('.cell-output').textContent.includes('\\nTimeline of ')
                         || cell.querySelector('.cell-output').textContent.startsWith('Timeline of '))
            .map(cell => {
                const live = document.getElementById(cell.id);
                return {id: cell.id, text: cell.querySelector('.cell-output').textContent,
                        count: live.querySelector('.timeline-count')?.textContent,
                        view: live.querySelector('.timeline-view')?.textContent.replace(/\\n$/, '')};
            });
    }""")
    assert seen, f"{path} prints no timeline"
    for cell in seen:
        steps = expected_steps(cell["text"])
        assert cell["count"] and cell["count"].startswith(f"step 1 of {len(steps)}: "), cell
        assert cell["view"] == steps[0], cell["id"]
