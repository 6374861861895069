// The course map's side of saved work: each page's progress (labs passed, cells edited, checks
// answered), and all progress exported as one JSON file or imported from one. An import that is
// not the book's saved work is refused with a message and changes nothing.
import { allWork, onChange, problem, replaceAll, warn } from "./storage.js";
import { element, ensure } from "./dom.js";
import { download } from "./zip.js";
import { fetchJSON } from "./files.js";
export const EXPORT_KIND = "agent-harness-book progress";

function lessonOf(id) {
  return String(id).split("-")[0];
}

/** {pageId: {labsPassed, labs, cellsEdited, answered, questions}} from the saved work and course.json. */
export function summarize(work, course) {
  const pages = {};
  for (const page of course.pages || []) {
    pages[page.id] = { labsPassed: 0, labs: (page.labs || []).length, cellsEdited: 0, answered: 0,
                       questions: page.questions || 0 };
  }
  const at = (id) => (pages[id] ??= { labsPassed: 0, labs: 0, cellsEdited: 0, answered: 0 });
  const pageId = (lesson) => {
    const padded = String(lesson).padStart(2, "0");
    return pages[padded] ? padded : String(lesson);
  };
  for (const [id, lab] of Object.entries(work.labs)) if (lab.passed) at(pageId(lessonOf(id))).labsPassed++;
  for (const id of Object.keys(work.cells)) at(pageId(lessonOf(id))).cellsEdited++;
  // Checks and prompts answered; hints revealed are help asked for, not answers.
  for (const entry of Object.values(work.answers)) {
    if (entry.lesson) at(pageId(entry.lesson)).answered++;
  }
  return pages;
}

/** A page is complete when its labs have all passed and its questions are all answered. */
export function complete(progress) {
  if (!progress || !(progress.labs || progress.questions)) return false;
  return progress.labsPassed >= progress.labs && progress.answered >= (progress.questions || 0);
}

function describe(progress) {
  const parts = [];
  if (progress.labs === 1) parts.push(progress.labsPassed ? "lab passed" : "lab not passed yet");
  else if (progress.labs) parts.push(`${progress.labsPassed} of ${progress.labs} labs passed`);
  if (progress.cellsEdited) parts.push(`${progress.cellsEdited} cell${progress.cellsEdited === 1 ? "" : "s"} edited`);
  if (progress.answered) {
    parts.push(progress.questions ? `${progress.answered} of ${progress.questions} questions answered`
                                  : `${progress.answered} answered`);
  }
  return parts.length && (progress.labsPassed || progress.cellsEdited || progress.answered) ? parts.join(", ") : "";
}

let course = null;

/** course.json, fetched once per page. A failure rejects with what went wrong (the caller says
 * it), and the next call tries again. */
export function courseOnce() {
  course ??= fetchJSON("course.json").catch((error) => {
    course = null;
    throw error;
  });
  return course;
}

/** Draw each page's progress on the map; a failure is warned about, never thrown. */
function showProgress() {
  return courseOnce().then(drawProgress).catch((error) => warn(`Progress could not be shown: ${error.message}`));
}

function drawProgress(manifest) {
  const pages = summarize(allWork(), manifest);
  for (const entry of document.querySelectorAll("[data-page]")) {
    const progress = pages[entry.dataset.page];
    if (!progress) continue;
    let slot = entry.querySelector(".page-progress");
    if (!slot) {
      slot = document.createElement("span");
      slot.className = "page-progress";
      (entry.querySelector(".map-body") || entry).append(slot);  // under the title, not beside it
    }
    const done = complete(progress);
    slot.textContent = (done ? "Complete · " : "") + describe(progress);
    entry.dataset.progress = done ? "done" : slot.textContent ? "started" : "none";
  }
  drawCourse(manifest, pages);
}

/** The map's head: the whole course's progress, and Continue to the first page not complete
 * (side quests are optional: Continue never sends a reader to one). */
function drawCourse(manifest, pages) {
  const box = document.getElementById("course-progress");
  if (!box) return;
  const written = (manifest.pages || []).filter((page) => page.path);
  const path = written.filter((page) => page.kind !== "side-quest" && (page.labs?.length || page.questions));
  const done = path.filter((page) => complete(pages[page.id]));
  const started = path.some((page) => pages[page.id] && (pages[page.id].labsPassed || pages[page.id].answered || pages[page.id].cellsEdited));
  // A new reader starts at the beginning (the welcome page), a returning one where they are.
  const next = started ? path.find((page) => !complete(pages[page.id])) : written[0];
  // What counts (the pages with labs or questions) and what complete takes, said; the bar moves
  // with every lab passed and question answered, not only with whole pages.
  const count = element("p", "course-count", `${done.length} of ${path.length} pages complete`);
  const what = element("p", "course-what", `Counted: the ${path.length} pages with labs or questions ` +
    "(side quests are optional). A page is complete when its labs pass and its questions are answered.");
  const share = (page) => {
    const p = pages[page.id];
    const of = p ? (p.labs || 0) + (p.questions || 0) : 0;
    return of ? Math.min(1, (p.labsPassed + Math.min(p.answered, p.questions || 0)) / of) : 0;
  };
  const bar = document.createElement("progress");
  bar.className = "course-bar";
  bar.max = path.length || 1;
  bar.value = path.reduce((sum, page) => sum + share(page), 0);
  bar.setAttribute("aria-label", "Progress through the course: labs passed and questions answered");
  const parts = [count, bar, what];
  if (next) {
    const link = element("a", "course-continue", `${started ? "Continue" : "Start"}: ${next.name}`);
    link.href = next.path;
    parts.push(link);
  } else if (path.length) {
    parts.push(element("p", "course-done", "Every page is complete: every question answered, every lab passed."));
  }
  box.replaceChildren(...parts);
}

/** The export file's text: the saved work, wrapped with what it is. */
export function exportText() {
  return JSON.stringify({ kind: EXPORT_KIND, exported: new Date().toISOString(), work: allWork() }, null, 1);
}

/** Why `text` cannot be imported, or "" (and the work is then replaced). */
export async function importText(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return `it is not JSON (${error.message})`;
  }
  if (!data || data.kind !== EXPORT_KIND) return "it is not a progress file exported from this book";
  const why = problem(data.work);
  if (why) return `its saved work is damaged: ${why}`;
  return (await replaceAll(data.work)) ? "" : "it could not be saved here (storage is full or blocked)";
}

function tools() {
  const box = ensure("progress-tools", "section", document.querySelector("main") || document.body);
  box.classList.add("progress-tools");
  const exportButton = document.createElement("button");
  exportButton.type = "button";
  exportButton.className = "progress-export";
  exportButton.textContent = "Export my progress";
  exportButton.addEventListener("click", () => {
    download(new Blob([exportText()], { type: "application/json" }), "agent-harness-book-progress.json");
  });
  // The browser's bare file picker, dressed as the button beside it: the input stays in the
  // label (and in the Tab order, for the keyboard), hidden from sight; the label is what shows.
  const label = document.createElement("label");
  label.className = "progress-import";
  label.textContent = "Import progress…";
  const input = document.createElement("input");
  input.type = "file";
  input.accept = "application/json,.json";
  input.className = "visually-hidden";
  label.append(input);
  const message = document.createElement("p");
  message.className = "progress-message";
  message.setAttribute("role", "status");
  input.addEventListener("change", async () => {
    const file = input.files[0];
    if (!file) return;
    const why = await importText(await file.text());
    input.value = "";
    // The map is redrawn before the page says "imported", so the message never runs ahead of it.
    if (!why) await showProgress();
    message.dataset.state = why ? "refused" : "imported";
    message.textContent = why ? `Not imported: ${why}. Nothing was changed.` : "Progress imported.";
  });
  box.append(exportButton, label, message);
}

export function init() {
  if (!document.querySelector("[data-page]") && !document.body.classList.contains("course-map")) return;
  tools();
  showProgress();
  // Work done in another tab reaches this map as it is saved there.
  let pending = 0;
  onChange(() => { cancelAnimationFrame(pending); pending = requestAnimationFrame(showProgress); });
}
