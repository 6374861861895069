// Saved work: the reader's code (cells and labs), check answers, revealed hints and passed labs,
// kept in localStorage under one key and written within a second of each change.
//
// Format (localStorage["agent-harness-book/work"]):
//   {"format": 1, "saved": "<ISO time>",
//    "cells":   {"11-3": {"code": "...", "base": "<hash of the book's text it was edited from>"}},
//    "labs":    {"11-1": {"code": "...", "base": "<hash of the starting file>", "passed": true,
//                         "passedCode": "<the text that passed>", "useMine": true}},
//    "answers": {"<check id>": {"lesson": "11", "value": <anything JSON>}},
//    "hints":   {"<prompt id>": {"lesson": "11", "shown": 2}},
//    "review":  {"check:11-2": {"lesson": "11", "step": 1, "rights": 1, "due": "<ISO time>", "done": false}}}
// "review" is the review page's state (schedule.js, review-items.js); a save or an export made
// before it existed has none, and loads and imports as an empty one.
// An edit is never overwritten by a new build: when the book's text changes under it (`base`
// differs), the page keeps the reader's code and offers the new text.
//
// Several tabs share the one copy. A tab writes only the entries it changed onto whatever another
// tab saved since, and takes in the other tabs' saves as they happen, so a second tab open on
// another lesson never writes its stale picture over the first tab's work.
//
// Checks, prompts and hints are saved and restored by answers.js, from checks.js's events.
import { ensure } from "./dom.js";

export const KEY = "agent-harness-book/work";
export const FORMAT = 1;
const SECTIONS = ["cells", "labs", "answers", "hints", "review"];
/** The sections every save has; the later ones (the review's) may be absent from an older one. */
const REQUIRED = ["cells", "labs", "answers", "hints"];
const DELAY_MS = 300;

let work = empty();
let timer = 0;
let loaded = false;
const changeListeners = new Set();
/** The entries this tab changed since its last save, as "section/id". */
const dirty = new Set();
/** The `saved` stamp of the newest save this tab has seen (its own or another tab's). */
let seen = "";
/** True after an import: the next save writes this tab's work whole, merging nothing. */
let replaced = false;

function empty() {
  return { format: FORMAT, saved: "", cells: {}, labs: {}, answers: {}, hints: {}, review: {} };
}

/** A short hash of a text (FNV-1a, 32 bits): tells whether the book's text changed. */
export function hashText(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}

/** A visible warning at the top of the page (storage corrupt, full, or an import refused). */
export function warn(message) {
  const box = ensure("book-warning", "div", document.body, { first: true });
  box.className = "book-warning";
  box.setAttribute("role", "alert");
  const line = document.createElement("p");
  line.textContent = message;
  box.append(line);
}

/** Why `data` is not saved work, or "" when it is. */
export function problem(data) {
  if (!data || typeof data !== "object" || Array.isArray(data)) return "it is not a JSON object";
  if (data.format !== FORMAT) return `its format is ${JSON.stringify(data.format)}, not ${FORMAT}`;
  for (const section of SECTIONS) {
    const part = data[section];
    if (part === undefined && !REQUIRED.includes(section)) continue;
    if (!part || typeof part !== "object" || Array.isArray(part)) return `"${section}" is not an object`;
    for (const [id, entry] of Object.entries(part)) {
      if (!entry || typeof entry !== "object" || Array.isArray(entry)) return `${section}.${id} is not an object`;
      if ((section === "cells" || section === "labs") && entry.code !== undefined && typeof entry.code !== "string")
        return `${section}.${id}.code is not text`;
      if (section === "labs" && entry.passedCode !== undefined && typeof entry.passedCode !== "string")
        return `labs.${id}.passedCode is not text`;
      if (section === "hints" && !Number.isInteger(entry.shown)) return `hints.${id}.shown is not a whole number`;
      if (section === "labs" && entry.failed !== undefined &&
          !(Array.isArray(entry.failed) && entry.failed.every((test) => typeof test === "string")))
        return `labs.${id}.failed is not a list of test names`;
    }
  }
  return "";
}

const DB_NAME = "agent-harness-book";
const DB_STORE = "work";

/** The IndexedDB copy's database, or null where IndexedDB cannot be used. */
function openDb() {
  return new Promise((resolve) => {
    try {
      const request = indexedDB.open(DB_NAME, 1);
      request.onupgradeneeded = () => request.result.createObjectStore(DB_STORE);
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => resolve(null);
      request.onblocked = () => resolve(null);
    } catch {
      resolve(null);
    }
  });
}

let db = null;

function readDb() {
  return new Promise((resolve) => {
    if (!db) return resolve(null);
    try {
      const get = db.transaction(DB_STORE).objectStore(DB_STORE).get(KEY);
      get.onsuccess = () => resolve(typeof get.result === "string" ? get.result : null);
      get.onerror = () => resolve(null);
    } catch {
      resolve(null);
    }
  });
}

function writeDb(text) {
  return new Promise((resolve) => {
    if (!db) return resolve(false);
    try {
      const transaction = db.transaction(DB_STORE, "readwrite", { durability: "strict" });
      transaction.objectStore(DB_STORE).put(text, KEY);
      transaction.oncomplete = () => resolve(true);
      transaction.onerror = transaction.onabort = () => resolve(false);
    } catch {
      resolve(false);
    }
  });
}

/** Parse one stored copy: {data} when it is sound, {damage} when it is not, {} when absent. */
function parse(text) {
  if (text === null || text === undefined) return {};
  try {
    const data = JSON.parse(text);
    const why = problem(data);
    return why ? { damage: why, text } : { data };
  } catch (error) {
    return { damage: error.message, text };
  }
}

/**
 * Read the saved work (once per page). It is kept twice: in localStorage (read at once) and in
 * IndexedDB, which is on the disk as soon as a write completes, so it survives a browser that is
 * killed a moment after an edit (localStorage reaches the disk only seconds later). The newer
 * sound copy wins; a damaged one is kept aside and reported, never fatal.
 */
export async function load() {
  if (loaded) return work;
  loaded = true;
  let local = null;
  try {
    local = localStorage.getItem(KEY);
  } catch (error) {
    warn(`Your saved work cannot be read here (${error.message}).`);
  }
  db = await openDb();
  const copies = [parse(local), parse(await readDb())];
  const sound = copies.filter((copy) => copy.data).map((copy) => copy.data);
  sound.sort((a, b) => String(b.saved || "").localeCompare(String(a.saved || "")));
  if (sound.length) work = { ...empty(), ...sound[0] };
  seen = String(work.saved || "");
  const damaged = copies.find((copy) => copy.damage);
  if (damaged && !sound.length) {
    try { localStorage.setItem(`${KEY}.corrupt`, damaged.text); } catch { /* full: said below */ }
    warn(`Your saved work was damaged (${damaged.damage}) and could not be restored. ` +
         `A copy was kept as "${KEY}.corrupt"; the page starts afresh.`);
  }
  return work;
}

/** The saved entry `id` of `section` ("cells", "labs", "answers", "hints", "review"), or undefined. */
export function saved(section, id) {
  return work[section][id];
}

/** Everything saved: the object export writes. */
export function allWork() {
  return work;
}

/** Merge `fields` into the entry `id` of `section` (null deletes it), and save soon. */
export function update(section, id, fields) {
  if (fields === null) delete work[section][id];
  else work[section][id] = { ...(work[section][id] || {}), ...fields };
  dirty.add(`${section}/${id}`);
  scheduleSave();
  notify(section, id);
}

function notify(section, id) {
  for (const listener of changeListeners) listener(section, id);
}

/** `text` parsed, when it is a sound save made after the newest save seen here; else null. */
function newer(text) {
  const { data } = parse(text);
  return data && String(data.saved || "") > seen ? data : null;
}

/** The copy in localStorage when another tab saved it after the newest save seen here. */
function newerElsewhere() {
  try {
    return newer(localStorage.getItem(KEY));
  } catch {
    return null;
  }
}

/**
 * Take `other` (another tab's save) into this tab's work, entry by entry, except the entries this
 * tab changed and has not saved yet: those stay as this tab has them. Returns the entries that
 * changed here, as [section, id] pairs.
 */
function takeIn(other) {
  const changed = [];
  for (const section of SECTIONS) {
    if (!other[section]) continue;      // a save from before the section existed
    const ids = new Set([...Object.keys(work[section]), ...Object.keys(other[section])]);
    for (const id of ids) {
      if (dirty.has(`${section}/${id}`)) continue;
      const theirs = other[section][id];
      if (JSON.stringify(theirs) === JSON.stringify(work[section][id])) continue;
      if (theirs === undefined) delete work[section][id];
      else work[section][id] = theirs;
      changed.push([section, id]);
    }
  }
  seen = String(other.saved || "");
  return changed;
}

/** Call `listener(section, id)` after every change. */
export function onChange(listener) {
  changeListeners.add(listener);
  return () => changeListeners.delete(listener);
}

function scheduleSave() {
  clearTimeout(timer);
  timer = setTimeout(saveNow, DELAY_MS);
}

let warnedFull = false;

/**
 * Write the work now, to both copies. Resolves true when at least one copy was written; when
 * neither could be, the page says so (once) and asks the reader to export.
 */
export async function saveNow() {
  clearTimeout(timer);
  timer = 0;
  const other = replaced ? null : newerElsewhere();
  if (other) takeIn(other);
  dirty.clear();
  replaced = false;
  const stamp = work.saved = new Date().toISOString();
  seen = work.saved;
  const text = JSON.stringify(work);
  let reason = "";
  let local = false;
  try {
    localStorage.setItem(KEY, text);
    local = true;
  } catch (error) {
    reason = error.name === "QuotaExceededError" ? "storage is full" : error.message;
  }
  const disk = await writeDb(text);
  // Said on the page once both copies are written (IndexedDB is on the disk): <html data-saved>
  // holds the `saved` stamp of the copy written last, so a test can wait for a save to be whole.
  document.documentElement.dataset.saved = stamp;
  if (!local && !disk && !warnedFull) {
    warnedFull = true;
    warn(`Your work could not be saved (${reason || "storage is blocked"}). ` +
         "Export your progress from the course map to keep it.");
  }
  return local || disk;
}

/** Replace all saved work with `data` (already checked with problem()). */
export function replaceAll(data) {
  work = { ...empty(), ...data, format: FORMAT };
  loaded = true;
  replaced = true;
  notify("all", "");
  return saveNow();
}

function listen() {
  // A pending save is written when the tab is hidden or closed.
  const flush = () => { if (timer) saveNow(); };
  addEventListener("pagehide", flush);
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") flush(); });
  // Another tab saved: take its entries in now, so that this tab's picture stays whole.
  addEventListener("storage", (event) => {
    const data = event.key === KEY && loaded ? newer(event.newValue) : null;
    if (data) for (const [section, id] of takeIn(data)) notify(section, id);
  });
}

/** Load the saved work; the page's parts that restore it wait for this. */
export async function init() {
  listen();
  await load();
}
