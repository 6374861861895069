// The book's service worker: after the first visit every file of the book is in the browser, so
// with the server stopped and the network gone a reader can still open any page and run its cells.
//
// One build, one cache. builder/offline.py copies this file to the site root (so its scope is the
// whole book) with BUILD stamped in, and writes precache.json: that build's id and every file with
// its SHA-256. Installing fills the cache "book-<BUILD>" with exactly those files, each checked
// against its hash (a file reused from an older cache only when its hash matches), and fails
// whole if any file is missing or different: the worker already active keeps serving its own
// complete cache. Activating deletes every other "book-" cache. So a cache never mixes builds, and
// a page is never served from a cache that is not complete.
//
// Responses leave the cache with COOP/COEP added, because a page or worker served without them is
// not cross-origin isolated and loses the interrupt buffer that stops runaway Python.

const BUILD = "dev"; // stamped by builder/offline.py
const PREFIX = "book-";
const CACHE = PREFIX + BUILD;
const MANIFEST = "precache.json";
const HASH_HEADER = "X-Book-Sha256";
const PARALLEL = 6;
const ISOLATION = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
  "Cross-Origin-Resource-Policy": "same-origin",
};

const scope = () => new URL(self.registration.scope);

self.addEventListener("install", (event) => {
  event.waitUntil(precache());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
    }
    await self.clients.claim();
    await tell({ type: "offline-ready", build: BUILD });
  })());
});

self.addEventListener("message", (event) => {
  const data = event.data || {};
  if (data.type === "activate") self.skipWaiting(); // the reader chose the new build
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || !url.href.startsWith(scope().href)) return;
  event.respondWith(respond(request, url));
});

// --- installing ------------------------------------------------------------------------------

async function precache() {
  const response = await fetch(new URL(`${MANIFEST}?build=${BUILD}`, scope()), { cache: "no-store" });
  if (!response.ok) throw new Error(`sw.js: ${MANIFEST}: HTTP ${response.status}`);
  const manifest = await response.json();
  if (manifest.build !== BUILD) {
    throw new Error(`sw.js: ${MANIFEST} is build ${manifest.build}, this worker is ${BUILD}: the book changed while it was being saved`);
  }
  const cache = await caches.open(CACHE);
  const older = (await caches.keys()).filter((name) => name.startsWith(PREFIX) && name !== CACHE);
  const wanted = Object.entries(manifest.files);
  let next = 0;
  const worker = async () => {
    while (next < wanted.length) {
      const [path, hash] = wanted[next++];
      await store(cache, older, path, hash);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  const keep = new Set(wanted.map(([path]) => new URL(path, scope()).href));
  for (const request of await cache.keys()) {
    if (!keep.has(request.url)) await cache.delete(request);
  }
}

// One file into the cache: already there with the right hash, copied from an older build's cache
// with the same hash, or fetched and checked.
async function store(cache, older, path, hash) {
  const url = new URL(path, scope()).href;
  const here = await cache.match(url);
  if (here && here.headers.get(HASH_HEADER) === hash) return;
  for (const name of older) {
    const there = await (await caches.open(name)).match(url);
    if (there && there.headers.get(HASH_HEADER) === hash) {
      await cache.put(url, there);
      return;
    }
  }
  const response = await fetch(url, { cache: "no-cache" });
  if (!response.ok) throw new Error(`sw.js: ${path}: HTTP ${response.status}`);
  const body = await response.arrayBuffer();
  const got = hex(await crypto.subtle.digest("SHA-256", body));
  if (got !== hash) throw new Error(`sw.js: ${path}: the server sent another build's file (sha256 ${got.slice(0, 12)}, expected ${hash.slice(0, 12)})`);
  const headers = new Headers(response.headers);
  headers.set(HASH_HEADER, hash);
  for (const [name, value] of Object.entries(ISOLATION)) headers.set(name, value);
  await cache.put(url, new Response(body, { status: 200, statusText: "OK", headers }));
}

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

// --- serving ---------------------------------------------------------------------------------

// The cache key of a URL: the file it names, without query or fragment; a folder means its
// index.html, as the server has it.
function keyOf(url) {
  const key = new URL(url.pathname, url.origin);
  if (key.pathname.endsWith("/")) key.pathname += "index.html";
  return key.href;
}

async function respond(request, url) {
  const cached = await (await caches.open(CACHE)).match(keyOf(url));
  // Pyodide's .wasm goes out as the cache holds it (stored with the isolation headers): a
  // response rebuilt with new Response() loses the browser's compiled-code cache, and a returning
  // reader would compile Python's runtime again on every visit.
  if (cached && url.pathname.endsWith(".wasm") && cached.headers.get("Cross-Origin-Embedder-Policy")) {
    return cached;
  }
  if (cached) return isolated(cached);
  try {
    return await fetch(request);
  } catch (error) {
    if (request.mode === "navigate") return notSaved(url);
    throw error;
  }
}

function isolated(response) {
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(ISOLATION)) headers.set(name, value);
  headers.delete(HASH_HEADER);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

function notSaved(url) {
  const page = `<!doctype html><meta charset="utf-8"><title>Not saved for offline study</title>
<p>${escape(url.pathname)} is not part of the book saved in this browser, and the book's server
cannot be reached. Start it again (<code>python3 serve.py</code> in the book's folder), or go back to
<a href="${escape(scope().pathname)}">the course map</a>.</p>`;
  return new Response(page, { status: 503, headers: { "Content-Type": "text/html; charset=utf-8", ...ISOLATION } });
}

function escape(text) {
  return text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

async function tell(message) {
  for (const client of await self.clients.matchAll({ includeUncontrolled: true })) client.postMessage(message);
}
