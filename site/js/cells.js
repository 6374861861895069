// Code cells: a Run button (and Shift+Enter), Stop, output streamed in as text, and for editable
// cells an editor with Reset. A cell marked data-lab=K runs against the reader's harness once
// their lab K passed, if they choose to (a switch beside Run); otherwise against the book's.
import { request, stop, DEFAULT_TIMEOUT } from "./python.js";
import { mountEditor, mountWhenQuiet } from "./editors.js";
import { saved, update, hashText, onChange } from "./storage.js";
import { button, steadyButton } from "./dom.js";
import { CELL_NAME, labKey } from "./names.js";

/** The output area: text only, with a note line for stops and failures. What it is given is
 * already capped where it was printed (cellrun.OUTPUT_CAP, whose last line says so). */
class Output {
  constructor(pre) {
    this.pre = pre;
  }
  clear() {
    this.pre.textContent = "";
  }
  append(text) {
    this.pre.append(document.createTextNode(text));
  }
  set(text) {
    this.clear();
    this.append(text);
  }
  note(line) {
    const note = document.createElement("span");
    note.className = "output-note";
    const text = this.pre.textContent;
    note.textContent = (text && !text.endsWith("\n") ? "\n" : "") + line + "\n";
    this.pre.append(note);
  }
}

class Cell {
  constructor(element) {
    this.element = element;
    this.id = element.dataset.cell;
    // A lesson is a number (11); a checkpoint or side quest keeps its id ("A").
    const lesson = element.dataset.lesson;
    this.lesson = /^\d+$/.test(lesson) ? Number(lesson) : lesson;
    this.timeout = Number(element.dataset.timeout) || DEFAULT_TIMEOUT;
    this.lab = element.dataset.lab ? Number(element.dataset.lab) : null;
    this.editable = element.hasAttribute("data-editable");
    const data = JSON.parse(element.querySelector(".cell-data").textContent);
    this.source = data.source;
    this.code = element.querySelector(".cell-code");
    let outputPre = element.querySelector(".cell-output");
    if (!outputPre) {
      outputPre = document.createElement("pre");
      outputPre.className = "cell-output";
      outputPre.tabIndex = 0;
      element.append(outputPre);
    }
    outputPre.setAttribute("aria-live", "polite");
    this.output = new Output(outputPre);
    this.editor = null;
    this.running = false;
    this.build();
    if (this.editable) this.restore();
  }

  /** A cell that answers a check or prompt shows its output once that is answered or it runs. */
  unfold() {
    const fold = this.element.querySelector("details.cell-answer");
    if (!fold) return;
    fold.open = true;
    const summary = fold.querySelector("summary");
    if (summary) summary.textContent = "What it printed";
  }

  build() {
    const bar = document.createElement("div");
    bar.className = "cell-bar";
    this.runButton = steadyButton("Run", "cell-run", () => this.run());
    this.runButton.title = "Run this cell (Shift+Enter)";
    this.stopButton = button("Stop", "cell-stop", () => this.stop());
    this.stopButton.hidden = true;
    bar.append(this.runButton, this.stopButton);
    if (this.editable) {
      this.resetButton = button("Reset", "cell-reset", () => this.reset());
      this.resetButton.title = "Put the book's code back";
      bar.append(this.resetButton);
    }
    if (this.lab !== null) bar.append(this.makeSwitch());
    this.stateLabel = document.createElement("span");
    this.stateLabel.className = "cell-state";
    this.stateLabel.setAttribute("role", "status");   // "done", "ended with an error": announced
    bar.append(this.stateLabel);
    this.code.after(bar);
    this.bar = bar;
    this.code.tabIndex = 0;
    this.code.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.shiftKey || event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        this.run();
      }
    });
    if (this.editable) {
      // The first touch of the code brings the editor in (if the page has not already).
      const open = () => this.openEditor().then(() => this.editor && this.editor.focus());
      this.code.addEventListener("pointerdown", open, { once: true });
      this.code.addEventListener("keydown", (event) => { if (!event.shiftKey && event.key.length === 1) open(); }, { once: true });
    }
  }

  labKey() {
    return labKey(this.lesson, this.lab);
  }

  makeSwitch() {
    const group = document.createElement("span");
    group.className = "harness-switch";
    group.setAttribute("role", "group");
    group.setAttribute("aria-label", "Which harness this cell imports");
    this.mineButton = button("your harness", "harness-mine", () => this.choose(true));
    this.bookButton = button("the book's harness", "harness-book", () => this.choose(false));
    group.append("Run with: ", this.mineButton, this.bookButton);
    this.switch = group;
    this.refreshSwitch();
    // "all": an import replaced every entry (storage.js replaceAll), this lab's among them.
    onChange((section, id) => { if (section === "all" || (section === "labs" && id === this.labKey())) this.refreshSwitch(); });
    return group;
  }

  choose(mine) {
    update("labs", this.labKey(), { useMine: mine });
  }

  refreshSwitch() {
    const lab = saved("labs", this.labKey());
    const passed = Boolean(lab && lab.passed && lab.passedCode);
    this.switch.hidden = !passed;
    const mine = passed && lab.useMine !== false;
    this.mineButton.setAttribute("aria-pressed", String(mine));
    this.bookButton.setAttribute("aria-pressed", String(!mine));
    this.element.dataset.harness = mine ? "mine" : "book";
  }

  /** The reader's harness text when this cell is to run against it, else null (the book's). */
  harnessText() {
    if (this.lab === null) return null;
    const lab = saved("labs", this.labKey());
    return lab && lab.passed && lab.passedCode && lab.useMine !== false ? lab.passedCode : null;
  }

  restore() {
    const mine = saved("cells", this.id);
    if (!mine || typeof mine.code !== "string") return;
    this.code.textContent = mine.code; // plain text until the editor arrives
    if (mine.base && mine.base !== hashText(this.source)) this.offerNewVersion();
    this.openEditor();
  }

  offerNewVersion() {
    const notice = document.createElement("p");
    notice.className = "cell-notice";
    notice.textContent = "The book's version of this cell has changed since you edited it. Your code is kept. ";
    notice.append(button("Use the book's new version", "cell-take-new", () => { this.reset(); notice.remove(); }),
      button("Keep mine", "cell-keep", () => {
        update("cells", this.id, { base: hashText(this.source) });
        notice.remove();
      }));
    this.element.prepend(notice);
  }

  openEditor() {
    if (!this.editable) return Promise.resolve();
    this.opening ??= mountEditor(this.code, this.currentText(), {
      label: `Code of cell ${this.id}`,
      onRun: () => this.run(),
      onChange: (text) => this.edited(text),
    }).then((editor) => { this.editor = editor; });
    return this.opening;
  }

  edited(text) {
    if (text === this.source) update("cells", this.id, null);
    else update("cells", this.id, { code: text, base: hashText(this.source) });
  }

  currentText() {
    if (this.editor) return this.editor.getText();
    const mine = this.editable ? saved("cells", this.id) : null;
    return mine && typeof mine.code === "string" ? mine.code : this.source;
  }

  reset() {
    if (this.editor) this.editor.setText(this.source);
    else this.code.textContent = this.source;
    update("cells", this.id, null);
  }

  setState(state, label) {
    this.element.dataset.state = state;
    this.stateLabel.textContent = label;
  }

  async run() {
    this.unfold();
    if (this.running) return;
    this.running = true;
    this.cancelled = null;
    this.started = false;
    this.runButton.setAttribute("aria-disabled", "true");   // not .disabled: focus stays on it
    this.stopButton.hidden = false;
    this.output.clear();
    this.setState("queued", "waiting for Python…");
    const harness = this.harnessText();
    const result = await request(
      { type: "run", name: CELL_NAME, lesson: this.lesson, source: this.currentText(), harness },
      {
        timeout: this.timeout,
        onOutput: (text) => this.output.append(text),
        cancelled: () => this.cancelled,   // Stop while it waited its turn: never posted
        onStart: () => {
          this.started = true;
          this.setState("running", harness === null ? "running…" : "running against your harness…");
        },
      });
    this.finish(result);
  }

  finish(result) {
    this.running = false;
    this.runButton.removeAttribute("aria-disabled");
    this.stopButton.hidden = true;
    if (result.type === "done") {
      this.output.set(result.output);
      if (result.stoppedBy) {
        this.output.note(`[Stopped: ${result.stoppedBy}.]`);
        this.setState("stopped", "stopped");
      } else {
        this.setState(result.error ? "error" : "done", result.error ? "ended with an error" : "done");
      }
    } else if (result.type === "stopped") {
      this.output.note(`[Stopped: ${result.reason}. Python was restarted.]`);
      this.setState("stopped", "stopped");
    } else if (result.type === "cancelled") {
      this.output.note(`[Stopped before it ran: ${result.reason}.]`);
      this.setState("stopped", "stopped");
    } else {
      this.output.note(`[Could not run: ${result.reason}]`);
      this.setState("failed", "could not run");
    }
  }

  stop() {
    if (!this.running) return;
    if (this.started) stop("you pressed Stop");
    else this.cancelled = "you pressed Stop";
  }
}

export const cells = [];

export function init() {
  for (const element of document.querySelectorAll(".cell[data-cell]")) {
    try {
      cells.push(new Cell(element));
    } catch (error) {
      console.error(`cell ${element.dataset.cell}: ${error.message}`);
    }
  }
  // A question answered unfolds the output of the cell that answers it (answers.js replays
  // saved answers through the same events, so a reload keeps them open).
  const unfold = (id) => cells.filter((cell) => cell.element.dataset.answers === id)
    .forEach((cell) => cell.unfold());
  document.addEventListener("book:check", (event) => unfold(`check-${event.detail.check}`));
  document.addEventListener("book:answer", (event) => unfold(`prompt-${event.detail.prompt}`));
  // Once Python is up and quiet, the editor bundle comes in and every editable cell gets its editor.
  if (cells.some((cell) => cell.editable)) {
    mountWhenQuiet(() => cells.forEach((cell) => cell.openEditor()));
  }
}
