// "What your harness can do", the list at the end of a lesson: each capability is ticked once every
// lab of its lesson has passed (on its own page, saved), and shown open until then, so the list
// never tells a reader they have built what they have not. It follows the saved work as it
// changes: a lab passed on this page ticks its line at once.
import { allWork, onChange, warn } from "./storage.js";
import { courseOnce, summarize } from "./progress.js";

function draw(manifest) {
  const list = document.querySelector(".capabilities > ul");
  const here = document.querySelector("article[data-page-id]")?.dataset.pageId;
  if (!list || here === undefined) return;
  const pages = manifest.pages || [];
  const upTo = pages.findIndex((page) => page.id === here);
  const lessons = pages.slice(0, upTo + 1).filter((page) => page.capability);
  const items = [...list.children];
  if (upTo < 0 || items.length !== lessons.length) return; // not the course's list: leave it be
  const progress = summarize(allWork(), manifest);
  items.forEach((item, i) => {
    const done = progress[lessons[i].id];
    const passed = Boolean(done && done.labs && done.labsPassed >= done.labs);
    item.dataset.done = String(passed);
    item.title = passed ? "Built: every lab of this lesson passed" : "Not yet: this lesson's labs have not all passed";
  });
}

export function init() {
  if (!document.querySelector(".capabilities > ul")) return;
  let warned = false; // said once, not at every change of the saved work
  const redraw = () => courseOnce().then(draw).catch((error) => {
    if (!warned) warn(`The list of what your harness can do could not be ticked: ${error.message}`);
    warned = true;
  });
  redraw();
  onChange(redraw);
}
