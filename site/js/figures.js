// A figure opened large: a tap or click on a drawing opens it in a viewer over the page, at the
// width where its smallest label reads, or larger. The reader pans by scrolling (a finger, the
// wheel, the arrow keys) and zooms with + and − (the buttons or the keys); Escape, Close or the
// browser's Back closes it and puts the focus back on the figure. Without JavaScript the link
// opens the drawing by itself. The inline figure on a narrow screen is book.css's business.
import { button, element } from "./dom.js";

const STEPS = [0.5, 0.75, 1, 1.5, 2, 3];   // zoom, as a share of the drawing's legible width
let viewer = null;                          // the <dialog>, made on first use
let state = null;                           // {link, zoom, legible}

function make() {
  const dialog = element("dialog", "figure-viewer");
  dialog.setAttribute("aria-labelledby", "figure-viewer-title");
  const title = element("p", "figure-viewer-title");
  title.id = "figure-viewer-title";
  const zoomOut = button("−", "figure-zoom-out", () => zoom(-1));
  zoomOut.setAttribute("aria-label", "Zoom out");
  const zoomIn = button("+", "figure-zoom-in", () => zoom(1));
  zoomIn.setAttribute("aria-label", "Zoom in");
  const close = button("Close", "figure-close", () => dialog.close());
  const bar = element("div", "figure-viewer-bar");
  bar.append(title, zoomOut, zoomIn, close);
  const pane = element("div", "figure-viewer-pane");
  pane.tabIndex = 0;
  pane.setAttribute("aria-label", "The drawing: scroll or use the arrow keys to move around it");
  const image = document.createElement("img");
  pane.append(image);
  dialog.append(bar, pane);
  dialog.addEventListener("keydown", (event) => {
    if (event.key === "+" || event.key === "=") { zoom(1); event.preventDefault(); }
    else if (event.key === "-" || event.key === "−") { zoom(-1); event.preventDefault(); }
    event.stopPropagation();            // ← and → move around the drawing; they turn no page
  });
  dialog.addEventListener("close", closed);
  document.body.append(dialog);
  return dialog;
}

function zoom(by) {
  if (!state) return;
  state.zoom = Math.max(0, Math.min(STEPS.length - 1, state.zoom + by));
  const image = viewer.querySelector("img");
  image.style.width = `${Math.round(state.legible * STEPS[state.zoom])}px`;
  viewer.querySelector(".figure-zoom-out").disabled = state.zoom === 0;
  viewer.querySelector(".figure-zoom-in").disabled = state.zoom === STEPS.length - 1;
}

function open(link) {
  viewer ??= make();
  const figure = link.closest("figure");
  const legible = parseInt(getComputedStyle(link).getPropertyValue("--legible"), 10) || 700;
  state = { link, legible, zoom: STEPS.indexOf(1) };
  const image = viewer.querySelector("img");
  const inline = link.querySelector("img");
  image.src = inline.src;
  image.alt = inline.alt;
  viewer.querySelector(".figure-viewer-title").textContent =
    figure?.querySelector(".figure-number")?.textContent ?? "Figure";
  viewer.showModal();
  // The largest step that fits the window, and never below the legible width.
  const room = viewer.querySelector(".figure-viewer-pane").clientWidth - 32;
  const fits = STEPS.findLastIndex((step) => legible * step <= room);
  state.zoom = Math.max(STEPS.indexOf(1), fits);
  zoom(0);
  viewer.querySelector(".figure-viewer-pane").focus();
  // Back closes the viewer and stays on the page: the viewer is one step of history.
  history.pushState({ ...(history.state ?? {}), figureViewer: true }, "");
}

function closed() {
  const link = state?.link;
  state = null;
  if (history.state?.figureViewer) history.back();
  link?.focus();
}

export function init() {
  document.addEventListener("click", (event) => {
    const link = event.target instanceof Element ? event.target.closest(".figure-open") : null;
    if (!link || event.defaultPrevented || event.button !== 0
        || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    open(link);
  });
  addEventListener("popstate", () => {
    if (viewer?.open && !history.state?.figureViewer) viewer.close();
  });
}
