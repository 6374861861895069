"""print.html, the whole book to print: every written page in course order, each a worksheet with
its answers after it, printed to PDF by Chromium with no Python started."""
from __future__ import annotations

import io
import json
import re
import unicodedata

from conftest import screenshot


def squeeze(text: str) -> str:
    """The text with no whitespace, ligatures read as their letters, in lower case (a badge is
    printed upper case): what a PDF's text layer and the page's DOM agree on."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text)).lower()


def test_the_whole_book_prints_every_page_in_order_each_with_its_answers_after_it(page, base_url, site_dir):
    from pypdf import PdfReader
    written = [p for p in json.loads((site_dir / "course.json").read_text())["pages"] if p["path"]]
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(base_url + "print.html")
    page.wait_for_selector(".print-answers")
    # What each page asks, and what its answers section says, read from the page itself.
    pages = page.evaluate("""() => [...document.querySelectorAll('article.book-page')].map(a => ({
        id: a.dataset.pageId, title: a.querySelector('h1').textContent,
        heading: a.querySelector('.lesson-header').textContent,
        answers: a.querySelector(':scope > .print-answers h2')?.textContent ?? null,
        options: [...a.querySelectorAll('section.check .option-text')].map(o => o.textContent),
        explains: [...a.querySelectorAll('.print-answers .option-explain')].map(d => d.textContent)}))""")
    assert [p["id"] for p in pages] == [p["id"] for p in written]
    assert [p["title"] for p in pages] == [p["title"] for p in written]
    asking = [p for p in pages if p["options"]]
    assert len(asking) >= len(written) - 1, "every page but the welcome page has checks"
    assert all(p["answers"] for p in asking)
    assert page.locator(".print-answers .option-explain").count() == page.locator(".check-option").count()
    # A print page runs no Python: no worker, no Pyodide, no snapshot fetched.
    assert not [url for url in requests if "pyodide" in url or "snapshot" in url or "worker" in url]
    assert page.locator("#python-status").count() == 0

    page.emulate_media(media="print")
    screenshot(page, "print-book-first-page")
    page.locator("#page-03 section.check").first.scroll_into_view_if_needed()
    screenshot(page, "print-book-lesson-03-check")
    page.locator("#page-03 .print-answers").scroll_into_view_if_needed()
    screenshot(page, "print-book-lesson-03-answers")
    page.emulate_media(media="null")    # back to no emulation: page.pdf() prints with print media

    pdf = page.pdf(format="A4")
    reader = PdfReader(io.BytesIO(pdf))
    printed = squeeze("\n".join(p.extract_text() for p in reader.pages))
    # The contents list comes first; each page's header ("Lesson 02", its title, its subtitle)
    # then follows in course order.
    at = printed.index(squeeze(page.locator(".book-print-contents li").last.text_content())) + 1
    starts = []
    for entry in pages:
        found = printed.find(squeeze(entry["heading"]), at)
        assert found >= at, f"page {entry['id']} ({entry['title']!r}) is not printed after the one before it"
        starts.append(found)
        at = found + 1
    ends = starts[1:] + [len(printed)]
    for entry, start, end in zip(pages, starts, ends):
        if not entry["options"]:
            continue
        answers = printed.find(squeeze(entry["answers"]), start)
        assert start < answers < end, f"page {entry['id']}: its answers are not between it and the next page"
        for option in entry["options"]:
            found = printed.find(squeeze(option)[:40], start)
            assert start <= found < answers, f"page {entry['id']}: option {option[:40]!r} not printed with its question"
        for explain in entry["explains"][:3]:
            body = squeeze(explain.replace("Explanation", ""))[:50]
            assert answers < printed.find(body, answers) < end, f"page {entry['id']}: {body!r} not in its answers"
    assert len(reader.pages) > 3 * len(pages)
