// A term's card (builder/html.py draws it after the term's first use on a later page): CSS opens
// it on hover and on focus; this adds a tap on a touch screen (the first tap opens the card, a
// second follows the link to the glossary), Escape to close it, a tap elsewhere to close it, and
// keeps a card on a wide screen from running past the window's right edge. Without JavaScript
// the term is a plain link to its glossary entry.
let touched = false;      // the last pointer to go down was a finger

function place(term) {
  const card = term.querySelector(".term-card");
  if (!card) return;
  card.style.left = "";
  if (getComputedStyle(card).position === "fixed") { clear(term, card); return; }   // a phone's sheet
  const box = card.getBoundingClientRect();
  const over = box.right - (document.documentElement.clientWidth - 8);
  if (over > 0) card.style.left = `${-Math.min(over, box.left - 8)}px`;
}

// A phone's card is a sheet at the foot of the screen: when it would cover its own term, the page
// scrolls the term up above it, so the second tap reaches the link and not the card.
function clear(term, card) {
  const link = term.querySelector(".term-link").getBoundingClientRect();
  const sheet = card.getBoundingClientRect();
  const over = link.bottom - (sheet.top - 8);
  if (over > 0) window.scrollBy({ top: over, behavior: "instant" });
}

function closeAll(except = null) {
  for (const term of document.querySelectorAll(".term.term-open")) {
    if (term !== except) term.classList.remove("term-open");
  }
}

export function init() {
  const terms = document.querySelectorAll(".term");
  if (!terms.length) return;
  document.addEventListener("pointerdown", (event) => {
    touched = event.pointerType === "touch";
    if (!event.target.closest(".term")) closeAll();
  }, true);
  for (const term of terms) {
    const link = term.querySelector(".term-link");
    term.addEventListener("mouseenter", () => { term.classList.remove("term-closed"); place(term); });
    term.addEventListener("mouseleave", () => term.classList.remove("term-closed"));
    term.addEventListener("focusin", () => place(term));
    term.addEventListener("focusout", (event) => {
      if (!term.contains(event.relatedTarget)) term.classList.remove("term-closed", "term-open");
    });
    link.addEventListener("click", (event) => {
      if (!touched || term.classList.contains("term-open")) return;
      event.preventDefault();       // the first tap shows the card; a second follows the link
      closeAll(term);
      term.classList.remove("term-closed");
      term.classList.add("term-open");
      place(term);
    });
  }
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    for (const term of document.querySelectorAll(".term")) {
      if (term.classList.contains("term-open") || term.matches(":hover, :focus-within")) {
        term.classList.remove("term-open");
        term.classList.add("term-closed");
      }
    }
  });
}
