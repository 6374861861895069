// The small Python status line: loading (how much has arrived), starting, ready, running, or
// failed with its reason.
// The page may hold <div id="python-status"></div>; it is made if it is not there.
import { ensure } from "./dom.js";

const LABELS = {
  booting: "Python: starting…",
  ready: "Python: ready",
  running: "Python: running…",
  failed: "Python: failed",
};

// It lives in the page's header, in the flow of the page, so it never sits on the text; on a
// screen wide enough to keep it in the margin, book.css pins it to the corner instead.
function element() {
  const status = ensure("python-status", "div", document.querySelector(".site-header") || document.body);
  status.classList.add("python-status");
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");
  return status;
}

export function showStatus(state, reason = "") {
  if (!document.body) {
    // Called from the page's <head> (boot.js): show it once the body exists.
    document.addEventListener("DOMContentLoaded", () => showStatus(state, reason), { once: true });
    return;
  }
  const status = element();
  status.dataset.state = state;
  const label = LABELS[state] || state;
  // While booting, a reason is the download's progress: "Python: loading, 2.1 of 6.3 MB".
  status.textContent = !reason ? label : state === "booting" ? `Python: loading, ${reason}` : `${label}: ${reason}`;
}
