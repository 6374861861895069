// The book's code editor: CodeMirror 6 with Python, bundled by esbuild into
// assets/js/editor.bundle.js and imported only when a page first needs an editor.
//
// createEditor(parent, text, {onChange, onRun, label, describedBy})
//   -> {getText, setText, focus, destroy, search, lineCount, lineOf, showLine}
//   onChange(text) after every edit; onRun() on Shift+Enter (and Ctrl/Cmd+Enter).
//
// Colours: one syntax theme for the whole book. The token colours are the CSS variables
// `--tok-*` of site/css/book.css, which the read-only code (Pygments, builder/html.py's
// BookStyle) uses too, so the same code looks the same in an editor and out of one, in the light
// and the dark theme.
//
// Keyboard: Tab indents. Escape lets Tab and Shift+Tab leave the editor (tab-focus mode) until
// the reader types something else in it or comes back to it; `describedBy` names the help line
// that says so.
import { EditorView, basicSetup } from "codemirror";
import { EditorState } from "@codemirror/state";
import { keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";
import { openSearchPanel } from "@codemirror/search";
import { indentUnit, HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { tags as t } from "@lezer/highlight";
import { python } from "@codemirror/lang-python";

const bookHighlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.operatorKeyword, t.definitionKeyword, t.moduleKeyword],
    color: "var(--tok-keyword)" },
  { tag: [t.bool, t.null], color: "var(--tok-constant)" },
  { tag: [t.string, t.special(t.string)], color: "var(--tok-string)" },
  { tag: t.escape, color: "var(--tok-escape)" },
  { tag: [t.comment, t.lineComment], color: "var(--tok-comment)", fontStyle: "italic" },
  { tag: t.number, color: "var(--tok-number)" },
  { tag: [t.function(t.definition(t.variableName)), t.definition(t.className)], color: "var(--tok-def)" },
]);

const bookTheme = EditorView.theme({
  "&": { color: "var(--text)", backgroundColor: "var(--surface)" },
  ".cm-content": { caretColor: "var(--text)" },
  ".cm-cursor, .cm-dropCursor": { borderLeftColor: "var(--text)" },
  ".cm-gutters": { backgroundColor: "var(--panel)", color: "var(--muted)", borderRight: "1px solid var(--rule)" },
  ".cm-activeLine": { backgroundColor: "color-mix(in srgb, var(--accent-soft) 55%, transparent)" },
  ".cm-activeLineGutter": { backgroundColor: "var(--accent-soft)", color: "var(--text)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection": {
    backgroundColor: "color-mix(in srgb, var(--accent) 30%, transparent) !important" },
  ".cm-matchingBracket": { backgroundColor: "color-mix(in srgb, var(--right) 25%, transparent) !important", color: "inherit" },
  ".cm-selectionMatch": { backgroundColor: "color-mix(in srgb, var(--tok-number) 20%, transparent)" },
  ".cm-tooltip": { backgroundColor: "var(--surface)", color: "var(--text)", border: "1px solid var(--rule)" },
  ".cm-tooltip-autocomplete ul li[aria-selected]": { backgroundColor: "var(--accent)", color: "var(--on-accent)" },
  ".cm-panels": { backgroundColor: "var(--panel)", color: "var(--text)" },
  ".cm-foldPlaceholder": { backgroundColor: "var(--panel)", color: "var(--muted)", border: "1px solid var(--rule)" },
});

/** Escape: Tab leaves the editor from now until the reader types in it again. */
const leaveWithTab = [
  keymap.of([{ key: "Escape", run: (view) => { view.setTabFocusMode(true); return false; } }]),
  EditorView.domEventHandlers({
    keydown(event, view) {
      if (["Tab", "Escape", "Shift", "Control", "Alt", "Meta"].includes(event.key)) return false;
      view.setTabFocusMode(false);
      return false;
    },
    focus(event, view) { view.setTabFocusMode(false); return false; },
  }),
];

export function createEditor(parent, text, { onChange = () => {}, onRun = () => {}, label = "Code", describedBy = null } = {}) {
  const run = () => { onRun(); return true; };
  const attributes = { "aria-label": label };
  if (describedBy) attributes["aria-describedby"] = describedBy;
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: text,
      extensions: [
        leaveWithTab,
        keymap.of([
          { key: "Shift-Enter", run },
          { key: "Mod-Enter", run },
          indentWithTab,
        ]),
        basicSetup,
        python(),
        syntaxHighlighting(bookHighlight),
        bookTheme,
        indentUnit.of("    "),
        EditorState.tabSize.of(4),
        // Long lines wrap: a lab's file reads at 1280 px and on a phone without scrolling
        // sideways, and the editor has no scroll box of its own that the keyboard cannot reach.
        EditorView.lineWrapping,
        EditorView.contentAttributes.of(attributes),
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
    /** Open CodeMirror's search panel (the same as Ctrl+F inside the editor). */
    search: () => openSearchPanel(view),
    lineCount: () => view.state.doc.lines,
    /** The number of the first line at or after `from` (wrapping round) that holds `text`, or 0. */
    lineOf(text, from = 1) {
      const doc = view.state.doc;
      for (let i = 0; i < doc.lines; i++) {
        const number = ((from - 1 + i) % doc.lines) + 1;
        if (doc.line(number).text.includes(text)) return number;
      }
      return 0;
    },
    /** The line the cursor is on. */
    cursorLine: () => view.state.doc.lineAt(view.state.selection.main.head).number,
    /** Put the cursor at the start of line `number` and scroll `scroller` (the box the editor
     * sits in) so that the line is near its top. Only that box moves, never the page, unless
     * `focus` is asked for. */
    showLine(number, { scroller = view.dom.parentElement, focus = false } = {}) {
      const line = view.state.doc.line(Math.max(1, Math.min(number, view.state.doc.lines)));
      view.dispatch({ selection: { anchor: line.from } });
      if (focus) view.focus();
      if (!scroller) return;
      // Far lines' heights are estimates until they are drawn (long lines wrap): scroll, let
      // CodeMirror draw and measure what is now in view, and correct, a few times over.
      let rounds = 0;
      const place = () => view.requestMeasure({
        // where the line is in the scroller's content: from the drawn line once it is drawn,
        // from CodeMirror's height estimate until then
        read: () => {
          const drawn = view.coordsAtPos(line.from);
          return drawn ? scroller.scrollTop + drawn.top - scroller.getBoundingClientRect().top
            : view.lineBlockAt(line.from).top;
        },
        write: (top) => {
          const want = Math.max(0, top - 2 * view.defaultLineHeight);
          if (Math.abs(scroller.scrollTop - want) > 1 && rounds++ < 4) {
            scroller.scrollTop = want;
            place();
          }
        },
      });
      place();
    },
  };
}
