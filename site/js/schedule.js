// The review's spacing, and nothing else (no page, no storage): when a check answered wrong comes
// back, and when it has been learned. A check comes back a day after the reader got it wrong, then
// 3, 7 and 21 days after each review (21 after every later one), until it has been answered right
// at the first try twice; then it is learned and asked no more.
//
// A check's review state, kept in the saved work under review["check:<id>"]:
//   {"lesson": "11", "step": <reviews done>, "rights": <right at the first try>,
//    "due": "<ISO time>", "done": <learned>}
// Absent until its first review: then it is due a day after the wrong answer (`firstAt`).

export const DAY_MS = 24 * 60 * 60 * 1000;
export const INTERVALS_DAYS = [1, 3, 7, 21];
export const RIGHTS_TO_LEARN = 2;

/** The days until the next review after `step` reviews (0: the wrong answer on the page). */
export function interval(step) {
  return INTERVALS_DAYS[Math.min(step, INTERVALS_DAYS.length - 1)];
}

/** When a check is due, in ms: its state's `due`, else a day after `firstAt` (the time of the
 * wrong answer, ISO), else at once (a save from before the time was kept). */
export function dueAt(state, firstAt) {
  if (state && state.due) {
    const due = Date.parse(state.due);
    if (!Number.isNaN(due)) return due;
  }
  const first = firstAt ? Date.parse(firstAt) : NaN;
  return Number.isNaN(first) ? 0 : first + interval(0) * DAY_MS;
}

/** True when the check is to be asked now. */
export function isDue(state, firstAt, now = Date.now()) {
  return !(state && state.done) && dueAt(state, firstAt) <= now;
}

/** The state after a review at `now` whose first answer was `right`. */
export function reviewed(state, right, now = Date.now()) {
  const step = (state?.step || 0) + 1;
  const rights = (state?.rights || 0) + (right ? 1 : 0);
  const done = rights >= RIGHTS_TO_LEARN;
  return { step, rights, done, due: new Date(now + interval(step) * DAY_MS).toISOString() };
}

/** "Sat 5 Dec", for a time in ms: how the review says when a check comes back. */
export function day(ms) {
  return new Date(ms).toLocaleDateString("en-GB", { weekday: "short", day: "numeric", month: "short" });
}
