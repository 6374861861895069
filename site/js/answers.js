// Saves what the reader did with checks, prompts and hints, and puts it back on the next visit.
// checks.js announces, this module listens (docs/architecture.md, "Saved work"):
//   book:check  on a .check[data-check], detail {check, option, right}: an option chosen
//   book:hint   on a .hints box, detail {shown, of}: hints revealed so far
//   book:answer on a .prompt, detail {prompt}: its model answer opened
// A check's first answer is kept apart from its latest (`first`: right or not, `firstAt`: when),
// and a prompt's opened model answer with how many words were written then (`revealedWith`):
// the review page (review-items.js) asks again what was got wrong.
// A prompt's written answer is read from its .prompt-input as the reader types.
// Restoring replays the reader's own actions (the option's button, the hint button), so the page
// looks exactly as if they had just done them. Call init() after checks.init().
import { saved, update } from "./storage.js";
import { words } from "./review-items.js";

const lessonOf = (id) => String(id).split("-")[0];

/** A stable id for a hints box: the id of the section it is in, and its place there. */
function hintsId(box) {
  const owner = box.parentElement?.closest("[id]");
  const within = owner ? [...owner.querySelectorAll(".hints")].indexOf(box) : 0;
  return `${owner ? owner.id : "page"}/hints-${within + 1}`;
}

function restoreCheck(check) {
  const answer = saved("answers", `check:${check.dataset.check}`);
  if (!answer || !Number.isInteger(answer.value?.option)) return;
  const option = check.querySelector(`.check-option[data-option="${answer.value.option}"] .option-button`);
  if (option) option.click();
}

function restoreHints(box) {
  const entry = saved("hints", hintsId(box));
  const button = box.querySelector(".hint-next");
  for (let i = 0; entry && button && i < entry.shown && !button.hidden; i++) button.click();
}

function restorePrompt(prompt) {
  const input = prompt.querySelector(".prompt-input");
  const answer = saved("answers", `prompt:${prompt.dataset.prompt}`);
  if (input && answer && typeof answer.value === "string" && !input.value) input.value = answer.value;
}

export function init() {
  const restoring = new Set();
  document.querySelectorAll(".check[data-check]").forEach((check) => { restoring.add(check); restoreCheck(check); });
  document.querySelectorAll(".hints").forEach(restoreHints);
  document.querySelectorAll(".prompt[data-prompt]").forEach(restorePrompt);

  document.addEventListener("book:check", (event) => {
    const { check, option, right } = event.detail || {};
    if (check === undefined) return;
    const key = `check:${check}`;
    const before = saved("answers", key);
    const fields = { lesson: lessonOf(check), value: { option, right } };
    if (!before) Object.assign(fields, { first: right, firstAt: new Date().toISOString() });
    else if (before.first === undefined && before.value) fields.first = before.value.right === true;
    update("answers", key, fields);
  });
  document.addEventListener("book:hint", (event) => {
    const box = event.target.closest?.(".hints");
    if (!box || !Number.isInteger(event.detail?.shown)) return;
    const id = hintsId(box);
    const lesson = (id.match(/-([^-/]+)-[^-/]+\//) || [])[1] || "";
    update("hints", id, { lesson, shown: event.detail.shown });
  });
  document.addEventListener("book:answer", (event) => {
    const prompt = event.target.closest?.(".prompt[data-prompt]");
    if (!prompt) return;
    const id = prompt.dataset.prompt;
    const text = prompt.querySelector(".prompt-input")?.value || "";
    // the fewest words it was ever opened with: opened again later, on a fuller answer, it was
    // still once opened with next to nothing written
    const before = saved("answers", `prompt:${id}`)?.revealedWith;
    const written = Number.isInteger(before) ? Math.min(before, words(text)) : words(text);
    update("answers", `prompt:${id}`, { lesson: lessonOf(id), value: text, revealedWith: written });
  });
  document.addEventListener("input", (event) => {
    const prompt = event.target.closest?.(".prompt[data-prompt]");
    if (!prompt || !event.target.matches(".prompt-input")) return;
    const id = prompt.dataset.prompt;
    update("answers", `prompt:${id}`, { lesson: lessonOf(id), value: event.target.value });
  });
}
