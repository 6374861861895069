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
// A check's id is its place on the page ("11-2"), so it moves when a check is added above it. Each
// answer therefore also keeps the fingerprint of its question (`question`, the check's
// data-question) and of the option chosen (`value.key`): an answer saved under another id follows
// its question there (moves() below), and one whose question or option changed words is not put back.
import { allWork, saved, update } from "./storage.js";
import { words } from "./review-items.js";

const lessonOf = (id) => String(id).split("-")[0];

/** A stable id for a hints box: the id of the section it is in, and its place there. */
function hintsId(box) {
  const owner = box.parentElement?.closest("[id]");
  const within = owner ? [...owner.querySelectorAll(".hints")].indexOf(box) : 0;
  return `${owner ? owner.id : "page"}/hints-${within + 1}`;
}

/** [from, to] for each saved check answer of `checks` kept under an id its question has left. */
export function moves(answers, checks) {
  const byQuestion = new Map();
  for (const [key, entry] of Object.entries(answers)) {
    if (key.startsWith("check:") && entry && entry.question) byQuestion.set(entry.question, key);
  }
  const found = [];
  for (const check of checks) {
    const to = `check:${check.dataset.check}`;
    const from = check.dataset.question && byQuestion.get(check.dataset.question);
    if (from && from !== to) found.push([from, to]);
  }
  return found;
}

/** Move answers (and their review state) to the ids their questions now have: all read first,
 * then written, so two checks that swapped places swap answers and neither is lost. */
function follow(checks) {
  const work = allWork();
  const found = moves(work.answers, checks).map(([from, to]) =>
    [from, to, work.answers[from], (work.review || {})[from]]);
  const targets = new Set(found.map(([, to]) => to));
  for (const [from] of found) {
    if (targets.has(from)) continue;
    update("answers", from, null);
    if ((work.review || {})[from]) update("review", from, null);
  }
  for (const [, to, entry, state] of found) {
    update("answers", to, null);
    update("answers", to, entry);
    update("review", to, null);
    if (state) update("review", to, state);
  }
}

/** The option button a saved answer chose: by the option's fingerprint when the answer kept one
 * (none if that option's words changed), else by its place (answers saved before fingerprints). */
function chosenButton(check, value) {
  if (value.key) return check.querySelector(`.check-option[data-key="${value.key}"] .option-button`);
  if (!Number.isInteger(value.option)) return null;
  return check.querySelector(`.check-option[data-option="${value.option}"] .option-button`);
}

function restoreCheck(check) {
  const answer = saved("answers", `check:${check.dataset.check}`);
  if (!answer || !answer.value) return;
  if (answer.question && check.dataset.question && answer.question !== check.dataset.question) return;
  const option = chosenButton(check, answer.value);
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
  const checks = [...document.querySelectorAll(".check[data-check]")];
  follow(checks);
  checks.forEach((check) => { restoring.add(check); restoreCheck(check); });
  document.querySelectorAll(".hints").forEach(restoreHints);
  document.querySelectorAll(".prompt[data-prompt]").forEach(restorePrompt);

  document.addEventListener("book:check", (event) => {
    const { check, option, right } = event.detail || {};
    if (check === undefined) return;
    const key = `check:${check}`;
    const box = event.target.closest?.(".check[data-check]");
    const question = box?.dataset.question;
    let before = saved("answers", key);
    if (before && before.question && question && before.question !== question) {
      update("answers", key, null); // an answer to the question that stood here before: not this one's
      before = undefined;
    }
    const optionKey = box?.querySelector(`.check-option[data-option="${option}"]`)?.dataset.key;
    const fields = { lesson: lessonOf(check), value: optionKey ? { option, right, key: optionKey } : { option, right } };
    if (question) fields.question = question;
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
