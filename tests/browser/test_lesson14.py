"""Lesson 14 as a reader does it: a check answered, the streaming cell run (its output arrives in
the page in pieces while the cell is still running, and ends as the build recorded it). Its labs'
solutions passing under Pyodide is tests/test_pyodide_parity.py's."""
from __future__ import annotations

from conftest import screenshot
from fixture_site import FINISHED, recorded, wait_ready, wait_settled

STREAMING = "pace=0.06"      # the cell whose code holds this: TerminalRenderer over a paced StreamingModel

# Every change to the cell's output, with the cell's state at that moment, from a MutationObserver
# set up before the click: what a reader watching the page would have seen, in order.
WATCH = """(id) => {
    const cell = document.getElementById(id);
    const output = cell.querySelector('.cell-output');
    window.seen = [];
    new MutationObserver(() => window.seen.push(
        {text: output.textContent, state: cell.dataset.state || '', at: performance.now()}))
        .observe(output, {childList: true, characterData: true, subtree: true});
}"""


def cell_holding(page, text: str) -> str:
    """The id of the one cell of the page whose code holds `text` (a cell's number moves when a
    cell is added above it; what it runs does not)."""
    ids = page.evaluate("""(text) => [...document.querySelectorAll('.cell[data-cell]')]
        .filter(c => JSON.parse(c.querySelector('.cell-data').textContent).source.includes(text))
        .map(c => c.id.replace(/^cell-/, ''))""", text)
    assert len(ids) == 1, f"{len(ids)} cells of the page hold {text!r}: {ids}"
    return ids[0]


def test_a_check_then_the_stream_arrives_word_by_word(page, base_url):
    page.goto(base_url + "lesson-14.html")
    page.wait_for_selector(".check[data-live]")
    check = page.locator(".check").first
    check.locator(".check-option:not([data-right]) .option-button").first.click()
    assert check.get_attribute("data-state") == "wrong"
    check.locator(".check-option[data-right] .option-button").click()
    assert check.locator(".check-verdict").inner_text() == "Right."
    assert check.locator(".check-explain").is_visible()

    wait_ready(page)
    wait_settled(page)
    cell_id = cell_holding(page, STREAMING)
    element = f"cell-{cell_id}"
    page.evaluate(WATCH, element)
    page.locator(f"#{element} .cell-run").click()
    page.wait_for_function(FINISHED % element, timeout=60_000)
    assert page.get_attribute(f"#{element}", "data-state") == "done"
    output = page.locator(f"#{element} .cell-output").text_content()
    assert output == recorded(page, cell_id)
    seen = page.evaluate("window.seen")
    while_running = [s["text"] for s in seen if s["state"] == "running" and s["text"]]
    distinct = sorted(set(while_running), key=len)
    assert len(distinct) >= 3, f"the output arrived in {len(distinct)} piece(s) while running: {distinct}"
    for shorter, longer in zip(distinct, distinct[1:]):
        assert longer.startswith(shorter), (shorter, longer)
    assert distinct[0] != output and output.startswith(distinct[0])
    assert distinct[0].startswith("Let "), distinct[0]
    page.locator(f"#{element}").scroll_into_view_if_needed()
    screenshot(page, "lesson-14-streamed")
