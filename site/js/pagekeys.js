// ← and → turn the page, as in mdBook: the previous and the next page of the course, from the
// page's own Previous/Next links. Never while the reader is typing (a text box, an editor), and
// never with a modifier key held (the browser's own shortcuts keep theirs).
import { typing } from "./dom.js";

export function init() {
  document.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    if (event.ctrlKey || event.metaKey || event.altKey || event.shiftKey || typing(event)) return;
    if (event.target instanceof Element && event.target.closest("[role='group'], .search-results")) return;
    const link = document.querySelector(event.key === "ArrowLeft" ? ".page-nav a[rel='prev']" : ".page-nav a[rel='next']");
    if (!link) return;
    event.preventDefault();
    link.click();
  });
}
