// The course map's line about the review: how many questions are due ("4 questions to review"),
// a link to review.html either way. It follows the saved work as it changes (an import, another
// tab). The link is in the map's HTML; this only words it.
import { allWork, onChange } from "./storage.js";
import { courseOnce } from "./progress.js";
import { questionsOnce } from "./questions.js";
import { collect, dueCount, nothingWrong } from "./review-items.js";
import { day } from "./schedule.js";

/** The link's words for what `collect` found. */
export function wording(found) {
  const due = dueCount(found);
  if (due) return `${due} question${due === 1 ? "" : "s"} to review`;
  if (found.later.length) return `Review: nothing due today, the next on ${day(found.later[0].at)}`;
  if (nothingWrong(found)) return "Review: nothing got wrong so far";
  return "Review what you got wrong";
}

function draw([questions, course]) {
  const link = document.querySelector("#map-review a");
  if (!link) return;
  const found = collect(allWork(), questions, course, Date.now());
  link.textContent = wording(found);
  link.closest("#map-review").dataset.due = String(dueCount(found));
}

export function init() {
  if (!document.getElementById("map-review")) return;
  const redraw = () => Promise.all([questionsOnce(), courseOnce()]).then(draw).catch(() => {
    // the link stays as the HTML has it; the review page itself says what went wrong
  });
  redraw();
  let pending = 0;
  onChange(() => { cancelAnimationFrame(pending); pending = requestAnimationFrame(redraw); });
}
