// Print: a lesson prints as a document. Before printing, every explanation, hint, model answer
// and folded output is opened, and each editor (CodeMirror draws only the lines on screen) is
// shown as a whole <pre> of its text; after printing, the page is put back as it was. The rest
// (buttons gone, code not cut at its scroll box) is book.css's @media print.
const opened = [];
const copies = [];

function before() {
  if (copies.length || opened.length) return;
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
  document.documentElement.classList.remove("printing");
}

export function init() {
  addEventListener("beforeprint", before);
  addEventListener("afterprint", after);
  // Some ways of printing (a PDF made by a headless browser) change the media without the events.
  matchMedia("print").addEventListener("change", (event) => (event.matches ? before() : after()));
}
