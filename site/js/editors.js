// Loads the CodeMirror bundle (assets/js/editor.bundle.js) only when a page first needs an
// editor, so the bytes before Python stay small. Until then the page shows the code as text.
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

/** Load the bundle once the page is idle, so that the first edit does not wait for it. */
export function preloadWhenIdle() {
  const idle = globalThis.requestIdleCallback || ((callback) => setTimeout(callback, 200));
  idle(() => loadEditor());
}
