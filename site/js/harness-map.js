// The course map's "Your harness so far": the capability of every lesson up to the furthest one
// the reader has started (from course.json, each lesson's "What your harness can do" line), each
// ticked once every lab of its lesson has passed. A reader who has started nothing is told where
// the first capability comes from. It follows the saved work as it changes.
import { allWork, onChange } from "./storage.js";
import { courseOnce, summarize } from "./progress.js";
import { element } from "./dom.js";

/** [{page, capability, built}] up to the furthest page started, and the whole list's length. */
export function earned(work, course) {
  const progress = summarize(work, course);
  const lessons = (course.pages || []).filter((page) => page.capability);
  const started = (page) => {
    const p = progress[page.id];
    return Boolean(p && (p.labsPassed || p.answered || p.cellsEdited));
  };
  let furthest = -1;
  lessons.forEach((page, i) => { if (started(page)) furthest = i; });
  const items = lessons.slice(0, furthest + 1).map((page) => {
    const p = progress[page.id];
    return { page, capability: page.capability, built: Boolean(p && p.labs && p.labsPassed >= p.labs) };
  });
  return { items, total: lessons.length, first: lessons[0] };
}

function draw(course) {
  const box = document.getElementById("map-harness");
  if (!box) return;
  const { items, total, first } = earned(allWork(), course);
  const built = items.filter((item) => item.built).length;
  const parts = [];
  if (!items.length) {
    parts.push(element("p", "map-harness-none", first
      ? `Nothing yet: the lab of ${first.name} gives it its first capability.` : "Nothing yet."));
  } else {
    parts.push(element("p", "map-harness-count", `${built} of ${total} capabilities built`));
    const list = element("ul", "map-harness-list");
    for (const item of items) {
      const line = element("li", "", item.capability);
      line.dataset.done = String(item.built);
      line.dataset.lesson = item.page.id; // not data-page: progress.js writes into every [data-page]
      const state = element("span", "visually-hidden", item.built ? " (built: its labs passed)" : " (not yet: its labs have not all passed)");
      line.append(state);
      list.append(line);
    }
    parts.push(list);
  }
  box.querySelector(".map-harness-body").replaceChildren(...parts);
  box.hidden = false;
}

export function init() {
  if (!document.getElementById("map-harness")) return;
  const redraw = () => courseOnce().then(draw).catch(() => {});
  redraw();
  let pending = 0;
  onChange(() => { cancelAnimationFrame(pending); pending = requestAnimationFrame(redraw); });
}
