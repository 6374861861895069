// The review page (review.html): what the reader got wrong, asked again. Drawn once per visit from
// the saved work (review-items.js says what is in it), questions.json (each check's question,
// options and explanations) and course.json (each lab's tests). A check is asked with its options
// in a new order; which option is right, and every explanation, stay in this script until the
// reader has answered: the page's HTML never holds them before. The first answer is what counts
// (schedule.js). A prompt's model answer is shown once the reader has written a sentence.
import { allWork, update, warn } from "./storage.js";
import { courseOnce } from "./progress.js";
import { questionsOnce } from "./questions.js";
import { collect, nothingWrong, words, WORDS_WRITTEN } from "./review-items.js";
import { day, reviewed } from "./schedule.js";
import { element } from "./dom.js";

const RIGHT = "Right, at the first try.";
const RIGHT_AFTER = "Right.";
const WRONG = "Not quite. Read why, then try another.";

/** The indices 0..n-1 in a new order: never the page's own order when there are two or more. */
export function shuffled(n, random = Math.random) {
  const order = [...Array(n).keys()];
  if (n < 2) return order;
  do {
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
  } while (order.every((value, i) => value === i));
  return order;
}

/** `node` holding `markup`: the book's own HTML, from questions.json. */
function withHTML(node, markup) {
  node.innerHTML = markup;
  return node;
}

function checkLabel(check) {
  return `${check.name} · check ${check.id.split("-").pop()}`;
}

/** What happens next to a check, said after its first answer. */
function nextTime(state) {
  if (state.done) return "Learned: right at the first try twice. It will not come back.";
  return `It comes back on ${day(Date.parse(state.due))}.`;
}

function drawCheck({ key, check, state }) {
  const id = `review-${check.id}`;
  const box = element("section", "check review-check");
  box.id = id;
  box.setAttribute("aria-labelledby", `${id}-q`);
  box.dataset.live = "";
  box.dataset.review = key;
  const label = element("p", "check-label", checkLabel(check));
  const question = withHTML(element("div", "check-question"), check.question);
  question.id = `${id}-q`;
  const list = element("ol", "check-options");
  list.setAttribute("role", "group");
  list.setAttribute("aria-labelledby", question.id);
  const verdict = element("p", "check-verdict");
  verdict.setAttribute("aria-live", "polite");
  const after = element("div", "review-after");
  let first = null; // the first answer of this visit: right or not
  const items = shuffled(check.options.length).map((original, place) => {
    const option = check.options[original];
    const item = element("li", "check-option");
    item.setAttribute("role", "none");
    const button = element("button", "option-button");
    button.type = "button";
    button.setAttribute("aria-pressed", "false");
    const letter = element("span", "option-letter", String.fromCharCode(65 + place));
    letter.setAttribute("aria-hidden", "true");
    button.append(letter, withHTML(element("span", "option-body"), option.text));
    item.append(button);
    button.addEventListener("click", () => choose(original, item));
    return item;
  });
  list.append(...items);

  function choose(original, chosen) {
    const right = original === check.right;
    const exploring = first !== null && box.dataset.state === "right" && !right;
    for (const item of items) {
      const pressed = item === chosen;
      item.classList.toggle("is-chosen", pressed);
      item.querySelector(".option-button").setAttribute("aria-pressed", String(pressed));
      item.querySelector(".option-explain")?.remove();
    }
    // this option's explanation, under it: only now, after it was chosen
    chosen.append(withHTML(element("div", "option-explain"), check.options[original].explain));
    if (exploring) {
      verdict.textContent = "Right, and still answered: you are reading why another option misses.";
      return;
    }
    chosen.classList.add(right ? "is-right" : "is-wrong");
    if (first === null) {
      first = right;
      const now = reviewed(state, right, Date.now());
      update("review", key, { lesson: check.id.split("-")[0], ...now });
      after.append(element("p", "review-next", nextTime(now)));
    }
    verdict.textContent = right ? (first ? RIGHT : RIGHT_AFTER) : WRONG;
    verdict.classList.toggle("verdict-right", right);
    verdict.classList.toggle("verdict-wrong", !right);
    box.dataset.state = right ? "right" : "wrong";
    if (right && !after.querySelector(".check-explain")) {
      for (const text of check.explain) after.prepend(withHTML(element("div", "check-explain"), text));
      const link = element("a", "review-source", `Read it again on its page: ${check.name}`);
      link.href = check.href;
      after.append(link);
    }
  }

  box.append(label, question, list, verdict, after);
  return box;
}

function drawPrompt({ key, prompt }) {
  const id = `review-prompt-${prompt.id}`;
  const box = element("section", "prompt review-prompt");
  box.id = id;
  box.dataset.review = key;
  box.setAttribute("aria-labelledby", `${id}-q`);
  const label = element("p", "prompt-label", `${prompt.name} · write it yourself`);
  const question = withHTML(element("div", "prompt-question"), prompt.question);
  question.id = `${id}-q`;
  const inputLabel = element("label", "prompt-input-label", "Your answer, from memory this time");
  inputLabel.htmlFor = `${id}-input`;
  const input = element("textarea", "prompt-input");
  input.id = `${id}-input`;
  input.rows = 3;
  const reveal = element("button", "answer-reveal", "Show the model answer");
  reveal.type = "button";
  const nudge = element("p", "answer-nudge");
  nudge.setAttribute("aria-live", "polite");
  const after = element("div", "review-after");
  reveal.addEventListener("click", () => {
    if (words(input.value) < WORDS_WRITTEN) {
      nudge.textContent = `Write a sentence of your own first (${WORDS_WRITTEN} words or more): ` +
        "this time the model answer comes after yours.";
      input.focus();
      return;
    }
    nudge.textContent = "";
    reveal.hidden = true;
    for (const text of prompt.answer) {
      after.append(element("p", "review-answer-label", "The model answer"), withHTML(element("div", "prompt-answer review-answer"), text));
    }
    for (const text of prompt.misses) {
      after.append(element("p", "review-answer-label", "Common answers, and what each one misses"),
                   withHTML(element("div", "prompt-misses review-answer"), text));
    }
    after.append(element("p", "review-next", "Compared: this prompt leaves the review."));
    update("review", key, { lesson: prompt.id.split("-")[0], done: true });
    after.querySelector(".review-answer")?.setAttribute("tabindex", "-1");
    after.querySelector(".review-answer")?.focus();
  });
  box.append(label, question, inputLabel, input, reveal, nudge, after);
  return box;
}

function drawTests(entries) {
  const section = element("section", "review-tests");
  section.setAttribute("aria-labelledby", "review-tests-title");
  const title = element("h2", "", "Rules your lab tests stated when they failed");
  title.id = "review-tests-title";
  section.append(title, element("p", "review-intro",
    "Each test below failed on one of your runs before its lab passed: the rule it checks is worth reading again."));
  for (const entry of entries) {
    const head = element("h3", "review-lab");
    const link = element("a", "", `${entry.page.name} · Lab ${entry.lab.point} · ${entry.lab.title}`);
    link.href = entry.href;
    head.append(link, element("span", "review-lab-state", entry.passed ? " (passed since)" : " (not passed yet)"));
    const list = element("ul", "review-rules");
    for (const sentence of entry.sentences) list.append(element("li", "review-rule", sentence));
    section.append(head, list);
  }
  return section;
}

function heading(text, id) {
  const node = element("h2", "", text);
  node.id = id;
  return node;
}

export function draw(body, found, now = Date.now()) {
  if (nothingWrong(found)) {
    body.replaceChildren(element("p", "review-none",
      "You have got nothing wrong so far: no check answered wrong at the first try, no model " +
      "answer opened before you wrote your own, no lab test failed. What you miss as you work " +
      "through the book comes back here."));
    body.dataset.state = "none";
    return;
  }
  const parts = [];
  const due = found.due.length + found.prompts.length;
  parts.push(heading("Due now", "review-due-title"));
  if (due) {
    parts.push(element("p", "review-count", `${due} question${due === 1 ? "" : "s"} to review.`));
    parts.push(...found.due.map(drawCheck), ...found.prompts.map(drawPrompt));
  } else {
    const next = found.later[0];
    parts.push(element("p", "review-count", next
      ? `Nothing is due today. The next check comes back on ${day(next.at)}.`
      : "Nothing is due: every check you missed is learned."));
  }
  if (found.later.length) {
    parts.push(heading("Coming back later", "review-later-title"));
    const list = element("ul", "review-later");
    for (const { check, at } of found.later) list.append(element("li", "", `${checkLabel(check)}: on ${day(at)}`));
    parts.push(list);
  }
  if (found.learned.length) {
    const n = found.learned.length;
    parts.push(heading("Learned", "review-learned-title"), element("p", "review-learned",
      `${n} check${n === 1 ? "" : "s"} you once missed, since answered right at the first try twice.`));
  }
  if (found.tests.length) parts.push(drawTests(found.tests));
  body.replaceChildren(...parts);
  body.dataset.state = due ? "due" : "waiting";
}

export async function init() {
  const body = document.getElementById("review-body");
  if (!body) return;
  try {
    const [questions, course] = await Promise.all([questionsOnce(), courseOnce()]);
    draw(body, collect(allWork(), questions, course, Date.now()));
  } catch (error) {
    warn(`The review could not be made: ${error.message}`);
  }
}
