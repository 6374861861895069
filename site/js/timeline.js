// A transcript you can step through. A cell that prints lab.timeline(record, calls) prints one
// step per model call: the record as it stood beside what that call was sent (lab/messages.py).
// This draws such an output as a stepper: one call at a time, Previous and Next (and ← →), and
// "step k of n" announced. The printed text stays in the page as it is: without JavaScript it is
// read whole, and "Whole output" shows it again. A cell run again is drawn again when its new
// output holds a whole timeline.
import { button } from "./dom.js";

const HEAD = /^Timeline of (\d+) model calls?;/;
const STEP = /^── (?:call|step) (\d+) of (\d+): (.*?) ─*$/;
const END = "── end of timeline";
const COLUMNS = /^record\b.*   view\b/;
const MARKS = { "=": "tl-kept", "+": "tl-only-view", "-": "tl-not-sent", "~": "tl-moved" };

/** The parts of a printed timeline: the lines before it, its two opening lines, its steps (each a
 * list of lines, heading first), its end and what follows; null when `text` holds none, or not a
 * whole one (a cell still printing). */
export function parse(text) {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();   // the newline that ends the output
  const start = lines.findIndex((line) => HEAD.test(line));
  if (start < 0) return null;
  const total = Number(HEAD.exec(lines[start])[1]);
  const end = lines.indexOf(END, start);
  if (end < 0 || total < 1) return null;
  const steps = [];
  for (let i = start + 2; i < end; i++) {
    const step = STEP.exec(lines[i]);
    if (step) {
      if (Number(step[1]) !== steps.length + 1 || Number(step[2]) !== total) return null;
      // "call k of n" names its call by k; a step of a slice names it in its summary.
      const call = lines[i].startsWith("── call ") ? `call ${step[1]}, ` : "";
      const held = /record(?: held)? (\d+)/.exec(step[3]);
      steps.push({ lines: [lines[i]], summary: step[3], call, held: held ? Number(held[1]) : null });
    } else if (steps.length) {
      steps[steps.length - 1].lines.push(lines[i]);
    } else {
      return null;
    }
  }
  if (steps.length !== total) return null;
  return {
    before: lines.slice(0, start), opening: lines.slice(start, start + 2), steps,
    end: lines[end], after: lines.slice(end + 1),
  };
}

/** Where a row's mark sits: one space after the record's column, whose width the step's column
 * heading gives ("record, as it stood" or "record", padded, then three spaces, then "view"). */
function markColumn(lines) {
  const heading = lines.find((line) => COLUMNS.test(line));
  const view = heading ? heading.indexOf("   view") + 3 : -1;
  return view > 0 ? view - 2 : -1;
}

/** A step's lines as they are printed, side by side, each with the class that colours it. The
 * record's rows from number `fresh` on (counted from 0) came after the call before: "tl-new". */
function sideBySide(lines, fresh = Infinity) {
  const column = markColumn(lines);
  let kept = 0;   // the record's rows met so far
  return lines.map((text) => {
    let cls = "";
    if (STEP.test(text) || text === END) cls = "tl-step";
    else if (text.startsWith("reply: ")) cls = "tl-reply";
    else if (column > 0 && MARKS[text[column]] && text[column - 1] === " " && text[column + 1] === " ") {
      cls = MARKS[text[column]];
      if (text.slice(0, column - 1).trim() && kept++ >= fresh) cls += " tl-new";
    }
    return { text, cls };
  });
}

/** The same step for a narrow screen: the record's column, then the view's, one above the other,
 * each row led by its mark. Every cell is the printed one, character for character. */
function stacked(lines, fresh = Infinity) {
  const column = markColumn(lines);
  const heading = lines.findIndex((line) => COLUMNS.test(line));
  const reply = lines.findIndex((line) => line.startsWith("reply: "));
  if (column < 1 || heading < 0 || reply < heading) return sideBySide(lines);
  const rows = lines.slice(heading + 1, reply).map((line) => ({
    left: line.slice(0, column - 1).trimEnd(), mark: line[column] || " ", right: line.slice(column + 2),
  }));
  const row = (mark, cell, young = false) => ({
    text: `${mark} ${cell}`, cls: (MARKS[mark] || "") + (young ? " tl-new" : ""),
  });
  return [
    ...sideBySide(lines.slice(0, heading)),
    { text: lines[heading].slice(0, column - 1).trimEnd(), cls: "tl-columns" },
    ...rows.filter((r) => r.left).map((r, k) => row(r.mark, r.left, k >= fresh)),
    { text: lines[heading].slice(column + 2), cls: "tl-columns" },
    ...rows.filter((r) => r.right).map((r) => row(r.mark, r.right)),
    ...sideBySide(lines.slice(reply)),
  ];
}

function lineNode({ text, cls }) {
  const span = document.createElement("span");
  span.textContent = text + "\n";
  if (cls) span.className = cls;
  return span;
}

const NARROW = "(max-width: 40rem)";   // book.css's phone width: the columns go one above the other

class Stepper {
  constructor(pre) {
    this.pre = pre;
    this.root = null;
    this.index = 0;
    this.text = null;
  }

  /** Draw the stepper for the output as it is now, or take it away if it holds no timeline. */
  refresh() {
    const text = this.pre.textContent;
    if (text === this.text) return;
    this.text = text;
    const parts = parse(text);
    if (!parts) {
      this.remove();
      return;
    }
    this.parts = parts;
    this.pre.classList.add("has-timeline");   // its columns stay lined up when shown whole
    this.index = Math.min(this.index, parts.steps.length - 1);
    if (!this.root) this.build();
    this.pre.hidden = this.stepping;
    this.show();
  }

  remove() {
    this.pre.classList.remove("has-timeline");
    if (this.root) this.root.remove();
    this.root = null;
    this.pre.hidden = false;
  }

  build() {
    this.stepping = true;
    const root = document.createElement("div");
    root.className = "timeline";
    // A group: ← and → step in its bar and scroll its text, never turn the page (pagekeys.js).
    root.setAttribute("role", "group");
    root.setAttribute("aria-label", "Timeline, one model call at a time");
    const bar = document.createElement("div");
    bar.className = "timeline-bar";
    this.prev = button("Previous", "timeline-prev", () => this.go(this.index - 1));
    this.next = button("Next", "timeline-next", () => this.go(this.index + 1));
    this.count = document.createElement("span");
    this.count.className = "timeline-count";
    this.count.setAttribute("aria-live", "polite");
    this.whole = button("Whole output", "timeline-whole", () => this.toggle());
    this.whole.setAttribute("aria-pressed", "false");
    bar.append(this.prev, this.count, this.next, this.whole);
    bar.addEventListener("keydown", (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey || event.shiftKey) return;
      const to = { ArrowLeft: this.index - 1, ArrowRight: this.index + 1, Home: 0,
        End: this.parts.steps.length - 1 }[event.key];
      if (to === undefined || !this.stepping) return;
      event.preventDefault();
      this.go(to);
    });
    this.view = document.createElement("pre");
    this.view.className = "timeline-view";
    this.view.tabIndex = 0;               // it may scroll sideways: reachable from the keyboard
    this.view.setAttribute("aria-label", "The current step of the timeline");
    root.append(bar, this.view);
    this.pre.before(root);
    this.root = root;
  }

  go(index) {
    if (index < 0 || index >= this.parts.steps.length || index === this.index) return;
    this.index = index;
    this.show();
  }

  toggle() {
    this.stepping = !this.stepping;
    this.whole.setAttribute("aria-pressed", String(!this.stepping));
    this.pre.hidden = this.stepping;
    this.view.hidden = !this.stepping;
    this.show();
  }

  /** The output with only the current step of its timeline shown, and the bar to match. */
  show() {
    const { before, opening, steps, end, after } = this.parts;
    const n = steps.length;
    const step = steps[this.index];
    this.root.dataset.step = String(this.index + 1);
    for (const [control, off] of [[this.prev, this.index === 0], [this.next, this.index === n - 1]]) {
      control.hidden = !this.stepping;
      if (off) control.setAttribute("aria-disabled", "true");   // not .disabled: focus stays
      else control.removeAttribute("aria-disabled");
    }
    // What the record gained since the call before: shown in bold, and said.
    const last = this.index > 0 ? steps[this.index - 1].held : null;
    const fresh = last !== null && step.held !== null ? last : Infinity;
    const gained = fresh === Infinity ? "" : `; ${step.held - last} new in the record, in bold`;
    this.count.textContent = this.stepping
      ? `step ${this.index + 1} of ${n}: ${step.call}${step.summary}${gained}`
      : `all ${n} steps`;
    const narrow = matchMedia(NARROW).matches;
    this.root.dataset.layout = narrow ? "stacked" : "side";
    this.view.replaceChildren(...[
      ...sideBySide([...before, ...opening]), ...(narrow ? stacked : sideBySide)(step.lines, fresh),
      ...sideBySide([end, ...after])].map(lineNode));
  }
}

/** Find every cell output holding a timeline and draw it as a stepper; draw it again whenever
 * the output changes (the cell was run). */
export function init() {
  for (const pre of document.querySelectorAll("pre.cell-output")) {
    const stepper = new Stepper(pre);
    stepper.refresh();
    matchMedia(NARROW).addEventListener("change", () => stepper.root && stepper.show());
    let waiting = 0;
    new MutationObserver(() => {
      clearTimeout(waiting);
      waiting = setTimeout(() => stepper.refresh(), 30);
    }).observe(pre, { childList: true, characterData: true, subtree: true });
  }
}
