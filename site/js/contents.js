// The contents rail: every page of the book (from course.json), the current one marked
// (aria-current="page") and ticked as the map ticks it (complete, or started), and under the
// current page its own sections, checks and labs, where the reader is (aria-current) and what is
// done (a check answered right, a lab whose latest run passed; ✗ for a lab whose latest run
// failed). Fixed beside the text on wide screens; below that a fold that stays at the top of the
// window as the reader scrolls, closed until opened. Every h2 gets a visible permalink.
import { courseOnce, summarize, complete } from "./progress.js";
import { allWork, onChange } from "./storage.js";

const WIDE = matchMedia("(min-width: 80rem)");

function slug(text) {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "section";
}

function permalink(heading) {
  if (!heading.id) {
    let id = slug(heading.textContent);
    while (document.getElementById(id)) id += "-";
    heading.id = id;
  }
  if (heading.querySelector(".permalink")) return;
  const link = document.createElement("a");
  link.className = "permalink";
  link.href = `#${heading.id}`;
  link.textContent = "#";
  link.setAttribute("aria-label", `Link to “${heading.textContent.trim()}”`);
  heading.append(" ", link);
}

function entry(target, label, kind) {
  const item = document.createElement("li");
  item.className = `contents-${kind}`;
  const link = document.createElement("a");
  link.href = `#${target.id}`;
  link.textContent = label;
  item.append(link);
  item.target = target;
  return item;
}

function isDone(target) {
  if (target.matches("section.check")) return target.dataset.state === "right";
  if (target.matches("section.lab")) {
    // the latest result: a run that failed after an earlier pass is not a pass any more
    const state = target.dataset.state;
    return state === "pass" || (target.dataset.passed === "true" && !["fail", "failed", "running"].includes(state));
  }
  return false;
}

function isFailing(target) {
  return target.matches("section.lab") && ["fail", "failed"].includes(target.dataset.state);
}

/** "Lesson 01", "Checkpoint A", "Side quest S2", or the page's title alone (Welcome). */
function pageName(page) {
  if (page.kind === "lesson") return `${page.id} · ${page.title}`;
  if (page.kind === "checkpoint") return `${page.id} · ${page.title}`;
  if (page.kind === "side-quest") return `${page.id} · ${page.title}`;
  return page.title;
}

/** The book's pages as a list, this page's entry holding `sections` (its own contents). */
function bookList(course, here, sections) {
  const list = document.createElement("ol");
  list.className = "contents-list contents-book";
  const items = [];
  for (const page of (course.pages || []).filter((page) => page.path)) {
    const item = document.createElement("li");
    item.className = `contents-page contents-${page.kind}`;
    item.dataset.pageId = page.id;
    const link = document.createElement("a");
    link.href = page.path;
    link.textContent = pageName(page);
    const mark = document.createElement("span");
    mark.className = "contents-mark";
    link.append(mark);
    item.append(link);
    if (page.id === here) {
      link.setAttribute("aria-current", "page");
      item.classList.add("is-here");
      if (sections) item.append(sections);
    }
    list.append(item);
    items.push(item);
  }
  const tick = () => {
    const progress = summarize(allWork(), course);
    for (const item of items) {
      const state = progress[item.dataset.pageId];
      const done = complete(state);
      const started = !done && state && (state.labsPassed || state.answered || state.cellsEdited);
      item.classList.toggle("is-complete", done);
      item.classList.toggle("is-started", Boolean(started));
      item.querySelector(".contents-mark").textContent = done ? " (complete)" : started ? " (started)" : "";
    }
  };
  tick();
  onChange(() => requestAnimationFrame(tick));
  return list;
}

export function init() {
  const lesson = document.querySelector("article.lesson[data-kind]");
  if (!lesson || lesson.dataset.kind === "missing") return;
  const headings = [...lesson.querySelectorAll("h2")];
  headings.forEach(permalink);
  const parts = [...lesson.querySelectorAll("h2:not(.lab-title), section.check, section.lab")];
  const ownContents = parts.filter((part) => part.matches("h2")).length >= 2;

  const nav = document.createElement("nav");
  nav.className = "contents";
  nav.setAttribute("aria-label", "Contents");
  const fold = document.createElement("details");
  fold.className = "contents-fold";
  const summary = document.createElement("summary");
  summary.textContent = "Contents";
  const list = document.createElement("ol");
  list.className = "contents-list contents-sections";
  let sub = null;
  const items = [];
  let checks = 0;
  for (const part of ownContents ? parts : []) {
    let item;
    if (part.matches("h2")) {
      const label = part.cloneNode(true);
      label.querySelector(".permalink")?.remove();
      item = entry(part, label.textContent.trim(), "section");
      list.append(item);
      sub = document.createElement("ol");
      item.append(sub);
    } else {
      const label = part.matches(".check")
        ? `Check ${++checks}`
        : part.querySelector(".lab-title").textContent.replace("#", "").trim();
      item = entry(part, label, part.matches(".check") ? "check" : "lab");
      (sub || list).append(item);
    }
    items.push(item);
  }
  list.querySelectorAll("ol:empty").forEach((empty) => empty.remove());
  fold.append(summary);
  if (ownContents) fold.append(list);
  nav.append(fold);
  lesson.querySelector(".lesson-header")?.after(nav);
  document.body.classList.add("has-contents");
  // The whole book around this page's own contents, once course.json is read; without it the
  // page's own contents stay as they are.
  courseOnce().then((course) => {
    if (!course || !(course.pages || []).length) return;
    const book = bookList(course, lesson.dataset.pageId, ownContents ? list : null);
    fold.append(book);
    summary.textContent = "Contents: the book";
  }).catch(() => {});

  const placed = () => { fold.open = WIDE.matches; };
  placed();
  WIDE.addEventListener("change", placed);
  // On a narrow screen a chosen entry folds the contents away again.
  fold.addEventListener("click", (event) => { if (event.target.closest("a") && !WIDE.matches) fold.open = false; });

  const marks = () => {
    for (const item of items) {
      item.classList.toggle("is-done", isDone(item.target));
      item.classList.toggle("is-failing", isFailing(item.target));
    }
  };
  marks();
  new MutationObserver(marks).observe(lesson, { subtree: true, attributes: true, attributeFilter: ["data-state", "data-passed"] });

  // Where the reader is: the last entry whose target starts above a third of the window.
  let pending = false;
  const here = () => {
    pending = false;
    const line = innerHeight / 3;
    let current = null;
    for (const item of items) {
      if (item.target.getBoundingClientRect().top <= line) current = item;
      else break;
    }
    for (const item of items) {
      const link = item.querySelector(":scope > a");
      if (item === current) link.setAttribute("aria-current", "location");
      else link.removeAttribute("aria-current");
    }
  };
  addEventListener("scroll", () => { if (!pending) { pending = true; requestAnimationFrame(here); } }, { passive: true });
  here();
}
