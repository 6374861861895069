// Offline study: registers the service worker (site/sw.js, at the book's root) so the whole book
// stays in the browser after the first visit, offers a newer build when one has been saved, and,
// on a page opened straight from the disk (file://), shows the one line that says how to run code.
//
// Chromium does not load module scripts from file://, so every page also carries the file://
// line in its HTML (#file-notice, revealed by an inline classic script); this module only adds it
// where modules do run from files and the page lacks it.

import { ensure } from "./dom.js";
import { SITE } from "./files.js";

const WORKER = new URL("sw.js", SITE);

export const FILE_NOTICE = "Opened as a file, this page reads in full but cannot run its code. "
  + "To run it, open a terminal in the book's folder and type: python3 serve.py";

export function init() {
  if (location.protocol === "file:") {
    showFileNotice();
    return;
  }
  if (!("serviceWorker" in navigator) || !window.isSecureContext) return;
  // Under `make serve` (builder/devserve.py adds its reload script) there is no worker on purpose:
  // nothing to register, so nothing to warn about.
  if (document.querySelector('script[src*="__dev/"]')) return;
  watchTouches();
  // After the page's own loading, so saving the book never competes with the first read.
  if (document.readyState === "complete") register();
  else window.addEventListener("load", register, { once: true });
}

export function showFileNotice() {
  let notice = document.getElementById("file-notice");
  if (!notice) {
    notice = document.createElement("p");
    notice.id = "file-notice";
    notice.className = "file-notice";
    notice.textContent = FILE_NOTICE;
    document.body.prepend(notice);
  }
  notice.hidden = false;
}

async function register() {
  // A page that already had a worker reloads when a newer one takes over, so it never runs one
  // build's page with another build's files. The first worker to take over a page that came
  // from the network saved the build the server was serving, that page's own, so no reload.
  let controlled = Boolean(navigator.serviceWorker.controller);
  navigator.serviceWorker.addEventListener("controllerchange", () => {
    if (controlled) location.reload();
    controlled = true;
  });
  let registration;
  try {
    registration = await navigator.serviceWorker.register(WORKER.href, { scope: SITE.pathname });
  } catch (error) {
    console.warn(`offline.js: the book cannot be saved for offline study: ${error.message}`);
    return;
  }
  if (registration.waiting && navigator.serviceWorker.controller) offerUpdate(registration.waiting);
  if (!registration.active) watchFirstSave(registration.installing || registration.waiting);
  registration.addEventListener("updatefound", () => {
    const installing = registration.installing;
    installing?.addEventListener("statechange", () => {
      if (installing.state === "installed" && navigator.serviceWorker.controller) offerUpdate(installing);
    });
  });
  navigator.serviceWorker.ready.then(() => showSaved(SAVED));
}

const SAVING = "Saving the whole book in this browser for offline study…";
const SAVED = "Saved in this browser: the book's pages and code now work without the server or a network.";
const NOT_SAVED = "The book could not be saved for offline study this time; it tries again on your next visit.";

// The first save of the book: say that it is under way, and if it fails, that it did.
function watchFirstSave(worker) {
  if (!worker) return;
  showSaved(SAVING);
  worker.addEventListener("statechange", () => {
    if (worker.state === "redundant" && !navigator.serviceWorker.controller) showSaved(NOT_SAVED);
  });
}

// One quiet line in the page's footer, so a reader knows when the server can be stopped.
function showSaved(text) {
  const line = ensure("offline-status", "p", document.querySelector(".site-footer") || document.body);
  line.className = "offline-status";
  line.setAttribute("role", "status");
  line.textContent = text;
}

// A reader who has not touched the page since it loaded loses nothing by a reload, so a newer
// build is switched to at once (an author's rebuild shows after one refresh). Otherwise the
// newer build waits, saved, and the reader is asked.
let touched = false;

function watchTouches() {
  for (const type of ["pointerdown", "keydown"]) {
    addEventListener(type, () => { touched = true; }, { capture: true, once: true, passive: true });
  }
}

// A newer build is saved and waits for this one's pages to close: switch now, or say so and let
// the reader switch. Everything open reloads onto the new build together.
function offerUpdate(waiting) {
  if (!touched) {
    waiting.postMessage({ type: "activate" });
    return;
  }
  if (document.getElementById("book-update")) return;
  const line = document.createElement("p");
  line.id = "book-update";
  line.className = "book-update";
  line.setAttribute("role", "status");
  line.append("A newer version of the book is saved. ");
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = "Switch to it";
  button.addEventListener("click", () => waiting.postMessage({ type: "activate" }));
  line.append(button);
  document.body.prepend(line);
}
