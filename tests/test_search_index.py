"""The search index's documents, cut from rendered HTML (builder/search.py): what is found, where
it leads, and what a page asks first that stays out."""
from __future__ import annotations

import pytest

from builder import search

PAGE = """<html><body><header><a>Build an agent harness</a></header>
<main id="content"><article>
<header class="lesson-header"><h1>The power cut</h1></header>
<p>Opening words.</p>
<h2 id="the-cable">The cable</h2>
<p>A torn write leaves half a line. <span class="general"><span class="general-tag" title="From general knowledge">general</span> Disks lie.</span></p>
<section class="check" id="check-11-1"><p class="check-label">Check</p>
<div class="check-question"><p>What does replay read?</p></div>
<ol><li><div class="option-text">Every line</div>
<details class="option-explain"><summary>Explanation</summary><p>Not this one. SECRET</p></details></li></ol>
</section>
<div class="cell" id="cell-11-1"><pre class="cell-code"><span>log</span>.<span>replay</span>()</pre>
<script class="cell-data">{"output": "RECORDED"}</script><pre class="cell-output">RECORDED</pre></div>
<p>After the cell<br>the prose goes on.</p>
<section class="lab" id="lab-11-1"><h2 class="lab-title" id="lab-11-1-title"><span class="lab-number">Lab 11.1</span> SessionLog</h2>
<div class="lab-spec"><p>Write SessionLog.</p></div>
<div class="hints"><details class="hint"><summary>Hint 1</summary>HINTED</details></div>
<div class="lab-file"><pre class="lab-starting">import json</pre></div>
<ol class="lab-tests"><li>replay reads every line</li></ol></section>
<section class="prompt" id="prompt-11-1"><p class="prompt-label">Write it yourself</p>
<div class="prompt-question"><p>How many lines change?</p></div><textarea>typed</textarea>
<details class="prompt-answer"><summary>The model answer</summary>ANSWERED</details></section>
</article></main><nav class="page-nav">Next</nav></body></html>"""


def places() -> dict[str, dict]:
    return {doc["url"]: doc for doc in search.documents([("lesson-11.html", "Lesson 11 · The power cut", PAGE)])}


def test_each_place_has_its_anchor_kind_and_section():
    docs = places()
    assert list(docs) == ["lesson-11.html", "lesson-11.html#the-cable", "lesson-11.html#check-11-1",
                          "lesson-11.html#cell-11-1", "lesson-11.html#lab-11-1", "lesson-11.html#prompt-11-1"]
    assert [d["kind"] for d in docs.values()] == ["page", "section", "check", "cell", "lab", "prompt"]
    assert docs["lesson-11.html#check-11-1"]["section"] == "The cable"
    assert all(d["page"] == "Lesson 11 · The power cut" for d in docs.values())


def test_the_text_of_each_place():
    docs = places()
    assert docs["lesson-11.html"]["text"] == "The power cut Opening words."
    assert docs["lesson-11.html#the-cable"]["title"] == "The cable"
    # Prose after a cell still belongs to its section; a <br> keeps words apart.
    assert docs["lesson-11.html#the-cable"]["text"] == ("A torn write leaves half a line. Disks lie. "
                                                        "After the cell the prose goes on.")
    assert docs["lesson-11.html#check-11-1"]["text"] == "What does replay read? Every line"
    assert docs["lesson-11.html#cell-11-1"]["text"] == "log.replay()", "code tokens are not split apart"
    lab = docs["lesson-11.html#lab-11-1"]
    assert lab["title"] == "SessionLog"
    assert lab["text"] == "Write SessionLog. replay reads every line"
    assert docs["lesson-11.html#prompt-11-1"]["text"] == "How many lines change?"


def test_what_a_page_asks_first_stays_out():
    every = " ".join(d["text"] + d["title"] for d in places().values())
    for hidden in ("SECRET", "Not this one", "RECORDED", "HINTED", "ANSWERED", "typed", "import json",
                   "Build an agent harness", "Next", "Explanation", "general"):
        assert hidden not in every, hidden


def test_the_index_is_kept_by_what_it_is_made_from(tmp_path, monkeypatch):
    """An unchanged book does not start Node again; changed words always do (never a stale index)."""
    docs = search.documents([("lesson-11.html", "Lesson 11", PAGE)])
    cache = tmp_path / "cache"
    first = search.build(tmp_path / "a", docs, cache=cache).read_text()
    monkeypatch.setattr(search.shutil, "which", lambda name: None)   # Node is gone
    assert search.build(tmp_path / "b", docs, cache=cache).read_text() == first
    changed = [dict(doc, text=doc["text"] + " more") for doc in docs]
    with pytest.raises(search.SearchError) as caught:
        search.build(tmp_path / "c", changed, cache=cache)
    assert str(caught.value) == "node is not on PATH: the search index is made with Node"


def test_the_glossarys_homes_are_written_beside_the_index(tmp_path):
    """Every form of a term -> the page and section that introduce it: the page's search ranks
    those first (site/js/search.js; tests/browser/test_search_ranking.py)."""
    import json
    from types import SimpleNamespace
    page = SimpleNamespace(path="lesson-11.html")
    glossary = SimpleNamespace(
        terms={"torn-line": SimpleNamespace(page=page, section="Every moment of the plug")},
        by_form={"torn line": "torn-line", "torn lines": "torn-line"})
    homes = search.term_homes(glossary)
    home = {"page": "lesson-11.html", "section": "Every moment of the plug"}
    assert homes == {"torn line": home, "torn lines": home}
    docs = search.documents([("lesson-11.html", "Lesson 11", PAGE)])
    written = json.loads(search.build(tmp_path / "site", docs, cache=tmp_path / "cache", terms=homes).read_text())
    assert written["terms"] == homes and set(written) == {"options", "index", "terms"}
