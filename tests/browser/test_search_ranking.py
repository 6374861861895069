"""Search ranking, in Chromium (issue 40): words searched together are a phrase, and a glossary
term is found first on the page, and in the section, that introduces it, above the pages that
only use it ("compaction" -> lesson 12, "What to throw away")."""
from __future__ import annotations

import pytest

import json
import re

from fixture_site import RESULTS, search

pytestmark = pytest.mark.no_python     # search needs no Python: none boots beside it


def test_words_searched_together_match_as_a_phrase(page, base_url):
    page.goto(base_url + "lesson-02.html")
    results = search(page, "torn write")
    assert results, "lesson 11 says torn-write"
    assert all(re.search(r"torn[\s-]+writ", r["snippet"], re.I) for r in results), \
        f"a place that says both words apart is shown beside the phrase: {results}"
    assert results[0]["href"].startswith("lesson-11.html#")
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    apart = search(page, "write torn")        # no place says this phrase: every word is enough
    assert len(apart) > len(results), apart


def test_compaction_is_found_first_where_lesson_12_teaches_it(page, base_url):
    page.goto(base_url + "lesson-02.html")
    results = search(page, "compaction")
    assert results[0]["where"] == "Lesson 12 · The wall › What to throw away", results[0]
    assert results[0]["kind"] == "Section"
    page.locator(RESULTS).first.click()
    page.wait_for_url("**/lesson-12.html#what-to-throw-away")


def test_every_glossary_term_is_found_first_on_the_page_that_introduces_it(page, base_url, site_dir):
    """Each term of the glossary, searched as written: the first result is on its home page,
    above the pages that use it more often (token, provider, exit code, safe point ...)."""
    homes = json.loads((site_dir / "search" / "index.json").read_text())["terms"]
    glossary = (site_dir / "glossary.html").read_text()
    named = dict(re.findall(r'<h3 id="[^"]*">([^<]*)</h3>\s*(?:<[^>]*>[^\n]*\n)*?'
                            r'<p class="glossary-from">Introduced in <a href="([^"#]*)', glossary))
    assert len(named) >= 60 and all(homes[term.lower()]["page"] == href for term, href in named.items())
    page.goto(base_url + "404.html")
    firsts = page.evaluate("""async (terms) => {
        const { load, query } = await import('./assets/js/search.js');
        const search = await load();
        return Object.fromEntries(terms.map((term) => [term, query(search, term).map((r) => r.url)]));
    }""", list(named))
    wrong = {term: urls[:3] for term, urls in firsts.items() if not urls or urls[0].split("#")[0] != named[term]}
    assert not wrong, f"found first elsewhere than where the term is introduced: {wrong}"
    # the home leads with a few places; the pages that use the term after it are still listed
    assert firsts["token"][0].startswith("lesson-01.html#"), firsts["token"]
    assert any(url.startswith("lesson-12.html#") for url in firsts["token"]), firsts["token"]
