// What the review holds, worked out from the saved work (no page, no storage): the checks answered
// wrong the first time, the prompts whose model answer was opened with less than a sentence
// written, the lab tests failed on the way. The review page (review.js) draws it, and the course
// map (review-due.js) counts what is due.
//
// From the saved work (storage.js):
//   answers["check:11-2"] = {lesson, value: {option, right, key}, question, first: <right at the
//                            first try>, firstAt: "<ISO time of that first answer>"}   (answers.js;
//                            question and key: fingerprints of the question and the option chosen)
//     A save from before `first` was kept counts a check whose answer is still wrong.
//   answers["prompt:11-1"] = {lesson, value: "<text>", revealedWith: <words written at reveal>}
//   labs["11-1"] = {..., passed, failed: ["Lab1.test_x", ...]}   (labs.js: every test failed once)
//   review["check:11-2"], review["prompt:11-1"]: the review's own state (schedule.js; a prompt's
//     is {lesson, done: true} once written and compared on the review page)
import { dueAt, isDue } from "./schedule.js";
import { labKey } from "./names.js";

/** Fewer words than this, written before opening a model answer, is "without writing". */
export const WORDS_WRITTEN = 5;

export function words(text) {
  return String(text || "").trim().split(/\s+/).filter(Boolean).length;
}

/** True when the reader's first answer to the check was wrong. */
export function wrongFirst(answer) {
  if (!answer || !answer.value) return false;
  return answer.first === undefined ? answer.value.right === false : answer.first === false;
}

/**
 * {due, later, learned, prompts, tests} at time `now`:
 *   due:     [{key, check, state}] checks to ask now, in course order
 *   later:   [{key, check, at}] checks coming back later, soonest first (at: ms)
 *   learned: [{key, check}] checks answered right at the first try twice since
 *   prompts: [{key, prompt, written}] prompts to write again
 *   tests:   [{key, page, lab, href, passed, sentences}] labs with tests failed on the way
 * `questions` is questions.json, `course` is course.json; entries the book no longer has are left
 * out.
 */
export function collect(work, questions, course, now = Date.now()) {
  const review = work.review || {};
  const found = { due: [], later: [], learned: [], prompts: [], tests: [] };
  const savedUnder = new Map(); // a question's fingerprint -> the key its answer is saved under
  for (const [key, entry] of Object.entries(work.answers)) {
    if (key.startsWith("check:") && entry && entry.question) savedUnder.set(entry.question, key);
  }
  for (const [id, check] of Object.entries(questions.checks || {})) {
    // The answer to this question: under its id, unless that one answered another question (the
    // check moved and its page was not opened since), else wherever its fingerprint was saved.
    let key = `check:${id}`;
    const own = work.answers[key];
    if (check.key && !(own && (!own.question || own.question === check.key))) key = savedUnder.get(check.key);
    const answer = key && work.answers[key];
    if (!wrongFirst(answer)) continue;
    const state = review[key];
    if (state && state.done) found.learned.push({ key, check });
    else if (isDue(state, answer.firstAt, now)) found.due.push({ key, check, state });
    else found.later.push({ key, check, at: dueAt(state, answer.firstAt) });
  }
  found.later.sort((a, b) => a.at - b.at);
  for (const [id, prompt] of Object.entries(questions.prompts || {})) {
    const key = `prompt:${id}`;
    const answer = work.answers[key];
    if (!answer || !Number.isInteger(answer.revealedWith) || answer.revealedWith >= WORDS_WRITTEN) continue;
    if (review[key] && review[key].done) continue;
    found.prompts.push({ key, prompt, written: answer.revealedWith });
  }
  for (const page of course.pages || []) {
    for (const lab of page.labs || []) {
      const key = labKey(page.number, lab.number);
      const failed = new Set(work.labs[key]?.failed || []);
      const sentences = (lab.tests || []).filter((test) => failed.has(test.id)).map((test) => test.sentence);
      if (!sentences.length) continue;
      found.tests.push({ key, page, lab, href: `${page.path}#lab-${key}`,
                         passed: Boolean(work.labs[key]?.passed), sentences });
    }
  }
  return found;
}

/** How many questions are to be answered now: checks due and prompts to write. */
export function dueCount(found) {
  return found.due.length + found.prompts.length;
}

/** True when nothing was ever got wrong: nothing due, later, learned, to write, or failed. */
export function nothingWrong(found) {
  return !(found.due.length || found.later.length || found.learned.length || found.prompts.length || found.tests.length);
}
