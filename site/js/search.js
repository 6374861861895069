// Search across the whole book: the header's box, and "/" to reach it from anywhere (as in mdBook).
// The index is built with the book (builder/search.py, MiniSearch in Node) and fetched, with the
// library, the first time the reader searches; the service worker keeps both for offline study.
// A result names its page and section, says what it is (a section, a check, a cell, a lab, a
// prompt), shows the words around the match, and is a link straight to its anchor.
import { element, typing } from "./dom.js";
import { queryWords, withWords } from "./search-words.js";

const INDEX = new URL("../../search/index.json", import.meta.url);
const LIBRARY = new URL("./minisearch.bundle.js", import.meta.url);
const LIMIT = 8;
const HOME_PLACES = 3; // places of the page that introduces the words, shown before the rest
const WAIT_MS = 60; // between the last key and the search: typing fast searches once
const KINDS = { page: "Page", section: "Section", check: "Check", cell: "Code cell", lab: "Lab", prompt: "Write it yourself" };

let engine = null;

/** The loaded index (a MiniSearch), fetched once per page. */
export function load() {
  engine ??= Promise.all([
    import(LIBRARY.href),
    fetch(INDEX).then((response) => {
      if (!response.ok) throw new Error(`search/index.json: HTTP ${response.status}`);
      return response.json();
    }),
  ]).then(([{ default: MiniSearch }, { options, index, terms }]) => {
    const search = MiniSearch.loadJS(index, withWords(options));
    search.bookTerms = termHomes(terms);
    return search;
  });
  engine.catch(() => { engine = null; }); // a failed load is tried again at the next search
  return engine;
}

/** The glossary's forms (index.json's "terms") keyed by their words as a query cuts them, lower
 * case: "append-only log" is found by "Append-only log" and by "append only log". */
function termHomes(terms) {
  const homes = new Map();
  for (const [form, home] of Object.entries(terms ?? {})) {
    homes.set(queryWords(form).join(" ").toLowerCase(), home);
  }
  return homes;
}

/** The best results for `text`, from the strictest reading of it that finds anything: every word
 * as written (or as the start of a longer one); then every word, allowing a typo in long words
 * (a search for "replay" must not rank "reply" above "replay"); then most of the words. */
export function query(search, text) {
  const exact = { prefix: true, boost: { title: 3, section: 1.5 } };
  const loose = { ...exact, fuzzy: (term) => (term.length > 4 ? 0.2 : false) };
  for (const options of [{ ...exact, combineWith: "AND" }, { ...loose, combineWith: "AND" },
                         { ...loose, combineWith: "OR" }]) {
    const found = search.search(text, options);
    if (found.length) return byOwnWords(found, text, search.bookTerms).slice(0, LIMIT);
  }
  return [];
}

/** `found` with the places that say the words themselves first: the whole phrase, then every
 * word; MiniSearch's order within each. Words searched together are a phrase: when some places
 * say the phrase ("torn write", "torn-write", "torn writes"), only those are shown. Within each
 * rank, the page that introduces the words comes first (its first HOME_PLACES places), before
 * pages that only use them: for a glossary term, the page (and first its section) that
 * introduces it; else the earliest page in reading order whose places score, in all, at least
 * half the best page's (a page that mentions a term once in passing, before the lesson about it,
 * is not its home). */
function byOwnWords(found, text, terms = new Map()) {
  const words = queryWords(text).map((word) => word.toLowerCase());
  const phrase = words.join(" ");
  const term = terms.get(phrase);
  const rank = (result) => {
    // a place's own words: its title (a glossary entry's is the term) and its text
    const own = queryWords(`${result.title || ""} ${result.text || ""}`).join(" ").toLowerCase();
    if (words.length > 1 && own.includes(phrase)) return 0;
    return words.every((word) => own.includes(word)) ? 1 : 2;
  };
  let ranked = found.map((result, at) => ({ result, at, rank: rank(result) }));
  if (ranked.some((entry) => entry.rank === 0)) ranked = ranked.filter((entry) => entry.rank === 0);
  const pageOf = (result) => String(result.url || "").split("#")[0];
  const weight = new Map();
  const order = new Map();   // a page's place in the book: its first document's id
  for (const { result, rank: r } of ranked) {
    const page = pageOf(result);
    order.set(page, Math.min(order.get(page) ?? Infinity, Number(result.id) || 0));
    if (r < 2) weight.set(page, (weight.get(page) ?? 0) + (result.score ?? 0));
  }
  const best = Math.max(0, ...weight.values());
  let home = term && order.has(term.page) ? term.page : null;
  const taught = home !== null;
  for (const [page, total] of taught ? [] : weight) {
    if (total >= best / 2 && (home === null || order.get(page) < order.get(home))) home = page;
  }
  const first = ({ result }) => {       // for a term: its section, then the places in it, then its page
    if (pageOf(result) !== home) return 3;
    if (!taught || !term.section || result.section !== term.section) return 2;
    return result.kind === "section" ? 0 : 1;
  };
  // The home's first few places lead; the rest keep MiniSearch's order, so the pages that use
  // the words after it (lesson 12 for "token") are still on the list.
  const byHome = (a, b) => a.rank - b.rank || first(a) - first(b) || a.at - b.at;
  const leading = new Set(ranked.filter((entry) => first(entry) < 3).sort(byHome).slice(0, HOME_PLACES));
  const lead = (entry) => (leading.has(entry) ? 0 : 1);
  return ranked.sort((a, b) => a.rank - b.rank || lead(a) - lead(b) || (lead(a) ? a.at - b.at : byHome(a, b)))
    .map(({ result }) => result);
}

const BEFORE = 60;
const AFTER = 160;

/** Where the snippet starts: at the match with the most different words found near it. */
function bestMatch(lower, terms) {
  let best = { at: 0, score: -1 };
  for (const term of terms) {
    for (let at = lower.indexOf(term), seen = 0; at >= 0 && seen < 50; at = lower.indexOf(term, at + 1), seen++) {
      const near = lower.slice(Math.max(0, at - BEFORE), at + AFTER);
      const score = terms.filter((other) => near.includes(other)).length;
      if (score > best.score || (score === best.score && at < best.at)) best = { at, score };
    }
  }
  return best.at;
}

/** The words around the best match, with every matched word marked. */
function snippet(text, terms) {
  const at = bestMatch(text.toLowerCase(), terms);
  let start = Math.max(0, at - BEFORE);
  if (start > 0) start = text.indexOf(" ", start) + 1 || start;
  let end = Math.min(text.length, at + AFTER);
  if (end < text.length) end = text.lastIndexOf(" ", end) > at ? text.lastIndexOf(" ", end) : end;
  const piece = (start > 0 ? "…" : "") + text.slice(start, end) + (end < text.length ? "…" : "");
  return marked(piece, terms);
}

function marked(text, terms) {
  const fragment = document.createDocumentFragment();
  const words = terms.filter(Boolean).map((term) => term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  if (!words.length) {
    fragment.append(text);
    return fragment;
  }
  const pattern = new RegExp(`(${words.sort((a, b) => b.length - a.length).join("|")})`, "gi");
  text.split(pattern).forEach((part, i) => {
    if (i % 2) {
      fragment.append(element("mark", "", part));
    } else if (part) fragment.append(part);
  });
  return fragment;
}

// The words a result was found by, kept for the page it opens (this one or another), which marks
// them where the reader lands.
const FOUND = "book:search-found";

/** The elements of a place: a check, cell, lab or prompt is one element; a section is its
 * heading and what follows it, up to the next heading of its rank or above. */
function placeParts(place) {
  const rank = /^H([1-6])$/.exec(place.tagName)?.[1];
  if (!rank) return [place];
  const parts = [place];
  for (let next = place.nextElementSibling; next; next = next.nextElementSibling) {
    const other = /^H([1-6])$/.exec(next.tagName)?.[1];
    if (other && other <= rank) break;
    parts.push(next);
  }
  return parts;
}

/** Mark `terms` in the place the reader landed on, if they came from a result that named it. */
function markLanding() {
  let found = null;
  try {
    found = JSON.parse(sessionStorage.getItem(FOUND) || "null");
  } catch { /* storage refused or spoiled: nothing to mark */ }
  if (!found || found.path !== location.pathname || `#${found.anchor}` !== location.hash) return;
  sessionStorage.removeItem(FOUND);
  const place = document.getElementById(found.anchor);
  if (!place) return;
  const skip = "script, style, textarea, button, svg, mark, .cm-editor, .general-tag";
  const nodes = [];
  for (const part of placeParts(place)) {
    const walker = document.createTreeWalker(part, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => (node.parentElement?.closest(skip) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    while (walker.nextNode()) nodes.push(walker.currentNode);
  }
  const lower = found.terms.map((term) => term.toLowerCase());
  for (const node of nodes) {
    if (lower.some((term) => node.data.toLowerCase().includes(term))) node.replaceWith(marked(node.data, found.terms));
  }
}

function resultItem(result) {
  const link = element("a", "search-result");
  link.href = result.url;
  link.addEventListener("click", () => {
    const url = new URL(link.href);
    try {
      sessionStorage.setItem(FOUND, JSON.stringify({ path: url.pathname, anchor: decodeURIComponent(url.hash.slice(1)), terms: result.terms }));
    } catch { /* no storage: the page opens unmarked */ }
  });
  const where = result.section && result.section !== result.page ? `${result.page} › ${result.section}` : result.page;
  const what = result.kind === "lab" ? `Lab: ${result.title}` : KINDS[result.kind] || result.kind;
  const words = element("span", "search-snippet");
  words.append(snippet(result.text || result.title, result.terms));
  link.append(element("span", "search-where", where), element("span", "search-kind", what), words);
  const item = document.createElement("li");
  item.append(link);
  return item;
}


export function init() {
  markLanding();
  window.addEventListener("hashchange", markLanding);
  const box = document.querySelector(".site-search");
  if (!box) return;
  const input = box.querySelector(".search-input");
  const panel = box.querySelector(".search-results");
  const status = box.querySelector(".search-status");
  const list = box.querySelector(".search-list");
  box.hidden = false;
  let timer = 0;
  let asked = 0;

  const close = () => { panel.hidden = true; };
  const open = () => { panel.hidden = false; };
  const links = () => [...list.querySelectorAll("a")];

  async function run() {
    const text = input.value.trim();
    const mine = ++asked;
    if (!text) { list.replaceChildren(); delete list.dataset.query; status.textContent = ""; close(); return; }
    open();
    let search;
    try {
      search = await load();
    } catch (error) {
      status.textContent = `Search could not load: ${error.message}`;
      return;
    }
    if (mine !== asked) return; // the reader typed on: a newer search will draw
    const results = query(search, text);
    list.replaceChildren(...results.map(resultItem));
    list.dataset.query = text; // which search the list shows (the browser tests wait on it)
    status.textContent = results.length
      ? `${results.length} ${results.length === 1 ? "place" : "places"} found${results.length === LIMIT ? " (the best " + LIMIT + ")" : ""}`
      : `Nothing in the book matches “${text}”.`;
  }

  input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(run, WAIT_MS); });
  input.addEventListener("focus", () => load().catch(() => {})); // the index, fetched while they type
  input.addEventListener("keydown", async (event) => {
    if (event.key === "ArrowDown") {
      event.preventDefault();
      if (panel.hidden && input.value.trim()) open();
      links()[0]?.focus();
    } else if (event.key === "Enter") {
      event.preventDefault();
      clearTimeout(timer);
      await run();
      links()[0]?.click();
    } else if (event.key === "Escape") {
      if (!panel.hidden) { event.preventDefault(); close(); } else input.blur();
    }
  });
  list.addEventListener("keydown", (event) => {
    const all = links();
    const at = all.indexOf(document.activeElement);
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const next = at + (event.key === "ArrowDown" ? 1 : -1);
      (next < 0 ? input : all[Math.min(next, all.length - 1)]).focus();
    } else if (event.key === "Escape") {
      event.preventDefault();
      close();
      input.focus();
    }
  });
  // A result on this page only moves the reader along it: close the panel behind them.
  list.addEventListener("click", (event) => { if (event.target.closest("a")) close(); });
  box.addEventListener("focusout", (event) => { if (!box.contains(event.relatedTarget)) close(); });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey || typing(event)) return;
    event.preventDefault();
    input.focus();
    input.select();
  });
}
