// Print: a lesson prints as a worksheet. The questions stay where they are, each check with its
// options (lettered, as on screen) and each prompt with room to write; the answers go to the end,
// in one section: each check's right letter with every option's explanation, each prompt's hints,
// model answer and common answers, and the recorded outputs that answer a check. Every editor
// (CodeMirror draws only the lines on screen) is shown as a whole <pre> of its text. After
// printing, every part goes back where it was. The rest (buttons gone, code not cut at its scroll
// box, the answers on a page of their own) is book.css's @media print. The whole book to print
// (print.html, book-print.js) is made a worksheet once, page by page: each page's answers after it.
import { element } from "./dom.js";

const opened = [];
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

/** What the whole book calls a page in its answers: "Lesson 11", "Checkpoint B", "Welcome". */
function pageName(article) {
  return article.querySelector(".lesson-number")?.textContent.trim()
    || article.querySelector(".lesson-title")?.textContent.trim() || "";
}

function before() {
  if (copies.length || opened.length || appendices.length) return;
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
  document.querySelectorAll(".code-editor").forEach((holder) => {
    if (!holder.bookEditor) return;
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
