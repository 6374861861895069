// Loads the CodeMirror bundle (assets/js/editor.bundle.js) only when a page first needs an
// editor, so the bytes before Python stay small. Until then the page shows the code as text.
import { busy, onState, pythonState } from "./python.js";

let bundle = null;

/** The editor module: {createEditor}. Imported once, on first use. */
export function loadEditor() {
  bundle ??= import(new URL("./editor.bundle.js", import.meta.url).href);
  return bundle;
}

/**
 * Put an editor in place of `placeholder` (a <pre> showing the code) holding `text`, once it
 * has measured its lines. Returns the editor: {getText, setText, focus, destroy}.
 *
 * CodeMirror measures its lines only while it is inside the window: an editor put in place off
 * screen guesses their heights, and corrects them in the frames after it first scrolls into
 * view. The editor then shrinks or grows under the reader's eyes and moves what follows it, the
 * cell's Run button first: a press on Run that the jump outlives is released on something else,
 * and the browser drops the click (issue 26). So the editor is laid out first pinned inside the
 * window, invisible and as wide as its place, measured there, and swapped in only then: its
 * height is the real one from the start, and the swap is one change in one frame.
 */
let helpCount = 0;

export async function mountEditor(placeholder, text, options) {
  const { createEditor } = await loadEditor();
  const holder = document.createElement("div");
  holder.className = "code-editor";
  placeholder.after(holder);                      // the cascade and the width of its place...
  holder.style.width = `${holder.getBoundingClientRect().width}px`;
  holder.classList.add("code-editor-measuring"); // ...then out of the flow, inside the window
  // How to leave the editor with the keyboard: read out with the editor (aria-describedby),
  // shown under it while it has focus.
  const help = document.createElement("p");
  help.className = "editor-help";
  help.id = `editor-help-${++helpCount}`;
  help.textContent = "Tab indents. To leave the editor: Escape, then Tab. Shift+Enter runs.";
  const editor = createEditor(holder, text, { ...options, describedBy: help.id });
  holder.bookEditor = editor; // for the browser tests and the benchmark: getText(), setText()
  // CodeMirror runs measure requests once its own measuring has settled, in the same frame.
  await new Promise((resolve) => editor.view.requestMeasure({ read() {}, write: resolve }));
  holder.classList.remove("code-editor-measuring");
  holder.style.width = "";
  // A reader whose keyboard was on the code keeps it there: Shift+Enter still runs the cell.
  const focused = placeholder.contains(document.activeElement);
  placeholder.replaceWith(holder);
  holder.after(help);
  if (focused) editor.focus();
  return editor;
}

// How long after Python is ready the editors come in. The bundle is big, and the page's own
// thread parses it: a reader who clicks Run as soon as Python is ready should not wait for that.
const SETTLE_MS = 1000;

/**
 * Call `mount` (which loads the bundle and mounts the page's editors) once Python is ready and
 * quiet: a moment after it is ready, when the page is idle, and never while a run is going on
 * (then after it). A reader who touches the code before that gets an editor at once: each
 * editable part opens its own on first touch.
 */
export function mountWhenQuiet(mount) {
  let done = false;
  const attempt = () => {
    if (done) return;
    if (busy() || pythonState() !== "ready") return; // the next "ready" tries again
    done = true;
    undo();
    mount();
  };
  const idle = globalThis.requestIdleCallback || ((callback) => setTimeout(callback, 50));
  const later = () => setTimeout(() => idle(attempt, { timeout: 1000 }), SETTLE_MS);
  const undo = onState((state) => { if (state === "ready") later(); });
  if (pythonState() === "ready") later();
}
