"""Reading comfort, in Chromium: the dark theme and its toggle, one syntax theme for read-only
code and the editors, Copy buttons, printing a lesson, and leaving an editor with the keyboard.
Screenshots of a lesson in both themes and on a 390 px phone are kept in test-artifacts/."""
from __future__ import annotations

import io
import json
import re

import pytest

from conftest import screenshot
from fixture_site import wait_editor

LIGHT_PAPER = "rgb(253, 252, 249)"
DARK_PAPER = "rgb(21, 23, 27)"
LESSONS_WITH_EDITORS = ["lesson-01.html", "lesson-04.html", "lesson-11.html"]


def paper(page) -> str:
    return page.evaluate("getComputedStyle(document.body).backgroundColor")


def theme(page) -> str:
    return page.evaluate("document.documentElement.dataset.theme")


# -- the dark theme -------------------------------------------------------------------------------

@pytest.mark.no_python
def test_the_theme_follows_the_system_until_the_reader_chooses(page, base_url):
    page.emulate_media(color_scheme="dark")
    page.goto(base_url + "lesson-01.html")
    assert theme(page) == "dark" and paper(page) == DARK_PAPER
    page.emulate_media(color_scheme="light")
    page.wait_for_function("document.documentElement.dataset.theme === 'light'")
    assert paper(page) == LIGHT_PAPER


@pytest.mark.no_python
def test_the_toggle_survives_a_reload_and_a_page_change(page, base_url):
    page.emulate_media(color_scheme="light")
    page.goto(base_url + "lesson-01.html")
    toggle = page.locator(".theme-toggle")
    assert theme(page) == "light" and toggle.get_attribute("aria-pressed") == "false"
    toggle.click()
    assert theme(page) == "dark" and paper(page) == DARK_PAPER
    assert toggle.get_attribute("aria-pressed") == "true"
    page.reload()
    assert theme(page) == "dark" and paper(page) == DARK_PAPER
    page.locator(".page-nav a[rel=next]").click()
    page.wait_for_url("**/lesson-02.html")
    assert theme(page) == "dark" and paper(page) == DARK_PAPER
    assert page.locator(".theme-toggle").get_attribute("aria-pressed") == "true"
    # The choice outranks the system: a dark system, the reader chose light.
    page.locator(".theme-toggle").click()
    page.emulate_media(color_scheme="dark")
    page.goto(base_url + "index.html")
    assert theme(page) == "light" and paper(page) == LIGHT_PAPER


@pytest.mark.no_python
def test_figures_follow_the_toggle(page, base_url):
    """A figure is an SVG in an <img>, which answers prefers-color-scheme from the img's
    color-scheme: the toggle sets it, so a figure drawn for both themes follows the toggle."""
    page.emulate_media(color_scheme="light")
    page.goto(base_url + "lesson-04.html")
    scheme = "getComputedStyle(document.querySelector('.figure img')).colorScheme"
    assert page.evaluate(scheme) == "light"
    page.locator(".theme-toggle").click()
    assert page.evaluate(scheme) == "dark"


def token_colours(page) -> dict[str, dict[str, str]]:
    """{"pygments" | "editor": {keyword text: colour}} and the colour of the first string and
    comment of each, from the page as drawn."""
    return page.evaluate("""() => {
        const out = {pygments: {}, editor: {}};
        const colour = (node) => getComputedStyle(node).color;
        for (const span of document.querySelectorAll('pre.hl span')) {
            const text = span.textContent.trim();
            if (/^(import|def|return|for|in|if|from|not|None|True|False)$/.test(text)) out.pygments[text] ??= colour(span);
            if (/^["']/.test(text) && span.classList.contains('s2') || span.classList.contains('s1')) out.pygments.string ??= colour(span);
            if (span.classList.contains('c1')) out.pygments.comment ??= colour(span);
        }
        for (const span of document.querySelectorAll('.cm-content span')) {
            const text = span.textContent.trim();
            if (/^(import|def|return|for|in|if|from|not|None|True|False)$/.test(text)) out.editor[text] ??= colour(span);
            if (/^["']/.test(text)) out.editor.string ??= colour(span);
            if (/^#/.test(text)) out.editor.comment ??= colour(span);
        }
        return out;
    }""")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_read_only_code_and_the_editors_use_one_syntax_theme(page, base_url, scheme):
    page.emulate_media(color_scheme=scheme)
    page.goto(base_url + "lesson-11.html")
    wait_editor(page, ".lab")
    colours = token_colours(page)
    shared = set(colours["pygments"]) & set(colours["editor"])
    assert {"import", "def", "return", "string", "comment"} <= shared, colours
    text = page.evaluate("getComputedStyle(document.body).color")
    for kind in shared:
        assert colours["pygments"][kind] == colours["editor"][kind], (kind, colours)
        assert colours["pygments"][kind] != text, f"{kind} is coloured"


def test_screenshots_of_a_lesson_in_both_themes_and_on_a_phone(page, base_url):
    page.set_viewport_size({"width": 1280, "height": 900})
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        page.goto(base_url + "lesson-11.html")
        wait_editor(page, ".lab")
        page.locator("section.check").first.scroll_into_view_if_needed()
        screenshot(page, f"reading-lesson-11-{scheme}")
        page.locator("section.lab .lab-file").first.scroll_into_view_if_needed()
        screenshot(page, f"reading-lesson-11-lab-{scheme}")
    page.set_viewport_size({"width": 390, "height": 844})
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        page.goto(base_url + "lesson-11.html")
        page.locator("section.check").first.scroll_into_view_if_needed()
        screenshot(page, f"reading-lesson-11-phone-390-{scheme}")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, "the page scrolls sideways"


# -- phones ---------------------------------------------------------------------------------------

COVERED = """() => {
    const status = document.getElementById('python-status');
    if (!status) return ['no status'];
    const s = status.getBoundingClientRect();
    const hit = [];
    for (const node of document.querySelectorAll('main p, main li, main label, main h1, main h2, main pre, .option-text')) {
        const r = node.getBoundingClientRect();
        if (r.width && r.height && r.left < s.right && s.left < r.right && r.top < s.bottom && s.top < r.bottom)
            hit.push((node.className || node.tagName) + ': ' + node.textContent.trim().slice(0, 40));
    }
    return hit;
}"""


@pytest.mark.parametrize("width", [390, 768, 1280])
def test_the_python_status_never_covers_text(page, base_url, width):
    """On a phone it sat on options and prompt labels. Booting, ready or running, and wherever
    the reader has scrolled to, it covers none of the page's text."""
    page.set_viewport_size({"width": width, "height": 844})
    page.goto(base_url + "lesson-04.html")
    page.wait_for_selector("#python-status")
    assert page.evaluate(COVERED) == [], "while Python starts"
    from fixture_site import wait_ready
    wait_ready(page)
    for part in ("section.check", "section.prompt", "section.lab", ".cell"):
        for element in page.locator(part).all()[:3]:
            element.scroll_into_view_if_needed()
            covered = page.evaluate(COVERED)
            assert covered == [], f"{width} px, at {part}: the status covers {covered}"
    if width == 390:
        screenshot(page, "phone-390-status")


@pytest.mark.no_python
def test_on_a_phone_the_diff_gives_its_room_to_the_code(page, base_url):
    """The before/after numbers and the sign take little of a 390 px screen; the code the rest."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(base_url + "lesson-11.html")
    widths = page.evaluate("""() => {
        const row = document.querySelector('table.diff tr.diff-add');
        const cells = Object.fromEntries([...row.children].map(c => [c.className, c.getBoundingClientRect().width]));
        return {...cells, table: document.querySelector('table.diff').getBoundingClientRect().width};
    }""")
    numbers = widths["diff-old"] + widths["diff-new"] + widths["diff-sign"]
    assert numbers <= 0.2 * widths["table"], f"numbers and sign take {numbers:.0f} of {widths['table']:.0f} px"
    page.locator("table.diff").first.scroll_into_view_if_needed()
    screenshot(page, "phone-390-diff")


# -- copy -------------------------------------------------------------------------------------

def test_every_code_block_cell_and_lab_file_copies_its_exact_text(profiles, base_url, site_dir):
    context = profiles.fresh(permissions=["clipboard-read", "clipboard-write"])
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(base_url + "lesson-11.html")
    wait_editor(page, ".lab")
    blocks, cells, labs = (page.locator("pre.code"), page.locator(".cell[data-cell]"),
                           page.locator("section.lab"))
    assert blocks.count() and cells.count() and labs.count()
    assert page.locator(".code-block > pre.code + .copy-button").count() == blocks.count()
    assert page.locator(".cell[data-cell] .cell-bar .copy-button").count() == cells.count()
    assert page.locator("section.lab .lab-file .copy-button").count() == labs.count()

    def copied(button) -> str:
        page.evaluate("navigator.clipboard.writeText('')")
        button.click()
        page.wait_for_function("(b) => b.textContent === 'Copied'", arg=button.element_handle())
        return page.evaluate("navigator.clipboard.readText()")

    block = blocks.first
    expected = block.text_content()
    assert copied(page.locator(".code-block").first.locator(".copy-button")) == expected
    for cell in cells.all():
        source = json.loads(cell.locator(".cell-data").text_content())["source"]
        assert copied(cell.locator(".copy-button")) == source, cell.get_attribute("data-cell")
    starting = [(site_dir / "downloads" / "lesson-11" / name).read_text()
                for name in ("harness.py", "harness-lab2.py")]
    for lab, text in zip(labs.all(), starting):
        assert copied(lab.locator(".lab-file .copy-button")) == text
    # An edit is copied as it stands.
    lab = labs.first
    lab.locator(".cm-content").click()
    page.keyboard.insert_text("# mine\n")
    edited = lab.locator(".code-editor").evaluate("node => node.bookEditor.getText()")
    assert edited != starting[0] and "# mine" in edited
    assert copied(lab.locator(".lab-file .copy-button")) == edited


# -- print ------------------------------------------------------------------------------------

def squeeze(text: str) -> str:
    """The text with no whitespace, ligatures read as their letters (a PDF's "ﬁ")."""
    import unicodedata
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def test_lesson_11_prints_its_labs_as_their_changes_with_no_buttons(page, base_url, site_dir):
    """A printed lab shows its spec, what changed since the last lab (every gap, numbered as in
    the file) and where the whole file is; not the whole file, which is one download away."""
    from pypdf import PdfReader
    page.goto(base_url + "lesson-11.html")
    wait_editor(page, ".lab")
    page.locator("section.check").first.locator(".check-option[data-right] .option-button").click()
    labels = set(page.evaluate("[...document.querySelectorAll('button:not(.option-button)')].map(b => b.textContent.trim()).filter(Boolean)"))
    assert {"Run", "Run tests", "Copy"} <= labels
    pdf = page.pdf(format="A4")
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    printed = squeeze(text)
    for number, name in ((1, "harness.py"), (2, "harness-lab2.py")):
        starting = (site_dir / "downloads" / "lesson-11" / name).read_text()
        assert squeeze(starting) not in printed, f"the starting file {name} is printed whole"
        lines = starting.splitlines()
        gap = next(k for k, line in enumerate(lines) if line.strip() == "# --- your code ---")
        assert squeeze(lines[gap + 1]) in printed, f"lab {number}'s first gap is not printed"
        assert squeeze(f"The whole file ({len(lines)} lines) is in the lab folder, "
                       "downloads/lesson-11.zip.") in printed
        spec = page.locator(f"#lab-11-{number} .lab-spec p").first.text_content()
        assert squeeze(spec)[:60] in printed, f"lab {number}'s spec is not printed"
    lines = {line.strip() for line in text.splitlines()}
    for label in labels:
        assert label not in lines, f"the button {label!r} is printed"
    assert "Run tests" not in text and "Reset to the starting file" not in text
    assert "answer the check above first" not in text, "a screen label is printed"
    # Explanations and model answers are printed open, chosen or not.
    for selector in (".check-explain", ".prompt-answer"):
        first = page.locator(selector).first
        body = first.evaluate("d => [...d.children].filter(c => c.tagName !== 'SUMMARY').map(c => c.textContent).join(' ')")
        assert squeeze(body)[:60] in printed, selector
    # And the page is as it was after printing.
    assert page.locator(".print-copy, .print-gaps, .print-see, .print-gapped").count() == 0
    assert page.locator(".lab .code-editor").first.is_visible()


def test_a_lab_with_the_readers_code_prints_the_readers_gaps(page, base_url):
    """Where the reader has written in a lab's file, the printed lab shows their gaps, numbered."""
    from pypdf import PdfReader
    page.goto(base_url + "lesson-01.html")
    wait_editor(page, ".lab")
    page.evaluate("""() => { const h = document.querySelector('.lab .code-editor');
        const text = h.bookEditor.getText().replace('# --- your code ---', '# --- your code ---\\n    mine = "written by me"');
        h.bookEditor.setText(text); }""")
    text = squeeze("\n".join(p.extract_text() for p in PdfReader(io.BytesIO(page.pdf(format="A4"))).pages))
    assert squeeze('mine = "written by me"') in text
    assert squeeze("Printed here: your 2 gaps, each from the line before it, numbered as in the file.") in text


@pytest.mark.no_python
def test_lesson_14_prints_in_at_most_25_a4_pages(page, base_url):
    """The longest lesson's worksheet: its labs as their changes, its answers flowing on."""
    from pypdf import PdfReader
    page.goto(base_url + "lesson-14.html")
    page.wait_for_selector(".check[data-live]")
    sheets = len(PdfReader(io.BytesIO(page.pdf(format="A4"))).pages)
    assert sheets <= 25, f"lesson 14 prints as {sheets} A4 pages"


@pytest.mark.no_python
def test_lesson_03_prints_as_a_worksheet_with_the_answers_last(page, base_url):
    """Printed, a check shows its question and every option; the explanations, the right letters,
    the hints and the model answers come after all the questions, in one section at the end."""
    from pypdf import PdfReader
    page.goto(base_url + "lesson-03.html")
    page.wait_for_selector(".check[data-live]")
    options = page.evaluate("""() => [...document.querySelectorAll('section.check')].map(c =>
        [...c.querySelectorAll('.option-body')].map(o => o.textContent))""")
    explains = page.evaluate("[...document.querySelectorAll('.check .option-explain')].map(d => d.textContent)")
    answers = page.evaluate("[...document.querySelectorAll('.prompt-answer')].map(d => d.textContent)")
    pdf = page.pdf(format="A4")
    import unicodedata   # NFKC: the PDF's ligatures ("ﬀ") read as their letters
    printed = squeeze(unicodedata.normalize("NFKC", "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)))
    end = printed.index(squeeze("Answers and explanations"))
    for i, check in enumerate(options, 1):
        for option in check:
            at = printed.find(squeeze(option)[:50])
            assert 0 <= at < end, f"check {i}: the option {option[:40]!r} is not printed with its question"
    for text in explains + answers:
        body = squeeze(text.replace("Explanation", "").replace("The model answer", ""))[:60]
        assert printed.find(body, end) > end, f"{body!r} is not in the answers at the end"
    assert squeeze("Check 1:") in printed[end:]
    # and after printing every part is back in its place
    assert page.locator(".print-answers").count() == 0
    assert page.locator(".check .option-explain").count() == len(explains)
    assert page.locator(".prompt .prompt-answer").count() == len(answers)


# -- the keyboard ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", LESSONS_WITH_EDITORS)
def test_escape_then_tab_leaves_every_editor(page, base_url, path):
    page.clock.install()        # the page's clock, moved on by the test instead of waited for
    page.goto(base_url + path)
    wait_editor(page, ".lab")
    count = page.locator(".cm-content").count()
    assert count >= 2
    inside = "() => !!document.activeElement.closest('.code-editor')"
    for index in range(count):
        content = page.locator(".cm-content").nth(index)
        content.scroll_into_view_if_needed()
        content.click()
        help_id = content.get_attribute("aria-describedby")
        assert help_id and "Escape, then Tab" in page.locator(f"#{help_id}").text_content()
        assert page.locator(f"#{help_id}").is_visible(), "the help shows while the editor has focus"
        page.keyboard.press("Tab")
        assert page.evaluate(inside), "Tab indents inside the editor"
        page.keyboard.press("Escape")
        if index == 0:
            # A reader reads the help first: the way out does not expire (CodeMirror's own Escape
            # lasts 2 s, by Date.now(); the page's clock is moved past that, not waited on).
            page.clock.fast_forward(2300)
        page.keyboard.press("Tab")
        assert not page.evaluate(inside), f"Tab after Escape stays in editor {index + 1} of {count}"
        page.keyboard.press("Shift+Tab")
        assert page.evaluate(inside)
        page.keyboard.press("Escape")
        page.keyboard.press("Shift+Tab")
        assert not page.evaluate(inside), "Shift+Tab after Escape leaves backwards too"
    # Typing in the editor again gives Tab back to indenting.
    page.locator(".cm-content").first.click()
    page.keyboard.press("Escape")
    page.keyboard.type("x")
    page.keyboard.press("Tab")
    assert page.evaluate(inside)


# -- finding one's way: the contents rail, permalinks, the lab's verdict first ---------------------

@pytest.mark.no_python
def test_the_contents_rail_and_permalinks(page, base_url):
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(base_url + "lesson-11.html")
    rail = page.locator("nav.contents")
    rail.wait_for()
    sections = page.locator("article.lesson h2:not(.lab-title)").count()
    checks, labs = page.locator("section.check").count(), page.locator("section.lab").count()
    assert page.locator(".contents-section").count() == sections
    assert page.locator(".contents-check").count() == checks
    assert page.locator(".contents-lab").count() == labs
    for heading in page.locator("article.lesson h2").all():
        link = heading.locator(".permalink")
        assert link.is_visible() and link.get_attribute("href") == "#" + heading.get_attribute("id")
    # Sticky: far down the page the rail is still in view, and says where the reader is.
    page.locator("section.lab").last.scroll_into_view_if_needed()
    box = rail.bounding_box()
    assert box and box["y"] >= 0 and box["y"] < 900 and rail.is_visible()
    current = page.locator(".contents a[aria-current=location]")
    assert current.count() == 1
    # Done: a check answered right is ticked.
    first = page.locator("section.check").first
    first.locator(".check-option[data-right] .option-button").click()
    page.wait_for_function("document.querySelector('.contents-check').classList.contains('is-done')")
    # A click goes there.
    page.locator(".contents-lab a").first.click()
    page.wait_for_function("location.hash.startsWith('#lab-')")
    # On a phone the rail is folded at the top and nothing scrolls sideways.
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    rail.wait_for()
    assert page.locator(".contents-fold").get_attribute("open") is None
    assert page.locator(".contents-book").is_hidden()
    page.locator(".contents-fold > summary").click()
    assert page.locator(".contents-book").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_the_lab_verdict_comes_before_its_tests(page, base_url):
    from fixture_site import wait_ready
    page.goto(base_url + "lesson-01.html")
    wait_ready(page)
    lab = page.locator("section.lab").first
    lab.locator(".lab-run").click()
    page.wait_for_function("['pass', 'fail'].includes(document.querySelector('section.lab').dataset.state)",
                           timeout=120_000)
    summary = lab.locator(".lab-summary").bounding_box()
    first_test = lab.locator(".lab-tests li").first.bounding_box()
    assert summary["y"] < first_test["y"], "the verdict is above the tests"


@pytest.mark.no_python
def test_on_a_phone_a_figure_links_to_the_drawing_and_a_tap_opens_it_large(page, base_url):
    """At 390 px: without JavaScript the figure's link is the drawing itself; with it, a tap opens
    the viewer (tests/browser/test_figures.py tests the viewer)."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(base_url + "lesson-11.html")
    figure = page.locator("figure.figure").first
    src = figure.locator("img").get_attribute("src")
    assert figure.locator(".figure-open").get_attribute("href") == src
    assert figure.locator(".figure-full").get_attribute("href") == src
    figure.scroll_into_view_if_needed()
    screenshot(page, "phone-390-figure")
    figure.locator("img").click()
    page.locator("dialog.figure-viewer[open]").wait_for()
    assert page.url.endswith("lesson-11.html"), page.url


def test_on_a_phone_the_header_leaves_the_screen_to_the_text(page, base_url):
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(base_url + "lesson-04.html")
    from fixture_site import wait_ready
    wait_ready(page)
    height = page.locator(".site-header").bounding_box()["height"]
    screenshot(page, "phone-390-header")
    toggle = page.locator(".theme-toggle")
    assert toggle.get_attribute("aria-pressed") in ("true", "false") and "theme" in toggle.text_content(), \
        "the toggle keeps its name for a screen reader"
    assert height <= 110, f"the header takes {height:.0f} px of 844"
