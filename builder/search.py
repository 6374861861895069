"""Search across the book: documents cut from the rendered pages, indexed by MiniSearch.

Like pagefind, this reads the build's output, so every result's address is an anchor the page
really has. Each written page is walked once with the standard library's HTML parser and cut
into the places a reader can land on:

- a section: its heading's anchor, its heading, and its prose (figure captions and Tau notes
  included);
- a check: its question and its options;
- a cell: its code;
- a lab: its title, its spec and its tests' sentences;
- a prompt: its question.

What a page asks the reader to work out first stays out of the index (explanations, hints,
model answers, recorded outputs): a search must not answer a check. MiniSearch (npm, pinned in
package.json) indexes the documents in Node at build time (builder/search.mjs); the page loads
the serialized index, `search/index.json`, the first time the reader searches (site/js/search.js).
"""
from __future__ import annotations

import functools
import hashlib
import json
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from .errors import ToolError

ROOT = Path(__file__).resolve().parents[1]
MAKER = Path(__file__).with_name("search.mjs")
WORDS = ROOT / "site" / "js" / "search-words.js"   # how text is cut into words, shared with the page
TARGET = Path("search") / "index.json"
CACHE = ROOT / ".cache" / "search"
LIBRARY = ROOT / "node_modules" / "minisearch" / "package.json"   # its version is in the key

# MiniSearch's options, shared with the page: search.mjs indexes with them and writes them into
# the index file, and the page loads the index with the same options.
OPTIONS = {
    "fields": ["title", "text", "section"],
    "storeFields": ["url", "page", "section", "kind", "title", "text"],
}

# Elements whose text never reaches a document: scripts and data, controls, navigation, and
# everything a <details> folds away (explanations, hints, model answers, folded outputs).
SKIP_TAGS = {"script", "style", "noscript", "template", "details", "textarea", "button", "svg",
             "nav"}
SKIP_CLASSES = {"cell-output", "cell-data", "lab-data", "lab-changes", "lab-file", "lab-local",
                "lab-done", "check-label", "prompt-label", "prompt-input-label", "lab-number", "lesson-number",
                "lesson-meta", "general-tag", "figure-full", "term-card"}
# Elements that end a run of words: their text never runs into the next element's.
BLOCKS = {"p", "li", "div", "pre", "h1", "h2", "h3", "h4", "td", "th", "figcaption", "blockquote",
          "section", "ol", "ul", "dd", "dt", "br"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
# The element that opens a document of its own, by tag and class.
OWN = {("section", "check"): "check", ("div", "cell"): "cell", ("section", "lab"): "lab",
       ("section", "prompt"): "prompt"}
HEADINGS = {"h2", "h3"}


TIMEOUT_S = 120


class SearchError(ToolError):
    """The index could not be made; the message says why."""


@dataclass
class Document:
    """One place to land on: `url` is the page and its anchor."""

    url: str
    page: str
    section: str
    kind: str
    title: str
    text: str = ""
    parts: list[str] = field(default_factory=list, repr=False)

    def finish(self) -> dict:
        data = asdict(self)
        del data["parts"]
        data["text"] = " ".join("".join(self.parts).split())
        return data


class _PageReader(HTMLParser):
    """Cuts one rendered page into documents (see the module's docstring)."""

    def __init__(self, path: str, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.path, self.page = path, page
        self.stack: list[tuple[str, str | None]] = []   # (tag, what it opened: skip/doc/heading)
        self.documents: list[Document] = []
        self.in_main = False
        self.section: Document | None = None   # the section the reader is in
        self.own: Document | None = None       # a check, cell, lab or prompt, while inside it
        self.heading: list[str] | None = None  # a heading's text, while inside it
        self.heading_anchor = ""

    def _new(self, anchor: str, kind: str, title: str) -> Document:
        url = f"{self.path}#{anchor}" if anchor else self.path
        section = self.section.title if self.section else self.page
        document = Document(url, self.page, section, kind, title)
        self.documents.append(document)
        return document

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BLOCKS:
            self.handle_data(" ")
        attributes = dict(attrs)
        classes = set((attributes.get("class") or "").split())
        if tag == "main":
            self.in_main = True
            self.section = self._new("", "page", self.page)
        if tag in VOID or not self.in_main:
            return
        role = None
        if tag in SKIP_TAGS or classes & SKIP_CLASSES or self._skipping():
            role = "skip"
        elif self.own is None and any((tag, c) in OWN for c in classes):
            kind = next(OWN[(tag, c)] for c in classes if (tag, c) in OWN)
            self.own = self._new(attributes.get("id") or "", kind, kind.capitalize())
            role = "own"
        elif tag in HEADINGS and attributes.get("id"):
            self.heading, self.heading_anchor = [], attributes["id"]
            role = "heading"
        self.stack.append((tag, role))

    def handle_endtag(self, tag: str) -> None:
        if tag in BLOCKS:
            self.handle_data(" ")
        if tag == "main":
            self.in_main = False
        if not any(open_tag == tag for open_tag, _ in self.stack):
            return   # a stray end tag: nothing to close
        while self.stack:
            open_tag, role = self.stack.pop()
            self._close(role)
            if open_tag == tag:
                break

    def _close(self, role: str | None) -> None:
        if role == "own":
            self.own = None
        elif role == "heading" and self.heading is not None:
            title = " ".join("".join(self.heading).split())
            if self.own is not None and self.own.kind == "lab":
                self.own.title = title            # the lab's own heading names it
            elif self.own is None:
                self.section = self._new(self.heading_anchor, "section", title)
                self.section.section = title
            self.heading = None

    def _skipping(self) -> bool:
        return any(role == "skip" for _, role in self.stack)

    def handle_data(self, data: str) -> None:
        if not self.in_main or self._skipping():
            return
        if self.heading is not None:
            self.heading.append(data)
            return
        target = self.own or self.section
        if target is not None:
            target.parts.append(data)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)


def documents(pages: list[tuple[str, str, str]]) -> list[dict]:
    """The documents of every page given as (path, label, rendered HTML), in reading order.
    Documents with no text and no title of their own are dropped."""
    out: list[dict] = []
    for path, label, html in pages:
        for data in _page(path, label, html):
            out.append({"id": len(out), **data})
    return out


@functools.lru_cache(maxsize=64)
def _page(path: str, label: str, html: str) -> tuple[dict, ...]:
    """One page's documents, without ids. Kept by the page's HTML: `make serve` rebuilds on
    every save, and a page whose HTML did not change is not read again."""
    reader = _PageReader(path, label)
    reader.feed(html)
    reader.close()
    kept = (document.finish() for document in reader.documents)
    return tuple(data for data in kept if data["text"] or data["kind"] in ("section", "lab"))


def term_homes(glossary) -> dict[str, dict]:
    """Every form of every glossary term (lower case) -> the page and section that introduce it:
    the page ranks a search for a term's own words from its home first (site/js/search.js)."""
    return {form: {"page": glossary.terms[slug].page.path, "section": glossary.terms[slug].section}
            for form, slug in sorted(glossary.by_form.items())}


def build(site: Path, docs: list[dict], cache: Path = CACHE, terms: dict[str, dict] | None = None) -> Path:
    """Index `docs` with MiniSearch (in Node) into `site/search/index.json`, with `terms` (see
    term_homes) beside it. The index is kept in `cache` by a hash of what it is made from (the
    documents, the terms, the options, the maker, its words and MiniSearch's version), so a build
    whose pages say the same does not start Node."""
    payload = json.dumps({"options": OPTIONS, "documents": docs, "terms": terms or {}}, ensure_ascii=False)
    digest = hashlib.sha256(MAKER.read_bytes())
    digest.update(WORDS.read_bytes())
    digest.update(LIBRARY.read_bytes() if LIBRARY.exists() else b"")
    digest.update(payload.encode("utf-8"))
    cached = cache / f"{digest.hexdigest()[:24]}.json"
    if not cached.exists():
        node = shutil.which("node")
        if node is None:
            raise SearchError("node is not on PATH: the search index is made with Node")
        try:
            done = subprocess.run([node, str(MAKER)], input=payload, capture_output=True, text=True,
                                  cwd=ROOT, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise SearchError(f"{MAKER.relative_to(ROOT)} did not finish in {TIMEOUT_S} s; the "
                              "machine may be busy: build again") from None
        if done.returncode != 0:
            raise SearchError(f"{MAKER.relative_to(ROOT)} failed:\n{done.stderr.strip()[-2000:]}")
        cache.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(".part")
        partial.write_text(done.stdout, encoding="utf-8")
        partial.replace(cached)
    target = site / TARGET
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(cached, target)
    return target
