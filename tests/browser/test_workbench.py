"""The reader's workbench, the small things (issue 40): the map says what it counts, focus stays
on Run, a check's right answer keeps its mark, labels that go stale are renewed, the prompt's box
grows, no Copy button covers code and no command is cut, the map's header is one row, the theme
toggle says its state, the page keys are mentioned, the editor's search panel looks like the
book's controls, and a page under `make serve` logs no error for the worker it leaves out."""
from __future__ import annotations

import json
import threading

from conftest import screenshot
from fixture_site import wait_editor, wait_ready


def test_the_map_says_what_it_counts_and_its_bar_moves_with_a_part_done(page, base_url, site_dir):
    course = json.loads((site_dir / "course.json").read_text())
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(base_url + "404.html")
    work = {"format": 1, "saved": "2026-01-01T00:00:00Z", "cells": {}, "labs": {}, "hints": {},
            "answers": {"check:1-1": {"lesson": "1", "value": {"option": 1, "right": True}}}}
    page.evaluate("(w) => localStorage.setItem('agent-harness-book/work', JSON.stringify(w))", work)
    page.goto(base_url + "index.html")
    what = page.locator("#course-progress .course-what")
    what.wait_for()
    assert "complete when its labs pass and its questions are answered" in what.inner_text()
    counted = [p for p in course["pages"] if p["path"] and p["kind"] != "side-quest" and (p["labs"] or p["questions"])]
    assert f"the {len(counted)} pages with labs or questions" in what.inner_text()
    assert page.locator(".course-count").inner_text().startswith("0 of")
    assert page.eval_on_selector(".course-bar", "bar => bar.value") > 0, "one question answered moves the bar"
    # The header is one row at 1366 px, as on a lesson page.
    tops = page.eval_on_selector_all(".site-header > :not([hidden])", "els => els.map(e => Math.round(e.getBoundingClientRect().top))")
    assert max(tops) - min(tops) < 20, tops
    screenshot(page, "workbench-map-desktop")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "workbench-map-phone")


def test_focus_stays_on_run_and_the_result_is_announced(page, base_url):
    page.goto(base_url + "lesson-02.html")
    wait_ready(page)
    cell = page.locator(".cell[data-cell]:not([data-answers])").first
    run = cell.locator(".cell-run")
    run.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("(c) => ['done', 'error'].includes(c.dataset.state)", arg=cell.element_handle(), timeout=60_000)
    assert page.evaluate("document.activeElement.classList.contains('cell-run')"), "focus stays on Run"
    assert cell.locator(".cell-state").get_attribute("role") == "status"

    lab = page.locator("section.lab").first
    wait_editor(page, "section.lab")
    lab.locator(".lab-run").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("['pass', 'fail', 'failed'].includes(document.querySelector('section.lab').dataset.state)", timeout=120_000)
    assert page.evaluate("document.activeElement.classList.contains('lab-run')"), "focus stays on Run tests"
    assert lab.locator(".lab-report").get_attribute("aria-live") == "polite"


def test_checks_prompts_and_labels(page, base_url):
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(base_url + "lesson-01.html")
    wait_ready(page)
    # the cell under check 1 keeps its output folded, under a label that says why
    cell = page.locator(".cell[data-answers]").first
    label = cell.locator(".cell-answer > summary")
    assert "answer the check above first" in label.inner_text()
    check = page.locator("section.check").first
    check.locator(".check-option[data-right] .option-button").click()
    assert label.inner_text() == "What it printed", "answered: the label says what it is"
    # reading another option after the right one: the right one keeps its green frame
    check.locator(".check-option:not([data-right]) .option-button").first.click()
    right = check.locator(".check-option[data-right] .option-button")
    colour = right.evaluate("b => getComputedStyle(b).borderTopColor")
    green = right.evaluate("b => { const s = document.createElement('span'); s.style.color = 'var(--right)';"
                           " document.body.append(s); const c = getComputedStyle(s).color; s.remove(); return c; }")
    assert colour == green, (colour, green)
    check.scroll_into_view_if_needed()
    screenshot(page, "workbench-check-explore")

    prompt = page.locator(".prompt:has(.hint)").first
    box = prompt.locator(".prompt-input")
    before = box.bounding_box()["height"]
    box.fill("one\ntwo\nthree\nfour\nfive\nsix\nseven")
    assert box.bounding_box()["height"] > before + 40, "the answer box grows with what is written"
    assert prompt.locator(".hint-next").is_visible()
    prompt.locator(".answer-reveal").click()
    assert prompt.locator(".hint-next").is_hidden(), "no more hints once the model answer is out"
    prompt.scroll_into_view_if_needed()
    screenshot(page, "workbench-prompt")

    # the theme toggle says its state in words
    toggle = page.locator(".theme-toggle")
    assert toggle.inner_text().strip().endswith("Dark theme: off")
    toggle.click()
    assert toggle.inner_text().strip().endswith("Dark theme: on")
    # the page keys are said under the previous/next links
    assert "turn the pages" in page.locator(".page-nav-keys").inner_text()


def test_copy_never_covers_code_and_no_command_is_cut(page, base_url):
    for width, height in ((1100, 900), (1366, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        for path in ("lesson-11.html", "closing.html"):
            page.goto(base_url + path)
            page.locator(".code-block .copy-button").first.wait_for(state="attached")
            covered = page.evaluate("""() => [...document.querySelectorAll('.code-block')].filter(block => {
                const button = block.querySelector('.copy-button').getBoundingClientRect();
                const range = document.createRange();
                range.selectNodeContents(block.querySelector('pre'));
                return [...range.getClientRects()].some(r => r.width > 0 && r.right > button.left + 1
                    && r.left < button.right && r.bottom > button.top + 1 && r.top < button.bottom - 1);
            }).length""")
            assert covered == 0, f"{path} at {width} px: {covered} code blocks have text under Copy"
            cut = page.evaluate("""() => [...document.querySelectorAll('pre.lab-command, pre.code[data-language="text"]')]
                .filter(pre => pre.scrollWidth > pre.clientWidth + 1).length""")
            assert cut == 0, f"{path} at {width} px: {cut} command blocks cut at the edge"
            if path == "closing.html" and width in (1100, 390):
                page.locator('pre.code[data-language="text"] >> visible=true').first.scroll_into_view_if_needed()
                screenshot(page, f"workbench-commands-{width}")


def test_the_lab_search_panel_uses_the_books_controls(page, base_url):
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(base_url + "lesson-01.html")
    wait_ready(page)
    wait_editor(page, "section.lab")
    page.locator("section.lab .lab-search").click()
    panel = page.locator("section.lab .cm-search")
    panel.wait_for()
    sizes = panel.locator(".cm-button, .cm-textfield").evaluate_all("els => els.map(e => parseFloat(getComputedStyle(e).fontSize))")
    book = page.eval_on_selector("section.lab .lab-search", "b => parseFloat(getComputedStyle(b).fontSize)")
    assert sizes and all(abs(size - book) < 0.5 for size in sizes), (sizes, book)
    panel.scroll_into_view_if_needed()
    screenshot(page, "workbench-lab-search")


def test_a_page_under_make_serve_logs_no_error_for_the_worker_it_leaves_out(page, site_dir):
    import serve
    from builder import devserve
    server = serve.BookServer(("127.0.0.1", 0), lambda *a, **k: devserve.make_handler(devserve.State())(
        *a, directory=str(site_dir), **k))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    said: list[str] = []
    page.on("console", lambda message: message.type in ("error", "warning") and said.append(message.text))
    try:
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/lesson-01.html")
        wait_ready(page)
        page.wait_for_timeout(500)
    finally:
        server.shutdown()
        server.server_close()
    assert not [text for text in said if "sw.js" in text or "offline" in text or "404" in text], said
