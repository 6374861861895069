#!/usr/bin/env python3
"""The page's Python, measured in Chromium. Prints figures; asserts nothing.

    python bench/run.py [--site _site] [--runs 5]

- the floor: a bare page whose module worker only calls loadPyodide() (same files, same server),
  from navigation start to the worker saying it is ready;
- the book: lesson 11 opened -> Python ready (the status says ready), from the memory snapshot;
  the ratio to the floor, per round, and min / median / max;
- click -> first output of the page's first cell right after ready, and of `print(1)` later;
- lesson 11's lab tests in the page (labs 1 and 2 on their solutions);
- search: the index's size, its first load in the page, and the time of a query;
- bytes the page loads before Python is ready (HTML, CSS, JS), without Pyodide, the snapshot, the
  editor bundle and the worker's Python files (those are listed apart).

Cold: each visit in a fresh browser context (empty caches, no service worker), what a first visit
gets. Warm: one persistent profile with the service worker on, what a returning reader gets (the
browser's compiled-code cache hits only there). Floor and book alternate in both, --runs rounds
each. The aims: ready at 0.5x the floor or less, cold and warm; click -> output under 100 ms right
after ready; under 150 KB before Python.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site"))   # site/serve.py ships alone in the zip: no package

import serve  # noqa: E402  (site/serve.py)
from builder.browser import FLAGS, find_browser  # noqa: E402

FLOOR_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>floor</title></head><body>
<script type="module">
const worker = new Worker("bench-floor-worker.js", { type: "module" });
worker.onmessage = ({ data }) => { performance.mark("floor-ready"); document.body.dataset.ready = data; };
</script></body></html>
"""
FLOOR_WORKER = """import { loadPyodide } from "./pyodide/pyodide.mjs";
const py = await loadPyodide({ indexURL: new URL("./pyodide/", import.meta.url).href });
py.runPython("1 + 1");
postMessage("ready");
"""

EXCLUDED = ("/pyodide/", "editor.bundle.js", "/py/")


def bench_root(site: Path, folder: Path) -> Path:
    """A folder that serves the built site plus the floor page: symlinks, nothing copied."""
    folder.mkdir()
    for entry in site.iterdir():
        (folder / entry.name).symlink_to(entry.resolve())
    (folder / "bench-floor.html").write_text(FLOOR_PAGE)
    (folder / "bench-floor-worker.js").write_text(FLOOR_WORKER)
    return folder


def mark(page, name: str) -> float:
    return page.evaluate(f"performance.getEntriesByName({name!r})[0].startTime")


def floor_once(page, url: str) -> float:
    page.goto(url + "bench-floor.html")
    page.wait_for_function("document.body.dataset.ready === 'ready'", timeout=180_000)
    return mark(page, "floor-ready")


def book_once(page, url: str) -> dict:
    requests = []
    page.on("requestfinished", lambda request: requests.append(request))
    page.goto(url + "lesson-11.html")
    page.wait_for_function("document.getElementById('python-status')?.dataset.state === 'ready'",
                           timeout=180_000)
    ready = mark(page, "book:python-ready")
    detail = page.evaluate("performance.getEntriesByName('book:python-ready')[0].detail")
    started = mark(page, "book:worker-start")
    origin = page.evaluate("performance.timeOrigin")
    before, apart = {}, {}
    for request in requests:
        timing = request.timing
        start = timing["startTime"] - origin  # epoch ms -> ms since navigation start
        if start > ready:
            continue
        size = request.sizes()["responseBodySize"]
        path = request.url.split("//", 1)[-1].split("/", 1)[-1]
        counted = path.split("?")[0].endswith((".html", ".css", ".js", ".mjs")) or "." not in path.split("/")[-1]
        (apart if any(part in "/" + path for part in EXCLUDED) or not counted else before)[path] = size
    first = page.locator(".cell[data-cell]").first.get_attribute("id")
    right_after = page.evaluate(CLICK_PROBE, first)
    finished(page, first)
    clicks = click_to_output(page)
    return {"ready": ready, "right_after": right_after, "worker_start": started, "boot": detail, "before": before, "apart": apart, **clicks}


CLICK_PROBE = """(id) => new Promise((resolve) => {
    const cell = document.getElementById(id);
    const output = cell.querySelector('.cell-output');
    let clicked = 0;
    const timer = setTimeout(() => resolve(-1), 30000);
    const observer = new MutationObserver(() => {
        if (clicked && output.textContent) { observer.disconnect(); clearTimeout(timer); resolve(performance.now() - clicked); }
    });
    observer.observe(output, { childList: true, characterData: true, subtree: true });
    cell.querySelector('.cell-run').addEventListener('click', () => { clicked = performance.now(); },
                                                       { capture: true, once: true });
    cell.querySelector('.cell-run').click();
})"""


def finished(page, element_id: str) -> None:
    page.wait_for_function(f"['done', 'error', 'stopped', 'failed'].includes("
                           f"document.getElementById('{element_id}').dataset.state)", timeout=60_000)


def click_to_output(page) -> dict:
    editable = page.locator(".cell[data-editable]").first.get_attribute("id")
    page.wait_for_selector(f"#{editable} .code-editor")
    page.eval_on_selector(f"#{editable} .code-editor", "node => node.bookEditor.setText('print(1)\\n')")
    trivial = []
    for _ in range(5):
        trivial.append(page.evaluate(CLICK_PROBE, editable))
        finished(page, editable)
    first = page.locator(".cell[data-cell]").first.get_attribute("id")
    written = page.evaluate(CLICK_PROBE, first)
    finished(page, first)
    return {"trivial": statistics.median(trivial), "first_cell": written}


def lab_suite(browser, url: str) -> dict:
    import stages

    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(url + "lesson-11.html")
    page.wait_for_function("document.getElementById('python-status')?.dataset.state === 'ready'",
                           timeout=180_000)
    times = {}
    for number in (1, 2):
        lab = f"lab-11-{number}"
        page.wait_for_selector(f"#{lab} .code-editor")
        text = stages.load().solution(f"11.{number}")
        page.eval_on_selector(f"#{lab} .code-editor", "(node, text) => node.bookEditor.setText(text)", text)
        started = page.evaluate("performance.now()")
        page.locator(f"#{lab} .lab-run").click()
        page.wait_for_function(f"['pass', 'fail', 'failed'].includes(document.getElementById('{lab}').dataset.state)",
                               timeout=180_000)
        times[number] = (page.evaluate("performance.now()") - started,
                         page.locator(f"#{lab}").get_attribute("data-state"),
                         page.locator(f"#{lab} .lab-tests li").count())
    context.close()
    return times


SEARCHES = ["torn write", "run_tool", "SessionLog", "steer follow_up", "is_error", "truncate_tail",
            "power cut replay", "context_for_model", "max_turns", "the model answers"]

SEARCH_TIMES = """async (queries) => {
    const module = await import('./assets/js/search.js');
    let started = performance.now();
    const engine = await module.load();
    const load = performance.now() - started;
    const times = [];
    for (let round = 0; round < 20; round++) {
        for (const text of queries) {
            started = performance.now();
            module.query(engine, text);
            times.push(performance.now() - started);
        }
    }
    times.sort((a, b) => a - b);
    return {load, median: times[Math.floor(times.length / 2)], max: times[times.length - 1],
            documents: engine.documentCount};
}"""


def search_figures(browser, url: str, site: Path) -> dict:
    """The search index: its size on disk and gzipped, its first load in the page (the library
    and the index fetched, the index read), and the time of one query, over ten queries x 20."""
    import gzip

    index = (site / "search" / "index.json").read_bytes()
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(url + "lesson-01.html")
    figures = page.evaluate(SEARCH_TIMES, SEARCHES)
    context.close()
    return {"bytes": len(index), "gzipped": len(gzip.compress(index)), **figures}


def spread(values: list[float], unit: str = "ms", digits: int = 0) -> str:
    """min / median / max, as the note reports them."""
    return (f"{min(values):.{digits}f} / {statistics.median(values):.{digits}f} / "
            f"{max(values):.{digits}f} {unit}")


def cold_rounds(playwright, url: str, runs: int) -> tuple[list[float], list[dict]]:
    """Fresh contexts (no cache, no service worker): what a first visit gets. Floor and book
    alternate, so load on the machine hits both alike."""
    browser = playwright.chromium.launch(executable_path=find_browser(), args=FLAGS, headless=True)
    floors, books = [], []
    for _ in range(runs):
        for measure, into in ((floor_once, floors), (book_once, books)):
            context = browser.new_context(service_workers="block")
            into.append(measure(context.new_page(), url))
            context.close()
    labs = lab_suite(browser, url)
    browser.close()
    return floors, books, labs


def warm_rounds(playwright, url: str, runs: int, profile: Path) -> tuple[list[float], list[dict]]:
    """One persistent profile with the service worker on, as a returning reader has it: the
    browser's compiled-code cache can hit only here. The first visit installs the offline copy;
    then floor and book alternate, each a reload in the same profile."""
    context = playwright.chromium.launch_persistent_context(
        str(profile), executable_path=find_browser(), args=FLAGS, headless=True)
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(url + "lesson-11.html")
    page.wait_for_function("document.getElementById('offline-status')?.textContent"
                           ".startsWith('Saved in this browser')", timeout=300_000)
    book_once(page, url)                 # one visit through the service worker, unmeasured
    floor_once(page, url)
    floors, books = [], []
    for _ in range(runs):
        floors.append(floor_once(page, url))
        books.append(book_once(page, url))
    context.close()
    return floors, books


def report(kind: str, floors: list[float], books: list[dict]) -> None:
    ready = [book["ready"] for book in books]
    ratios = [b / f for b, f in zip(ready, floors)]
    snapshot = sum(1 for book in books if book["boot"].get("snapshot"))
    print(f"{kind}: floor, bare loadPyodide() in a worker  {spread(floors)}")
    print(f"{kind}: lesson 11 open -> Python ready        {spread(ready)}   "
          f"({snapshot} of {len(books)} from the snapshot)")
    print(f"{kind}: ratio book / floor, per round         {', '.join(f'{r:.2f}' for r in ratios)}")
    print(f"{kind}: ratio, min / median / max             {spread(ratios, '', 2)}   (aim: 0.5 or less)")
    print(f"{kind}: click -> output right after ready     {spread([b['right_after'] for b in books], 'ms', 1)}"
          f"   (the page's first cell; aim: under 100)")
    print(f"{kind}: click -> output, print(1), later      {spread([b['trivial'] for b in books], 'ms', 1)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_site")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    if not (args.site / "lesson-11.html").exists():
        print(f"bench: {args.site}/lesson-11.html is missing; build the book first (make build)", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="book-bench-") as folder:
        root = bench_root(args.site.resolve(), Path(folder) / "site")
        server = serve.make_server(root, 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        try:
            with sync_playwright() as playwright:
                floors, books, labs = cold_rounds(playwright, url, args.runs)
                browser = playwright.chromium.launch(executable_path=find_browser(), args=FLAGS)
                found = search_figures(browser, url, args.site)
                browser.close()
                warm = warm_rounds(playwright, url, args.runs, Path(folder) / "profile")
        finally:
            server.shutdown()
            server.server_close()
    report("cold", floors, books)
    report("warm", *warm)
    for key in ("files", "pyodide", "glue", "warm"):
        value = statistics.median(book["boot"].get(key, 0) for book in books)
        print(f"    cold, in the worker: {key:<16} {value:8.0f} ms")
    for number, (ms, state, tests) in labs.items():
        print(f"lab 11.{number}: {tests} tests on the solution      {ms:8.0f} ms   ({state})")
    print(f"search index: {found['documents']} places, {found['bytes'] / 1024:.0f} KB "
          f"({found['gzipped'] / 1024:.0f} KB gzipped); first search loads it in {found['load']:.0f} ms; "
          f"a query {found['median']:.2f} ms median, {found['max']:.2f} ms max")
    before, apart = books[0]["before"], books[0]["apart"]
    print(f"bytes before Python (HTML, CSS, JS)       {sum(before.values()) / 1024:8.1f} KB   (aim: under 150)")
    for path, size in sorted(before.items(), key=lambda item: -item[1]):
        print(f"    {size / 1024:8.1f} KB  {path}")
    print(f"not counted (Pyodide, the snapshot, the worker's Python, the editor, figures): "
          f"{sum(apart.values()) / 1024:.0f} KB in {len(apart)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
