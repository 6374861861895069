// The book's code editor: CodeMirror 6 with Python, bundled by esbuild into
// assets/js/editor.bundle.js and imported only when a page first needs an editor.
//
// createEditor(parent, text, {onChange, onRun, label}) -> {getText, setText, focus, destroy}
//   onChange(text) after every edit; onRun() on Shift+Enter (and Ctrl/Cmd+Enter).
import { EditorView, basicSetup } from "codemirror";
import { EditorState } from "@codemirror/state";
import { keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";
import { indentUnit } from "@codemirror/language";
import { python } from "@codemirror/lang-python";

export function createEditor(parent, text, { onChange = () => {}, onRun = () => {}, label = "Code" } = {}) {
  const run = () => { onRun(); return true; };
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: text,
      extensions: [
        keymap.of([
          { key: "Shift-Enter", run },
          { key: "Mod-Enter", run },
          indentWithTab,
        ]),
        basicSetup,
        python(),
        indentUnit.of("    "),
        EditorState.tabSize.of(4),
        EditorView.contentAttributes.of({ "aria-label": label }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    getText: () => view.state.doc.toString(),
    setText(next) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: next } });
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
