// The book's answer to a lab, for the reader who asks for it: offered after the lab's last hint,
// after three runs of its tests without a pass, or once it passes ("See how the book did it").
// Asking takes a second step that says plainly it shows the answer. Only then is the solution
// fetched (solutions/lesson-NN/lab-K.json, written by builder/labs.py; the page's HTML never holds
// it, so scrolling gives nothing away; the offline copy holds the file like any other) and drawn
// as a diff of the reader's file against it, gap by gap.
import { saved, update } from "./storage.js";
import { labKey, GAP_OPEN, GAP_CLOSE } from "./names.js";
import { button, element } from "./dom.js";

const SITE = new URL("../../", import.meta.url);
export const FAILED_RUNS = 3; // runs of the tests without a pass before the answer is offered

const WHY = {
  hints: "You have read every hint. If you are still stuck, the book's answer is here.",
  fails: `Your last ${FAILED_RUNS} runs of the tests did not pass. If you are stuck, the book's answer is here.`,
  passed: "You passed. You can compare your file with the book's.",
};

/** The edit script from lines `a` to lines `b` (longest common subsequence):
 * [{kind: "ctx"|"del"|"add", text, old, new}], old/new the 1-based line numbers ("" if none). */
export function diffLines(a, b) {
  const n = a.length, m = b.length;
  const width = m + 1;
  const table = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * width + j] = a[i] === b[j] ? table[(i + 1) * width + j + 1] + 1
        : Math.max(table[(i + 1) * width + j], table[i * width + j + 1]);
    }
  }
  const rows = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { rows.push({ kind: "ctx", text: a[i], old: i + 1, new: j + 1 }); i++; j++; }
    else if (i < n && (j === m || table[(i + 1) * width + j] >= table[i * width + j + 1])) {
      rows.push({ kind: "del", text: a[i], old: i + 1, new: "" }); i++;
    } else { rows.push({ kind: "add", text: b[j], old: "", new: j + 1 }); j++; }
  }
  return rows;
}

/** The gaps of a file: [{line, body: [lines between the markers]}]; null if a marker is unpaired. */
export function gapsOf(text) {
  const lines = text.split("\n");
  const gaps = [];
  let open = -1;
  lines.forEach((line, index) => {
    if (line.trim() === GAP_OPEN) {
      if (open >= 0) open = -2;
      else if (open === -1) open = index;
    } else if (line.trim() === GAP_CLOSE && open >= 0) {
      gaps.push({ line: open + 1, body: lines.slice(open + 1, index) });
      open = -1;
    }
  });
  return open === -1 ? gaps : null;
}

/** A diff as the book's diff table (the classes of templates/parts/diff.html). */
function table(rows, label) {
  const box = document.createElement("table");
  box.className = "diff solution-diff";
  box.tabIndex = 0;
  box.setAttribute("aria-label", label);
  const head = box.createTHead().insertRow();
  for (const name of ["yours", "book's", "", "line"]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = name;
    if (!name) th.append(element("span", "visually-hidden", "change"));
    head.append(th);
  }
  const body = box.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    if (row.kind === "hunk") {
      tr.className = "diff-hunk";
      const td = tr.insertCell();
      td.colSpan = 4;
      td.textContent = row.text;
      continue;
    }
    tr.className = `diff-${row.kind}`;
    const sign = row.kind === "add" ? "+" : row.kind === "del" ? "-" : " ";
    for (const [cls, text] of [["diff-old", row.old], ["diff-new", row.new], ["diff-sign", sign], ["diff-text", row.text]]) {
      const td = tr.insertCell();
      td.className = cls;
      td.textContent = String(text);
    }
  }
  return box;
}

/** The first `def`/`class` line of some lines, to name a gap by. */
function nameOf(lines) {
  const line = lines.find((text) => /^\s*(async\s+def|def|class)\s+\w+/.test(text));
  return line ? line.trim().replace(/\s*[:(].*$/, "") : "";
}

class Solution {
  constructor(section) {
    this.section = section;
    const data = JSON.parse(section.querySelector(".lab-data").textContent);
    this.path = data.solution;
    const lesson = /^\d+$/.test(String(data.lesson)) ? Number(data.lesson) : String(data.lesson);
    this.key = labKey(lesson, Number(data.lab));
    this.point = data.point ?? `${data.lesson}.${data.lab}`;
    this.starting = section.querySelector(".lab-starting")?.textContent ?? "";
    this.box = element("div", "lab-solution");
    this.box.hidden = true;
    this.why = element("p", "solution-why");
    this.why.setAttribute("aria-live", "polite");
    this.askButton = button("Show the book's answer…", "solution-ask", () => this.ask());
    this.box.append(this.why, this.askButton);
    // under the tests (their verdict is what it follows), before "Run the tests on your machine"
    const place = section.querySelector(".lab-checklist") ?? section.querySelector(".lab-bar");
    (place ?? section.querySelector(".lab-file"))?.after(this.box);
    section.addEventListener("book:hint", (event) => {
      if (event.detail && event.detail.shown >= event.detail.of) this.offer("hints");
    });
    section.addEventListener("book:lab-run", (event) => this.ran(Boolean(event.detail?.passed)));
    const mine = saved("labs", this.key) ?? {};
    if (section.dataset.passed === "true" || mine.passed) this.offer("passed");
    else if ((mine.fails ?? 0) >= FAILED_RUNS) this.offer("fails");
  }

  ran(passed) {
    if (passed) return this.offer("passed");
    const fails = (saved("labs", this.key)?.fails ?? 0) + 1;
    update("labs", this.key, { fails });
    if (fails >= FAILED_RUNS) this.offer("fails");
  }

  /** Show the offer (not the answer): why it is offered, and the button that asks for it. */
  offer(reason) {
    if (this.shown) return;
    if (this.reason === "passed" && reason !== "passed") return;
    this.reason = reason;
    this.box.hidden = false;
    this.why.textContent = WHY[reason];
    this.askButton.textContent = reason === "passed" ? "See how the book did it" : "Show the book's answer…";
    this.confirmBox?.remove();
    this.confirmBox = null;
    this.askButton.hidden = false;
  }

  /** The clear step before the answer: a pass needs none, it gives nothing away. */
  ask() {
    if (this.reason === "passed") return this.show();
    this.askButton.hidden = true;
    const confirm = element("div", "solution-confirm");
    confirm.setAttribute("role", "group");
    confirm.setAttribute("aria-label", "Show the answer?");
    const say = element("p", "", "");
    say.append(element("strong", "", "This shows the answer: "),
      "the book's code for every gap of this lab, next to yours. One more try first often teaches more; the answer stays here for later.");
    const yes = button("Show me the answer", "solution-show", () => this.show());
    const no = button("Not yet", "solution-cancel", () => {
      confirm.remove();
      this.confirmBox = null;
      this.askButton.hidden = false;
      this.askButton.focus();
    });
    confirm.append(say, yes, no);
    this.confirmBox = confirm;
    this.box.append(confirm);
    yes.focus();
  }

  async show() {
    let data;
    try {
      const response = await fetch(new URL(this.path, SITE));
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      data = await response.json();
    } catch (error) {
      this.why.textContent = `The book's answer could not be loaded (${this.path}: ${error.message}). ` +
        "Offline, it is there once the book has been saved for offline study.";
      return;
    }
    this.shown = true;
    this.confirmBox?.remove();
    this.askButton.hidden = true;
    const mine = this.section.bookLab ? this.section.bookLab.currentText() : this.starting;
    const body = element("div", "solution-body");
    const title = element("h3", "solution-title",
      this.reason === "passed" ? `How the book did lab ${this.point}, gap by gap` : `The book's answer to lab ${this.point}, gap by gap`);
    title.tabIndex = -1;
    body.append(title);
    const yours = gapsOf(mine);
    const spec = gapsOf(this.starting) ?? [];
    if (yours && yours.length === data.gaps.length) {
      body.append(element("p", "solution-note",
        "Each gap: lines marked - are yours, lines marked + the book's; lines of the spec you left as they were are not shown."));
      data.gaps.forEach((gap, index) => {
        const given = new Set((spec[index]?.body ?? []).filter((line) => line.trim().startsWith("#")));
        const own = yours[index].body.filter((line) => !given.has(line));
        const book = gap.code ? gap.code.split("\n") : [];
        const rows = diffLines(trim(own), book);
        const changed = rows.filter((row) => row.kind !== "ctx").length;
        const details = document.createElement("details");
        details.className = "solution-gap";
        details.open = index === 0;
        const name = nameOf(book);
        const summary = document.createElement("summary");
        summary.textContent = `Gap ${index + 1} of ${data.gaps.length}, line ${yours[index].line} of your file` +
          (name ? ` (${name})` : "") + (changed ? `: ${changed} line${changed === 1 ? "" : "s"} differ` : ": the same as the book's");
        details.append(summary, scroller(table(rows, `Gap ${index + 1}: your code and the book's`)));
        body.append(details);
      });
    } else {
      // The gap markers were edited away: the whole file against the book's, change by change.
      body.append(element("p", "solution-note",
        "Your file no longer has the gap markers, so here is every place it differs from the book's: lines marked - are yours, + the book's."));
      const hunks = hunksOf(diffLines(mine.split("\n"), data.file.split("\n")));
      hunks.forEach((rows, index) => {
        const details = document.createElement("details");
        details.className = "solution-gap";
        details.open = index === 0;
        const first = rows.find((row) => row.kind !== "ctx");
        const summary = document.createElement("summary");
        summary.textContent = `Difference ${index + 1} of ${hunks.length}, near line ${first.old || first.new} of your file`;
        details.append(summary, scroller(table(rows, `Difference ${index + 1}: your code and the book's`)));
        body.append(details);
      });
      if (!hunks.length) body.append(element("p", "solution-note", "Your file is the book's, line for line."));
    }
    this.why.textContent = "";
    this.box.append(body);
    title.focus();
  }
}

/** A box that scrolls a wide table sideways, so the page itself never does. */
function scroller(child) {
  const box = element("div", "solution-scroll");
  box.append(child);
  return box;
}

function trim(lines) {
  const out = [...lines];
  while (out.length && !out[0].trim()) out.shift();
  while (out.length && !out[out.length - 1].trim()) out.pop();
  return out;
}

/** The changed rows with up to 3 lines of context around each change, cut into separate hunks. */
function hunksOf(rows, context = 3) {
  const keep = rows.map(() => false);
  rows.forEach((row, index) => {
    if (row.kind === "ctx") return;
    for (let k = Math.max(0, index - context); k <= Math.min(rows.length - 1, index + context); k++) keep[k] = true;
  });
  const hunks = [];
  let current = null;
  rows.forEach((row, index) => {
    if (!keep[index]) { current = null; return; }
    if (!current) hunks.push((current = []));
    current.push(row);
  });
  return hunks;
}

export function init() {
  for (const section of document.querySelectorAll("section.lab[data-lab]")) {
    try {
      if (section.querySelector(".lab-data")) section.bookSolution = new Solution(section);
    } catch (error) {
      console.error(`lab ${section.id}: the answer could not be offered: ${error.message}`);
    }
  }
}
