// The small Python status line: booting, ready, running, or failed with its reason.
// The page may hold <div id="python-status"></div>; it is made if it is not there.
const LABELS = {
  booting: "Python: starting…",
  ready: "Python: ready",
  running: "Python: running…",
  failed: "Python: failed",
};

function element() {
  let status = document.getElementById("python-status");
  if (!status) {
    status = document.createElement("div");
    status.id = "python-status";
    document.body.append(status);
  }
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
  status.textContent = reason ? `${LABELS[state] || state}: ${reason}` : (LABELS[state] || state);
}
