// The spec beside the code: on a wide screen a lab can lay out its spec in a column of its own,
// held in view, beside its file and tests ("Spec beside the code", in the lab's tools). The
// reader's choice holds for every lab and page. Below 70rem the button is hidden and the lab
// reads as one column whatever was chosen.
import { button } from "./dom.js";

const KEY = "agent-harness-book/lab-side";
const WIDE = matchMedia("(min-width: 70rem)");

function chosen() {
  try { return localStorage.getItem(KEY) === "on"; } catch { return false; }
}

function keep(on) {
  try { localStorage.setItem(KEY, on ? "on" : "off"); } catch { /* private mode: this page only */ }
}

const buttons = [];
// The contents rail (fixed at the left of a wide screen) would lie under a wide lab: it steps
// aside while a lab laid out side by side is on screen, and comes back when the reader reads on.
const inView = new Set();
const seen = new IntersectionObserver((entries) => {
  for (const entry of entries) {
    if (entry.isIntersecting) inView.add(entry.target);
    else inView.delete(entry.target);
  }
  document.body.classList.toggle("lab-side-in-view", [...inView].some((section) => section.classList.contains("is-side")));
});

function apply(on) {
  for (const [section, toggle] of buttons) {
    section.classList.toggle("is-side", on && WIDE.matches);
    toggle.setAttribute("aria-pressed", String(on));
  }
  document.body.classList.toggle("lab-side-in-view", on && WIDE.matches && inView.size > 0);
}

export function init() {
  for (const section of document.querySelectorAll("section.lab[data-lab]")) {
    const tools = section.querySelector(".lab-tools");
    if (!tools || !section.querySelector(".lab-spec")) continue;
    const toggle = button("Spec beside the code", "lab-side-toggle", () => {
      const on = toggle.getAttribute("aria-pressed") !== "true";
      keep(on);
      apply(on);
      toggle.scrollIntoView({ block: "nearest" });
    });
    toggle.title = "Show this lab's spec in a column beside its file (on a wide screen)";
    tools.append(toggle);
    buttons.push([section, toggle]);
    seen.observe(section);
  }
  if (!buttons.length) return;
  apply(chosen());
  WIDE.addEventListener("change", () => apply(chosen()));
}
