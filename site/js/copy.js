// A Copy button on every code block, cell and lab file. It copies exactly the code the reader
// sees: a cell's or a lab's editor text once the editor is in (the reader's edits included),
// else the text of the <pre>. Put in after cells.js and labs.js built their bars.
import { button } from "./dom.js";

/** The text a copy button copies, for the tests: the same function the button calls. */
export function codeOf(owner) {
  const editor = owner.querySelector(".code-editor");
  if (editor && editor.bookEditor) return editor.bookEditor.getText();
  const pre = owner.matches("pre") ? owner : owner.querySelector("pre.cell-code, pre.lab-starting");
  return pre ? pre.textContent : "";
}

async function write(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No asynchronous clipboard (an insecure origin, or permission refused): the old way.
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.append(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    return done;
  }
}

function copyButton(owner, what) {
  const copy = button("Copy", "copy-button", async () => {
    const done = await write(codeOf(owner));
    copy.textContent = done ? "Copied" : "Could not copy";
    clearTimeout(copy.timer);
    copy.timer = setTimeout(() => { copy.textContent = "Copy"; }, 1600);
  });
  copy.setAttribute("aria-label", `Copy ${what}`);
  return copy;
}

export function init(root = document) {
  root.querySelectorAll("pre.code").forEach((pre) => {
    if (pre.parentElement.classList.contains("code-block")) return;
    const block = document.createElement("div");
    block.className = "code-block";
    pre.replaceWith(block);
    block.append(pre, copyButton(pre, "this code"));
  });
  root.querySelectorAll(".cell[data-cell]").forEach((cell) => {
    const bar = cell.querySelector(".cell-bar");
    if (!bar || bar.querySelector(".copy-button")) return;
    bar.querySelector(".cell-state").before(copyButton(cell, "the cell's code"));
  });
  root.querySelectorAll("section.lab").forEach((lab) => {
    const file = lab.querySelector(".lab-file");
    if (!file || file.querySelector(".copy-button")) return;
    const bar = document.createElement("div");
    bar.className = "file-bar";
    bar.append(copyButton(file, "harness.py"));
    file.querySelector("h3").after(bar);
  });
}
