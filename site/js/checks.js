// The interactive parts of a page that need no Python: multiple-choice checks and hints.
//
// Without JavaScript a check is a list of options, each with its explanation in a <details>,
// and the hints are <details> too. This module turns each option into a toggle button
// (aria-pressed): choosing one shows that option's explanation and says, in an aria-live
// verdict, whether it was the right one; the right one also reveals the longer explanation.
// Hints are revealed one at a time by a button. A prompt's model answer (and its common answers)
// wait behind a button until the reader has written something of their own. Each choice is
// announced to the rest of the page as a `book:check` event on the check, each hint as
// `book:hint`, and each revealed answer as `book:answer` on the prompt.

const RIGHT = "Right.";
const WRONG = "Not quite. Read why, then try another.";
const EXPLORING = "Right, and still answered: you are reading why another option misses.";

function setupCheck(check) {
  if (check.hasAttribute("data-live")) return;
  check.setAttribute("data-live", "");
  const question = check.querySelector(".check-question");
  const list = check.querySelector(".check-options");
  // The options are a group of toggle buttons named by the question; the list items step aside
  // (role="none"), since a list item must sit in a list.
  list.setAttribute("role", "group");
  list.querySelectorAll(":scope > li").forEach((item) => item.setAttribute("role", "none"));
  if (question && question.id) list.setAttribute("aria-labelledby", question.id);
  const explain = check.querySelector(".check-explain");
  if (explain) explain.hidden = true;
  check.querySelectorAll(".check-option").forEach((option, index) => {
    const text = option.querySelector(".option-text");
    const details = option.querySelector(".option-explain");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "option-button";
    button.setAttribute("aria-pressed", "false");
    const letter = document.createElement("span");
    letter.className = "option-letter";
    letter.setAttribute("aria-hidden", "true");
    letter.textContent = String.fromCharCode(65 + index);
    const body = document.createElement("span");
    body.className = "option-body";
    body.append(...text.childNodes);
    button.append(letter, body);
    text.replaceChildren(button);
    if (details) {
      details.id = details.id || `${check.id}-why-${index + 1}`;
      details.hidden = true;
      button.setAttribute("aria-controls", details.id);
    }
    button.addEventListener("click", () => choose(check, option));
  });
}

function choose(check, chosen) {
  const right = chosen.hasAttribute("data-right");
  // Once answered right, another option is read, not chosen: its explanation opens, and the
  // check, its verdict, the saved answer and the contents rail's tick stay as they were.
  const exploring = check.dataset.state === "right" && !right;
  check.querySelectorAll(".check-option").forEach((option) => {
    const pressed = option === chosen;
    option.querySelector(".option-button").setAttribute("aria-pressed", String(pressed));
    option.classList.toggle("is-chosen", pressed);
    const details = option.querySelector(".option-explain");
    if (details) {
      details.hidden = !pressed;
      details.open = pressed;
    }
  });
  const verdict = check.querySelector(".check-verdict");
  if (exploring) {
    verdict.textContent = EXPLORING;
    return;
  }
  chosen.classList.add(right ? "is-right" : "is-wrong");
  verdict.textContent = right ? RIGHT : WRONG;
  verdict.classList.toggle("verdict-right", right);
  verdict.classList.toggle("verdict-wrong", !right);
  check.dataset.state = right ? "right" : "wrong";
  const explain = check.querySelector(".check-explain");
  if (explain && right) {
    explain.hidden = false;
    explain.open = true;
  }
  check.dispatchEvent(new CustomEvent("book:check", {
    bubbles: true,
    detail: { check: check.dataset.check, option: Number(chosen.dataset.option), right },
  }));
}

function setupHints(box) {
  if (box.hasAttribute("data-live")) return;
  const hints = [...box.querySelectorAll(":scope > .hint")];
  if (!hints.length) return;
  box.setAttribute("data-live", "");
  hints.forEach((hint) => { hint.hidden = true; });
  const button = document.createElement("button");
  button.type = "button";
  button.className = "hint-next";
  const label = () => `Show hint ${shown + 1} of ${hints.length}`;
  let shown = 0;
  button.textContent = label();
  button.addEventListener("click", () => {
    const hint = hints[shown];
    hint.hidden = false;
    hint.open = true;
    shown += 1;
    box.dispatchEvent(new CustomEvent("book:hint", { bubbles: true, detail: { shown, of: hints.length } }));
    if (shown === hints.length) {
      button.hidden = true;
      hint.querySelector("summary").focus();
    } else {
      button.textContent = label();
    }
  });
  box.append(button);
}

function setupPrompt(prompt) {
  if (prompt.hasAttribute("data-live")) return;
  const input = prompt.querySelector(".prompt-input");
  const parts = [...prompt.querySelectorAll(":scope > .prompt-answer, :scope > .prompt-misses")];
  if (!input || !parts.length) return;
  prompt.setAttribute("data-live", "");
  parts.forEach((part) => { part.hidden = true; });
  const button = document.createElement("button");
  button.type = "button";
  button.className = "answer-reveal";
  button.textContent = "Show the model answer";
  const nudge = document.createElement("p");
  nudge.className = "answer-nudge";
  nudge.setAttribute("aria-live", "polite");
  button.addEventListener("click", () => {
    if (!input.value.trim()) {
      nudge.textContent = "Write yours first, even one line: the answer means more next to your own.";
      input.focus();
      return;
    }
    nudge.textContent = "";
    button.hidden = true;
    parts.forEach((part) => { part.hidden = false; });
    // the model answer is out: hints still to come would only lead to it
    prompt.querySelectorAll(".hint-next").forEach((next) => { next.hidden = true; });
    parts[0].open = true;
    parts[0].querySelector("summary").focus();
    prompt.dispatchEvent(new CustomEvent("book:answer", { bubbles: true, detail: { prompt: prompt.dataset.prompt } }));
  });
  parts[0].before(button, nudge);
}

export function init(root = document) {
  root.querySelectorAll(".check").forEach(setupCheck);
  root.querySelectorAll(".hints").forEach(setupHints);
  root.querySelectorAll(".prompt").forEach(setupPrompt);
}
