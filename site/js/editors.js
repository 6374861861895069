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
export async function mountEditor(placeholder, text, options) {
  const { createEditor } = await loadEditor();
  const holder = document.createElement("div");
  holder.className = "code-editor";
  placeholder.replaceWith(holder);
  const editor = createEditor(holder, text, options);
  holder.bookEditor = editor; // for the browser tests and the benchmark: getText(), setText()
  return editor;
}

/** Load the bundle once the page is idle, so that the first edit does not wait for it. */
export function preloadWhenIdle() {
  const idle = globalThis.requestIdleCallback || ((callback) => setTimeout(callback, 200));
  idle(() => loadEditor());
}
