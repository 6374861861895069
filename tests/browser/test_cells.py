"""Cells in the page: each prints exactly what the build recorded, output is text (never HTML),
a flood of output is capped, and the seed's Ada cell works as written once edited."""
from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from fixture_site import (OUTPUT_NOTE, editor_text, recorded, rewrite_cell, run_cell, serving,
                          type_into_editor, wait_editor, wait_ready)




def lesson_pages(site_dir: Path) -> list[Path]:
    return sorted(site_dir.glob("lesson-*.html"))


def test_fixture_cells_print_what_was_recorded(page, fixture_url):
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    for cell_id in ("99-1", "99-2", "99-3", "99-7"):
        assert run_cell(page, cell_id) == recorded(page, cell_id), f"cell {cell_id}"
    # The traceback names the cell's own lines, as displayed.
    output = page.locator("#cell-99-3 .cell-output").text_content()
    assert 'File "cell", line 5, in <module>' in output and 'File "cell", line 2, in f' in output
    assert page.locator("#cell-99-3").get_attribute("data-state") == "error"


def test_output_that_looks_like_html_is_text(page, fixture_url):
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    output = run_cell(page, "99-4")
    assert output == "<script>window.hacked = 1</script><b>bold</b>\n"
    assert page.locator("#cell-99-4 .cell-output script, #cell-99-4 .cell-output b").count() == 0
    assert page.evaluate("window.hacked") is None


def test_a_flood_of_output_is_capped_with_a_line_saying_so(page, fixture_url):
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    rewrite_cell(page, "99-6", "for i in range(100_000):\n    print('line', i)\n")
    output = run_cell(page, "99-6")
    assert output.startswith("line 0\nline 1\n")
    shown, note = output[:200_000], output[200_000:]
    printed = sum(len(f"line {i}\n") for i in range(100_000))
    assert len(shown) == 200_000
    assert note == f"\n{OUTPUT_NOTE}{printed - 200_000:,} more were not kept.]\n"
    # The page was not flooded: a message at most every 25 ms, not one per print.
    assert page.locator("#cell-99-6 .cell-output").evaluate("node => node.childNodes.length") < 2000


WASM_HEAP = "import pyodide_js\nprint(pyodide_js._module.HEAPU8.length)\n"
FLOOD_100_MB = "line = 'x' * 99\nfor _ in range(1_000_000):\n    print(line)\n"
# Count the characters of output the page is handed by its workers, message by message.
COUNT_WORKER_OUTPUT = """
window.outputHanded = 0;
const RealWorker = window.Worker;
window.Worker = class extends RealWorker {
  constructor(...args) {
    super(...args);
    this.addEventListener("message", ({ data }) => {
      for (const key of ["text", "output"]) if (data && typeof data[key] === "string") window.outputHanded += data[key].length;
    });
  }
};
"""


def test_a_cell_printing_100_mb_stays_within_bounded_memory_and_the_page_responsive(page, fixture_url):
    """A million lines of 100 characters. Python's heap (wasm memory, which only ever grows, so
    its size after is the high-water mark) grows by less than BOUND; the page is handed no more
    than the cap (streamed, then once in the result), so it has nothing big to take in; it answers
    while the cell runs; and it shows the head and the note."""
    bound = 16 * 1024 * 1024
    page.add_init_script(COUNT_WORKER_OUTPUT)
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    rewrite_cell(page, "99-9", WASM_HEAP)
    before = int(run_cell(page, "99-9"))
    rewrite_cell(page, "99-9", FLOOD_100_MB)
    handed = page.evaluate("window.outputHanded")
    page.locator("#cell-99-9 .cell-run").click()
    page.wait_for_function("document.getElementById('cell-99-9').dataset.state === 'running'")
    answered = page.evaluate("() => new Promise((resolve) => setTimeout(() => "
                             "resolve(document.getElementById('cell-99-9').dataset.state), 0))")
    assert answered == "running", "the page answered only once the cell had finished"
    page.wait_for_function("document.getElementById('cell-99-9').dataset.state === 'done'", timeout=90_000)
    output = page.locator("#cell-99-9 .cell-output").text_content()
    note = f"{OUTPUT_NOTE}{100_000_000 - 200_000:,} more were not kept.]\n"
    assert output == ("x" * 99 + "\n") * 2000 + note      # the head ends a line: no break added
    assert page.evaluate("window.outputHanded") - handed <= 2 * 200_000 + len(note)
    assert page.locator("#cell-99-9 .cell-output").evaluate("node => node.childNodes.length") < 2000
    rewrite_cell(page, "99-9", WASM_HEAP)
    after = int(run_cell(page, "99-9"))
    assert after - before < bound, f"Python's heap grew {(after - before) / 2**20:.1f} MB"


def test_a_site_without_its_snapshot_boots_the_plain_way_and_says_so(profiles, site_dir, tmp_path):
    """With no snapshot, Python boots the ordinary way, says so, and a cell prints what the build
    recorded. (That every cell of every page prints the same on both boots is checked under
    Pyodide in one Node process, tests/test_pyodide_parity.py; the page's own path is this.)"""
    plain = tmp_path / "site"
    shutil.copytree(site_dir, plain, ignore=shutil.ignore_patterns("snapshot.bin.gz"))
    context = profiles.fresh()
    page = context.pages[0] if context.pages else context.new_page()
    warnings = []
    page.on("console", lambda message: warnings.append(message.text))
    with serving(plain) as url:
        page.goto(url + "lesson-08.html")
        wait_ready(page)
        detail = page.evaluate("performance.getEntriesByName('book:python-ready')[0].detail")
        assert detail["snapshot"] is False, "booted from a snapshot that is not there"
        for cell_id in ("8-1", "8-5"):
            assert run_cell(page, cell_id, timeout=90_000) == recorded(page, cell_id), f"cell {cell_id} printed otherwise"
    assert any("the snapshot could not be used" in w for w in warnings)


@pytest.mark.parametrize("damage", ["bad bytes", "another build"])
def test_a_damaged_snapshot_still_leaves_a_working_page(page, fixture_root, tmp_path, damage):
    site = tmp_path / "site"
    shutil.copytree(fixture_root, site)
    snapshot = site / "py" / "snapshot.bin.gz"
    if damage == "bad bytes":
        snapshot.write_bytes(b"not a snapshot at all" * 100)
    else:                                   # a real gzip of bytes Pyodide will not take
        snapshot.write_bytes(gzip.compress(b"\0" * 4096))
    warnings = []
    page.on("console", lambda message: warnings.append(message.text))
    with serving(site) as url:
        page.goto(url + "lesson-99.html")
        wait_ready(page)
        assert run_cell(page, "99-1") == recorded(page, "99-1")
    assert any("the snapshot could not be used" in w for w in warnings), warnings


def test_the_book_works_from_a_sub_path_on_a_host_that_sets_no_headers(page, fixture_root, tmp_path):
    """A teacher's static host: the book under /book/, no isolation headers on the first visit
    (so no SharedArrayBuffer: Stop ends the worker instead of interrupting it)."""
    (tmp_path / "host").mkdir()
    (tmp_path / "host" / "book").symlink_to(fixture_root, target_is_directory=True)
    with serving(tmp_path / "host", isolated=False) as url:
        page.goto(url + "book/lesson-99.html")
        wait_ready(page)
        assert page.evaluate("crossOriginIsolated") is False
        assert page.evaluate("performance.getEntriesByName('book:python-ready')[0].detail.snapshot") is True
        assert run_cell(page, "99-1") == recorded(page, "99-1")
    assert (fixture_root / "_headers").read_text().startswith("/*\n  Cross-Origin-Opener-Policy: same-origin")


def test_the_usual_boot_restores_from_the_snapshot(page, fixture_url):
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    assert page.evaluate("performance.getEntriesByName('book:python-ready')[0].detail.snapshot") is True
    assert run_cell(page, "99-1") == recorded(page, "99-1")


def ada_cell(page):
    for cell in page.locator(".cell[data-editable]").all():
        source = json.loads(cell.locator(".cell-data").text_content())["source"]
        if 'messages = [entries[-1]["message"]]' in source:
            return cell.get_attribute("data-cell"), source
    pytest.fail("lesson 11 has no editable cell with the guess `messages = [entries[-1][\"message\"]]`")


def test_the_ada_cell_forgets_then_remembers_once_edited(page, base_url, site_dir):
    lesson = site_dir / "lesson-11.html"
    assert lesson.exists(), "lesson-11.html was not built"
    page.goto(base_url + lesson.name)
    wait_ready(page)
    cell_id, source = ada_cell(page)
    first = run_cell(page, cell_id)
    assert first == recorded(page, cell_id)
    assert "Ada" not in first.split("What is my name?")[-1]
    fixed = source.replace('messages = [entries[-1]["message"]]',
                           'messages = [entry["message"] for entry in entries]')
    type_into_editor(page, f"#cell-{cell_id}", fixed)
    assert editor_text(page, f"#cell-{cell_id}") == fixed
    second = run_cell(page, cell_id)
    answer = second.split("What is my name?")[-1]
    assert re.search(r"Ada", answer), f"the model did not remember Ada:\n{second}"
    # Reset puts the book's code back.
    page.locator(f"#cell-{cell_id} .cell-reset").click()
    assert editor_text(page, f"#cell-{cell_id}") == source


def test_shift_enter_runs_a_cell_and_an_editable_cell_gets_an_editor(page, fixture_url):
    page.goto(fixture_url + "lesson-99.html")
    wait_ready(page)
    page.locator("#cell-99-1 .cell-code").focus()
    page.keyboard.press("Shift+Enter")
    page.wait_for_function("document.getElementById('cell-99-1').dataset.state === 'done'")
    assert page.locator("#cell-99-1 .cell-output").text_content() == recorded(page, "99-1")
    wait_editor(page, "#cell-99-2")
    type_into_editor(page, "#cell-99-2", 'print("edited")\n')
    page.locator("#cell-99-2 .cm-content").press("Shift+Enter")
    page.wait_for_function("document.getElementById('cell-99-2').dataset.state === 'done'")
    assert page.locator("#cell-99-2 .cell-output").text_content() == "edited\n"
