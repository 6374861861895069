"""Stop and the time limit end a runaway cell, the page answers clicks meanwhile, and the next
cell runs: with the interrupt buffer (cross-origin isolated) and by ending the worker (not)."""
from __future__ import annotations


import pytest

from fixture_site import recorded, rewrite_cell, run_cell, serving, wait_ready

# It says it has started, so a test waits for Python to be running it, not for a guessed time.
RUNAWAY = 'print("looping", flush=True)\nwhile True:\n    pass\n'
LOOPING = "document.querySelector('#cell-99-5 .cell-output').textContent.includes('looping')"

# When the cell's state becomes "stopped", by the page's own clock (window.stoppedAt): a measure
# of the page, not of the test's round trips to a busy browser.
WATCH_STOPPED = """() => {
    const cell = document.getElementById('cell-99-5');
    new MutationObserver(() => {
        if (cell.dataset.state === 'stopped' && !('stoppedAt' in window)) window.stoppedAt = performance.now();
    }).observe(cell, { attributes: true, attributeFilter: ['data-state'] });
}"""
# Click a button of the cell and note the page's time of the click.
CLICK_AT = "(selector) => { window.clickedAt = performance.now(); document.querySelector(selector).click(); }"




@pytest.fixture(params=["isolated", "plain"])
def served(request, fixture_root):
    with serving(fixture_root, isolated=request.param == "isolated") as url:
        yield request.param, url


def state(page, cell_id):
    return page.locator(f"#cell-{cell_id}").get_attribute("data-state")


def answers_clicks(page) -> float:
    """Click a button added for the purpose (it must be answered), and return the worst delay, in
    ms, of the page's event loop over a few turns: a frozen main thread shows here."""
    page.evaluate("""() => {
        const b = document.createElement('button'); b.id = 'probe'; b.textContent = 'probe';
        b.onclick = () => { b.dataset.clicked = String(Number(b.dataset.clicked || 0) + 1); };
        document.body.append(b); }""")
    page.locator("#probe").click(timeout=5000)
    page.wait_for_function("document.getElementById('probe').dataset.clicked === '1'", timeout=5000)
    page.evaluate("document.getElementById('probe').remove()")
    return page.evaluate("""async () => {
        let worst = 0;
        for (let i = 0; i < 5; i++) {
            const t = performance.now();
            await new Promise((resolve) => setTimeout(resolve, 0));
            worst = Math.max(worst, performance.now() - t);
        }
        return worst; }""")


def test_stop_ends_while_true_within_two_seconds(page, served):
    kind, url = served
    page.goto(url + "lesson-99.html")
    wait_ready(page)
    assert page.evaluate("crossOriginIsolated") is (kind == "isolated")
    rewrite_cell(page, "99-5", RUNAWAY)
    page.locator("#cell-99-5 .cell-run").click()
    page.wait_for_function(LOOPING, timeout=30_000)     # Python is in the loop
    assert answers_clicks(page) < 250, "the page froze while Python ran"
    page.evaluate(WATCH_STOPPED)
    page.evaluate(CLICK_AT, "#cell-99-5 .cell-stop")
    page.wait_for_function("'stoppedAt' in window", timeout=30_000)
    # Stop, not the cell's 3 s limit, ended it: the page says so, by its own clock within 2 s.
    assert "[Stopped: you pressed Stop" in page.locator("#cell-99-5 .cell-output").text_content()
    assert page.evaluate("window.stoppedAt - window.clickedAt") < 2000
    # The next cell runs (after a new worker has booted, when the old one had to be ended).
    assert run_cell(page, "99-1", timeout=90_000) == recorded(page, "99-1")


def test_the_time_limit_ends_a_runaway_cell(page, served):
    kind, url = served
    page.goto(url + "lesson-99.html")
    wait_ready(page)
    rewrite_cell(page, "99-5", RUNAWAY)
    page.evaluate(WATCH_STOPPED)
    page.evaluate(CLICK_AT, "#cell-99-5 .cell-run")     # data-timeout="3"
    page.wait_for_function("'stoppedAt' in window", timeout=30_000)
    # The limit ended it (the page says which), and not before the 3 s were up: a timer never
    # fires early, so this holds however busy the machine; how late it may be is not a test's bound.
    assert "[Stopped: the 3 s time limit" in page.locator("#cell-99-5 .cell-output").text_content()
    elapsed = page.evaluate("window.stoppedAt - window.clickedAt")
    assert elapsed >= 2900, f"stopped after {elapsed / 1000:.1f} s, the limit is 3 s"
    assert run_cell(page, "99-1", timeout=90_000) == recorded(page, "99-1")


def test_deep_recursion_ends_in_an_error_and_python_carries_on(page, fixture_url):
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    rewrite_cell(page, "99-8", "def down(n):\n    return down(n + 1)\n\ndown(0)\n")
    output = run_cell(page, "99-8", timeout=30_000)
    assert "RecursionError" in output or "[Stopped" in output or "[Could not run" in output
    assert run_cell(page, "99-1", timeout=90_000) == recorded(page, "99-1")


# Count the workers the page makes: boot.js makes the first, python.js one per restart.
COUNT_WORKERS = """(() => {
    const Real = window.Worker;
    window.workersMade = 0;
    window.Worker = class extends Real { constructor(...args) { super(...args); window.workersMade++; } };
})();"""


def test_stop_on_a_queued_cell_drops_it_before_python_sees_it(page, served):
    """The queued cell is never posted: Python goes on with the running cell, untouched."""
    kind, url = served
    page.add_init_script(COUNT_WORKERS)
    page.goto(url + "lesson-99.html")
    wait_ready(page)
    rewrite_cell(page, "99-5", RUNAWAY)
    page.locator("#cell-99-5 .cell-run").click()
    page.wait_for_function(LOOPING, timeout=30_000)
    page.locator("#cell-99-1 .cell-run").click()
    assert state(page, "99-1") == "queued"
    page.locator("#cell-99-1 .cell-stop").click()
    assert state(page, "99-5") == "running", "the running cell goes on"
    page.locator("#cell-99-5 .cell-stop").click()
    page.wait_for_function("document.getElementById('cell-99-1').dataset.state === 'stopped'", timeout=30_000)
    assert page.locator("#cell-99-1 .cell-output").text_content() == "[Stopped before it ran: you pressed Stop.]\n"
    wait_ready(page)
    # One worker at boot, and one more only where Stop on the running cell had to end it.
    assert page.evaluate("window.workersMade") == (1 if kind == "isolated" else 2)
    assert run_cell(page, "99-1", timeout=90_000) == recorded(page, "99-1")
