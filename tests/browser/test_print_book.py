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

    # Printed with the headings as the PDF's outline: where each page starts, without reading
    # the text of all of its 500-odd sheets (pypdf reads about three a second).
    pdf = page.pdf(format="A4", outline=True, tagged=True)
    reader = PdfReader(io.BytesIO(pdf))
    top = [item for item in reader.outline if not isinstance(item, list)][1:]   # after the book's own h1
    assert [item.title for item in top] == [p["title"] for p in written], "the pages, in course order"
    assert len(reader.pages) <= 480, f"the whole book prints as {len(reader.pages)} A4 pages (labs print as their changes, not whole)"
    sheets = [reader.get_destination_page_number(item) for item in top] + [len(reader.pages)]
    assert sheets == sorted(sheets) and len(set(sheets)) == len(sheets)

    def text(first: int, end: int) -> str:
        return squeeze("\n".join(reader.pages[n].extract_text() for n in range(first, end)))

    for entry, sheet in zip(pages, sheets):
        assert squeeze(entry["heading"]) in text(sheet, sheet + 1), f"page {entry['id']}'s header is not printed"

    # One page whole (lesson 03): every option with its question, every answer after them all.
    at = [p["id"] for p in pages].index("03")
    entry, printed = pages[at], text(sheets[at], sheets[at + 1])
    answers = printed.index(squeeze(entry["answers"]))
    for option in entry["options"]:
        found = printed.find(squeeze(option)[:40])
        assert 0 <= found < answers, f"option {option[:40]!r} is not printed with its question"
    for explain in entry["explains"]:
        body = squeeze(explain.replace("Explanation", ""))[:50]
        assert printed.find(body, answers) > answers, f"{body!r} is not in the answers after the questions"
    assert squeeze("The answer is at the end of Lesson 03, under Check 1.") in printed[:answers]
    assert squeeze("Check 1:") in printed[answers:]
