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
 * Put an editor in place of `placeholder` (a <pre> showing the code) holding `text`.
 * Returns the editor: {getText, setText, focus, destroy}.
 */
let helpCount = 0;

export async function mountEditor(placeholder, text, options) {
  const { createEditor } = await loadEditor();
  const holder = document.createElement("div");
  holder.className = "code-editor";
  // How to leave the editor with the keyboard: read out with the editor (aria-describedby),
  // shown under it while it has focus.
  const help = document.createElement("p");
  help.className = "editor-help";
  help.id = `editor-help-${++helpCount}`;
  help.textContent = "Tab indents. To leave the editor: Escape, then Tab. Shift+Enter runs.";
  placeholder.replaceWith(holder);
  holder.after(help);
  const editor = createEditor(holder, text, { ...options, describedBy: help.id });
  holder.bookEditor = editor; // for the browser tests and the benchmark: getText(), setText()
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
