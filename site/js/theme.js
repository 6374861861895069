// The light and the dark theme. base.html's first script sets data-theme on <html> before the
// page is drawn: the reader's choice if they made one (localStorage, so it holds on every page
// and after a reload), else the system's (prefers-color-scheme). This module shows the header's
// toggle, keeps the choice, follows the system while the reader has not chosen, and tells the
// figures (SVG in <img>, which can only follow prefers-color-scheme) which scheme to use.
const KEY = "agent-harness-book/theme";
const system = matchMedia("(prefers-color-scheme: dark)");

function stored() {
  try {
    const value = localStorage.getItem(KEY);
    return value === "dark" || value === "light" ? value : null;
  } catch {
    return null;
  }
}

export function current() {
  return stored() || (system.matches ? "dark" : "light");
}

function apply(theme) {
  document.documentElement.dataset.theme = theme;
  const toggle = document.querySelector(".theme-toggle");
  if (toggle) toggle.setAttribute("aria-pressed", String(theme === "dark"));
  // the words say the state too (aria-pressed says it to a screen reader): "Dark theme: on"
  const state = toggle && toggle.querySelector(".theme-state");
  if (state) state.textContent = theme === "dark" ? ": on" : ": off";
}

export function set(theme) {
  try {
    localStorage.setItem(KEY, theme);
  } catch { /* private mode: the choice lasts for this page */ }
  apply(theme);
}

export function init() {
  const toggle = document.querySelector(".theme-toggle");
  apply(current());
  if (toggle) {
    toggle.hidden = false;
    toggle.addEventListener("click", () => set(document.documentElement.dataset.theme === "dark" ? "light" : "dark"));
  }
  system.addEventListener("change", () => { if (!stored()) apply(current()); });
  // Another tab changed it: follow.
  addEventListener("storage", (event) => { if (event.key === KEY) apply(current()); });
}
