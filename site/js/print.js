// Print: a lesson prints as a worksheet. The questions stay where they are, each check with its
// options (lettered, as on screen) and each prompt with room to write; the answers go to the end,
// in one section: each check's right letter with every option's explanation, each prompt's hints,
// model answer and common answers, and the recorded outputs that answer a check. Every editor
// (CodeMirror draws only the lines on screen) is shown as a whole <pre> of its text. After
// printing, every part goes back where it was. The rest (buttons gone, code not cut at its scroll
// box, the answers on a page of their own) is book.css's @media print. The whole book to print
// (print.html, book-print.js) is made a worksheet once, page by page: each page's answers after it.
import { element } from "./dom.js";
import { GAP_OPEN, GAP_CLOSE } from "./names.js";

const opened = [];
const gapped = [];  // the labs whose file is printed as its gaps: [its .lab-file, the note, the gaps]
const copies = [];
const moved = [];   // [node, its parent, the node after it]: where each moved part goes back
const appendices = [];

const letter = (index) => String.fromCharCode(65 + index);

/** Move `node` to the end of `into`, remembering where it was. */
function move(node, into) {
  moved.push([node, node.parentNode, node.nextSibling]);
  into.append(node);
}

/** The answers section: built from the page's checks, prompts and answering outputs. `of`
 * names the page in the whole book ("Lesson 11"), where every page has a section of its own. */
function buildAnswers(lesson, of = "") {
  const section = element("section", "print-answers");
  section.append(element("h2", "", of ? `Answers and explanations: ${of}` : "Answers and explanations"));
  const where = of ? `at the end of ${of}` : "at the end";
  lesson.querySelectorAll("section.check").forEach((check, index) => {
    const block = element("div", "print-answer");
    const options = [...check.querySelectorAll(".check-option")];
    const right = options.findIndex((option) => option.hasAttribute("data-right"));
    block.append(element("h3", "", `Check ${index + 1}: ${right >= 0 ? letter(right) : "?"}`));
    options.forEach((option, k) => {
      const why = option.querySelector(".option-explain");
      if (!why) return;
      block.append(element("p", "print-option", `${letter(k)}.`));
      move(why, block);
    });
    const longer = check.querySelector(".check-explain");
    if (longer) move(longer, block);
    check.append(element("p", "print-see", `The answer is ${where}, under Check ${index + 1}.`));
    section.append(block);
  });
  lesson.querySelectorAll("section.prompt").forEach((prompt, index) => {
    const block = element("div", "print-answer");
    block.append(element("h3", "", `Write it yourself ${index + 1}`));
    for (const part of prompt.querySelectorAll(":scope > .hints, :scope > .prompt-answer, :scope > .prompt-misses")) {
      move(part, block);
    }
    prompt.append(element("p", "print-see", `Hints and the model answer are ${where}, under Write it yourself ${index + 1}.`));
    section.append(block);
  });
  lesson.querySelectorAll(".cell-answer").forEach((output) => {
    const cell = output.closest(".cell");
    const block = element("div", "print-answer");
    block.append(element("h3", "", `What cell ${cell?.dataset.cell ?? ""} printed`));
    move(output, block);
    section.append(block);
  });
  return section;
}

/** What a printed lab shows of harness.py: each gap, from the line before it to its end, with
 * line numbers; the whole file is one download away (a lab's starting file runs to 800 lines). */
export function gapsOf(text) {
  const lines = text.replace(/\n$/, "").split("\n");
  const width = String(lines.length).length;
  const numbered = (k) => `${String(k + 1).padStart(width)}  ${lines[k]}`;
  const parts = [];
  let open = -1;
  lines.forEach((line, k) => {
    if (line.trim() === GAP_OPEN) open = k;
    else if (line.trim() === GAP_CLOSE && open >= 0) {
      let before = open - 1;
      while (before >= 0 && !lines[before].trim()) before -= 1;
      const from = before >= 0 ? before : open;
      parts.push(lines.slice(from, k + 1).map((_, i) => numbered(from + i)).join("\n"));
      open = -1;
    }
  });
  return { gaps: parts.length, lines: lines.length, text: parts.join("\n\u22ee\n") };
}

/** Print a lab's file as its gaps, not whole: the reader's own text if an editor holds it, else
 * the starting file. Where the lab shows what changed since the last lab, that diff already holds
 * every gap, numbered as in the file, and the gaps are not printed twice. A note says where the
 * whole file is. */
function printGaps(lab) {
  const file = lab.querySelector(".lab-file");
  const holder = file?.querySelector(".code-editor");
  const text = holder?.bookEditor ? holder.bookEditor.getText() : file?.querySelector(".lab-starting")?.textContent;
  if (!file || text == null) return;
  const { gaps, lines, text: shown } = gapsOf(text);
  const link = lab.querySelector(".lab-local a[download]");
  const where = link ? `in the lab folder, ${link.getAttribute("href")}` : "in the lab folder";
  const starting = lab.bookLab?.starting ?? file.querySelector(".lab-starting")?.textContent;
  const edited = text !== starting;
  const inDiff = lab.querySelector(".lab-changes") && !edited;
  const what = !gaps ? "It has no gap left to fill."
    : inDiff ? `Its ${gaps === 1 ? "gap is" : `${gaps} gaps are`} in the changes above, numbered as in the file.`
    : `Printed here: ${edited ? "your" : "its"} ${gaps === 1 ? "gap" : `${gaps} gaps`}, each from the line before it, numbered as in the file.`;
  const note = element("p", "print-see", `The whole file (${lines} lines) is ${where}. ${what}`);
  const shownGaps = gaps && !inDiff ? [element("pre", "print-gaps hl", shown)] : [];
  file.querySelector("h3")?.after(note, ...shownGaps);
  file.classList.add("print-gapped");
  gapped.push([file, note, ...shownGaps]);
}

/** What the whole book calls a page in its answers: "Lesson 11", "Checkpoint B", "Welcome". */
function pageName(article) {
  return article.querySelector(".lesson-number")?.textContent.trim()
    || article.querySelector(".lesson-title")?.textContent.trim() || "";
}

function before() {
  if (copies.length || opened.length || appendices.length || gapped.length) return;
  // A page with no question (the welcome page) gets no answers section.
  const answer = (article, of) => {
    const section = buildAnswers(article, of);
    if (section.querySelector(".print-answer")) appendices.push(article.appendChild(section));
  };
  const book = document.querySelectorAll("article.book-page");
  if (book.length) book.forEach((article) => answer(article, pageName(article)));
  else document.querySelectorAll("article.lesson").forEach((lesson) => answer(lesson, ""));
  document.querySelectorAll("details:not([open])").forEach((details) => {
    details.open = true;
    opened.push(details);
  });
  document.querySelectorAll("section.lab").forEach(printGaps);
  document.querySelectorAll(".code-editor").forEach((holder) => {
    if (!holder.bookEditor || holder.closest(".lab-file")) return;
    const pre = document.createElement("pre");
    pre.className = "print-copy hl";
    pre.textContent = holder.bookEditor.getText();
    holder.after(pre);
    copies.push(pre);
  });
  document.documentElement.classList.add("printing");
}

function after() {
  opened.splice(0).forEach((details) => { details.open = false; });
  copies.splice(0).forEach((pre) => pre.remove());
  gapped.splice(0).forEach(([file, ...added]) => {
    added.forEach((node) => node.remove());
    file.classList.remove("print-gapped");
  });
  // Back in reverse order, so that each node's neighbour is already home when it is put back.
  moved.splice(0).reverse().forEach(([node, parent, next]) => parent.insertBefore(node, next));
  document.querySelectorAll(".print-see").forEach((note) => note.remove());
  appendices.splice(0).forEach((section) => section.remove());
  document.documentElement.classList.remove("printing");
}

/** The whole book to print: a worksheet from the start, and it stays one (it has no other use). */
export function worksheet() {
  before();
}

export function init() {
  addEventListener("beforeprint", before);
  addEventListener("afterprint", after);
  // Some ways of printing (a PDF made by a headless browser) change the media without the events.
  matchMedia("print").addEventListener("change", (event) => (event.matches ? before() : after()));
}
